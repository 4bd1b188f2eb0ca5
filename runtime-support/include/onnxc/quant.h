// Integer (quantized) inference: ONNX QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear,
// MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv; ONNX Runtime's QLinearAdd, QLinearMul
// and QLinearGlobalAveragePool (domain com.microsoft); table lookup for quantized activations.
//
// Rounding follows ONNX and ONNX Runtime exactly:
//  - quantize: y = saturate(round_half_even(x / scale) + zero_point), the quotient in float;
//  - requantize (the QLinear ops): an int32 accumulator acc becomes
//        y = saturate(round_half_even(float(acc) * multiplier) + zero_point),
//    multiplier = float(float(a_scale * b_scale) / y_scale), with float(acc) and the product
//    each rounded to float as IEEE single precision does. ONNX Runtime computes exactly this in
//    float (MLAS requantization). Targets with a single-precision FPU do the same; targets
//    without one (__SOFTFP__, or ONNXC_REQUANTIZE_IN_INTEGERS defined) use the multiplier's
//    mantissa and exponent, computed at compile time, and integer arithmetic only
//    (requantize_in_integers), bit-identical to the float computation.
//
// Accumulation is exact in int32 on (x - x_zero_point) * (w - w_zero_point) products; padding
// contributes nothing (a padded x equals its zero point).
#ifndef ONNXC_QUANT_H
#define ONNXC_QUANT_H

#include <cmath>
#include <cstdint>
#include <limits>

#include "onnxc/base.h"
#include "onnxc/conv.h"

namespace onnxc {
namespace rt {

// ---- rounding and saturation ----

// Nearest integer, ties to even, independent of the floating-point environment. NaN stays NaN.
inline float round_half_even(float v) {
  if (!(std::fabs(v) < 8388608.0f)) return v;  // |v| >= 2^23 is integral already (or NaN/inf)
  const float down = std::floor(v);
  const float diff = v - down;  // exact for |v| < 2^23
  if (diff > 0.5f) return down + 1.0f;
  if (diff < 0.5f) return down;
  return std::fmod(down, 2.0f) == 0.0f ? down : down + 1.0f;
}

// v (integral or infinite) clamped to Q's range; NaN becomes 0.
template <class Q>
inline Q saturate_to(float v) {
  const float lo = static_cast<float>(std::numeric_limits<Q>::lowest());
  const float hi = static_cast<float>(std::numeric_limits<Q>::max());
  if (v != v) return Q(0);
  if (v <= lo) return std::numeric_limits<Q>::lowest();
  if (v >= hi) return std::numeric_limits<Q>::max();
  return static_cast<Q>(v);
}

template <class Q>
inline std::int32_t saturate_to_range(std::int64_t v) {
  const std::int64_t lo = std::numeric_limits<Q>::lowest(), hi = std::numeric_limits<Q>::max();
  return static_cast<std::int32_t>(v < lo ? lo : (v > hi ? hi : v));
}

// ---- QuantizeLinear / DequantizeLinear ----

// Which scale and zero point element applies to each element of x, viewed as
// [outer, axis, inner]: element (o, a, i) uses index
//   o * scale_outer + (a / block) * scale_axis + i * scale_inner.
// Per-tensor: every stride 0. Per-axis: scale_axis = 1, block = 1. Blocked (block_size > 0):
// the scale has x's shape with the axis dim divided into blocks.
struct QuantLayout {
  index_t outer, axis, inner, block;
  index_t scale_outer, scale_axis, scale_inner;
};

template <class F>
inline void for_each_quant_element(const QuantLayout& q, F f) {
  index_t idx = 0;
  for (index_t o = 0; o < q.outer; ++o)
    for (index_t a = 0; a < q.axis; ++a) {
      const index_t base = o * q.scale_outer + (a / q.block) * q.scale_axis;
      for (index_t i = 0; i < q.inner; ++i) f(idx++, base + i * q.scale_inner);
    }
}

// y = saturate(round_half_even(x / scale) + zero_point); zero_point may be null (0).
// X: float, float16, bfloat16 or int32; S: the scale's type; Q: the integer output type.
template <class X, class S, class Q>
inline void quantize_linear(const QuantLayout& q, const X* x, const S* scale, const Q* zero_point, Q* y) {
  for_each_quant_element(q, [&](index_t i, index_t s) {
    const float zp = zero_point ? static_cast<float>(zero_point[s]) : 0.0f;
    const float v = static_cast<float>(load(x[i])) / static_cast<float>(load(scale[s]));
    y[i] = saturate_to<Q>(round_half_even(v) + zp);
  });
}

// y = (x - zero_point) * scale, in float; zero_point may be null (0). Y is the scale's type.
template <class Q, class S>
inline void dequantize_linear(const QuantLayout& q, const Q* x, const S* scale, const Q* zero_point, S* y) {
  for_each_quant_element(q, [&](index_t i, index_t s) {
    const std::int64_t zp = zero_point ? static_cast<std::int64_t>(zero_point[s]) : 0;
    const float v = static_cast<float>(static_cast<std::int64_t>(x[i]) - zp) * static_cast<float>(load(scale[s]));
    y[i] = store<S>(v);
  });
}

// DynamicQuantizeLinear: uint8 quantization over the range [min(0, min x), max(0, max x)]:
// scale = range / 255 (1 / 255 for an all-zero x), zero point = round(clamp(-min / scale)).
inline void dynamic_quantize_linear(index_t n, const float* x, std::uint8_t* y, float* y_scale,
                                    std::uint8_t* y_zero_point) {
  float lo = 0.0f, hi = 0.0f;
  for (index_t i = 0; i < n; ++i) {
    lo = x[i] < lo ? x[i] : lo;
    hi = x[i] > hi ? x[i] : hi;
  }
  const float scale = (hi == lo ? 1.0f : hi - lo) / 255.0f;
  float zp = 0.0f - lo / scale;
  zp = zp < 0.0f ? 0.0f : (zp > 255.0f ? 255.0f : zp);
  const std::uint8_t zero_point = saturate_to<std::uint8_t>(round_half_even(zp));
  *y_scale = scale;
  *y_zero_point = zero_point;
  const QuantLayout all = {1, 1, n, 1, 0, 0, 0};
  quantize_linear(all, x, &scale, &zero_point, y);
}

// ---- requantization: float(acc) * multiplier, rounded, in integers ----

#if defined(__SOFTFP__) && !defined(ONNXC_REQUANTIZE_IN_INTEGERS)
#define ONNXC_REQUANTIZE_IN_INTEGERS 1
#endif

// A positive float multiplier, and the same as mantissa * 2^exponent with mantissa in
// [2^23, 2^24) (exactly the float's value). mantissa 0 stands for a multiplier of 0 (or one that
// is not a positive number).
struct Requant {
  float multiplier;
  std::int32_t mantissa;
  std::int32_t exponent;
};

inline Requant make_requant(float multiplier) {
  if (!(multiplier > 0.0f) || !(multiplier < std::numeric_limits<float>::infinity())) return {0.0f, 0, 0};
  int e = 0;
  const float f = std::frexp(multiplier, &e);  // multiplier = f * 2^e, f in [0.5, 1)
  return {multiplier, static_cast<std::int32_t>(std::ldexp(f, 24)), static_cast<std::int32_t>(e - 24)};
}

// Fills out[i] with the requantization of a_scale * b_scale[i * b_stride] / y_scale, computed
// in float in that order (as ONNX Runtime does), for n output channels or columns.
template <class S>
inline void make_requants(index_t n, const S* a_scale, const S* b_scale, index_t b_stride, const S* y_scale,
                          Requant* out) {
  const float a = static_cast<float>(load(*a_scale)), y = static_cast<float>(load(*y_scale));
  for (index_t i = 0; i < n; ++i) out[i] = make_requant(a * static_cast<float>(load(b_scale[i * b_stride])) / y);
}

namespace detail {

inline int bit_length(std::uint64_t v) {
#if defined(__GNUC__) || defined(__clang__)
  return v == 0 ? 0 : 64 - __builtin_clzll(v);
#else
  int bits = 0;
  for (; v != 0; v >>= 1) ++bits;
  return bits;
#endif
}

// round_half_even(v / 2^shift) for shift >= 1.
inline std::uint64_t shift_right_half_even(std::uint64_t v, int shift) {
  if (shift >= 64) return 0;  // v < 2^63 here, below half of 2^64
  const std::uint64_t q = v >> shift, rem = v & ((std::uint64_t(1) << shift) - 1);
  const std::uint64_t half = std::uint64_t(1) << (shift - 1);
  return (rem > half || (rem == half && (q & 1u))) ? q + 1 : q;
}

// Rounds v * 2^exponent to float's 24 significant bits (ties to even), adjusting exponent.
inline std::uint64_t round_to_float_precision(std::uint64_t v, std::int32_t& exponent) {
  const int excess = bit_length(v) - 24;
  if (excess <= 0) return v;
  exponent += excess;
  return shift_right_half_even(v, excess);
}

}  // namespace detail

// saturate(round_half_even(float(acc) * multiplier) + zero_point) into Q's range, in integers
// only, bit-exact with the float computation (float(acc) and the product each rounded to the
// nearest float).
template <class Q>
inline Q requantize_in_integers(std::int32_t acc, Requant r, std::int32_t zero_point) {
  const bool negative = acc < 0;
  std::uint64_t mag = negative ? std::uint64_t(0) - static_cast<std::uint64_t>(static_cast<std::int64_t>(acc))
                               : static_cast<std::uint64_t>(acc);
  std::int32_t exponent = r.exponent;
  mag = detail::round_to_float_precision(mag, exponent);  // float(acc)
  mag = detail::round_to_float_precision(mag * static_cast<std::uint32_t>(r.mantissa), exponent);  // the product
  std::int64_t rounded;
  if (mag == 0) {
    rounded = 0;
  } else if (exponent >= 0) {
    rounded = exponent > 30 ? (std::int64_t(1) << 40) : static_cast<std::int64_t>(mag << exponent);  // saturates
  } else {
    rounded = static_cast<std::int64_t>(detail::shift_right_half_even(mag, -exponent));
  }
  return static_cast<Q>(saturate_to_range<Q>((negative ? -rounded : rounded) + zero_point));
}

// The same in float, as ONNX Runtime computes it: the product is clamped to the output range
// first, so the rounding (adding and subtracting 1.5 * 2^23 rounds a float of magnitude below
// 2^22 to the nearest integer, ties to even) only sees small values. Needs the default rounding
// mode and no -ffast-math, like the rest of the float kernels.
template <class Q>
inline Q requantize_in_float(std::int32_t acc, Requant r, std::int32_t zero_point) {
  const float lo = static_cast<float>(static_cast<std::int32_t>(std::numeric_limits<Q>::lowest()) - zero_point);
  const float hi = static_cast<float>(static_cast<std::int32_t>(std::numeric_limits<Q>::max()) - zero_point);
  float v = static_cast<float>(acc) * r.multiplier;
  v = v < lo ? lo : (v > hi ? hi : v);
  const float magic = 12582912.0f;
  return static_cast<Q>(static_cast<std::int32_t>((v + magic) - magic) + zero_point);
}

template <class Q>
inline Q requantize(std::int32_t acc, Requant r, std::int32_t zero_point) {
#ifdef ONNXC_REQUANTIZE_IN_INTEGERS
  return requantize_in_integers<Q>(acc, r, zero_point);
#else
  return requantize_in_float<Q>(acc, r, zero_point);
#endif
}

// ---- output stages: what happens to each int32 accumulator ----

// ConvInteger, MatMulInteger: y is the accumulator.
struct StoreInt32 {
  std::int32_t* y;
  void operator()(index_t /*channel*/, index_t i, std::int32_t acc) const { y[i] = acc; }
};

// QLinearConv, QLinearMatMul: y = requantize(acc + bias[channel]); bias may be null. The
// requantization is per channel (requant_stride 1) or shared (0).
template <class Q>
struct RequantizeOutput {
  Q* y;
  const std::int32_t* bias;
  const Requant* requant;
  index_t requant_stride;
  std::int32_t zero_point;
  void operator()(index_t channel, index_t i, std::int32_t acc) const {
    const std::int32_t biased = bias ? static_cast<std::int32_t>(static_cast<std::uint32_t>(acc) +
                                                                 static_cast<std::uint32_t>(bias[channel]))
                                     : acc;
    y[i] = requantize<Q>(biased, requant[channel * requant_stride], zero_point);
  }
};

// A quantized operand: data with its zero point (null: 0), one per tensor (zero_point_stride 0)
// or one per row/channel (1).
template <class T>
struct QuantOperand {
  const T* data;
  const T* zero_point;
  index_t zero_point_stride;
  std::int32_t zero_point_at(index_t i) const {
    return zero_point ? static_cast<std::int32_t>(zero_point[i * zero_point_stride]) : 0;
  }
};

// ---- integer matrix product ----

// Batch b multiplies a + a_offsets[b] ([m, k], zero point per tensor or per row) by
// b + b_offsets[b] ([k, n], zero point per tensor or per column); out(column, flat index, acc)
// receives each int32 result, flat index b*m*n + i*n + j.
// Each row of the result is computed kMatMulBlock columns at a time in int32 accumulators on the
// stack, the innermost loop running along a row of b (contiguous: compilers vectorise it).
constexpr index_t kMatMulBlock = 64;

template <class A, class B, class Out>
inline void matmul_integer(index_t batches, const index_t* a_offsets, const index_t* b_offsets, index_t m, index_t n,
                           index_t k, QuantOperand<A> a, QuantOperand<B> b, Out out) {
  std::int32_t acc[kMatMulBlock];
  std::int32_t zb[kMatMulBlock];
  for (index_t batch = 0; batch < batches; ++batch) {
    const A* ap = a.data + a_offsets[batch];
    const B* bp = b.data + b_offsets[batch];
    for (index_t j0 = 0; j0 < n; j0 += kMatMulBlock) {
      const index_t cols = n - j0 < kMatMulBlock ? n - j0 : kMatMulBlock;
      for (index_t j = 0; j < cols; ++j) zb[j] = b.zero_point_at(j0 + j);
      for (index_t i = 0; i < m; ++i) {
        const std::int32_t za = a.zero_point_at(i);
        for (index_t j = 0; j < cols; ++j) acc[j] = 0;
        for (index_t l = 0; l < k; ++l) {
          const std::int32_t av = static_cast<std::int32_t>(ap[i * k + l]) - za;
          if (av == 0) continue;
          const B* brow = bp + l * n + j0;
          for (index_t j = 0; j < cols; ++j) acc[j] += av * (static_cast<std::int32_t>(brow[j]) - zb[j]);
        }
        for (index_t j = 0; j < cols; ++j) out(j0 + j, (batch * m + i) * n + j0 + j, acc[j]);
      }
    }
  }
}

// ---- integer convolution ----

namespace detail {

// The output positions o in [0, out) whose input position o * stride + offset lies in [0, in):
// [*first, *last). Lets the innermost loop run without bounds checks.
inline void valid_outputs(index_t out, index_t in, index_t stride, index_t offset, index_t* first, index_t* last) {
  index_t lo = 0, hi = out;
  while (lo < hi && lo * stride + offset < 0) ++lo;
  while (hi > lo && (hi - 1) * stride + offset >= in) --hi;
  *first = lo;
  *last = hi;
}

}  // namespace detail

// ConvInteger / QLinearConv geometry as for Conv (conv.h). x's zero point is per tensor, w's per
// tensor or per output channel; out(channel, flat index, acc) receives each int32 result.
// acc: scratch for one output plane (out_d * out_h * out_w int32). Each kernel tap adds its
// contribution to the whole plane, so the innermost loop runs along an output row over
// contiguous x without bounds checks (padding contributes nothing: it equals x's zero point).
template <class X, class W, class Out>
inline void conv_integer(const ConvParams& p, QuantOperand<X> x, QuantOperand<W> w, Out out, std::int32_t* acc) {
  const index_t icg = p.in_channels / p.group, ocg = p.out_channels / p.group;
  const index_t in_plane = p.in_d * p.in_h * p.in_w, out_plane = p.out_d * p.out_h * p.out_w;
  const index_t ksize = p.k_d * p.k_h * p.k_w;
  const std::int32_t zx = x.zero_point_at(0);
  for (index_t n = 0; n < p.batch; ++n) {
    for (index_t m = 0; m < p.out_channels; ++m) {
      const index_t g = m / ocg;
      const std::int32_t zw = w.zero_point_at(m);
      for (index_t i = 0; i < out_plane; ++i) acc[i] = 0;
      for (index_t ic = 0; ic < icg; ++ic) {
        const X* xp = x.data + (n * p.in_channels + g * icg + ic) * in_plane;
        const W* wp = w.data + (m * icg + ic) * ksize;
        for (index_t kd = 0; kd < p.k_d; ++kd) {
          index_t od0, od1;
          detail::valid_outputs(p.out_d, p.in_d, p.stride_d, kd * p.dilation_d - p.pad_d, &od0, &od1);
          for (index_t kh = 0; kh < p.k_h; ++kh) {
            index_t oh0, oh1;
            detail::valid_outputs(p.out_h, p.in_h, p.stride_h, kh * p.dilation_h - p.pad_h, &oh0, &oh1);
            for (index_t kw = 0; kw < p.k_w; ++kw) {
              const std::int32_t wv = static_cast<std::int32_t>(wp[(kd * p.k_h + kh) * p.k_w + kw]) - zw;
              if (wv == 0) continue;
              const index_t w_offset = kw * p.dilation_w - p.pad_w;
              index_t ow0, ow1;
              detail::valid_outputs(p.out_w, p.in_w, p.stride_w, w_offset, &ow0, &ow1);
              // Whole rows of x line up with whole rows of the output (1x1 kernels, the centre
              // column of "same" kernels): one flat loop over the valid rows.
              const bool rows_contiguous = p.stride_w == 1 && w_offset == 0 && p.in_w == p.out_w;
              for (index_t od = od0; od < od1; ++od) {
                const index_t id = od * p.stride_d + kd * p.dilation_d - p.pad_d;
                if (rows_contiguous && p.stride_h == 1) {
                  const index_t ih0 = oh0 + kh * p.dilation_h - p.pad_h;
                  const X* xs = xp + (id * p.in_h + ih0) * p.in_w;
                  std::int32_t* as = acc + (od * p.out_h + oh0) * p.out_w;
                  const index_t count = (oh1 - oh0) * p.out_w;
                  for (index_t i = 0; i < count; ++i) as[i] += (static_cast<std::int32_t>(xs[i]) - zx) * wv;
                  continue;
                }
                for (index_t oh = oh0; oh < oh1; ++oh) {
                  const index_t ih = oh * p.stride_h + kh * p.dilation_h - p.pad_h;
                  const X* xrow = xp + (id * p.in_h + ih) * p.in_w;
                  std::int32_t* arow = acc + (od * p.out_h + oh) * p.out_w;
                  if (p.stride_w == 1) {  // contiguous x: compilers vectorise this loop
                    const X* xs = xrow + w_offset;
                    for (index_t ow = ow0; ow < ow1; ++ow) arow[ow] += (static_cast<std::int32_t>(xs[ow]) - zx) * wv;
                  } else {
                    for (index_t ow = ow0; ow < ow1; ++ow)
                      arow[ow] += (static_cast<std::int32_t>(xrow[ow * p.stride_w + w_offset]) - zx) * wv;
                  }
                }
              }
            }
          }
        }
      }
      const index_t y_plane = (n * p.out_channels + m) * out_plane;
      for (index_t i = 0; i < out_plane; ++i) out(m, y_plane + i, acc[i]);
    }
  }
}

// ---- QLinearAdd, QLinearGlobalAveragePool ----

// QLinearAdd as an elementwise functor (rt::zip and the broadcasting kernels of eltwise.h):
//   c = saturate(round_half_even(a_ratio * (a - a_zp) + b_ratio * (b - b_zp)) + c_zp),
// a_ratio = a_scale / c_scale and b_ratio = b_scale / c_scale in float, the form in which ONNX
// Runtime computes it (and, up to rounding of the last bit, Q(DQ(a) + DQ(b))).
struct QLinearAdd {
  float a_ratio, b_ratio;
  std::int32_t a_zero_point, b_zero_point, c_zero_point;
  template <class Q> Q operator()(Q a, Q b) const {
    const float da = static_cast<float>(static_cast<std::int32_t>(a) - a_zero_point);
    const float db = static_cast<float>(static_cast<std::int32_t>(b) - b_zero_point);
    return saturate_to<Q>(round_half_even(a_ratio * da + b_ratio * db) + static_cast<float>(c_zero_point));
  }
};

// QLinearMul as an elementwise functor:
//   c = saturate(round_half_even(multiplier * (a - a_zp) * (b - b_zp)) + c_zp),
// multiplier = a_scale * b_scale / c_scale in float; the product of the two offsets is exact in
// int32 and then in float (|product| <= 2^16).
struct QLinearMul {
  float multiplier;
  std::int32_t a_zero_point, b_zero_point, c_zero_point;
  template <class Q> Q operator()(Q a, Q b) const {
    const std::int32_t product =
        (static_cast<std::int32_t>(a) - a_zero_point) * (static_cast<std::int32_t>(b) - b_zero_point);
    return saturate_to<Q>(round_half_even(multiplier * static_cast<float>(product)) + static_cast<float>(c_zero_point));
  }
};

// y[i] = table[x[i]] for 8-bit x: a quantized unary function tabulated at compile time over the
// 256 values of x's type (table[0] is the value for the type's lowest x).
template <class Q>
inline void lookup(const Q* x, const Q* table, Q* y, index_t n) {
  constexpr std::int32_t lowest = std::numeric_limits<Q>::lowest();
  for (index_t i = 0; i < n; ++i) y[i] = table[static_cast<std::int32_t>(x[i]) - lowest];
}

// The multiplier of a global average over `size` elements: x_scale / y_scale / size, in float
// (the compiler calls this too, so the constant in the generated code is the same float).
inline float global_average_multiplier(float x_scale, float y_scale, index_t size) {
  return x_scale / y_scale / static_cast<float>(size);
}

// QLinearGlobalAveragePool over `planes` planes of `size` elements (NCHW): the plane's sum of
// x - x_zp in int32, requantized with global_average_multiplier:
//   y = saturate(round_half_even(float(sum) * multiplier) + y_zp).
template <class Q>
inline void qlinear_global_average_pool(index_t planes, index_t size, const Q* x, std::int32_t x_zero_point,
                                        float multiplier, std::int32_t y_zero_point, Q* y) {
  for (index_t c = 0; c < planes; ++c) {
    const Q* xp = x + c * size;
    std::int32_t sum = 0;
    for (index_t i = 0; i < size; ++i) sum += static_cast<std::int32_t>(xp[i]);
    sum -= x_zero_point * static_cast<std::int32_t>(size);
    y[c] = saturate_to<Q>(round_half_even(static_cast<float>(sum) * multiplier) + static_cast<float>(y_zero_point));
  }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_QUANT_H
