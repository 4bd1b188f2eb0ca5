#include "ops/elementwise.h"

#include <algorithm>

namespace onnxc {

namespace {

// The kernels' broadcasting loop keeps one index per dim in a fixed array.
constexpr std::size_t kMaxBroadcastRank = 8;

void check_broadcast_rank(const Node& n, const Shape& out) {
  if (out.size() <= kMaxBroadcastRank) return;
  for (const Value* v : n.inputs)
    if (v && v->shape != out)
      fail_unsupported(n, fmt::format("broadcasting to rank {} (more than {} dims)", out.size(), kMaxBroadcastRank),
                       "reshape the operands to fewer dims");
}

bool uses_legacy_broadcast(const Node& n) { return n.version < 7 && n.attr_int("broadcast", 0) != 0; }

}  // namespace

void fail_dtype(const Node& n, const std::string& what, DType t, const std::vector<DType>& allowed) {
  std::vector<std::string> names;
  for (DType a : allowed) names.push_back(dtype_name(a));
  fail_unsupported(n, fmt::format("{} {} is not supported; {}-{} supports {}", what, dtype_name(t), n.op_type,
                                  n.version, fmt::join(names, ", ")));
}

void require_input_dtype(const Node& n, std::size_t i, const std::vector<DType>& allowed) {
  DType t = input(n, i).dtype;
  if (std::find(allowed.begin(), allowed.end(), t) == allowed.end())
    fail_dtype(n, fmt::format("input {} of element type", i), t, allowed);
}

void require_same_dtype(const Node& n, std::size_t i, std::size_t like) {
  const DType t = input(n, i).dtype, want = input(n, like).dtype;
  if (t != want)
    fail_invalid(n, fmt::format("input {} has type {}, input {} {}", i, dtype_name(t), like, dtype_name(want)),
                 "insert a Cast so the inputs have the same type");
}

// ---- shapes ----

std::pair<Shape, Shape> binary_operand_shapes(const Node& n) {
  const Shape& a = input(n, 0).shape;
  const Shape& b = input(n, 1).shape;
  if (!uses_legacy_broadcast(n)) return {a, b};
  // Legacy broadcasting: b is a scalar, or its dims match a's dims [axis, axis + rank(b))
  // (dims of 1 broadcast); axis defaults to suffix matching.
  if (shape_numel(b) == 1) return {a, Shape{}};
  const auto rank_a = static_cast<int64_t>(a.size()), rank_b = static_cast<int64_t>(b.size());
  if (rank_b > rank_a)
    fail_invalid(n, fmt::format("input 1 {} has a higher rank than input 0 {}", shape_str(b), shape_str(a)));
  const int64_t axis = n.has_attr("axis") ? normalize_axis(n, n.attr_int("axis", 0), rank_a) : rank_a - rank_b;
  if (axis + rank_b > rank_a)
    fail_invalid(n, fmt::format("input 1 {} does not fit into input 0 {} from axis {}", shape_str(b), shape_str(a),
                                axis));
  Shape aligned = b;
  aligned.resize(static_cast<std::size_t>(rank_a - axis), 1);
  for (std::size_t i = 0; i < b.size(); ++i)
    if (b[i] != 1 && b[i] != a[static_cast<std::size_t>(axis) + i])
      fail_invalid(n, fmt::format("input 1 {} does not match input 0 {} from axis {} (dim {}: {} vs {})", shape_str(b),
                                  shape_str(a), axis, i, b[i], a[static_cast<std::size_t>(axis) + i]));
  return {a, aligned};
}

Shape binary_output_shape(const Node& n) {
  const Shape& a = input(n, 0).shape;
  const Shape& b = input(n, 1).shape;
  if (n.version < 7) {
    if (!uses_legacy_broadcast(n) && a != b)
      fail_invalid(n,
                   fmt::format("shapes {} and {} differ but the 'broadcast' attribute is 0", shape_str(a),
                               shape_str(b)),
                   "set broadcast=1 or convert the model to opset 7 or newer");
    binary_operand_shapes(n);  // validates legacy broadcasting
    return a;
  }
  Shape out = broadcast_shapes(n, a, b);
  check_broadcast_rank(n, out);
  return out;
}

bool reads_own_shapes(const Node& n) {
  auto [a, b] = binary_operand_shapes(n);
  return a == n.inputs[0]->shape && b == n.inputs[1]->shape;
}

Shape broadcast_inputs(const Node& n) {
  Shape out;
  for (const Value* v : n.inputs)
    if (v) out = broadcast_shapes(n, out, v->shape);
  check_broadcast_rank(n, out);
  return out;
}

void require_unidirectional(const Node& n, const Shape& from, const Shape& to, const char* what) {
  if (broadcast_shapes(n, from, to) != to)
    fail_invalid(n, fmt::format("{} of shape {} does not broadcast to {} (unidirectional broadcasting)", what,
                                shape_str(from), shape_str(to)));
}

// ---- emitting ----

EltwiseWriter::EltwiseWriter(Emitter& e, Shape out) : e_(e), out_(std::move(out)) {
  e_.include("onnxc/eltwise_math.h");
}

std::string EltwiseWriter::strides(const Operand& o) {
  std::string name = o.label + "_strides";
  if (std::find(declared_.begin(), declared_.end(), name) == declared_.end()) {
    e_.index_array(name, broadcast_strides(o.shape, out_));
    declared_.push_back(name);
  }
  return name;
}

std::string EltwiseWriter::shape() {
  if (std::find(declared_.begin(), declared_.end(), "shape") == declared_.end()) {
    e_.index_array("shape", out_);
    declared_.push_back("shape");
  }
  return "shape";
}

// Flat kernels (every operand the output's shape, or one value) split into runs of whole
// cache lines; `calls` renders the call from the element offset and count expressions.
void EltwiseWriter::flat(int64_t n, int inputs, const std::function<std::string(const std::string&, const std::string&)>& call) {
  constexpr int64_t kAlign = 16;  // floats in a 64-byte line: no two tasks write one line
  const int64_t tasks = e_.tasks(n * inputs, (n + kAlign - 1) / kAlign);
  if (tasks < 2) return e_.line(call("", std::to_string(n)));
  e_.open_ranges(n, tasks, kAlign);
  e_.line(call("r_.begin", "r_.end - r_.begin"));
  e_.close_ranges();
}

// Broadcasting kernels split along the output's first dim of more than one element: each task
// calls the kernel on its range of that dim, the operands moved to the range's start.
void EltwiseWriter::broadcast(const std::vector<const Operand*>& operands, int64_t work,
                              const std::function<std::string(const std::vector<std::string>&, const std::string&,
                                                               const std::string&)>& call) {
  std::size_t d = 0;
  while (d < out_.size() && out_[d] == 1) ++d;
  std::vector<std::string> ptrs;
  for (const Operand* o : operands) ptrs.push_back(o->ptr);
  const int64_t tasks = d < out_.size() ? e_.tasks(work, out_[d]) : 1;
  if (tasks < 2) return e_.line(call(ptrs, "", shape()));
  const int64_t y_stride = shape_numel(Shape(out_.begin() + static_cast<std::ptrdiff_t>(d) + 1, out_.end()));
  for (std::size_t k = 0; k < operands.size(); ++k) strides(*operands[k]);
  e_.open_ranges(out_[d], tasks);
  std::vector<std::string> dims;
  for (std::size_t i = 0; i < out_.size(); ++i) dims.push_back(i == d ? "r_.end - r_.begin" : std::to_string(out_[i]));
  e_.linef("const rt::index_t shape_[] = {{{}}};", fmt::join(dims, ", "));
  for (std::size_t k = 0; k < operands.size(); ++k)
    if (const int64_t s = broadcast_strides(operands[k]->shape, out_)[d])
      ptrs[k] = moved(ptrs[k], range_offset(s));
  e_.line(call(ptrs, range_offset(y_stride), "shape_"));
  e_.close_ranges();
}

void EltwiseWriter::map(const std::string& x, const std::string& y, const std::string& functor) {
  flat(shape_numel(out_), 1, [&](const std::string& at, const std::string& n) {
    return at.empty() ? fmt::format("rt::map({}, {}, {}, {});", x, y, n, functor)
                      : fmt::format("rt::map({}, {}, {}, {});", moved(x, at), moved(y, at), n, functor);
  });
}

void EltwiseWriter::zip(const Operand& a, const Operand& b, const std::string& y, const std::string& functor) {
  const int64_t n = shape_numel(out_);
  const BinaryForm form = binary_form(a.shape, b.shape, out_);
  if (form == BinaryForm::Broadcast) {
    if (n == 0) return;
    return broadcast({&a, &b}, 2 * n, [&](const std::vector<std::string>& p, const std::string& y_at, const std::string& sh) {
      return fmt::format("rt::zip_broadcast({}, {}, {}, {}, {}, {}, {}, {});", p[0], strides(a), p[1], strides(b),
                         y_at.empty() ? y : moved(y, y_at), sh, out_.size(), functor);
    });
  }
  const char* kernel = form == BinaryForm::Same ? "zip" : form == BinaryForm::ScalarB ? "zip_scalar_b" : "zip_scalar_a";
  flat(n, 2, [&](const std::string& at, const std::string& count) {
    if (at.empty()) return fmt::format("rt::{}({}, {}, {}, {}, {});", kernel, a.ptr, b.ptr, y, count, functor);
    const std::string ap = form == BinaryForm::ScalarA ? a.ptr : moved(a.ptr, at);
    const std::string bp = form == BinaryForm::ScalarB ? b.ptr : moved(b.ptr, at);
    return fmt::format("rt::{}({}, {}, {}, {}, {});", kernel, ap, bp, moved(y, at), count, functor);
  });
}

void EltwiseWriter::zip3(const Operand& c, const Operand& a, const Operand& b, const std::string& y,
                         const std::string& functor) {
  const int64_t n = shape_numel(out_);
  if (c.shape == out_ && a.shape == out_ && b.shape == out_) {
    return flat(n, 3, [&](const std::string& at, const std::string& count) {
      if (at.empty()) return fmt::format("rt::zip3({}, {}, {}, {}, {}, {});", c.ptr, a.ptr, b.ptr, y, count, functor);
      return fmt::format("rt::zip3({}, {}, {}, {}, {}, {});", moved(c.ptr, at), moved(a.ptr, at), moved(b.ptr, at),
                         moved(y, at), count, functor);
    });
  }
  if (n == 0) return;
  broadcast({&c, &a, &b}, 3 * n, [&](const std::vector<std::string>& p, const std::string& y_at, const std::string& sh) {
    return fmt::format("rt::zip3_broadcast({}, {}, {}, {}, {}, {}, {}, {}, {}, {});", p[0], strides(c), p[1],
                       strides(a), p[2], strides(b), y_at.empty() ? y : moved(y, y_at), sh, out_.size(), functor);
  });
}

void emit_unary(const Node& n, Emitter& e, const std::string& functor) {
  EltwiseWriter(e, n.outputs[0]->shape).map(e.in(0), e.out(0), functor);
}

void emit_binary(const Node& n, Emitter& e, const std::string& functor) {
  auto [a_shape, b_shape] = binary_operand_shapes(n);
  EltwiseWriter(e, n.outputs[0]->shape).zip({e.in(0), a_shape, "a"}, {e.in(1), b_shape, "b"}, e.out(0), functor);
}

void emit_ternary(const Node& n, Emitter& e, const std::string& functor) {
  EltwiseWriter(e, n.outputs[0]->shape)
      .zip3({e.in(0), n.inputs[0]->shape, "c"}, {e.in(1), n.inputs[1]->shape, "a"}, {e.in(2), n.inputs[2]->shape, "b"},
            e.out(0), functor);
}

// ---- folding ----

BinaryForm binary_form(const Shape& a, const Shape& b, const Shape& out) {
  if (a == out && b == out) return BinaryForm::Same;
  if (a == out && shape_numel(b) == 1) return BinaryForm::ScalarB;
  if (b == out && shape_numel(a) == 1) return BinaryForm::ScalarA;
  return BinaryForm::Broadcast;
}

std::vector<rt::index_t> to_index_vector(const std::vector<int64_t>& v) { return {v.begin(), v.end()}; }

Tensor& fold_output(const Node& n, std::vector<Tensor>& outs) {
  const Value& y = *n.outputs[0];
  outs.emplace_back(y.dtype, y.shape);
  return outs.back();
}

}  // namespace onnxc
