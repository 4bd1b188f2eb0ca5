// Pattern helpers shared by the QDQ canonicalisation passes (qdq_*.cpp) run before lower-qdq.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace onnxc {

bool is_8bit(DType t);

// Constant per-tensor parameters of a QuantizeLinear or DequantizeLinear: a positive finite
// float scale and an explicit 8-bit zero point (whose type is the quantized type).
struct QuantParams {
  float scale = 1.0f;
  int32_t zero_point = 0;
  DType type = DType::Undefined;
  const Value* scale_value = nullptr;
  const Value* zero_point_value = nullptr;
  int32_t lowest() const { return type == DType::Int8 ? -128 : 0; }
  int32_t highest() const { return type == DType::Int8 ? 127 : 255; }
  // ONNX's QuantizeLinear of one float: saturate(round_half_even(x / scale) + zero_point).
  int32_t quantize(float x) const;
  // ONNX's DequantizeLinear of one quantized value: (q - zero_point) * scale, in float.
  float dequantize(int32_t q) const;
};
bool operator==(const QuantParams& a, const QuantParams& b);

// n's parameters when n is a QuantizeLinear or DequantizeLinear (no block size, no output_dtype
// other than the zero point's) with per-tensor constant ones.
std::optional<QuantParams> per_tensor_params(const Node& n);

// The DequantizeLinear writing v with per-tensor constant parameters, or null.
const Node* per_tensor_dequantize(const Value* v);

// Every reader of `from` reads `to` instead (graph outputs are not moved: the caller checks).
void replace_uses(Graph& g, const Value* from, Value* to);

// Inserts `n` into g.nodes right after `after` (at the front when null) and returns it.
Node* insert_node_after(Graph& g, const Node* after, std::unique_ptr<Node> n);

// A new node like `like` (name, opset) of `op_type`, ai.onnx version `version` unless `domain`.
std::unique_ptr<Node> make_node(const Node& like, const std::string& name_suffix, const char* domain,
                                const char* op_type, int version, std::vector<Value*> inputs,
                                std::vector<Value*> outputs);

// Removes the nodes in `removed` (null ignored) from g.nodes and relinks g.
void erase_nodes(Graph& g, const std::set<const Node*>& removed);

// A new constant: the transpose of the [rows, cols] 8-bit constant w.
Value* transposed_8bit(Graph& g, const Value& w);

// A scalar constant of `type` holding `value` (an 8-bit zero point or bound).
Value* scalar_constant(Graph& g, const std::string& hint, DType type, int32_t value);

// A 256-entry table of `type` as onnxc.QLinearLookup reads it (entry i for the value lowest + i)
// holding f(v) for each value v of the type.
template <class F>
Tensor table_of(DType type, F f) {
  Tensor t(type, {256});
  for (int i = 0; i < 256; ++i) {
    const int32_t v = type == DType::Int8 ? i - 128 : i;
    t.bytes[static_cast<std::size_t>(i)] = static_cast<uint8_t>(f(v));
  }
  return t;
}

// The QDQ canonicalisation passes, in the order the pipeline runs them (each returns how many
// rewrites it made):
// QGemm (ONNX Runtime's QOperator Gemm, com.microsoft) into QLinearMatMul or
// onnxc.QLinearMatMulBias; ONNX Runtime's other QOperator ops of com.microsoft that onnxc
// implements (QLinearAdd, QLinearMul, QLinearGlobalAveragePool) accepted as they are. Before
// the operators are resolved.
int qdq_accept_qoperator(Model& m);
// Constant, ConstantOfShape and Cast of constants (the parameters PyTorch 1.13 computes in the
// graph) folded into constants; a Cast of a QuantizeLinear's output to its own type removed.
int qdq_fold_parameters(Graph& g);
// int8 activations (Q -> DQs of equal per-tensor parameters) become uint8 with zero point
// z + 128: the same values, the kernels' fastest type.
int qdq_activations_to_uint8(Graph& g);
// DQ -> data movement (Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Slice, Pad with 0,
// MaxPool, Relu, Concat of equal parameters) becomes data movement on the quantized tensor -> DQ;
// data movement -> Q becomes Q -> the movement; DQ(constant) -> Transpose a DQ of the transposed
// constant.
int qdq_move_dequantize(Graph& g);
// Conv/Gemm (or MatMul then Add) reading DQ(x) and DQ(constant w) with a float constant bias:
// the bias quantized to int32 with scale x_scale * w_scale (as QLinearConv takes it), behind a
// DequantizeLinear.
int qdq_quantize_float_bias(Graph& g);
// float x -> Relu/Clip (constant bounds) -> Q becomes x -> Q -> integer Clip (dropped when
// it clamps nothing): Q(clip(x, lo, hi)) == clamp(Q(x), Q(lo), Q(hi)), Q being monotonic.
int qdq_activation_to_clamp(Graph& g);
// DQ(q) -> Q: q itself when the parameters are equal, a requantizing onnxc.QLinearLookup
// otherwise; an integer Clip after a QLinearLookup folded into its table.
int qdq_fold_pairs(Graph& g);

}  // namespace onnxc

namespace onnxc {

// A float step of a quantized model between integer ones: computed from a dequantized tensor
// and quantized again (DQ and Q themselves included), and why it stays float.
struct FloatStep {
  const Node* node;
  std::string why;
};
std::vector<FloatStep> float_steps_between_integers(const Graph& g);

}  // namespace onnxc
