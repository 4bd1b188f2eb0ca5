// Slice and Split: each output is a strided window of the input.
#include <algorithm>
#include <limits>

#include "ops/emitter.h"
#include "ops/strided_copy.h"

namespace onnxc {
namespace {

// ---- Slice ----

struct SliceParams {
  std::vector<int64_t> starts, ends, axes, steps;
};

// The integer list in constant input i (int32 or int64).
std::vector<int64_t> const_ints(const Node& n, std::size_t i, const char* what) {
  require_dtype(n, i, {DType::Int32, DType::Int64});
  return require_const_input(n, i, what).to_ints();
}

// Slice-1 takes starts/ends/axes as attributes; from version 10 they (and steps) are inputs.
SliceParams slice_params(const Node& n) {
  SliceParams p;
  const int64_t rank = static_cast<int64_t>(input(n, 0).shape.size());
  if (n.version < 10) {
    if (!n.has_attr("starts") || !n.has_attr("ends")) fail_invalid(n, "attributes 'starts' and 'ends' are required");
    p.starts = n.attr_ints("starts");
    p.ends = n.attr_ints("ends");
    p.axes = n.attr_ints("axes");
  } else {
    p.starts = const_ints(n, 1, "starts");
    p.ends = const_ints(n, 2, "ends");
    if (n.has_input(3)) p.axes = const_ints(n, 3, "axes");
    if (n.has_input(4)) p.steps = const_ints(n, 4, "steps");
  }
  if (p.axes.empty() && !(n.version >= 10 ? n.has_input(3) : n.has_attr("axes")))
    for (int64_t d = 0; d < static_cast<int64_t>(p.starts.size()); ++d) p.axes.push_back(d);
  if (p.steps.empty() && !n.has_input(4)) p.steps.assign(p.starts.size(), 1);
  const std::size_t k = p.starts.size();
  if (p.ends.size() != k || p.axes.size() != k || p.steps.size() != k)
    fail_invalid(n, fmt::format("starts, ends, axes and steps have {}, {}, {} and {} entries; they must agree", k,
                                p.ends.size(), p.axes.size(), p.steps.size()));
  std::vector<bool> seen(static_cast<std::size_t>(rank), false);
  for (int64_t& a : p.axes) {
    a = normalize_axis(n, a, rank, "axes entry");
    if (seen[static_cast<std::size_t>(a)]) fail_invalid(n, fmt::format("axis {} is sliced twice", a));
    seen[static_cast<std::size_t>(a)] = true;
  }
  for (int64_t s : p.steps)
    if (s == 0) fail_invalid(n, "a step is 0");
  return p;
}

// Clamps a start or end index into the range a walk with this step's sign can visit:
// [0, dim] going forward, [-1, dim - 1] going backward (-1: before the first element).
int64_t clamp_slice_index(int64_t i, int64_t dim, int64_t step) {
  if (i < 0) i = i < -dim ? -1 : i + dim;  // avoids overflow for INT64_MIN
  return step > 0 ? std::clamp<int64_t>(i, 0, dim) : std::clamp<int64_t>(i, -1, dim - 1);
}

StridedCopy slice_copy(const Node& n) {
  const Shape& in = input(n, 0).shape;
  SliceParams p = slice_params(n);
  StridedCopy c;
  c.shape = in;
  c.strides = contiguous_strides(in);
  std::vector<int64_t> in_strides = c.strides;
  for (std::size_t j = 0; j < p.axes.size(); ++j) {
    const std::size_t d = static_cast<std::size_t>(p.axes[j]);
    const int64_t step = p.steps[j], dim = in[d];
    int64_t start = clamp_slice_index(p.starts[j], dim, step);
    int64_t end = clamp_slice_index(p.ends[j], dim, step);
    int64_t len = step > 0 ? (end - start + step - 1) / step : (start - end + (-step) - 1) / (-step);
    len = std::max<int64_t>(len, 0);
    c.shape[d] = len;
    c.strides[d] = in_strides[d] * step;
    if (len > 0) c.offset += start * in_strides[d];
  }
  return c;
}

void infer_slice(Node& n) {
  if (n.version < 10) {
    check_arity(n, 1, 1, 1, 1);
  } else {
    check_arity(n, 3, 5, 1, 1);
  }
  set_output(n, 0, input(n, 0).dtype, slice_copy(n).shape);
}

const OpRegistrar slice_op(strided_copy_op("Slice", {1, 10, 11, 13}, infer_slice, slice_copy));

// ---- Split ----

int64_t split_axis(const Node& n) {
  return normalize_axis(n, n.attr_int("axis", 0), static_cast<int64_t>(input(n, 0).shape.size()));
}

// The length of each output along the axis. The lengths come from the 'split' attribute
// (before 13), the 'split' input (version 1, and 13 on), 'num_outputs' (18 on), or else equal
// parts, one per output.
std::vector<int64_t> split_lengths(const Node& n) {
  const int64_t dim = input(n, 0).shape[static_cast<std::size_t>(split_axis(n))];
  const int64_t outputs = static_cast<int64_t>(n.outputs.size());
  std::vector<int64_t> lengths;
  bool given = false;
  if (n.has_input(1)) {
    if (n.version >= 2 && n.version < 13) fail_invalid(n, "'split' is an attribute before version 13, not an input");
    require_dtype(n, 1, {DType::Int32, DType::Int64});
    lengths = require_const_input(n, 1, "split lengths").to_ints();
    given = true;
  }
  if (n.has_attr("split")) {
    if (n.version >= 13) fail_invalid(n, "'split' is an input from version 13 on, not an attribute");
    if (given) fail_invalid(n, "'split' is given both as an input and as an attribute");
    lengths = n.attr_ints("split");
    given = true;
  }
  if (n.has_attr("num_outputs")) {
    if (n.version < 18) fail_invalid(n, "'num_outputs' exists from version 18 on");
    if (given) fail_invalid(n, "'split' and 'num_outputs' are both given; give one");
    const int64_t parts = n.attr_int("num_outputs", 0);
    if (parts != outputs) fail_invalid(n, fmt::format("num_outputs is {} but the node has {} outputs", parts, outputs));
    // Chunks of ceil(dim / parts); the last one takes what is left.
    const int64_t chunk = (dim + parts - 1) / parts;
    for (int64_t i = 0; i < parts; ++i) lengths.push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
    return lengths;
  }
  if (!given) {
    if (n.version >= 18) fail_invalid(n, "give either the 'split' input or the 'num_outputs' attribute");
    if (dim % outputs != 0)
      fail_invalid(n, fmt::format("cannot split a dim of {} into {} equal parts", dim, outputs),
                   "give the part lengths in 'split'");
    lengths.assign(static_cast<std::size_t>(outputs), dim / outputs);
    return lengths;
  }
  if (static_cast<int64_t>(lengths.size()) != outputs)
    fail_invalid(n, fmt::format("'split' has {} entries for {} outputs", lengths.size(), outputs));
  int64_t total = 0;
  for (int64_t l : lengths) {
    if (l < 0) fail_invalid(n, fmt::format("split length {} is negative", l));
    total += l;
  }
  if (total != dim) fail_invalid(n, fmt::format("split lengths add up to {}, but the axis has {}", total, dim));
  return lengths;
}

// Output i's window of the input.
std::vector<StridedCopy> split_copies(const Node& n) {
  const Shape& in = input(n, 0).shape;
  const std::size_t axis = static_cast<std::size_t>(split_axis(n));
  std::vector<int64_t> strides = contiguous_strides(in);
  std::vector<StridedCopy> copies;
  int64_t start = 0;
  for (int64_t len : split_lengths(n)) {
    StridedCopy c;
    c.shape = in;
    c.shape[axis] = len;
    c.strides = strides;
    c.offset = start * strides[axis];
    start += len;
    copies.push_back(std::move(c));
  }
  return copies;
}

void infer_split(Node& n) {
  check_arity(n, 1, n.version == 1 || n.version >= 13 ? 2 : 1, 1, -1);
  const Value& x = input(n, 0);
  std::vector<StridedCopy> copies = split_copies(n);
  for (std::size_t i = 0; i < copies.size(); ++i) set_output(n, i, x.dtype, copies[i].shape);
}

const OpRegistrar split_op([] {
  OpDef d;
  d.op_type = "Split";
  d.versions = {1, 2, 11, 13, 18};
  d.infer = infer_split;
  d.emit = [](const Node& n, Emitter& e) {
    std::vector<StridedCopy> copies = split_copies(n);
    for (std::size_t i = 0; i < copies.size(); ++i)
      if (n.has_output(i)) emit_strided_copy(e, copies[i], e.in(0), e.out(i), std::to_string(i));
  };
  d.fold = [](const Node& n, std::vector<Tensor>& outs) {
    std::vector<StridedCopy> copies = split_copies(n);
    for (std::size_t i = 0; i < copies.size(); ++i) {
      outs.emplace_back(n.inputs[0]->dtype, copies[i].shape);
      fold_strided_copy(n, copies[i], *n.inputs[0]->constant, outs.back());
    }
  };
  return d;
}());

}  // namespace
}  // namespace onnxc
