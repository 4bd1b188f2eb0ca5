// Softmax over 8-bit logits, in the integer domain: lower-qdq's form of
// DequantizeLinear -> Softmax -> QuantizeLinear (onnxc.QLinearSoftmax). Portable.
//
// softmax(x)_j = exp((x_j - max) s) / sum_k exp((x_k - max) s) depends on the 8-bit logits only
// through the differences d = max - x_j, 0..255 (s the input scale; the zero point cancels). So
// a compile-time table holds exp(-d s) in fixed point, exp_table[d] = round(exp(-d s) 2^bits),
// with bits chosen so that a whole row's sum fits an int32 (rows * 2^bits <= 2^30). A row is one
// pass for the max, one for the int32 sum, one for the outputs, each
//   y_j = saturate(round_half_even(exp_table[d_j] / (sum * y_scale)) + y_zero_point),
// one division per output. The table's rounding (relative 2^-bits) and the float division make a
// result differ from the float definition only where that one lies within about 2^-bits of a
// rounding tie: at most one quantization step.
#ifndef ONNXC_QUANT_SOFTMAX_H
#define ONNXC_QUANT_SOFTMAX_H

#include <cstdint>

#include "onnxc/quant.h"

namespace onnxc {
namespace rt {

// The rows run along a stride `inner`: x is [outer, n, inner] and each (o, i) is a row of n.
template <class Q>
inline void qlinear_softmax(const Q* x, Q* y, index_t outer, index_t n, index_t inner, const std::int32_t* exp_table,
                            float y_scale, std::int32_t y_zero_point) {
  for (index_t o = 0; o < outer; ++o)
    for (index_t i = 0; i < inner; ++i) {
      const Q* row = x + o * n * inner + i;
      Q* out = y + o * n * inner + i;
      std::int32_t largest = row[0];
      for (index_t j = 1; j < n; ++j) largest = row[j * inner] > largest ? row[j * inner] : largest;
      std::int32_t sum = 0;
      for (index_t j = 0; j < n; ++j) sum += exp_table[largest - row[j * inner]];
      const float denominator = static_cast<float>(sum) * y_scale;
      for (index_t j = 0; j < n; ++j)
        out[j * inner] =
            quantize_value<Q>(static_cast<float>(exp_table[largest - row[j * inner]]) / denominator, y_zero_point);
    }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_QUANT_SOFTMAX_H
