// Relu, LeakyRelu, Sigmoid, Tanh, Clip: elementwise activations.
#include "ops/elementwise.h"

namespace onnxc {
namespace {

void infer_same(Node& n) {
  check_arity(n, 1, 1, 1, 1);
  const Value& x = input(n, 0);
  set_output(n, 0, x.dtype, x.shape);
}

void infer_float_activation(Node& n) {
  infer_same(n);
  require_float(n, 0);
}

OpDef unary(const char* name, std::vector<int> versions, void (*infer)(Node&),
            std::function<std::string(const Node&)> functor) {
  OpDef d;
  d.op_type = name;
  d.versions = std::move(versions);
  d.infer = infer;
  d.inplace = true;
  d.emit = [functor](const Node& n, Emitter& e) { emit_unary(n, e, functor(n)); };
  return d;
}

void infer_relu(Node& n) {
  infer_same(n);
  DType t = n.inputs[0]->dtype;
  if (!dtype_is_float(t) && !(dtype_is_signed(t) && n.version >= 14))
    fail_unsupported(n, fmt::format("Relu-{} on {} is not defined", n.version, dtype_name(t)));
}

const OpRegistrar relu(unary("Relu", {1, 6, 13, 14}, infer_relu, [](const Node&) { return "rt::Relu{}"; }));
const OpRegistrar leaky_relu(unary("LeakyRelu", {1, 6, 16}, infer_float_activation, [](const Node& n) {
  return fmt::format("rt::LeakyRelu{{{}}}", float_literal(n.attr_float("alpha", 0.01f)));
}));
const OpRegistrar sigmoid(unary("Sigmoid", {1, 6, 13}, infer_float_activation, [](const Node&) { return "rt::Sigmoid{}"; }));
const OpRegistrar tanh_op(unary("Tanh", {1, 6, 13}, infer_float_activation, [](const Node&) { return "rt::Tanh{}"; }));

// Clip: bounds are attributes before version 11 and optional constant inputs since.
std::pair<std::string, std::string> clip_bounds(const Node& n) {
  DType t = n.inputs[0]->dtype;
  std::string ct = dtype_is_float(t) ? (t == DType::Double ? "double" : "float") : dtype_ctype(t);
  auto lit = [&](double v) {
    if (t == DType::Double) return double_literal(v);
    if (dtype_is_float(t)) return float_literal(static_cast<float>(v));
    return fmt::format("static_cast<{}>({})", ct, static_cast<int64_t>(v));
  };
  std::string lo = dtype_is_float(t) ? "-std::numeric_limits<" + ct + ">::infinity()" : "std::numeric_limits<" + ct + ">::lowest()";
  std::string hi = dtype_is_float(t) ? "std::numeric_limits<" + ct + ">::infinity()" : "std::numeric_limits<" + ct + ">::max()";
  if (n.version < 11) {
    if (n.has_attr("min")) lo = lit(n.attr_float("min", 0));
    if (n.has_attr("max")) hi = lit(n.attr_float("max", 0));
  } else {
    if (n.has_input(1)) lo = lit(require_const_input(n, 1, "min").float_at(0));
    if (n.has_input(2)) hi = lit(require_const_input(n, 2, "max").float_at(0));
  }
  return {lo, hi};
}

void infer_clip(Node& n) {
  check_arity(n, 1, 3, 1, 1);
  const Value& x = input(n, 0);
  if (n.version < 12) require_float(n, 0);
  for (std::size_t i = 1; i < 3; ++i)
    if (n.has_input(i) && n.inputs[i]->numel() != 1) fail_invalid(n, fmt::format("input {} must be a scalar", i));
  clip_bounds(n);  // checks the bounds are constants
  set_output(n, 0, x.dtype, x.shape);
}

const OpRegistrar clip(unary("Clip", {1, 6, 11, 12, 13}, infer_clip, [](const Node& n) {
  DType t = n.inputs[0]->dtype;
  std::string ct = dtype_is_float(t) ? (t == DType::Double ? "double" : "float") : dtype_ctype(t);
  auto [lo, hi] = clip_bounds(n);
  return fmt::format("rt::Clip<{}>{{{}, {}}}", ct, lo, hi);
}));

}  // namespace
}  // namespace onnxc
