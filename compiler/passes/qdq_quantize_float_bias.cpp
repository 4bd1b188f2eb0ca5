// qdq_quantize_float_bias (part of lower-qdq, see qdq_patterns.h): PyTorch's reference export
// keeps a quantized Conv's or Linear's bias in float. QLinearConv adds it in int32 with scale
// x_scale * w_scale[c], so it is quantized to that (round half to even): DQ(int32 bias) in its
// place; so is a Linear's float bias added after its MatMul (MatMul -> Add(constant [N])). The
// float model adds the float bias; the integer one is off by at most half a step of
// the accumulator, which can move the requantized output by one step where it rounds.
#include <cmath>
#include <limits>
#include <memory>
#include <optional>

#include "onnxc/quant.h"
#include "ops/quant_common.h"
#include "passes/passes.h"
#include "passes/qdq_patterns.h"

namespace onnxc {
namespace {

// The float scale of a constant weight's DQ, per tensor or along `axis` (its length `channels`),
// as one value per channel; empty when it is neither.
std::vector<float> weight_scales(const Value* w, int64_t axis, int64_t channels) {
  const Node* dq = w ? w->producer : nullptr;
  if (!is_op(dq, "DequantizeLinear") || !dq->inputs[0]->constant || !dq->has_input(1)) return {};
  const Value* s = dq->inputs[1];
  if (!s->constant || s->dtype != DType::Float) return {};
  const Tensor& t = *s->constant;
  if (is_per_tensor(t.shape)) return std::vector<float>(static_cast<std::size_t>(channels), t.data<float>()[0]);
  const int64_t rank = static_cast<int64_t>(dq->inputs[0]->shape.size());
  int64_t dq_axis = dq->attr_int("axis", 1);
  if (dq_axis < 0) dq_axis += rank;
  if (t.shape.size() != 1 || t.numel() != channels || dq_axis != axis) return {};
  return std::vector<float>(t.data<float>(), t.data<float>() + channels);
}

}  // namespace

// The float bias a Linear adds after its MatMul (PyTorch 2's and TFLite's exports): the Add's
// constant operand when it is 1-D and the MatMul's one reader is that Add; the operand's index.
std::optional<std::size_t> matmul_bias(const Graph& g, const Node& matmul) {
  if (!is_op(&matmul, "MatMul") || !matmul.has_output(0)) return std::nullopt;
  const Node* add = g.only_reader(matmul.outputs[0]);
  if (!is_op(add, "Add") || add->inputs.size() != 2) return std::nullopt;
  const std::size_t k = add->inputs[0] == matmul.outputs[0] ? 1 : 0;
  if (add->inputs[1 - k] != matmul.outputs[0]) return std::nullopt;
  return k;
}

int qdq_quantize_float_bias(Graph& g) {
  int quantized = 0;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = *g.nodes[i];
    const bool conv = is_op(&n, "Conv");
    const bool gemm = is_op(&n, "Gemm") && n.attr_float("alpha", 1.0f) == 1.0f && n.attr_float("beta", 1.0f) == 1.0f &&
                      !n.attr_int("transA", 0);
    const std::optional<std::size_t> after_matmul = matmul_bias(g, n);
    if ((!conv && !gemm && !after_matmul) || !n.has_input(1)) continue;
    if (!after_matmul && !n.has_input(2)) continue;
    Node* add = after_matmul ? g.only_reader(n.outputs[0]) : nullptr;
    Value*& bias_input = add ? add->inputs[*after_matmul] : n.inputs[2];
    const Value* b = bias_input;
    if (!b->constant || b->dtype != DType::Float || b->constant->shape.size() != 1) continue;
    const Node* x = per_tensor_dequantize(n.inputs[0]);
    if (!x) continue;
    const int64_t channels = b->constant->numel();
    const int64_t axis = conv || n.attr_int("transB", 0) ? 0 : 1;
    const std::vector<float> w_scales = weight_scales(n.inputs[1], axis, channels);
    if (w_scales.empty()) continue;
    const float x_scale = per_tensor_params(*x)->scale;
    Tensor scale(DType::Float, {channels});
    Tensor data(DType::Int32, {channels});
    bool fits = true;
    for (int64_t c = 0; c < channels; ++c) {
      const float s = x_scale * w_scales[static_cast<std::size_t>(c)];
      scale.data<float>()[c] = s;
      const double q = std::nearbyint(static_cast<double>(b->constant->data<float>()[c]) / static_cast<double>(s));
      fits = fits && s > 0.0f && std::fabs(q) < 2147483647.0;
      data.data<int32_t>()[c] = fits ? static_cast<int32_t>(q) : 0;
    }
    if (!fits) continue;
    Value* dequantized = g.add_unique_value(b->name + "_dequantized");
    Node* dq = insert_node_after(g, nullptr,
                                 make_node(n, "_bias_dequantize", "", "DequantizeLinear", 13,
                                           {add_constant(g, b->name + "_quantized", std::move(data)),
                                            add_constant(g, b->name + "_scale", std::move(scale))},
                                           {dequantized}));
    dq->set_attr_int("axis", 0);
    bias_input = dequantized;
    ++i;  // the DQ went in front of the list
    ++quantized;
  }
  if (quantized) g.relink();
  return quantized;
}

}  // namespace onnxc
