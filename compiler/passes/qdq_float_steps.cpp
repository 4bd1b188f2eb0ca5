// The float steps a quantized model keeps between its integer steps (see qdq_patterns.h).
#include <optional>
#include <set>

#include "ops/resize.h"
#include "passes/qdq_patterns.h"

namespace onnxc {
namespace {

bool is_float(const Value* v) { return v && (v->dtype == DType::Float || v->dtype == DType::Float16 || v->dtype == DType::Double); }

// Operators lower-qdq has an integer form of, when their quantization fits it.
bool has_integer_form(const Node& n) {
  static const std::set<std::string> ops = {
      "Conv",      "MatMul",  "Gemm",      "Add",         "Mul",       "Relu",        "Clip",    "Reshape",
      "Flatten",   "Squeeze", "Unsqueeze", "Transpose",   "Slice",     "Pad",         "MaxPool", "Concat",
      "GlobalAveragePool", "AveragePool", "Abs", "Celu", "Cos", "Elu", "Erf", "Exp", "Gelu", "HardSigmoid",
      "HardSwish", "LeakyRelu", "Log", "Mish", "Neg", "Reciprocal", "Selu", "Sigmoid", "Sin", "Softplus", "Softsign",
      "Sqrt", "Tanh", "ThresholdedRelu", "Softmax", "Resize"};
  return n.domain.empty() && ops.count(n.op_type);
}

std::string why_float(const Graph& g, const Node& n) {
  if (is_op(&n, "DequantizeLinear")) return "dequantizes for the float step after it";
  if (is_op(&n, "QuantizeLinear")) return "quantizes a float result";
  // Operators with no integer form in onnxc, and why (docs/quantization.md lists them).
  if (is_op(&n, "LogSoftmax"))
    return "onnxc has no integer form of LogSoftmax (a Softmax whose result is quantized is QLinearSoftmax; the "
           "logarithm of the row's sum is not written)";
  if (is_op(&n, "LayerNormalization") || is_op(&n, "InstanceNormalization") ||
      is_op(&n, "GroupNormalization"))
    return "onnxc has no integer form of " + n.op_type +
           " (it divides by a standard deviation computed at run time over the normalised axes)";
  if (is_op(&n, "Resize") || is_op(&n, "Upsample")) {
    const Node* dq = n.has_input(0) ? per_tensor_dequantize(n.inputs[0]) : nullptr;
    const Node* q = n.has_output(0) ? g.only_reader(n.outputs[0]) : nullptr;
    std::optional<QuantParams> in = dq ? per_tensor_params(*dq) : std::nullopt;
    std::optional<QuantParams> out = is_op(q, "QuantizeLinear") ? per_tensor_params(*q) : std::nullopt;
    const std::string refusal =
        in && out ? integer_resize_refusal(n, static_cast<double>(in->scale) / out->scale) : std::string();
    if (!refusal.empty()) return refusal;
  }
  if (is_op(&n, "AveragePool"))
    return "AveragePool's integer form is a depthwise QLinearConv, which needs every window to divide by its whole "
           "size: padding counted (count_include_pad=1) or none, no partial window of ceil_mode, no dilation";
  if (has_integer_form(n))
    return "its quantization does not fit lower-qdq's integer form (per-axis or computed scales, mixed 8-bit types, "
           "an operand not quantized, or several readers of its float result)";
  return "onnxc has no integer form of " + (n.domain.empty() ? "" : n.domain + ".") + n.op_type;
}

}  // namespace

std::vector<FloatStep> float_steps_between_integers(const Graph& g) {
  // Float values computed from a dequantized tensor, and float values a QuantizeLinear reads
  // (through float steps).
  std::set<const Value*> from_dq, to_q;
  for (const auto& n : g.nodes) {
    bool reads = is_op(n.get(), "DequantizeLinear");
    for (const Value* v : n->inputs) reads = reads || from_dq.count(v);
    if (reads)
      for (const Value* o : n->outputs)
        if (is_float(o)) from_dq.insert(o);
  }
  for (auto it = g.nodes.rbegin(); it != g.nodes.rend(); ++it) {
    const Node& n = **it;
    bool feeds = is_op(&n, "QuantizeLinear");
    for (const Value* o : n.outputs) feeds = feeds || to_q.count(o);
    if (feeds && !is_op(&n, "DequantizeLinear"))
      for (const Value* v : n.inputs)
        if (is_float(v) && !v->constant) to_q.insert(v);
  }
  std::vector<FloatStep> steps;
  for (const auto& n : g.nodes) {
    bool in = is_op(n.get(), "DequantizeLinear"), out = is_op(n.get(), "QuantizeLinear");
    for (const Value* v : n->inputs) in = in || from_dq.count(v);
    for (const Value* o : n->outputs) out = out || to_q.count(o);
    if (in && out) steps.push_back({n.get(), why_float(g, *n)});
  }
  return steps;
}

}  // namespace onnxc
