// Helpers shared by the quantization operators (quant_linear.cpp, quant_matmul.cpp,
// quant_conv.cpp): how scales and zero points are laid out, and the code that passes quantized
// operands and requantization multipliers to runtime-support/onnxc/quant.h.
#pragma once

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "onnxc/quant.h"
#include "ops/elementwise.h"
#include "ops/emitter.h"
#include "ops/op.h"

namespace onnxc {

// A scale or zero point with one element (a scalar or a 1-element vector): per-tensor.
bool is_per_tensor(const Shape& s);

// Fails unless input i (a scale or zero point) has one element or is the vector [channels];
// `what` names the quantity for the message ("w_scale", "b_zero_point", ...).
void require_per_tensor_or_channel(const Node& n, std::size_t i, int64_t channels, const char* what);
// Fails unless input i has one element.
void require_per_tensor(const Node& n, std::size_t i, const char* what);
// Fails unless input `zp` (when present) has the shape of input `scale`.
void require_zero_point_like_scale(const Node& n, std::size_t zp, std::size_t scale);

// 0 when input i is absent or per-tensor, 1 when it has one element per channel.
int64_t channel_stride(const Node& n, std::size_t i);

// `rt::QuantOperand<T>{data, zero_point, stride}` for input `data` with zero point input `zp`
// (which may be absent).
std::string quant_operand_code(const Node& n, Emitter& e, std::size_t data, std::size_t zp);

// The requantization multipliers a_scale * b_scale[c] / y_scale for `channels` channels (1 when
// b_scale is per-tensor), as the kernels index them.
struct RequantInputs {
  std::size_t a_scale, b_scale, y_scale;
};
// QLinearConv's and QLinearMatMul's: x_scale, w_scale (b_scale), y_scale.
inline constexpr RequantInputs kQLinearRequantInputs = {1, 4, 6};
// When every scale is constant: the multipliers, computed by the runtime's own make_requants.
// Otherwise empty: the generated code computes them (into scratch memory).
std::vector<rt::Requant> constant_requants(const Node& n, RequantInputs in, int64_t channels);
// Bytes of scratch the requantization multipliers need (0 when they are constants).
std::size_t requant_scratch_bytes(const Node& n, RequantInputs in, int64_t channels);
// Declares `requant` (a constexpr array, or filled at run time at `scratch`, a pointer
// expression to requant_scratch_bytes of memory) and returns the `rt::RequantizeOutput<Q>{...}`
// stage writing output 0 with zero point input y_zero_point and optional int32 bias input `bias`
// (SIZE_MAX: none); with input `table` (a 256-entry table of the output's type, when present)
// the stage is `rt::RequantizeLookupOutput<Q>{{...}, table}`, storing table[requantized].
std::string emit_requantize_output(const Node& n, Emitter& e, RequantInputs in, int64_t channels,
                                   std::size_t y_zero_point, std::size_t bias, const std::string& scratch,
                                   std::size_t table = std::numeric_limits<std::size_t>::max());

// A residual taken into an integer product (lower-qdq, TensorRT's `Conv -> Add(DQ(r)) [-> Relu] -> Q`,
// the same after MatMul or Gemm): an 8-bit tensor of the output's shape added before the
// requantization, as input kResidualInput of QLinearConv or kMatMulResidualInput of
// QLinearMatMul / onnxc.QLinearMatMulBias, its scale and zero point at + 1 and + 2 (per tensor,
// constant); the integer clamp of a Relu or Clip after the Q in attributes kResidualLowAttr and
// kResidualHighAttr (absent: the output type's range). The kernels store rt::RequantizeAddOutput.
inline constexpr std::size_t kResidualInput = 14;
inline constexpr std::size_t kMatMulResidualInput = 11;
inline constexpr const char* kResidualLowAttr = "onnxc.residual_low";
inline constexpr const char* kResidualHighAttr = "onnxc.residual_high";
// Fails unless the residual at input r is 8-bit with the output's shape `out` and constant
// per-tensor parameters (unsupported, naming the shapes, for a broadcast one).
void check_residual(const Node& n, std::size_t r, const Shape& out);
// r_scale / y_scale (y_scale input 6), in float as the multipliers are.
float residual_multiplier(const Node& n, std::size_t r);
// [low, high] of the clamp taken along with the residual.
std::pair<int32_t, int32_t> residual_clamp(const Node& n);
// The output stage `requantize` with the residual at input r added (rt::requantize_add) when the
// node has one; `requantize` as it is otherwise.
std::string with_residual(const Node& n, Emitter& e, std::size_t r, const std::string& requantize);

// QLinearConv and QLinearMatMul share their first eight inputs: a, a_scale, a_zero_point, b,
// b_scale, b_zero_point, y_scale, y_zero_point. Checks their element types (8-bit data with zero
// points of the same type, scales of one of `scale_types`, a and y per-tensor) and returns the
// output's type.
DType check_qlinear_inputs(const Node& n, const std::vector<DType>& scale_types);

// ---- folding ----

// rt::QuantOperand over constant input `data` with constant zero point input `zp` (may be absent).
template <class T> rt::QuantOperand<T> fold_quant_operand(const Node& n, std::size_t data, std::size_t zp) {
  const T* z = n.has_input(zp) ? n.inputs[zp]->constant->data<T>() : nullptr;
  return {n.inputs[data]->constant->data<T>(), z, static_cast<rt::index_t>(channel_stride(n, zp))};
}

using EightBitTypes = TypeList<uint8_t, int8_t>;

// Calls f(TypeTag<A>{}, TypeTag<B>{}) with the 8-bit element types of inputs a and b.
template <class F> void dispatch_8bit_pair(const Node& n, std::size_t a, std::size_t b, F&& f) {
  dispatch_in(n, n.inputs[a]->dtype, EightBitTypes{}, [&](auto a_tag) {
    dispatch_in(n, n.inputs[b]->dtype, EightBitTypes{}, [&](auto b_tag) { f(a_tag, b_tag); });
  });
}

}  // namespace onnxc
