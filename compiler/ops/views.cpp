// Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout (inference): the output is the
// input's bytes under a new shape. The planner makes them aliases; when a copy is needed
// (e.g. the output is a graph output) they copy.
#include <limits>
#include "onnxc/layout.h"
#include "ops/emitter.h"

namespace onnxc {
namespace {

void emit_copy(const Node& n, Emitter& e) {
  e.include("onnxc/layout.h");
  e.linef("rt::copy({}, {}, {});", e.in(0), e.out(0), n.outputs[0]->numel());
}

void fold_copy(const Node& n, std::vector<Tensor>& outs) {
  Tensor t = *n.inputs[0]->constant;
  t.shape = n.outputs[0]->shape;
  outs.push_back(std::move(t));
}

OpDef view(const char* name, std::vector<int> versions, void (*infer)(Node&)) {
  OpDef d;
  d.op_type = name;
  d.versions = std::move(versions);
  d.infer = infer;
  d.emit = emit_copy;
  d.fold = fold_copy;
  d.is_view = true;
  return d;
}

void infer_reshape(Node& n) {
  const Value& x = input(n, 0);
  std::vector<int64_t> target;
  if (n.version < 5) {
    check_arity(n, 1, 1, 1, 1);
    target = n.attr_ints("shape");
  } else {
    check_arity(n, 2, 2, 1, 1);
    target = require_const_input(n, 1, "target shape").to_ints();
  }
  bool allowzero = n.attr_int("allowzero", 0) != 0;
  Shape out;
  int infer_at = -1;
  int64_t known = 1;
  for (std::size_t i = 0; i < target.size(); ++i) {
    int64_t d = target[i];
    if (d == 0 && !allowzero) {
      if (i >= x.shape.size()) fail_invalid(n, fmt::format("shape dim {} is 0 (copy) but the input has rank {}", i, x.shape.size()));
      d = x.shape[i];
    } else if (d == -1) {
      if (infer_at >= 0) fail_invalid(n, "the target shape has more than one -1");
      infer_at = static_cast<int>(i);
      out.push_back(1);
      continue;
    } else if (d < -1) {
      fail_invalid(n, fmt::format("target shape dim {} is {}", i, d));
    }
    out.push_back(d);
    if (d != 0 && known > std::numeric_limits<int64_t>::max() / d)
      fail_invalid(n, fmt::format("the target shape {} has more elements than fit in 64 bits", shape_str(target)));
    known *= d;
  }
  if (infer_at >= 0) {
    if (known == 0 || x.numel() % known != 0)
      fail_invalid(n, fmt::format("cannot infer the -1 dim: {} elements into {}", x.numel(), shape_str(target)));
    out[static_cast<std::size_t>(infer_at)] = x.numel() / known;
  }
  if (shape_numel(out) != x.numel())
    fail_invalid(n, fmt::format("cannot reshape {} ({} elements) to {}", shape_str(x.shape), x.numel(), shape_str(out)));
  set_output(n, 0, x.dtype, out);
}

void infer_flatten(Node& n) {
  check_arity(n, 1, 1, 1, 1);
  const Value& x = input(n, 0);
  int64_t r = static_cast<int64_t>(x.shape.size());
  int64_t axis = n.attr_int("axis", 1);
  if (axis < -r || axis > r) fail_invalid(n, fmt::format("axis {} is out of range for rank {}", axis, r));
  if (axis < 0) axis += r;
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= x.shape[static_cast<std::size_t>(i)];
  set_output(n, 0, x.dtype, {outer, outer ? x.numel() / outer : 0});
}

void infer_identity(Node& n) {
  check_arity(n, 1, 1, 1, 1);
  const Value& x = input(n, 0);
  set_output(n, 0, x.dtype, x.shape);
}

const OpRegistrar reshape(view("Reshape", {1, 5, 13, 14, 19, 21, 23, 24, 25}, infer_reshape));
const OpRegistrar flatten(view("Flatten", {1, 9, 11, 13, 21, 23, 24, 25}, infer_flatten));
const OpRegistrar identity(view("Identity", {1, 13, 14, 16, 19, 21, 23, 24, 25}, infer_identity));

// Squeeze and Unsqueeze name their axes in an attribute before version 13, in a constant
// input from 13 on.
std::vector<int64_t> squeeze_axes(const Node& n) {
  if (n.version < 13) {
    check_arity(n, 1, 1, 1, 1);
    return n.attr_ints("axes");
  }
  check_arity(n, 1, 2, 1, 1);
  if (n.has_attr("axes")) fail_invalid(n, "'axes' is an input from version 13 on, not an attribute");
  return n.has_input(1) ? require_const_input(n, 1, "axes").to_ints() : std::vector<int64_t>{};
}

// Maps axes into [0, rank), failing on repeats.
std::vector<bool> axis_mask(const Node& n, const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<bool> mask(static_cast<std::size_t>(rank), false);
  for (int64_t a : axes) {
    int64_t d = normalize_axis(n, a, rank, "axes entry");
    if (mask[static_cast<std::size_t>(d)]) fail_invalid(n, fmt::format("axis {} is listed twice in axes", a));
    mask[static_cast<std::size_t>(d)] = true;
  }
  return mask;
}

void infer_squeeze(Node& n) {
  const Value& x = input(n, 0);
  std::vector<int64_t> axes = squeeze_axes(n);
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  std::vector<bool> drop = axis_mask(n, axes, rank);
  Shape out;
  for (std::size_t d = 0; d < x.shape.size(); ++d) {
    if (axes.empty() ? x.shape[d] == 1 : drop[d]) {
      if (x.shape[d] != 1) fail_invalid(n, fmt::format("cannot squeeze axis {} of {}: its size is not 1", d, shape_str(x.shape)));
      continue;
    }
    out.push_back(x.shape[d]);
  }
  set_output(n, 0, x.dtype, out);
}

void infer_unsqueeze(Node& n) {
  const Value& x = input(n, 0);
  std::vector<int64_t> axes = squeeze_axes(n);
  if (axes.empty()) fail_invalid(n, "'axes' is required and must not be empty");
  // Axes index the output, whose rank is the input's plus one per axis.
  const int64_t rank = static_cast<int64_t>(x.shape.size() + axes.size());
  std::vector<bool> inserted = axis_mask(n, axes, rank);
  Shape out;
  auto next = x.shape.begin();
  for (std::size_t d = 0; d < static_cast<std::size_t>(rank); ++d) out.push_back(inserted[d] ? 1 : *next++);
  set_output(n, 0, x.dtype, out);
}

const OpRegistrar squeeze(view("Squeeze", {1, 11, 13, 21, 23, 24, 25}, infer_squeeze));
const OpRegistrar unsqueeze(view("Unsqueeze", {1, 11, 13, 21, 23, 24, 25}, infer_unsqueeze));

// Dropout compiles for inference: the output is the input and the mask all true. Versions
// before 10 type the mask like the data (ones); later versions make it bool.
DType dropout_mask_dtype(const Node& n) { return n.version < 10 ? input(n, 0).dtype : DType::Bool; }

void infer_dropout(Node& n) {
  check_arity(n, 1, n.version >= 12 ? 3 : 1, 1, 2);
  const Value& x = input(n, 0);
  // Version 6 runs in training mode unless is_test=1 (version 1's is_test was advisory).
  if (n.version == 6 && n.attr_int("is_test", 0) == 0)
    fail_unsupported(n, "Dropout in training mode (is_test=0) is random; onnxc compiles inference only",
                     "set is_test=1 or export the model in eval mode");
  if (n.has_input(2) && require_const_input(n, 2, "training_mode").int_at(0)) {
    // Training mode drops elements at random, except with ratio 0 (the default is 0.5): it keeps
    // every one and scales by 1 / (1 - 0), the same as inference.
    bool keeps_all = n.has_input(1) && require_const_input(n, 1, "ratio in training mode").float_at(0) == 0;
    if (!keeps_all)
      fail_unsupported(n, "Dropout with training_mode=true and a ratio other than 0 is random; onnxc compiles "
                          "inference only", "export the model in eval mode");
  }
  set_output(n, 0, x.dtype, x.shape);
  set_output(n, 1, dropout_mask_dtype(n), x.shape);
}

const OpRegistrar dropout([] {
  OpDef d = view("Dropout", {1, 6, 7, 10, 12, 13, 22}, infer_dropout);
  d.emit = [](const Node& n, Emitter& e) {
    emit_copy(n, e);
    // Inference ignores the ratio; reading it keeps a ratio passed as a model input "used".
    if (n.has_input(1) && !n.inputs[1]->is_constant()) e.linef("static_cast<void>({});", e.in(1));
    if (n.has_output(1)) {
      const Value& mask = *n.outputs[1];
      e.linef("rt::fill({}, {}, rt::store<{}>(1));", e.out(1), mask.numel(), ctype_of(mask));
    }
  };
  d.fold = [](const Node& n, std::vector<Tensor>& outs) {
    fold_copy(n, outs);
    if (n.has_output(1)) {
      const Value& mask = *n.outputs[1];
      outs.emplace_back(mask.dtype, mask.shape);
      dispatch_dtype(n, mask.dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        rt::fill(outs.back().data<T>(), mask.numel(), rt::store<T>(1));
      });
    }
  };
  return d;
}());

// Constant: one of value / value_float(s) / value_int(s) / value_string(s) / sparse_value.
void infer_constant(Node& n) {
  check_arity(n, 0, 0, 1, 1);
  int given = 0;
  for (const char* a : {"value", "value_float", "value_floats", "value_int", "value_ints", "value_string",
                        "value_strings", "sparse_value"})
    given += n.has_attr(a);
  if (given != 1) fail_invalid(n, fmt::format("must have exactly one value attribute; it has {}", given));
  Tensor t;
  if (const Attribute* a = n.attr("value")) {
    if (!a->t) fail_invalid(n, "'value' is not a tensor");
    t = *a->t;
  } else if (const Attribute* a = n.attr("value_float")) {
    t = Tensor(DType::Float, {});
    t.data<float>()[0] = a->f;
  } else if (const Attribute* a = n.attr("value_floats")) {
    t = Tensor(DType::Float, {static_cast<int64_t>(a->floats.size())});
    for (std::size_t i = 0; i < a->floats.size(); ++i) t.data<float>()[i] = a->floats[i];
  } else if (const Attribute* a = n.attr("value_int")) {
    t = Tensor(DType::Int64, {});
    t.data<int64_t>()[0] = a->i;
  } else if (const Attribute* a = n.attr("value_ints")) {
    t = Tensor(DType::Int64, {static_cast<int64_t>(a->ints.size())});
    for (std::size_t i = 0; i < a->ints.size(); ++i) t.data<int64_t>()[i] = a->ints[i];
  } else if (const Attribute* a = n.attr("value_string")) {
    t = Tensor(DType::String, {});
    t.strings[0] = a->s;
  } else if (const Attribute* a = n.attr("value_strings")) {
    t = Tensor(DType::String, {static_cast<int64_t>(a->strings.size())});
    t.strings = a->strings;
  } else {
    fail_unsupported(n, "sparse constants are not supported");
  }
  Value* out = n.outputs[0];
  set_output(n, 0, t.dtype, t.shape);
  out->constant = std::make_shared<Tensor>(std::move(t));
}

const OpRegistrar constant([] {
  OpDef d;
  d.op_type = "Constant";
  d.versions = {1, 9, 11, 12, 13, 19, 21, 23, 24, 25};
  d.infer = infer_constant;
  d.emit = [](const Node& n, Emitter&) { fail_invalid(n, "internal: Constant reached the back end"); };
  return d;
}());

}  // namespace
}  // namespace onnxc
