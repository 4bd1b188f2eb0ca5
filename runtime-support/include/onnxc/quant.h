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
//    without one (Arm's __SOFTFP__, RISC-V without the F extension, or
//    ONNXC_REQUANTIZE_IN_INTEGERS defined) use the multiplier's
//    mantissa and exponent, computed at compile time, and integer arithmetic only
//    (requantize_in_integers), bit-identical to the float computation.
//
// Accumulation is exact in int32 on (x - x_zero_point) * (w - w_zero_point) products; padding
// contributes nothing (a padded x equals its zero point).
#ifndef ONNXC_QUANT_H
#define ONNXC_QUANT_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#if defined(__SSE2__)  // every x86-64; the VNNI product below needs AVX-512 as well
#include <immintrin.h>
#endif

#if defined(__ARM_FEATURE_DSP) && defined(__ARM_FEATURE_SIMD32)  // Cortex-M4, M7, M33, M55
#include <arm_acle.h>
#define ONNXC_QUANT_DUAL_MAC 1  // dual 16-bit multiply-accumulate (SMLAD)
#endif
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)  // Helium integer vectors (Cortex-M55, M85)
#include <arm_mve.h>
#define ONNXC_QUANT_MVE 1
#endif

#include "onnxc/base.h"
#include "onnxc/conv.h"

namespace onnxc {
namespace rt {

// ---- rounding and saturation ----

// Nearest integer, ties to even, independent of the floating-point environment. NaN stays NaN.
// Branch-free (floor and selects), so loops over it vectorise.
inline float round_half_even(float v) {
  const float down = std::floor(v);
  const float diff = v - down;                                // exact for |v| < 2^23
  const bool odd = down != std::floor(down * 0.5f) * 2.0f;
  const float up = (diff > 0.5f) | ((diff == 0.5f) & odd) ? 1.0f : 0.0f;
  return std::fabs(v) < 8388608.0f ? down + up : v;  // |v| >= 2^23 is integral already (or NaN/inf)
}

// v (integral or infinite) clamped to Q's range; NaN becomes 0. Branch-free, as above.
template <class Q>
inline Q saturate_to(float v) {
  const float lo = static_cast<float>(std::numeric_limits<Q>::lowest());
  const float hi = static_cast<float>(std::numeric_limits<Q>::max());
  v = v == v ? v : 0.0f;
  v = v < lo ? lo : v;
  v = v > hi ? hi : v;
  return static_cast<Q>(static_cast<std::int32_t>(v));  // through int32: vectorisers convert that
}

// saturate(round_half_even(v) + zero_point) into Q's range: v is first clamped to that range
// less the zero point (NaN to 0), which changes no result since the bounds are integers, so the
// rounding only sees small values: adding and subtracting 1.5 * 2^23 rounds a float of magnitude
// below 2^22 to the nearest integer, ties to even. Branch-free and free of floor (which GCC does
// not vectorise under -ftrapping-math), so loops over it vectorise. Needs the default rounding
// mode and no -ffast-math, like the rest of the float kernels.
#if defined(ONNXC_QUANT_DUAL_MAC) && defined(__ARM_FP) && (__ARM_FP & 4)  // and a single-precision FPU
#define ONNXC_QUANTIZE_BYTE_VCVTR 1
// quantize_value for 8-bit Q in five instructions: VCVTR rounds to the nearest integer, ties to
// even (the default rounding mode, which quantize_value assumes too), saturating to int32 (NaN
// gives 0); QADD adds the zero point saturating; USAT/SSAT clamp to Q's range. The same bits as
// clamping first: the bounds are integers.
template <class Q>
inline Q quantize_byte(float v, std::int32_t zero_point) {
  float rounded;
  __asm__("vcvtr.s32.f32 %0, %1" : "=t"(rounded) : "t"(v));
  std::int32_t q;
  std::memcpy(&q, &rounded, 4);
  q = __qadd(q, zero_point);
  return static_cast<Q>(std::numeric_limits<Q>::is_signed ? __ssat(q, 8) : static_cast<std::int32_t>(__usat(q, 8)));
}
#endif

template <class Q>
inline Q quantize_value(float v, std::int32_t zero_point) {
#if defined(ONNXC_QUANTIZE_BYTE_VCVTR)
  if (sizeof(Q) == 1) return quantize_byte<Q>(v, zero_point);
#endif
  const float lo = static_cast<float>(static_cast<std::int32_t>(std::numeric_limits<Q>::lowest()) - zero_point);
  const float hi = static_cast<float>(static_cast<std::int32_t>(std::numeric_limits<Q>::max()) - zero_point);
  v = v == v ? v : 0.0f;
  v = v < lo ? lo : (v > hi ? hi : v);
  const float magic = 12582912.0f;
  return static_cast<Q>(static_cast<std::int32_t>((v + magic) - magic) + zero_point);
}

}  // namespace rt
}  // namespace onnxc

#if defined(ONNXC_QUANTIZE_BYTE_VCVTR) && !defined(ONNXC_QUANT_MVE) && defined(__thumb2__)
#define ONNXC_QUANTIZE_FLOATS_DSP 1
#include "onnxc/quant_quantize_armv7em_dsp.h"  // (tested under QEMU: tests/firmware/kernels)
#endif

namespace onnxc {
namespace rt {

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
  if (q.scale_outer == 0 && q.scale_axis == 0 && q.scale_inner == 0) {  // per tensor: a loop compilers vectorise
    const float s = static_cast<float>(load(scale[0]));
    const std::int32_t zp = zero_point ? static_cast<std::int32_t>(zero_point[0]) : 0;
    const index_t n = q.outer * q.axis * q.inner;
    index_t i = 0;
#if defined(ONNXC_QUANTIZE_FLOATS_DSP)
    if constexpr (sizeof(Q) == 1 && std::is_same<X, float>::value) i = detail::quantize_floats_dsp(x, s, zp, y, n);
#endif
    for (; i < n; ++i) y[i] = quantize_value<Q>(static_cast<float>(load(x[i])) / s, zp);
    return;
  }
  for_each_quant_element(q, [&](index_t i, index_t s) {
    const std::int32_t zp = zero_point ? static_cast<std::int32_t>(zero_point[s]) : 0;
    y[i] = quantize_value<Q>(static_cast<float>(load(x[i])) / static_cast<float>(load(scale[s])), zp);
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

// The 8-bit float quantized types (version 19): y = x / scale + zero_point rounded to nearest
// even into Q, saturating or (saturate = 0) to infinity / NaN; and back, (x - zero_point) * scale.
template <class X, class S, class Q>
inline void quantize_linear_float8(const QuantLayout& q, const X* x, const S* scale, const Q* zero_point, Q* y,
                                   bool saturate) {
  using Format = typename float8_format<Q>::type;
  for_each_quant_element(q, [&](index_t i, index_t s) {
    const float zp = zero_point ? load(zero_point[s]) : 0.0f;
    y[i] = Q{float_to_float8<Format>(static_cast<float>(load(x[i])) / static_cast<float>(load(scale[s])) + zp, saturate)};
  });
}

template <class Q, class S>
inline void dequantize_linear_float8(const QuantLayout& q, const Q* x, const S* scale, const Q* zero_point, S* y) {
  for_each_quant_element(q, [&](index_t i, index_t s) {
    const float zp = zero_point ? load(zero_point[s]) : 0.0f;
    y[i] = store<S>((load(x[i]) - zp) * static_cast<float>(load(scale[s])));
  });
}

}  // namespace rt
}  // namespace onnxc

#if defined(ONNXC_SIMD)
#include "onnxc/simd.h"
#include "onnxc/quant_range_simd.h"
#else
namespace onnxc {
namespace rt {
namespace detail {
// min(0, min x) and max(0, max x), NaN skipped (quant_range_simd.h: the same in vectors).
inline void dynamic_range(index_t n, const float* x, float* lo_out, float* hi_out) {
  float lo = 0.0f, hi = 0.0f;
  for (index_t i = 0; i < n; ++i) {
    lo = x[i] < lo ? x[i] : lo;
    hi = x[i] > hi ? x[i] : hi;
  }
  *lo_out = lo;
  *hi_out = hi;
}
}  // namespace detail
}  // namespace rt
}  // namespace onnxc
#endif

namespace onnxc {
namespace rt {

// DynamicQuantizeLinear: uint8 quantization over the range [min(0, min x), max(0, max x)]:
// scale = range / 255 (1 / 255 for an all-zero x), zero point = round(clamp(-min / scale)).
inline void dynamic_quantize_linear(index_t n, const float* x, std::uint8_t* y, float* y_scale,
                                    std::uint8_t* y_zero_point) {
  float lo = 0.0f, hi = 0.0f;
  detail::dynamic_range(n, x, &lo, &hi);
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

#if (defined(__SOFTFP__) || (defined(__riscv) && !defined(__riscv_flen))) && !defined(ONNXC_REQUANTIZE_IN_INTEGERS)
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

// A constant multiplier as generated code stores it in its tables: only the fields the target's
// requantization reads (the float with an FPU, 4 bytes; mantissa and exponent without, 8), so a
// per-channel table takes no more flash than the target needs. requantize() takes either form.
struct RequantConstant {
#ifdef ONNXC_REQUANTIZE_IN_INTEGERS
  std::int32_t mantissa;
  std::int32_t exponent;
#else
  float multiplier;
#endif
};

// The RequantConstant of make_requant's result {multiplier, mantissa, exponent}.
constexpr RequantConstant requant_constant(float multiplier, std::int32_t mantissa, std::int32_t exponent) {
#ifdef ONNXC_REQUANTIZE_IN_INTEGERS
  return (void)multiplier, RequantConstant{mantissa, exponent};
#else
  return (void)mantissa, (void)exponent, RequantConstant{multiplier};
#endif
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

// The significant bits of v (0 for 0).
inline int bit_length(std::uint32_t v) {
#if defined(__GNUC__) || defined(__clang__)
  return v == 0 ? 0 : 32 - __builtin_clz(v);
#else
  int bits = 0;
  for (; v != 0; v >>= 1) ++bits;
  return bits;
#endif
}

// round_half_even(v / 2^shift) for 1 <= shift <= 31.
inline std::uint32_t shift_right_half_even(std::uint32_t v, int shift) {
  const std::uint32_t q = v >> shift, rem = v & ((1u << shift) - 1), half = 1u << (shift - 1);
  return (rem > half || (rem == half && (q & 1u))) ? q + 1 : q;
}

}  // namespace detail

// saturate(round_half_even(float(acc) * multiplier) + zero_point) into Q's range, in integers
// only, bit-exact with the float computation (float(acc) and the product each rounded to the
// nearest float). In 32-bit words but for the one 24 x 24-bit product, for 32-bit cores without an
// FPU: float(acc) is normalised to [2^23, 2^24) (rounded where it has more than 24 bits; a shift
// that loses nothing otherwise), so the product lies in [2^46, 2^48) and its rounding to 24 bits
// is a shift by 23 or 24 that bit 47 decides, with no count of leading zeros of 64 bits (a libgcc
// call on RV32) and no 64-bit shifts.
template <class Q, class R>
inline Q requantize_in_integers(std::int32_t acc, const R& r, std::int32_t zero_point) {
  const bool negative = acc < 0;
  std::uint32_t mag = negative ? 0u - static_cast<std::uint32_t>(acc) : static_cast<std::uint32_t>(acc);
  if (mag == 0 || r.mantissa == 0) return static_cast<Q>(saturate_to_range<Q>(zero_point));
  std::int32_t exponent = r.exponent;
  // float(acc), as m * 2^exponent with m in [2^23, 2^24).
  const int bits = detail::bit_length(mag);
  if (bits > 24) {
    mag = static_cast<std::uint32_t>(detail::shift_right_half_even(mag, bits - 24));
    exponent += bits - 24;
    if (mag == (1u << 24)) mag >>= 1, ++exponent;  // rounded up to the next power of two
  } else {
    mag <<= 24 - bits;
    exponent -= 24 - bits;
  }
  // The product, rounded to 24 bits: q * 2^exponent with q in [2^23, 2^24].
  const std::uint64_t product = static_cast<std::uint64_t>(mag) * static_cast<std::uint32_t>(r.mantissa);
  const std::uint32_t high = static_cast<std::uint32_t>(product >> 32), low = static_cast<std::uint32_t>(product);
  const int shift = high >> 15 ? 24 : 23;  // product >= 2^47
  std::uint32_t q = (high << (32 - shift)) | (low >> shift);
  const std::uint32_t rem = low & ((1u << shift) - 1), half = 1u << (shift - 1);
  q += (rem > half || (rem == half && (q & 1u))) ? 1u : 0u;
  exponent += shift;
  std::int64_t rounded;
  if (exponent >= 0) {
    rounded = exponent > 30 ? (std::int64_t(1) << 40) : static_cast<std::int64_t>(std::uint64_t(q) << exponent);  // saturates
  } else {
    // q < 2^25 and ties to even: a shift past 25 bits rounds to 0.
    rounded = -exponent > 25 ? 0 : static_cast<std::int64_t>(detail::shift_right_half_even(q, -exponent));
  }
  return static_cast<Q>(saturate_to_range<Q>((negative ? -rounded : rounded) + zero_point));
}

// The same in float, as ONNX Runtime computes it (quantize_value).
template <class Q, class R>
inline Q requantize_in_float(std::int32_t acc, const R& r, std::int32_t zero_point) {
  return quantize_value<Q>(static_cast<float>(acc) * r.multiplier, zero_point);
}

// R: Requant or RequantConstant.
template <class Q, class R>
inline Q requantize(std::int32_t acc, const R& r, std::int32_t zero_point) {
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
// requantization is per channel (requant_stride 1) or shared (0); R: Requant (computed at run
// time) or RequantConstant (a constant table).
template <class Q, class R = Requant>
struct RequantizeOutput {
  Q* y;
  const std::int32_t* bias;
  const R* requant;
  index_t requant_stride;
  std::int32_t zero_point;
  void operator()(index_t channel, index_t i, std::int32_t acc) const {
    const std::int32_t biased = bias ? static_cast<std::int32_t>(static_cast<std::uint32_t>(acc) +
                                                                 static_cast<std::uint32_t>(bias[channel]))
                                     : acc;
    y[i] = requantize<Q>(biased, requant[channel * requant_stride], zero_point);
  }
};

// out(channel, i + j, acc[j] - offset) for j < n: a row of one channel's accumulators.
template <class Out>
inline void store_row(const Out& out, index_t channel, index_t i, const std::int32_t* acc, index_t n,
                      std::int32_t offset) {
  for (index_t j = 0; j < n; ++j) out(channel, i + j, acc[j] - offset);
}

// The same for requantized outputs, with the channel's bias and multiplier read once, so the
// loop vectorises (a per-element call left it scalar: most of an int8 convolution's time).
// What store_row adds to each of a channel's accumulators: its bias less `offset`, wrapping as
// the accumulation does.
template <class Q, class R>
inline std::uint32_t requant_addend(const RequantizeOutput<Q, R>& out, index_t channel, std::int32_t offset) {
  return (out.bias ? static_cast<std::uint32_t>(out.bias[channel]) : 0u) - static_cast<std::uint32_t>(offset);
}

template <class Q, class R>
inline void store_row(const RequantizeOutput<Q, R>& out, index_t channel, index_t i, const std::int32_t* acc, index_t n,
                      std::int32_t offset) {
  const std::uint32_t add = requant_addend(out, channel, offset);
  const R r = out.requant[channel * out.requant_stride];
  Q* y = out.y + i;
  for (index_t j = 0; j < n; ++j)
    y[j] = requantize<Q>(static_cast<std::int32_t>(static_cast<std::uint32_t>(acc[j]) + add), r, out.zero_point);
}

// Kernels whose sums start at row_start(out, channel, offset) instead of 0 (the M4's tiles: the
// bias then costs nothing per output) store them by store_row_started: the same outputs as
// store_row(out, channel, i, sums from 0, n, offset).
template <class Out>
inline std::int32_t row_start(const Out& /*out*/, index_t /*channel*/, std::int32_t offset) {
  return static_cast<std::int32_t>(0u - static_cast<std::uint32_t>(offset));
}
template <class Q, class R>
inline std::int32_t row_start(const RequantizeOutput<Q, R>& out, index_t channel, std::int32_t offset) {
  return static_cast<std::int32_t>(requant_addend(out, channel, offset));
}
template <class Out>
inline void store_row_started(const Out& out, index_t channel, index_t i, const std::int32_t* acc, index_t n) {
  store_row(out, channel, i, acc, n, 0);
}
template <class Q, class R>
inline void store_row_started(const RequantizeOutput<Q, R>& out, index_t channel, index_t i, const std::int32_t* acc,
                              index_t n) {
  store_row(out, channel, i, acc, n, out.bias ? out.bias[channel] : 0);  // (adds 0)
}

// A requantized output mapped through a table (fuse-output-table: an onnxc.QLinearLookup merged
// into the QLinearConv writing its input, on the cores whose store_row looks it up in registers):
// y = table[requantize(acc) - lowest], the two steps' bytes.
template <class Q, class R = Requant>
struct RequantizeLookupOutput {
  RequantizeOutput<Q, R> requant;
  const Q* table;  // 256 entries, table[0] for Q's lowest value
  void operator()(index_t channel, index_t i, std::int32_t acc) const {
    requant(channel, i, acc);
    requant.y[i] = table[static_cast<std::int32_t>(requant.y[i]) - std::numeric_limits<Q>::lowest()];
  }
};
template <class Q, class R>
inline void store_row(const RequantizeLookupOutput<Q, R>& out, index_t channel, index_t i, const std::int32_t* acc,
                      index_t n, std::int32_t offset) {
  store_row(out.requant, channel, i, acc, n, offset);
  Q* y = out.requant.y + i;
  for (index_t j = 0; j < n; ++j) y[j] = out.table[static_cast<std::int32_t>(y[j]) - std::numeric_limits<Q>::lowest()];
}
template <class Q, class R>
inline std::int32_t row_start(const RequantizeLookupOutput<Q, R>& out, index_t channel, std::int32_t offset) {
  return row_start(out.requant, channel, offset);
}
template <class Q, class R>
inline void store_row_started(const RequantizeLookupOutput<Q, R>& out, index_t channel, index_t i,
                              const std::int32_t* acc, index_t n) {
  store_row(out, channel, i, acc, n, out.requant.bias ? out.requant.bias[channel] : 0);  // (adds 0)
}

// The float multiplier of a Requant or RequantConstant (exactly mantissa * 2^exponent where the
// constant keeps only those).
inline float requant_multiplier(const Requant& r) { return r.multiplier; }
inline float requant_multiplier(const RequantConstant& r) {
#ifdef ONNXC_REQUANTIZE_IN_INTEGERS
  return std::ldexp(static_cast<float>(r.mantissa), r.exponent);
#else
  return r.multiplier;
#endif
}

// A requantized output with a second 8-bit tensor added before the rounding (TensorRT's residual,
// `Conv -> Add(DQ(r)) [-> Relu] -> Q`, whose product has no quantization of its own):
//   y[i] = clamp(round_half_even(float(acc + bias) * multiplier + float(r[i] - r_zero) * r_multiplier)
//                + zero_point, low, high)
// multiplier = x_scale * w_scale[channel] / y_scale, r_multiplier = r_scale / y_scale; [low, high]
// within Q's range (a Relu or Clip after the Q; Q's whole range for none). r has y's shape. In
// float on every target (the integer-only requantization has no form for the sum of two products).
template <class Q, class R = Requant, class T = Q>
struct RequantizeAddOutput {
  RequantizeOutput<Q, R> requant;
  const T* residual;
  std::int32_t residual_zero_point;
  float residual_multiplier;
  std::int32_t low, high;
  // The value before the rounding, clamped to [low, high] less the zero point (NaN to 0).
  static float clamped(float v, float lo, float hi) {
    v = v == v ? v : 0.0f;
    return v < lo ? lo : (v > hi ? hi : v);
  }
  void operator()(index_t channel, index_t i, std::int32_t acc) const {
    const std::int32_t biased = static_cast<std::int32_t>(
        static_cast<std::uint32_t>(acc) + (requant.bias ? static_cast<std::uint32_t>(requant.bias[channel]) : 0u));
    const std::int32_t zp = requant.zero_point;
    const float v = static_cast<float>(biased) * requant_multiplier(requant.requant[channel * requant.requant_stride]) +
                    static_cast<float>(static_cast<std::int32_t>(residual[i]) - residual_zero_point) * residual_multiplier;
    const float magic = 12582912.0f;  // rounds |v| < 2^22 to the nearest integer, ties to even
    const float c = clamped(v, static_cast<float>(low - zp), static_cast<float>(high - zp));
    requant.y[i] = static_cast<Q>(static_cast<std::int32_t>((c + magic) - magic) + zp);
  }
};

// The stage from QLinearConv's requantized output (the generated code names no types).
template <class Q, class R, class T>
inline RequantizeAddOutput<Q, R, T> requantize_add(const RequantizeOutput<Q, R>& requant, const T* residual,
                                                   std::int32_t residual_zero_point, float residual_multiplier,
                                                   std::int32_t low, std::int32_t high) {
  return {requant, residual, residual_zero_point, residual_multiplier, low, high};
}

// The same for a row, the channel's bias and multiplier read once (the loop vectorises).
template <class Q, class R, class T>
inline void store_row(const RequantizeAddOutput<Q, R, T>& out, index_t channel, index_t i, const std::int32_t* acc,
                      index_t n, std::int32_t offset) {
  const std::uint32_t add = requant_addend(out.requant, channel, offset);
  const float m = requant_multiplier(out.requant.requant[channel * out.requant.requant_stride]);
  const float rm = out.residual_multiplier;
  const std::int32_t zp = out.requant.zero_point, rz = out.residual_zero_point;
  const float lo = static_cast<float>(out.low - zp), hi = static_cast<float>(out.high - zp);
  const float magic = 12582912.0f;
  const T* r = out.residual + i;
  Q* y = out.requant.y + i;
  for (index_t j = 0; j < n; ++j) {
    const float v = static_cast<float>(static_cast<std::int32_t>(static_cast<std::uint32_t>(acc[j]) + add)) * m +
                    static_cast<float>(static_cast<std::int32_t>(r[j]) - rz) * rm;
    const float c = RequantizeAddOutput<Q, R, T>::clamped(v, lo, hi);
    y[j] = static_cast<Q>(static_cast<std::int32_t>((c + magic) - magic) + zp);
  }
}

}  // namespace rt
}  // namespace onnxc

#if defined(ONNXC_QUANT_MVE) && (__ARM_FEATURE_MVE & 2) && !defined(ONNXC_REQUANTIZE_IN_INTEGERS)
#include "onnxc/quant_requantize_mve.h"  // (tested under QEMU: tests/firmware/kernels)
#endif
#if defined(ONNXC_QUANTIZE_BYTE_VCVTR) && !defined(ONNXC_QUANT_MVE) && !defined(ONNXC_REQUANTIZE_IN_INTEGERS) && \
    defined(__thumb2__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#include "onnxc/quant_requantize_armv7em_dsp.h"  // (tested under QEMU: tests/firmware/kernels)
#endif

namespace onnxc {
namespace rt {

#if defined(__AVX512F__)
// store_row of the n <= 16 lanes of a vector of accumulators.
template <class Out>
inline void store_vector(const Out& out, index_t channel, index_t i, __m512i acc, index_t n, std::int32_t offset) {
  alignas(64) std::int32_t lanes[16];
  _mm512_store_si512(lanes, acc);
  store_row(out, channel, i, lanes, n, offset);
}

#if !defined(ONNXC_REQUANTIZE_IN_INTEGERS)
// The requantization in the vector, bit for bit quantize_value's: float(acc) * multiplier,
// clamped to Q's range less the zero point, converted rounding to nearest even (the default
// rounding mode, which quantize_value's rounding assumes too), plus the zero point. (GCC
// vectorises store_row's loop with 4-lane vectors and mask juggling: as slow as the products.)
template <class Q, class R>
inline void store_vector(const RequantizeOutput<Q, R>& out, index_t channel, index_t i, __m512i acc, index_t n,
                         std::int32_t offset) {
  const __mmask16 all = 0xFFFF;  // (the zero-masked forms: the unmasked ones trip GCC 12's -Wuninitialized)
  const std::int32_t zp = out.zero_point;
  const std::int32_t add = static_cast<std::int32_t>(requant_addend(out, channel, offset));
  const float multiplier = out.requant[channel * out.requant_stride].multiplier;
  const float lo = static_cast<float>(static_cast<std::int32_t>(std::numeric_limits<Q>::lowest()) - zp);
  const float hi = static_cast<float>(static_cast<std::int32_t>(std::numeric_limits<Q>::max()) - zp);
  const __m512i biased = _mm512_add_epi32(acc, _mm512_set1_epi32(add));
  __m512 v = _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(all, biased), _mm512_set1_ps(multiplier));
  v = _mm512_maskz_min_ps(all, _mm512_maskz_max_ps(all, v, _mm512_set1_ps(lo)), _mm512_set1_ps(hi));
  const __m512i q = _mm512_add_epi32(_mm512_maskz_cvtps_epi32(all, v), _mm512_set1_epi32(zp));
  const __mmask16 mask = n >= 16 ? all : static_cast<__mmask16>((1u << n) - 1u);
  _mm512_mask_cvtepi32_storeu_epi8(out.y + i, mask, q);  // in Q's range: truncation keeps it
}
#endif

// RequantizeAddOutput's row in the vector, bit for bit its store_row: the residual's bytes
// widened, both products in float, clamped to [low, high] less the zero point, rounded to nearest
// even (the default rounding mode).
template <class Q, class R, class T>
inline void store_vector(const RequantizeAddOutput<Q, R, T>& out, index_t channel, index_t i, __m512i acc, index_t n,
                         std::int32_t offset) {
  const __mmask16 all = 0xFFFF;
  const __mmask16 mask = n >= 16 ? all : static_cast<__mmask16>((1u << n) - 1u);
  const std::int32_t zp = out.requant.zero_point;
  const std::int32_t add = static_cast<std::int32_t>(requant_addend(out.requant, channel, offset));
  const float multiplier = requant_multiplier(out.requant.requant[channel * out.requant.requant_stride]);
  const __m128i bytes = _mm_maskz_loadu_epi8(mask, out.residual + i);
  const __m512i r = std::numeric_limits<T>::is_signed ? _mm512_cvtepi8_epi32(bytes) : _mm512_cvtepu8_epi32(bytes);
  const __m512 rv = _mm512_maskz_cvtepi32_ps(all, _mm512_sub_epi32(r, _mm512_set1_epi32(out.residual_zero_point)));
  const __m512i biased = _mm512_add_epi32(acc, _mm512_set1_epi32(add));
  __m512 v = _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(all, biased), _mm512_set1_ps(multiplier));
  v = _mm512_add_ps(v, _mm512_mul_ps(rv, _mm512_set1_ps(out.residual_multiplier)));  // (no FMA: store_row's two roundings)
  v = _mm512_maskz_min_ps(all, _mm512_maskz_max_ps(all, v, _mm512_set1_ps(static_cast<float>(out.low - zp))),
                          _mm512_set1_ps(static_cast<float>(out.high - zp)));
  const __m512i q = _mm512_add_epi32(_mm512_maskz_cvtps_epi32(all, v), _mm512_set1_epi32(zp));
  _mm512_mask_cvtepi32_storeu_epi8(out.requant.y + i, mask, q);
}
#endif

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

#if defined(__AVX512VNNI__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#define ONNXC_MATMUL_INTEGER_VNNI 1  // matmul_integer takes quant_matmul_avx512vnni.h's kernel
namespace detail {
template <class A, class B, class Out>
inline void matmul_integer_vnni(index_t batches, const index_t* a_offsets, const index_t* b_offsets, index_t m,
                                index_t n, index_t k, QuantOperand<A> a, QuantOperand<B> b, Out out);
}  // namespace detail
#endif

template <class A, class B, class Out>
inline void matmul_integer(index_t batches, const index_t* a_offsets, const index_t* b_offsets, index_t m, index_t n,
                           index_t k, QuantOperand<A> a, QuantOperand<B> b, Out out) {
#if defined(ONNXC_MATMUL_INTEGER_VNNI)
  if (k > 0) return detail::matmul_integer_vnni(batches, a_offsets, b_offsets, m, n, k, a, b, out);
#endif
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

// Dual 16-bit arithmetic: the DSP extension's instructions, or portable C++ computing the same
// bits where it is absent (so hosts run and test the kernels built on it).
#if defined(ONNXC_QUANT_DUAL_MAC)
// Bytes 0 and 2 of v, then bytes 1 and 3, as the two 16-bit halves of a word (sign-extended for
// int8, zero-extended for uint8). The odd bytes through the instruction's own rotation (GCC does
// not fold a rotation into the intrinsic's operand: one more instruction).
inline std::uint32_t even_bytes(std::uint32_t v, std::uint8_t) { return __uxtb16(v); }
inline std::uint32_t odd_bytes(std::uint32_t v, std::uint8_t) {
  std::uint32_t r;
  __asm__("uxtb16 %0, %1, ror #8" : "=r"(r) : "r"(v));
  return r;
}
inline std::uint32_t even_bytes(std::uint32_t v, std::int8_t) { return static_cast<std::uint32_t>(__sxtb16(v)); }
inline std::uint32_t odd_bytes(std::uint32_t v, std::int8_t) {
  std::uint32_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(v));
  return r;
}

#else  // the same bits in portable C++
inline std::uint32_t even_bytes(std::uint32_t v, std::uint8_t) { return v & 0x00FF00FFu; }
inline std::uint32_t odd_bytes(std::uint32_t v, std::uint8_t) { return (v >> 8) & 0x00FF00FFu; }
inline std::uint32_t even_bytes(std::uint32_t v, std::int8_t) {
  const auto half = [](std::uint32_t byte) { return static_cast<std::uint32_t>(static_cast<std::uint16_t>(static_cast<std::int8_t>(byte))); };
  return half(v & 0xFFu) | (half((v >> 16) & 0xFFu) << 16);
}
inline std::uint32_t odd_bytes(std::uint32_t v, std::int8_t) { return even_bytes(v >> 8, std::int8_t{}); }
#endif

// The low halves of a and b as one word (a's low), and the high halves. On cores with the DSP
// extension one PKHBT / PKHTB each (GCC builds them of two instructions, UXTH or AND, and ORR).
#if defined(ONNXC_QUANT_DUAL_MAC) && defined(__thumb2__)
inline std::uint32_t low_halves(std::uint32_t a, std::uint32_t b) {
  std::uint32_t r;
  __asm__("pkhbt %0, %1, %2, lsl #16" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
inline std::uint32_t high_halves(std::uint32_t a, std::uint32_t b) {
  std::uint32_t r;
  __asm__("pkhtb %0, %2, %1, asr #16" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
#else
inline std::uint32_t low_halves(std::uint32_t a, std::uint32_t b) { return (a & 0xFFFFu) | (b << 16); }
inline std::uint32_t high_halves(std::uint32_t a, std::uint32_t b) { return (a >> 16) | (b & 0xFFFF0000u); }
#endif

// Bytes p[0] and p[1] as a 16-bit number, p[0] the low byte (one LDRH on little-endian cores).
inline std::uint32_t load_u16(const std::uint8_t* p) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  std::uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
#else
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8);
#endif
}

// The four bytes from p on as a word, p[0] the low byte (one LDR on little-endian cores).
inline std::uint32_t load_u32(const std::uint8_t* p) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
#else
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
         (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
#endif
}
inline std::uint32_t load_u32(const std::int8_t* p) { return load_u32(reinterpret_cast<const std::uint8_t*>(p)); }

// The signed 16-bit halves of a word.
inline std::int32_t low_half(std::uint32_t v) { return static_cast<std::int16_t>(v & 0xFFFFu); }
inline std::int32_t high_half(std::uint32_t v) { return static_cast<std::int16_t>(v >> 16); }

// acc + lo(a) * lo(b) (SMLABB) and acc + hi(a) * lo(b) (SMLATB), wrapping.
inline std::int32_t mac_low(std::uint32_t a, std::uint32_t b, std::int32_t acc) {
#if defined(ONNXC_QUANT_DUAL_MAC)
  return __smlabb(static_cast<std::int32_t>(a), static_cast<std::int32_t>(b), acc);
#else
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(acc) + static_cast<std::uint32_t>(low_half(a) * low_half(b)));
#endif
}
inline std::int32_t mac_high(std::uint32_t a, std::uint32_t b, std::int32_t acc) {
#if defined(ONNXC_QUANT_DUAL_MAC)
  return __smlatb(static_cast<std::int32_t>(a), static_cast<std::int32_t>(b), acc);
#else
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(acc) + static_cast<std::uint32_t>(high_half(a) * low_half(b)));
#endif
}

// acc + lo(a) * lo(b) + hi(a) * hi(b), the halves signed 16-bit, wrapping (SMLAD).
inline std::int32_t dual_mac(std::uint32_t a, std::uint32_t b, std::int32_t acc) {
#if defined(ONNXC_QUANT_DUAL_MAC)
  return __smlad(a, b, acc);
#else
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(acc) + static_cast<std::uint32_t>(low_half(a) * low_half(b)) +
                                   static_cast<std::uint32_t>(high_half(a) * high_half(b)));
#endif
}

// acc[i] += (x0[i] - zx) * w0 + (x1[i] - zx) * w1 for i < n: two input channels under one tap,
// or two taps of one channel (x1 may be x0 with w1 0). With the DSP extension, four outputs at a
// time: one word of each of x0 and x1, their bytes paired as 16-bit halves, x's zero point taken
// off both halves by one SSUB16, and each output's two products summed by one SMLAD (exact: the
// offset inputs and weights fit 16 bits, |w - zw| <= 255).
template <class X>
inline void accumulate_pair(std::int32_t* acc, const X* x0, const X* x1, index_t n, std::int32_t zx,
                                    std::int32_t w0, std::int32_t w1) {
  index_t i = 0;
#if defined(ONNXC_QUANT_DUAL_MAC)
  const std::uint32_t weights = low_halves(static_cast<std::uint32_t>(w0), static_cast<std::uint32_t>(w1));
  const std::uint32_t zx_pair = low_halves(static_cast<std::uint32_t>(zx), static_cast<std::uint32_t>(zx));
  for (; i + 4 <= n; i += 4) {
    std::uint32_t a, b;
    std::memcpy(&a, x0 + i, 4);
    std::memcpy(&b, x1 + i, 4);
    const std::uint32_t a02 = even_bytes(a, X{}), a13 = odd_bytes(a, X{});
    const std::uint32_t b02 = even_bytes(b, X{}), b13 = odd_bytes(b, X{});
    acc[i] = __smlad(__ssub16(low_halves(a02, b02), zx_pair), weights, acc[i]);
    acc[i + 1] = __smlad(__ssub16(low_halves(a13, b13), zx_pair), weights, acc[i + 1]);
    acc[i + 2] = __smlad(__ssub16(high_halves(a02, b02), zx_pair), weights, acc[i + 2]);
    acc[i + 3] = __smlad(__ssub16(high_halves(a13, b13), zx_pair), weights, acc[i + 3]);
  }
#endif
  for (; i < n; ++i)
    acc[i] += (static_cast<std::int32_t>(x0[i]) - zx) * w0 + (static_cast<std::int32_t>(x1[i]) - zx) * w1;
}

}  // namespace detail

// n bytes from src to dst, and n bytes of v at dst: the short runs of im2col rows. With Helium
// sixteen bytes per predicated vector (newlib's memcpy and memset take about 4 instructions per
// byte on these short, unaligned runs); elsewhere the library's.
inline void copy_bytes(std::uint8_t* dst, const std::uint8_t* src, index_t n) {
#if defined(ONNXC_QUANT_MVE)
  index_t j = 0;
  for (; j + 16 <= n; j += 16) vst1q_u8(dst + j, vld1q_u8(src + j));
  if (j < n) {
    const mve_pred16_t p = vctp8q(static_cast<std::uint32_t>(n - j));
    vstrbq_p_u8(dst + j, vldrbq_z_u8(src + j, p), p);
  }
#else
  if (n > 0) std::memcpy(dst, src, static_cast<std::size_t>(n));
#endif
}

// n bytes from src to dst by (unaligned) words, the last one ending at the run's end (overlapping
// the one before; nothing read or written past the run): padded rows on the M4 and M7, where a
// library call per short row costs more than the copy.
inline void copy_bytes_by_words(std::uint8_t* dst, const std::uint8_t* src, index_t n) {
  if (n < 4) {
    for (index_t j = 0; j < n; ++j) dst[j] = src[j];
    return;
  }
  for (index_t j = 0; j < n - 4; j += 4) {
    const std::uint32_t v = detail::load_u32(src + j);
    std::memcpy(dst + j, &v, 4);
#if defined(__GNUC__)
    __asm__("" : "+r"(dst));  // (a word per turn, not a call of memcpy for a few bytes)
#endif
  }
  const std::uint32_t last = detail::load_u32(src + n - 4);
  std::memcpy(dst + n - 4, &last, 4);
}

// dst[j] = src[j * stride] for j < n: im2col rows of strided convolutions. With Helium sixteen
// per byte gather (offsets 0, stride, ..., 15 stride: 8-bit, so strides up to 17).
inline void copy_bytes_strided(std::uint8_t* dst, const std::uint8_t* src, index_t stride, index_t n) {
  index_t j = 0;
#if defined(ONNXC_QUANT_MVE)
  if (stride <= 17) {
    const uint8x16_t offsets = vmulq_n_u8(vidupq_n_u8(0u, 1), static_cast<std::uint8_t>(stride));
    for (; j + 16 <= n; j += 16) vst1q_u8(dst + j, vldrbq_gather_offset_u8(src + j * stride, offsets));
    if (j < n) {
      const mve_pred16_t p = vctp8q(static_cast<std::uint32_t>(n - j));
      vstrbq_p_u8(dst + j, vldrbq_gather_offset_z_u8(src + j * stride, offsets, p), p);
    }
    return;
  }
#elif defined(ONNXC_QUANT_DUAL_MAC) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (stride == 2 && n >= 4) {
    // Four bytes from two words: the even bytes of src[2 j ..] (UXTB16) and the odd ones of
    // src[2 j + 3 ..] (UXTB16 with ROR 8: src[2 j + 4], src[2 j + 6], so nothing is read past
    // src[2 (n - 1)]), each pair closed up, the halves joined by PKHBT: eight bytes a turn, then
    // a last four ending at the run's end (overlapping the ones before, as copy_bytes_by_words).
    const auto quad = [](const std::uint8_t* s) {
      std::uint32_t lo = detail::even_bytes(detail::load_u32(s), std::uint8_t{});
      std::uint32_t hi = detail::odd_bytes(detail::load_u32(s + 3), std::uint8_t{});
      return detail::low_halves(lo | (lo >> 8), hi | (hi >> 8));
    };
    for (; j + 8 <= n; j += 8) {
      const std::uint32_t v0 = quad(src + 2 * j), v1 = quad(src + 2 * j + 8);
      std::memcpy(dst + j, &v0, 4);
      std::memcpy(dst + j + 4, &v1, 4);
    }
    if (j + 4 < n) {
      const std::uint32_t v = quad(src + 2 * j);
      std::memcpy(dst + j, &v, 4);
    }
    if (j < n) {
      const std::uint32_t v = quad(src + 2 * (n - 4));
      std::memcpy(dst + n - 4, &v, 4);
    }
    return;
  }
#endif
  for (; j < n; ++j) dst[j] = src[j * stride];
}

inline void fill_bytes(std::uint8_t* dst, std::uint8_t v, index_t n) {
#if defined(ONNXC_QUANT_MVE)
  const uint8x16_t value = vdupq_n_u8(v);
  index_t j = 0;
  for (; j + 16 <= n; j += 16) vst1q_u8(dst + j, value);
  if (j < n) vstrbq_p_u8(dst + j, value, vctp8q(static_cast<std::uint32_t>(n - j)));
#else
  if (n > 0) std::memset(dst, v, static_cast<std::size_t>(n));
#endif
}

namespace detail {
// depthwise_rows' limits (below; the M4's stride-2 form in quant_depthwise_rows_armv7em_dsp.h too).
constexpr index_t kDepthwiseRowsMaxRow = 256;  // padded input row bytes
constexpr index_t kDepthwiseRowsMaxOut = 128;  // output row
constexpr index_t kDepthwiseRowsMaxTaps = 64;
}  // namespace detail

}  // namespace rt
}  // namespace onnxc

#if defined(ONNXC_QUANT_MVE)
#include "onnxc/quant_depthwise_mve.h"  // (tested under QEMU: tests/firmware/kernels)
#endif
#if defined(ONNXC_QUANT_DUAL_MAC) && !defined(ONNXC_QUANT_MVE)
#include "onnxc/quant_depthwise_rows_armv7em_dsp.h"  // (tested under QEMU: tests/firmware/kernels)
#endif

namespace onnxc {
namespace rt {

// ---- depthwise convolution row by row, for the Cortex-M cores ----
//
// A depthwise 2-D convolution (dilation 1, any kernel, stride and padding) without scratch, which
// conv_integer takes on cores with the DSP extension or Helium (MobileNet's stride-2 layers; the
// plane kernel spent about 15 instructions per multiply-accumulate on them): per output row and
// kernel row inside the input, the input row with its horizontal padding (x's zero point) in a
// buffer on the stack, then the kernel row's taps added to the output row's sums
// (depthwise_row_taps: Helium's vectors in quant_depthwise_mve.h, else a load and a
// multiply-add per tap); kernel rows above or below the input are skipped and left out of the
// zero-point correction. One store_row per output row.
namespace detail {

inline bool depthwise_rows_applies(const ConvParams& p) {
  return p.group == p.in_channels && p.group == p.out_channels && p.in_d == 1 && p.k_d == 1 && p.out_d == 1 &&
         p.dilation_h == 1 && p.dilation_w == 1 && p.k_h * p.k_w <= kDepthwiseRowsMaxTaps &&
         (p.out_w - 1) * p.stride_w + p.k_w <= kDepthwiseRowsMaxRow && p.out_w <= kDepthwiseRowsMaxOut;
}

#if !defined(ONNXC_QUANT_MVE)
// acc[ow] (ow < out_w) += sum over kw of row[ow * stride + kw] * k[kw] (= instead of += if first).
template <class X>
inline void depthwise_row_taps(const X* row, index_t out_w, index_t stride, const std::int32_t* k, index_t k_w,
                               bool first, std::int32_t* acc) {
  if (k_w == 3) {  // the common kernel, its weights in registers
    const std::int32_t k0 = k[0], k1 = k[1], k2 = k[2];
    for (index_t ow = 0; ow < out_w; ++ow) {
      const X* s = row + ow * stride;
      const std::int32_t sum = s[0] * k0 + s[1] * k1 + s[2] * k2;
      acc[ow] = first ? sum : acc[ow] + sum;
    }
    return;
  }
  for (index_t ow = 0; ow < out_w; ++ow) {
    const X* s = row + ow * stride;
    std::int32_t sum = 0;
    for (index_t kw = 0; kw < k_w; ++kw) sum += s[kw] * k[kw];
    acc[ow] = first ? sum : acc[ow] + sum;
  }
}
#else
template <class X>
inline void depthwise_row_taps(const X* row, index_t out_w, index_t stride, const std::int32_t* k, index_t k_w,
                               bool first, std::int32_t* acc) {
  depthwise_row_taps_mve(row, out_w, stride, k, k_w, first, acc);
}
#endif

template <class X, class W, class Out>
inline void depthwise_rows(const ConvParams& p, QuantOperand<X> x, QuantOperand<W> w, Out out) {
#if defined(ONNXC_QUANT_DUAL_MAC) && !defined(ONNXC_QUANT_MVE)
  if (p.k_h == 3 && p.k_w == 3 && p.stride_w == 2) return depthwise_3x3_s2_dsp(p, x, w, out);
#endif
  const X zx = static_cast<X>(x.zero_point_at(0));
  const index_t in_plane = p.in_h * p.in_w, out_plane = p.out_h * p.out_w, taps = p.k_h * p.k_w;
  const index_t cols = (p.out_w - 1) * p.stride_w + p.k_w;  // padded input columns the row reads
  // Input columns [lo - pad_w, hi - pad_w) go to row[lo, hi); the rest is x's zero point.
  const index_t lo = p.pad_w < cols ? p.pad_w : cols;
  const index_t hi = p.pad_w + p.in_w < cols ? p.pad_w + p.in_w : cols;
  X row[kDepthwiseRowsMaxRow + 4];  // (+4: the stride-2 taps' words read one byte past)
  std::int32_t acc[kDepthwiseRowsMaxOut];
  for (index_t j = 0; j < cols + 4; ++j) row[j] = zx;
  for (index_t n = 0; n < p.batch; ++n)
    for (index_t c = 0; c < p.out_channels; ++c) {
      const X* xc = x.data + (n * p.in_channels + c) * in_plane;
      const W* wc = w.data + c * taps;
      const std::int32_t zw = w.zero_point_at(c);
      std::int32_t k[kDepthwiseRowsMaxTaps];
      for (index_t t = 0; t < taps; ++t) k[t] = static_cast<std::int32_t>(wc[t]) - zw;
      for (index_t oh = 0; oh < p.out_h; ++oh) {
        std::int32_t weight_sum = 0;  // of the kernel rows inside the input
        bool first = true;
        for (index_t kh = 0; kh < p.k_h; ++kh) {
          const index_t ih = oh * p.stride_h + kh - p.pad_h;
          if (ih < 0 || ih >= p.in_h) continue;
          copy_bytes(reinterpret_cast<std::uint8_t*>(row + lo),
                     reinterpret_cast<const std::uint8_t*>(xc + ih * p.in_w + lo - p.pad_w), hi - lo);
          for (index_t kw = 0; kw < p.k_w; ++kw) weight_sum += k[kh * p.k_w + kw];
#if defined(ONNXC_QUANT_DUAL_MAC) && !defined(ONNXC_QUANT_MVE)
          if (p.k_w == 3 && p.stride_w == 2) {  // (quant_depthwise_rows_armv7em_dsp.h)
            if (first) depthwise_row_taps_s2_dsp<true>(row, p.out_w, k + kh * 3, acc);
            else depthwise_row_taps_s2_dsp<false>(row, p.out_w, k + kh * 3, acc);
            first = false;
            continue;
          }
#endif
          depthwise_row_taps(row, p.out_w, p.stride_w, k + kh * p.k_w, p.k_w, first, acc);
          first = false;
        }
        if (first)
          for (index_t ow = 0; ow < p.out_w; ++ow) acc[ow] = 0;
        store_row(out, c, (n * p.out_channels + c) * out_plane + oh * p.out_w, acc, p.out_w,
                  static_cast<std::int32_t>(zx) * weight_sum);
      }
    }
}

}  // namespace detail

// ConvInteger / QLinearConv geometry as for Conv (conv.h). x's zero point is per tensor, w's per
// tensor or per output channel; out(channel, flat index, acc) receives each int32 result.
// acc: scratch for one output plane (out_d * out_h * out_w int32). Each kernel tap adds its
// contribution to the whole plane, so the innermost loop runs along an output row over
// contiguous x without bounds checks (padding contributes nothing: it equals x's zero point).
template <class X, class W, class Out>
inline void conv_integer(const ConvParams& p, QuantOperand<X> x, QuantOperand<W> w, Out out, std::int32_t* acc) {
#if defined(ONNXC_QUANT_MVE)
  if (detail::depthwise_3x3_mve_applies(p)) return detail::depthwise_3x3_mve(p, x, w, out);  // (any stride)
#endif
#if defined(ONNXC_QUANT_MVE) || defined(ONNXC_QUANT_DUAL_MAC)
  if (detail::depthwise_rows_applies(p)) return detail::depthwise_rows(p, x, w, out);
#endif
  const index_t icg = p.in_channels / p.group, ocg = p.out_channels / p.group;
  const index_t in_plane = p.in_d * p.in_h * p.in_w, out_plane = p.out_d * p.out_h * p.out_w;
  const index_t ksize = p.k_d * p.k_h * p.k_w;
  const std::int32_t zx = x.zero_point_at(0);
  for (index_t n = 0; n < p.batch; ++n) {
    for (index_t m = 0; m < p.out_channels; ++m) {
      const index_t g = m / ocg;
      const std::int32_t zw = w.zero_point_at(m);
      for (index_t i = 0; i < out_plane; ++i) acc[i] = 0;
      // Input channels two at a time (each accumulator loaded and stored once per pair); an odd
      // last channel is paired with itself and a weight of 0.
      for (index_t ic = 0; ic < icg; ic += 2) {
        const index_t ic1 = ic + 1 < icg ? ic + 1 : ic;
        const X* xp0 = x.data + (n * p.in_channels + g * icg + ic) * in_plane;
        const X* xp1 = x.data + (n * p.in_channels + g * icg + ic1) * in_plane;
        const W* wp0 = w.data + (m * icg + ic) * ksize;
        const W* wp1 = w.data + (m * icg + ic1) * ksize;
        for (index_t kd = 0; kd < p.k_d; ++kd) {
          index_t od0, od1;
          detail::valid_outputs(p.out_d, p.in_d, p.stride_d, kd * p.dilation_d - p.pad_d, &od0, &od1);
          for (index_t kh = 0; kh < p.k_h; ++kh) {
            index_t oh0, oh1;
            detail::valid_outputs(p.out_h, p.in_h, p.stride_h, kh * p.dilation_h - p.pad_h, &oh0, &oh1);
            for (index_t kw = 0; kw < p.k_w; ++kw) {
              const index_t tap = (kd * p.k_h + kh) * p.k_w + kw;
              const std::int32_t wv0 = static_cast<std::int32_t>(wp0[tap]) - zw;
              const std::int32_t wv1 = ic1 != ic ? static_cast<std::int32_t>(wp1[tap]) - zw : 0;
              if (wv0 == 0 && wv1 == 0) continue;
              const index_t w_offset = kw * p.dilation_w - p.pad_w;
              index_t ow0, ow1;
              detail::valid_outputs(p.out_w, p.in_w, p.stride_w, w_offset, &ow0, &ow1);
              // Whole rows of x line up with whole rows of the output (1x1 kernels, the centre
              // column of "same" kernels): one flat loop over the valid rows.
              const bool rows_contiguous = p.stride_w == 1 && w_offset == 0 && p.in_w == p.out_w;
              for (index_t od = od0; od < od1; ++od) {
                const index_t id = od * p.stride_d + kd * p.dilation_d - p.pad_d;
                if (rows_contiguous && p.stride_h == 1) {
                  const index_t first = (id * p.in_h + oh0 + kh * p.dilation_h - p.pad_h) * p.in_w;
                  detail::accumulate_pair(acc + (od * p.out_h + oh0) * p.out_w, xp0 + first, xp1 + first,
                                                  (oh1 - oh0) * p.out_w, zx, wv0, wv1);
                  continue;
                }
                for (index_t oh = oh0; oh < oh1; ++oh) {
                  const index_t ih = oh * p.stride_h + kh * p.dilation_h - p.pad_h;
                  const index_t row = (id * p.in_h + ih) * p.in_w;
                  std::int32_t* arow = acc + (od * p.out_h + oh) * p.out_w;
                  if (p.stride_w == 1) {  // contiguous x
                    detail::accumulate_pair(arow + ow0, xp0 + row + w_offset + ow0, xp1 + row + w_offset + ow0,
                                                    ow1 - ow0, zx, wv0, wv1);
                    continue;
                  }
                  for (index_t ow = ow0; ow < ow1; ++ow) {
                    const index_t ix = row + ow * p.stride_w + w_offset;
                    arow[ow] += (static_cast<std::int32_t>(xp0[ix]) - zx) * wv0 +
                                (static_cast<std::int32_t>(xp1[ix]) - zx) * wv1;
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

// Depthwise integer convolution (one input and one output channel per group), 2-d, stride 1,
// dilation 1. Each plane is copied with its padding (x's zero point) into scratch, so every tap
// is one flat multiply-add over the padded width (contiguous, vectorised); the columns past the
// output width are computed and dropped. The zero points leave the inner loop:
//   sum_t (x_t - zx) * (w_t - zw) = sum_t x_t * (w_t - zw) - zx * sum_t (w_t - zw),
// the second term one constant per channel that store_row subtracts, so the inner loop multiplies
// the raw 8-bit inputs by the offset weights (|w - zw| <= 255: 16 bits). The plane's accumulators
// are moved together (dropping the padded columns) and requantized by one store_row, whose loop
// vectorises even where output rows are narrower than a vector.
// Scratch: depthwise_integer_scratch_bytes(p).
inline bool depthwise_integer_applies(const ConvParams& p) {
  return p.group == p.in_channels && p.group == p.out_channels && p.in_d == 1 && p.k_d == 1 && p.stride_h == 1 &&
         p.stride_w == 1 && p.dilation_h == 1 && p.dilation_w == 1;
}

namespace detail {
inline index_t padded_width(const ConvParams& p) { return p.out_w + p.k_w - 1; }
inline index_t padded_height(const ConvParams& p) { return p.out_h + p.k_h - 1; }
}  // namespace detail

inline index_t depthwise_integer_scratch_bytes(const ConvParams& p) {
  const index_t wp = detail::padded_width(p), hp = detail::padded_height(p);
  const index_t acc = p.out_h * wp * static_cast<index_t>(sizeof(std::int32_t));
  return acc + (hp * wp + p.k_w - 1 + 3) / 4 * 4;  // the last taps read k_w - 1 bytes past the plane
}

namespace detail {

// Channel plane xc copied into `padded` (padded_height x padded_width, then the k_w - 1 bytes
// the last taps read), x's zero point around it.
template <class X>
inline void depthwise_pad_plane(const ConvParams& p, const X* xc, X zx, X* padded) {
  const index_t wp = padded_width(p), hp = padded_height(p);
  // Padded columns [lo, hi) hold input columns [lo - pad_w, hi - pad_w).
  const index_t lo = p.pad_w < wp ? p.pad_w : wp;
  const index_t hi = p.pad_w + p.in_w < wp ? p.pad_w + p.in_w : wp;
  for (index_t r = 0; r < hp; ++r) {
    X* row = padded + r * wp;
    const index_t ih = r - p.pad_h;
    if (ih < 0 || ih >= p.in_h) {
      for (index_t j = 0; j < wp; ++j) row[j] = zx;
      continue;
    }
    for (index_t j = 0; j < lo; ++j) row[j] = zx;
    std::memcpy(row + lo, xc + ih * p.in_w + lo - p.pad_w, static_cast<std::size_t>(hi - lo) * sizeof(X));
    for (index_t j = hi; j < wp; ++j) row[j] = zx;
  }
  for (index_t j = 0; j < p.k_w - 1; ++j) padded[hp * wp + j] = zx;
}

constexpr index_t kDepthwiseBlock = 64;  // flat outputs per pass over the taps

// acc[j] = sum over the taps (kh, kw) of src[kh * wp + kw + j] * (wc[kh * k_w + kw] - zw), for
// j < n <= kDepthwiseBlock: two taps at a time (accumulate_pair, SMLAD on DSP cores; the odd last
// tap paired with itself and a weight of 0).
template <class X, class W>
inline void depthwise_integer_block_portable(const X* src, index_t wp, index_t k_h, index_t k_w, const W* wc,
                                             std::int32_t zw, index_t n, std::int32_t* acc) {
  for (index_t j = 0; j < n; ++j) acc[j] = 0;
  const index_t taps = k_h * k_w;
  for (index_t t = 0; t < taps; t += 2) {
    const index_t t1 = t + 1 < taps ? t + 1 : t;
    const std::int32_t w0 = static_cast<std::int32_t>(wc[t]) - zw;
    const std::int32_t w1 = t1 != t ? static_cast<std::int32_t>(wc[t1]) - zw : 0;
    accumulate_pair(acc, src + t / k_w * wp + t % k_w, src + t1 / k_w * wp + t1 % k_w, n, 0, w0, w1);
  }
}

#if defined(__AVX512BW__) && defined(__AVX512VL__)
#define ONNXC_DEPTHWISE_INTEGER_AVX512 1

// Sixteen 8-bit values widened to 32-bit lanes: the value in the low 16 bits, the high 16 bits 0
// (or all ones for a negative int8). (The zero-masked widening: the unmasked form trips GCC 12's
// -Wmaybe-uninitialized.)
inline __m512i widen_to_epi32(__m128i v, std::uint8_t) { return _mm512_maskz_cvtepu8_epi32(0xFFFF, v); }
inline __m512i widen_to_epi32(__m128i v, std::int8_t) { return _mm512_maskz_cvtepi8_epi32(0xFFFF, v); }

constexpr index_t kDepthwiseMaxTaps = 64;  // taps of the kernels depthwise_integer_same_width computes

// Whether depthwise_integer_same_width computes this depthwise convolution: output rows as wide
// as the input rows (as in every "same" convolution), so an output's flat index plus one shift
// per tap is the input's flat index.
inline bool depthwise_integer_same_width_applies(const ConvParams& p) {
  return p.out_w == p.in_w && p.k_h * p.k_w <= kDepthwiseMaxTaps;
}

// For the `lanes` outputs from flat index f0 on: masks[kh * k_w + kw] has bit j set where output
// f0 + j reads inside the input under the tap (not in the padding).
inline void depthwise_lane_masks(const ConvParams& p, index_t f0, index_t lanes, __mmask16* masks) {
  for (index_t t = 0; t < p.k_h * p.k_w; ++t) masks[t] = 0;
  index_t oh = f0 / p.out_w, ow = f0 % p.out_w;
  for (index_t j = 0; j < lanes; ++j) {
    for (index_t kh = 0; kh < p.k_h; ++kh) {
      const index_t ih = oh + kh - p.pad_h;
      if (ih < 0 || ih >= p.in_h) continue;
      for (index_t kw = 0; kw < p.k_w; ++kw) {
        const index_t iw = ow + kw - p.pad_w;
        __mmask16& m = masks[kh * p.k_w + kw];
        if (iw >= 0 && iw < p.in_w) m = static_cast<__mmask16>(m | (1u << j));
      }
    }
    if (++ow == p.out_w) ow = 0, ++oh;
  }
}

// AVX-512, without the padded copy: sixteen outputs of the plane (flat, across output rows) are
// one vector of int32 accumulators; each tap is one masked load of the input shifted by the tap's
// flat offset, x's zero point in the lanes whose tap falls in the padding, widened to 32-bit
// lanes and multiplied by the weight broadcast as 16-bit pairs (w - zw, 0) with a 16-bit
// multiply-add, which gives exactly x * (w - zw) in each lane. The masks depend on the position
// only, so they are computed once for all channels.
template <class X, class W, class Out>
inline void depthwise_integer_same_width(const ConvParams& p, QuantOperand<X> x, QuantOperand<W> w, Out out) {
  const X zx = static_cast<X>(x.zero_point_at(0));
  const __m128i zx_bytes = _mm_set1_epi8(static_cast<char>(zx));
  const index_t in_plane = p.in_h * p.in_w, out_plane = p.out_h * p.out_w, taps = p.k_h * p.k_w;
  __mmask16 masks[kDepthwiseMaxTaps];
  for (index_t n = 0; n < p.batch; ++n)
    for (index_t f0 = 0; f0 < out_plane; f0 += 16) {
      const index_t lanes = out_plane - f0 < 16 ? out_plane - f0 : 16;
      depthwise_lane_masks(p, f0, lanes, masks);
      for (index_t c = 0; c < p.out_channels; ++c) {
        // x + tap_origin + kh * in_w + kw: the input under tap (kh, kw) of output f0.
        const X* tap_origin = x.data + (n * p.in_channels + c) * in_plane + f0 - p.pad_h * p.in_w - p.pad_w;
        const W* wc = w.data + c * taps;
        const std::int32_t zw = w.zero_point_at(c);
        std::int32_t weight_sum = 0;
        __m512i sum = _mm512_setzero_si512();
        for (index_t kh = 0; kh < p.k_h; ++kh)
          for (index_t kw = 0; kw < p.k_w; ++kw) {
            const std::int32_t weight = static_cast<std::int32_t>(wc[kh * p.k_w + kw]) - zw;
            weight_sum += weight;
            const __m128i bytes = _mm_mask_loadu_epi8(zx_bytes, masks[kh * p.k_w + kw], tap_origin + kh * p.in_w + kw);
            const __m512i wv = _mm512_set1_epi32(weight & 0xFFFF);
#if defined(__AVX512VNNI__)
            sum = _mm512_dpwssd_epi32(sum, widen_to_epi32(bytes, X{}), wv);
#else
            sum = _mm512_add_epi32(sum, _mm512_madd_epi16(widen_to_epi32(bytes, X{}), wv));
#endif
          }
        store_vector(out, c, (n * p.out_channels + c) * out_plane + f0, sum, lanes,
                     static_cast<std::int32_t>(zx) * weight_sum);
      }
    }
}
#endif

}  // namespace detail

}  // namespace rt
}  // namespace onnxc
#include "onnxc/quant_depthwise_avx512vbmi.h"  // (uses store_vector and QuantOperand above)
namespace onnxc {
namespace rt {

template <class X, class W, class Out>
inline void depthwise_integer(const ConvParams& p, QuantOperand<X> x, QuantOperand<W> w, Out out, unsigned char* scratch) {
#if defined(ONNXC_DEPTHWISE_PERMUTE_AVX512)
  if (detail::depthwise_permute_applies(p)) return detail::depthwise_integer_permute(p, x, w, out);
#endif
#if defined(ONNXC_DEPTHWISE_INTEGER_AVX512)
  if (detail::depthwise_integer_same_width_applies(p)) return detail::depthwise_integer_same_width(p, x, w, out);
#endif
  const index_t wp = detail::padded_width(p);
  const index_t flat = p.out_h * wp;  // outputs computed per plane, on the padded width
  std::int32_t* acc = reinterpret_cast<std::int32_t*>(scratch);
  X* padded = reinterpret_cast<X*>(scratch + flat * static_cast<index_t>(sizeof(std::int32_t)));
  const X zx = static_cast<X>(x.zero_point_at(0));
  const index_t in_plane = p.in_h * p.in_w, out_plane = p.out_h * p.out_w, taps = p.k_h * p.k_w;
  for (index_t n = 0; n < p.batch; ++n)
    for (index_t c = 0; c < p.out_channels; ++c) {
      detail::depthwise_pad_plane(p, x.data + (n * p.in_channels + c) * in_plane, zx, padded);
      const W* wc = w.data + c * taps;
      const std::int32_t zw = w.zero_point_at(c);
      std::int32_t weight_sum = 0;
      for (index_t t = 0; t < taps; ++t) weight_sum += static_cast<std::int32_t>(wc[t]) - zw;
      for (index_t j0 = 0; j0 < flat; j0 += detail::kDepthwiseBlock) {
        const index_t n_block = flat - j0 < detail::kDepthwiseBlock ? flat - j0 : detail::kDepthwiseBlock;
        detail::depthwise_integer_block_portable(padded + j0, wp, p.k_h, p.k_w, wc, zw, n_block, acc + j0);
      }
      for (index_t oh = 1; oh < p.out_h; ++oh)  // row oh's outputs from acc[oh * wp] to acc[oh * out_w]
        std::memmove(acc + oh * p.out_w, acc + oh * wp, static_cast<std::size_t>(p.out_w) * sizeof(std::int32_t));
      store_row(out, c, (n * p.out_channels + c) * out_plane, acc, out_plane, static_cast<std::int32_t>(zx) * weight_sum);
    }
}

// conv_integer without scratch: each output's sum in a register, any group, stride, dilation and
// padding. The fallback of generated code planned for a kernel that needs no scratch
// (qconv_vnni, the byte-permute depthwise) when it is built without that kernel's instructions:
// correct within the same arena, slow.
template <class X, class W, class Out>
inline void conv_integer_direct(const ConvParams& p, QuantOperand<X> x, QuantOperand<W> w, Out out) {
  const index_t icg = p.in_channels / p.group, ocg = p.out_channels / p.group;
  const index_t in_plane = p.in_d * p.in_h * p.in_w, out_plane = p.out_d * p.out_h * p.out_w;
  const index_t ksize = p.k_d * p.k_h * p.k_w;
  const std::int32_t zx = x.zero_point_at(0);
  for (index_t n = 0; n < p.batch; ++n)
    for (index_t m = 0; m < p.out_channels; ++m) {
      const index_t g = m / ocg;
      const std::int32_t zw = w.zero_point_at(m);
      index_t i = (n * p.out_channels + m) * out_plane;
      for (index_t od = 0; od < p.out_d; ++od)
        for (index_t oh = 0; oh < p.out_h; ++oh)
          for (index_t ow = 0; ow < p.out_w; ++ow, ++i) {
            std::int32_t acc = 0;
            for (index_t ic = 0; ic < icg; ++ic) {
              const X* xc = x.data + (n * p.in_channels + g * icg + ic) * in_plane;
              const W* wc = w.data + (m * icg + ic) * ksize;
              for (index_t kd = 0; kd < p.k_d; ++kd) {
                const index_t id = od * p.stride_d + kd * p.dilation_d - p.pad_d;
                if (id < 0 || id >= p.in_d) continue;
                for (index_t kh = 0; kh < p.k_h; ++kh) {
                  const index_t ih = oh * p.stride_h + kh * p.dilation_h - p.pad_h;
                  if (ih < 0 || ih >= p.in_h) continue;
                  for (index_t kw = 0; kw < p.k_w; ++kw) {
                    const index_t iw = ow * p.stride_w + kw * p.dilation_w - p.pad_w;
                    if (iw < 0 || iw >= p.in_w) continue;
                    acc += (static_cast<std::int32_t>(xc[(id * p.in_h + ih) * p.in_w + iw]) - zx) *
                           (static_cast<std::int32_t>(wc[(kd * p.k_h + kh) * p.k_w + kw]) - zw);
                  }
                }
              }
            }
            out(m, i, acc);
          }
    }
}

// Depthwise integer convolution (2-d) of any stride, dilation and padding: the byte-permute
// kernel where it is compiled (AVX-512 VBMI), else depthwise_integer for stride 1 and dilation 1,
// else conv_integer. Scratch: depthwise_integer_any_scratch_bytes(p), for the last two.
inline bool depthwise_integer_any_applies(const ConvParams& p) {
  return p.group == p.in_channels && p.group == p.out_channels && p.in_d == 1 && p.k_d == 1;
}

inline index_t depthwise_integer_any_scratch_bytes(const ConvParams& p) {
  if (depthwise_integer_applies(p)) return depthwise_integer_scratch_bytes(p);
  return p.out_h * p.out_w * static_cast<index_t>(sizeof(std::int32_t));
}

// Where the AVX2 depthwise kernel (quant_depthwise_avx2.h) applies: a padded, phase-split input
// plane of one channel on the stack, at most kDepthwiseAvx2PlaneBytes.
constexpr index_t kDepthwiseAvx2PlaneBytes = 16384;
constexpr index_t kDepthwiseAvx2MaxTaps = 64;

// Padded rows the outputs read.
inline index_t depthwise_avx2_rows(const ConvParams& p) {
  return (p.out_h - 1) * p.stride_h + (p.k_h - 1) * p.dilation_h + 1;
}

// Phase-columns of a padded row: eight outputs per load from every output column a multiple of 8 on.
inline index_t depthwise_avx2_width(const ConvParams& p) {
  return (p.out_w + 7) / 8 * 8 + (p.k_w - 1) * p.dilation_w / p.stride_w;
}

inline bool depthwise_avx2_applies(const ConvParams& p) {
  return depthwise_integer_any_applies(p) && p.k_h * p.k_w <= kDepthwiseAvx2MaxTaps &&
         depthwise_avx2_rows(p) * p.stride_w * depthwise_avx2_width(p) <= kDepthwiseAvx2PlaneBytes;
}

template <class X, class W, class Out>
inline void depthwise_integer_any(const ConvParams& p, QuantOperand<X> x, QuantOperand<W> w, Out out,
                                  unsigned char* scratch) {
#if defined(ONNXC_DEPTHWISE_PERMUTE_AVX512)
  if (detail::depthwise_permute_applies(p)) return detail::depthwise_integer_permute(p, x, w, out);
#endif
  if (depthwise_integer_applies(p)) return depthwise_integer(p, x, w, out, scratch);
  conv_integer(p, x, w, out, reinterpret_cast<std::int32_t*>(scratch));
}

// 3x3 depthwise integer convolution without scratch, for cores with dual 16-bit
// multiply-accumulate ("same" planes of stride 1, as in DS-CNN and MobileNet): the input rows
// under the kernel are copied with their padding (x's zero point) into a ring of three rows on
// the stack, so every tap reads inside a row. Two adjacent outputs (ow, ow + 1) share one word
// per kernel row, the padded bytes x[ow - 1 .. ow + 2]: its even bytes (x[ow - 1], x[ow + 1])
// are output ow's outer taps, its odd bytes (x[ow], x[ow + 2]) output ow + 1's, each pair one
// SMLAD against the row's (w0, w2); the middle taps x[ow] and x[ow + 1] are the odd word's low
// and the even word's high half, one SMLABB / SMLATB each. Seven instructions for six products;
// the zero points leave the loop as in depthwise_integer.
constexpr index_t kDepthwise3x3MaxWidth = 64;  // the ring's rows (on the stack)

inline bool depthwise_3x3_applies(const ConvParams& p) {
  return depthwise_integer_applies(p) && p.k_h == 3 && p.k_w == 3 && p.pad_h == 1 && p.pad_w == 1 &&
         p.out_h == p.in_h && p.out_w == p.in_w && p.in_w <= kDepthwise3x3MaxWidth;
}

namespace detail {

// A padded row: x's zero point, the input row, three more zero points (the last output of an
// odd width reads its word two bytes past the row).
constexpr index_t kDepthwise3x3RowBytes = kDepthwise3x3MaxWidth + 4;

template <class X>
inline void depthwise_3x3_pad_row(const X* src, index_t width, X zx, X* row) {
  row[0] = zx;
  for (index_t j = 0; j < width; ++j) row[1 + j] = src[j];
  row[width + 1] = row[width + 2] = row[width + 3] = zx;
}

// One kernel row as the kernel reads it: (w0, w2) as the halves of one word, w1 in the low half
// of another (weights less their zero point).
struct Depthwise3x3Row {
  std::uint32_t outer, middle;
};

// Channel c's kernel rows (weights less their zero point zw) into k; returns their sum.
template <class W>
inline std::int32_t depthwise_3x3_kernel(const W* wc, std::int32_t zw, Depthwise3x3Row* k) {
  std::int32_t weight_sum = 0;
  for (index_t kh = 0; kh < 3; ++kh) {
    const std::int32_t w0 = wc[3 * kh] - zw, w1 = wc[3 * kh + 1] - zw, w2 = wc[3 * kh + 2] - zw;
    k[kh] = {low_halves(static_cast<std::uint32_t>(w0), static_cast<std::uint32_t>(w2)), static_cast<std::uint32_t>(w1)};
    weight_sum += w0 + w1 + w2;
  }
  return weight_sum;
}

// Kernel row k over padded row `row` from output ow on, added to the accumulators of outputs ow
// and ow + 1.
template <class X>
ONNXC_INLINE void depthwise_3x3_row(const X* row, Depthwise3x3Row k, std::int32_t& a0, std::int32_t& a1) {
  const std::uint32_t word = load_u32(row);
  const std::uint32_t even = even_bytes(word, X{}), odd = odd_bytes(word, X{});
  a0 = mac_low(odd, k.middle, dual_mac(even, k.outer, a0));
  a1 = mac_high(even, k.middle, dual_mac(odd, k.outer, a1));
}

}  // namespace detail
}  // namespace rt
}  // namespace onnxc
#include "onnxc/quant_depthwise_armv7em_dsp.h"  // (portable forms tested on hosts too)
namespace onnxc {
namespace rt {

// y = depthwise conv(x - x_zp, w - w_zp): out(channel, flat index, acc) as for conv_integer.
// Needs no scratch: the ring of padded rows, a row of zero points and one output row's sums
// (requantized by one store_row per row) are on the stack, about 540 bytes.
// scratch: the M4's and M7's bands (depthwise_3x3_dsp_scratch_bytes(p) bytes, 4-byte aligned:
// the plan's, where it had room), or null: on the stack; the other forms take none.
template <class X, class W, class Out>
inline void depthwise_3x3(const ConvParams& p, QuantOperand<X> x, QuantOperand<W> w, Out out,
                          std::uint8_t* scratch = nullptr) {
#if defined(ONNXC_QUANT_MVE)
  static_cast<void>(scratch);
  static_assert(3 * (kDepthwise3x3MaxWidth + 2) <= detail::kDepthwiseMveBandBytes, "the band holds 3 padded rows");
  return detail::depthwise_3x3_mve(p, x, w, out);  // (quant_depthwise_mve.h)
#elif defined(ONNXC_QUANT_DUAL_MAC)
  return detail::depthwise_3x3_dsp(p, x, w, out, scratch);  // (quant_depthwise_armv7em_dsp.h)
#else
  static_cast<void>(scratch);
#endif
  const X zx = static_cast<X>(x.zero_point_at(0));
  const index_t width = p.in_w, plane = p.in_h * p.in_w;
  X ring[3][detail::kDepthwise3x3RowBytes];
  X padding[detail::kDepthwise3x3RowBytes];
  std::int32_t acc[kDepthwise3x3MaxWidth + 1];  // one output row
  for (index_t j = 0; j < width + 4; ++j) padding[j] = zx;
  for (index_t n = 0; n < p.batch; ++n)
    for (index_t c = 0; c < p.out_channels; ++c) {
      const X* xc = x.data + (n * p.in_channels + c) * plane;
      const W* wc = w.data + c * 9;
      const std::int32_t zw = w.zero_point_at(c);
      // Elsewhere than the DSP and MVE forms above: each kernel row as one pass of three taps over
      // the output row, loops the compiler vectorises (the pairs of those forms do not).
      std::int32_t k[9], weight_sum = 0;
      for (int t = 0; t < 9; ++t) {
        k[t] = static_cast<std::int32_t>(wc[t]) - zw;
        weight_sum += k[t];
      }
      const std::int32_t correction = static_cast<std::int32_t>(zx) * weight_sum;
      auto row = [&](index_t ih) -> const X* { return ih < 0 || ih >= p.in_h ? padding : ring[ih % 3]; };
      detail::depthwise_3x3_pad_row(xc, width, zx, ring[0]);
      for (index_t oh = 0; oh < p.out_h; ++oh) {
        if (oh + 1 < p.in_h) detail::depthwise_3x3_pad_row(xc + (oh + 1) * width, width, zx, ring[(oh + 1) % 3]);
        for (index_t ow = 0; ow < width; ++ow) acc[ow] = 0;
        for (int r = 0; r < 3; ++r) {
          const X* src = row(oh - 1 + r);
          const std::int32_t k0 = k[3 * r], k1 = k[3 * r + 1], k2 = k[3 * r + 2];
          for (index_t ow = 0; ow < width; ++ow)
            acc[ow] += k0 * static_cast<std::int32_t>(src[ow]) + k1 * static_cast<std::int32_t>(src[ow + 1]) +
                       k2 * static_cast<std::int32_t>(src[ow + 2]);
        }
        store_row(out, c, (n * p.out_channels + c) * plane + oh * width, acc, width, correction);
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
  template <class Q> ONNXC_INLINE Q operator()(Q a, Q b) const {
    const float da = static_cast<float>(static_cast<std::int32_t>(a) - a_zero_point);
    const float db = static_cast<float>(static_cast<std::int32_t>(b) - b_zero_point);
    return quantize_value<Q>(a_ratio * da + b_ratio * db, c_zero_point);
  }
};

}  // namespace rt
}  // namespace onnxc
#include "onnxc/quant_add_avx512.h"  // (uses QLinearAdd and widen_to_epi32 above)
#include "onnxc/quant_add_avx2.h"    // (uses QLinearAdd above; where AVX-512 is not built)
namespace onnxc {
namespace rt {

// QLinearMul as an elementwise functor:
//   c = saturate(round_half_even(multiplier * (a - a_zp) * (b - b_zp)) + c_zp),
// multiplier = a_scale * b_scale / c_scale in float; the product of the two offsets is exact in
// int32 and then in float (|product| <= 2^16).
struct QLinearMul {
  float multiplier;
  std::int32_t a_zero_point, b_zero_point, c_zero_point;
  template <class Q> ONNXC_INLINE Q operator()(Q a, Q b) const {
    const std::int32_t product =
        (static_cast<std::int32_t>(a) - a_zero_point) * (static_cast<std::int32_t>(b) - b_zero_point);
    return quantize_value<Q>(multiplier * static_cast<float>(product), c_zero_point);
  }
};

}  // namespace rt
}  // namespace onnxc

#if defined(ONNXC_QUANT_MVE)
#include "onnxc/quant_lookup_mve.h"  // (tested under QEMU: tests/firmware/kernels)
#endif

namespace onnxc {
namespace rt {

// y[i] = table[x[i]] for 8-bit x: a quantized unary function tabulated at compile time over the
// 256 values of x's type (table[0] is the value for the type's lowest x).
}  // namespace rt
}  // namespace onnxc
#include "onnxc/quant_lookup_avx512vbmi.h"
namespace onnxc {
namespace rt {

template <class Q>
inline void lookup(const Q* x, const Q* table, Q* y, index_t n) {
#if defined(ONNXC_QUANT_MVE)
  return detail::lookup_mve(x, table, y, n);  // (quant_lookup_mve.h)
#endif
  constexpr std::int32_t lowest = std::numeric_limits<Q>::lowest();
  index_t i = 0;
#if defined(ONNXC_LOOKUP_AVX512VBMI)
  i = detail::lookup_avx512vbmi(x, table, y, n);
#endif
  for (; i < n; ++i) y[i] = table[static_cast<std::int32_t>(x[i]) - lowest];
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
    y[c] = quantize_value<Q>(static_cast<float>(sum) * multiplier, y_zero_point);
  }
}

// ---- integer convolution as a matrix product: uint8 x, int8 w with zero point 0 ----
//
// acc[m, n] = sum_k w[m, k] * (col[k, n] - x_zp) = dot(w[m], col[, n]) - x_zp * sum_k w[m, k],
// col being the im2col of x (K = channels x taps rows, padding = x_zp so it adds nothing). col is
// built block by block of columns in the node's scratch, in groups of four k: byte (k, j) of a
// block of `cols` columns sits at ((k / 4) * cols + j) * 4 + k % 4 (k >= K holds 0). With AVX-512
// VNNI one vpdpbusd multiplies 16 columns by four k of one weight row (64 uint8 x int8 products
// summed into 16 int32 lanes), exactly; elsewhere a portable loop does the same sums.

constexpr index_t kQConvColumnQuantum = 16;  // columns per vector of int32 accumulators

inline index_t qconv_gemm_k_groups(const ConvParams& p) { return (p.in_channels * p.k_d * p.k_h * p.k_w + 3) / 4; }

// Scratch bytes of one block of `cols` columns (a multiple of kQConvColumnQuantum).
inline index_t qconv_gemm_scratch_bytes(const ConvParams& p, index_t cols) { return qconv_gemm_k_groups(p) * 4 * cols; }

namespace detail {

// Row k of im2col, k = ((ic * k_d + kd) * k_h + kh) * k_w + kw: the channel and kernel tap. The
// packing loop steps it with next_tap rather than dividing k (64-bit divisions per row were most
// of the packing time).
struct ConvTap {
  index_t ic, kd, kh, kw;
};

inline void next_tap(const ConvParams& p, ConvTap& t) {
  if (++t.kw < p.k_w) return;
  t.kw = 0;
  if (++t.kh < p.k_h) return;
  t.kh = 0;
  if (++t.kd < p.k_d) return;
  t.kd = 0;
  ++t.ic;
}

// A 2-D convolution of stride 1 whose output rows are as wide as its input rows (padding k_w - 1
// in total, as in every "same" convolution): output position (oh, ow) under tap (kh, kw) reads
// the input at the flat index oh * in_w + ow + shift, one shift per tap.
inline bool conv_keeps_row_width(const ConvParams& p) {
  return p.k_d == 1 && p.in_d == 1 && p.out_d == 1 && p.stride_h == 1 && p.stride_w == 1 && p.out_w == p.in_w;
}

// qconv_im2col_row for conv_keeps_row_width: one copy of the shifted plane, then the padding
// written over it (out-of-plane positions before and after, and in each output row the columns
// whose tap falls left or right of the input row, which the flat copy took from the row beside).
inline void qconv_im2col_row_shifted(const ConvParams& p, const std::uint8_t* xc, std::uint8_t zx, ConvTap tap,
                                     OutputPosition from, index_t cols, std::uint8_t* row) {
  const index_t column_shift = tap.kw * p.dilation_w - p.pad_w;
  const index_t start = from.oh * p.out_w + from.ow + (tap.kh * p.dilation_h - p.pad_h) * p.in_w + column_shift;
  const index_t plane = p.in_h * p.in_w;
  const index_t lo = start < 0 ? (-start < cols ? -start : cols) : 0;        // columns before the plane
  const index_t hi = plane - start < cols ? (plane - start > lo ? plane - start : lo) : cols;  // and after it
  fill_bytes(row, zx, lo);
  copy_bytes(row + lo, xc + start + lo, hi - lo);
  fill_bytes(row + hi, zx, cols - hi);
  // Output columns [0, left) and [right, out_w) of every row tap outside the input row.
  const index_t left = column_shift < 0 ? (-column_shift < p.out_w ? -column_shift : p.out_w) : 0;
  const index_t right = column_shift > 0 ? (column_shift < p.out_w ? p.out_w - column_shift : 0) : p.out_w;
  if (left == 0 && right == p.out_w) return;
  for (index_t j = -from.ow; j < cols; j += p.out_w) {  // j: column of the output row's ow = 0
    for (index_t ow = 0; ow < left; ++ow)
      if (j + ow >= 0 && j + ow < cols) row[j + ow] = zx;
    for (index_t ow = right; ow < p.out_w; ++ow)
      if (j + ow >= 0 && j + ow < cols) row[j + ow] = zx;
  }
}

// qconv_im2col_row for every other convolution (strided, dilated, padded, 3-D), one output row
// segment at a time (apart from the matrix and shifted-plane cases, so their calls stay short).
inline void qconv_im2col_row_segments(const ConvParams& p, const std::uint8_t* xc, std::uint8_t zx, ConvTap tap,
                                      OutputPosition from, index_t cols, std::uint8_t* row) {
  const index_t kw = tap.kw, kh = tap.kh, kd = tap.kd;
  const index_t offset = kw * p.dilation_w - p.pad_w;  // input column of output column 0
  index_t valid_lo, valid_hi;  // the output columns whose tap is inside the input row
  valid_outputs(p.out_w, p.in_w, p.stride_w, offset, &valid_lo, &valid_hi);
  const index_t stride_w = p.stride_w, out_w = p.out_w, in_h = p.in_h, in_w = p.in_w;
  // The output position of column j, advanced row by row (no division in the loop), and the
  // input row and plane it reads.
  index_t od = from.od, oh = from.oh, ow0 = from.ow;
  const index_t ih_first = kh * p.dilation_h - p.pad_h;  // (at oh = 0)
  index_t id = od * p.stride_d - p.pad_d + kd * p.dilation_d, ih = oh * p.stride_h + ih_first;
  // The padding first, the whole row in one fill (per segment, a few bytes each side of the
  // run, the fills were calls of memset: most of a narrow strided layer's im2col), then the runs;
  // no fill where the tap falls inside the input at every output position of these columns (the
  // runs then cover the row: VWW's first Conv, padded at the end only, has 4 such taps of 9; a
  // block of resnet8's 3 x 3 Convs away from the first and last output rows, all 9).
  const index_t oh_last = oh + (ow0 + cols - 1) / out_w;  // the last output row of the columns
  bool inside = valid_lo == 0 && valid_hi == out_w && ih >= 0 && id >= 0 && id < p.in_d;
  if (oh_last < p.out_h) {  // within one output plane
    inside = inside && oh_last * p.stride_h + ih_first < in_h;
  } else {
    const index_t id_first = kd * p.dilation_d - p.pad_d;
    inside = inside && ih_first >= 0 && (p.out_h - 1) * p.stride_h + ih_first < in_h && id_first >= 0 &&
             (p.out_d - 1) * p.stride_d + id_first < p.in_d;
  }
  if (!inside) fill_bytes(row, zx, cols);
  for (index_t j = 0; j < cols; ow0 = 0) {
    const index_t end = out_w - ow0 < cols - j ? out_w : ow0 + cols - j;  // the segment [ow0, end)
    if (id >= 0 && id < p.in_d && ih >= 0 && ih < in_h) {
      std::uint8_t* out = row + j - ow0;  // out[ow] for ow in [ow0, end)
      // The columns whose tap is inside the input row: [lo, hi).
      const index_t lo = valid_lo < ow0 ? ow0 : (valid_lo < end ? valid_lo : end);
      const index_t hi = valid_hi < end ? (valid_hi > lo ? valid_hi : lo) : end;
      const std::uint8_t* xrow = xc + (id * in_h + ih) * in_w + offset;  // xrow[ow * stride_w]
      if (stride_w == 1) {
        copy_bytes(out + lo, xrow + lo, hi - lo);
      } else if (hi > lo) {
        copy_bytes_strided(out + lo, xrow + lo * stride_w, stride_w, hi - lo);
      }
    }
    j += end - ow0;
    if (++oh == p.out_h) {
      oh = 0;
      ih = ih_first;
      id += p.stride_d;
    } else {
      ih += p.stride_h;
    }
  }
}

// Row `tap` of im2col for the `cols` output positions of one image from `from` on: x_zp where
// the tap falls in the padding, runs of an input row between, one output row segment at a time.
inline void qconv_im2col_row(const ConvParams& p, const std::uint8_t* x, std::uint8_t zx, ConvTap tap,
                             OutputPosition from, index_t cols, std::uint8_t* row) {
  const std::uint8_t* xc = x + tap.ic * p.in_d * p.in_h * p.in_w;
  if (conv_reads_input_as_matrix(p)) {  // 1x1, stride 1, no padding: the row is the plane
    const index_t first = (from.od * p.out_h + from.oh) * p.out_w + from.ow;
    copy_bytes(row, xc + first, cols);
    return;
  }
  if (conv_keeps_row_width(p)) return qconv_im2col_row_shifted(p, xc, zx, tap, from, cols, row);
  qconv_im2col_row_segments(p, xc, zx, tap, from, cols, row);
}

constexpr index_t kQConvPackChunk = 256;  // columns interleaved at a time (stack rows)

}  // namespace detail
}  // namespace rt
}  // namespace onnxc
#if defined(ONNXC_QUANT_MVE)
#include "onnxc/quant_im2col_mve.h"  // (tested under QEMU: tests/firmware/kernels)
#endif
namespace onnxc {
namespace rt {
namespace detail {

// The block of im2col for output positions [first, first + cols) of one image in groups of four
// k (columns [cols, stride_cols) hold x_zp, k past the end 0): four rows of im2col, then
// interleaved into one 32-bit word per column.
inline void qconv_pack_block(const ConvParams& p, const std::uint8_t* x, std::uint8_t zx, index_t first, index_t cols,
                             index_t stride_cols, std::uint8_t* col) {
  const index_t k_total = p.in_channels * p.k_d * p.k_h * p.k_w, groups = (k_total + 3) / 4;
  std::uint8_t rows[4][kQConvPackChunk];
  for (index_t c0 = 0; c0 < stride_cols; c0 += kQConvPackChunk) {
    const index_t chunk = stride_cols - c0 < kQConvPackChunk ? stride_cols - c0 : kQConvPackChunk;
    const index_t real = cols - c0 < chunk ? (cols > c0 ? cols - c0 : 0) : chunk;  // columns before the padding
    const OutputPosition from = output_position(p, first + c0);
#if defined(ONNXC_QUANT_MVE)
    static_assert(kIm2colBandColumns == kQConvPackChunk, "the band's table covers a chunk");
    Im2colBandMve band;  // (quant_im2col_mve.h)
    const bool banded = !conv_reads_input_as_matrix(p) && band.init(p, first + c0, real);
#endif
    ConvTap tap = {0, 0, 0, 0};  // of k = 4 * g + t
    for (index_t g = 0; g < groups; ++g) {
      for (index_t t = 0; t < 4; ++t) {
        const index_t k = 4 * g + t;
        const std::uint8_t fill = k < k_total ? zx : 0;
#if defined(ONNXC_QUANT_MVE)
        if (k < k_total && banded)
          band.row(p, x, zx, tap, rows[t]);
        else
#endif
        if (k < k_total) qconv_im2col_row(p, x, zx, tap, from, real, rows[t]);
        for (index_t j = k < k_total ? real : 0; j < chunk; ++j) rows[t][j] = fill;
        next_tap(p, tap);
      }
      std::uint8_t* dst = col + (g * stride_cols + c0) * 4;
      index_t j = 0;
#if defined(__SSE2__)
      for (; j + 16 <= chunk; j += 16) {  // 16 columns: bytes of rows 0/1 and 2/3 paired, then the pairs
        const __m128i r0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[0] + j));
        const __m128i r1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[1] + j));
        const __m128i r2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[2] + j));
        const __m128i r3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[3] + j));
        const __m128i lo01 = _mm_unpacklo_epi8(r0, r1), hi01 = _mm_unpackhi_epi8(r0, r1);
        const __m128i lo23 = _mm_unpacklo_epi8(r2, r3), hi23 = _mm_unpackhi_epi8(r2, r3);
        __m128i* out = reinterpret_cast<__m128i*>(dst + 4 * j);
        _mm_storeu_si128(out, _mm_unpacklo_epi16(lo01, lo23));
        _mm_storeu_si128(out + 1, _mm_unpackhi_epi16(lo01, lo23));
        _mm_storeu_si128(out + 2, _mm_unpacklo_epi16(hi01, hi23));
        _mm_storeu_si128(out + 3, _mm_unpackhi_epi16(hi01, hi23));
      }
#elif defined(ONNXC_QUANT_MVE)
      for (; j + 16 <= chunk; j += 16) {  // 16 columns: VST40..VST43 interleave the four rows' bytes
        const uint8x16x4_t r = {{vld1q_u8(rows[0] + j), vld1q_u8(rows[1] + j), vld1q_u8(rows[2] + j), vld1q_u8(rows[3] + j)}};
        vst4q_u8(dst + 4 * j, r);
      }
#elif defined(ONNXC_QUANT_DUAL_MAC) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
      for (; j + 4 <= chunk; j += 4) {  // 4 columns: a word of each row, its bytes transposed in registers
        // Rows a, b as [a0 b0 a2 b2] and [a1 b1 a3 b3] (UXTB16 and an ORR each), c, d the same;
        // the columns are their halves (PKHBT / PKHTB).
        const std::uint32_t a = load_u32(rows[0] + j), b = load_u32(rows[1] + j);
        const std::uint32_t c = load_u32(rows[2] + j), d = load_u32(rows[3] + j);
        const std::uint32_t ab_even = even_bytes(a, std::uint8_t{}) | (even_bytes(b, std::uint8_t{}) << 8);
        const std::uint32_t ab_odd = odd_bytes(a, std::uint8_t{}) | (odd_bytes(b, std::uint8_t{}) << 8);
        const std::uint32_t cd_even = even_bytes(c, std::uint8_t{}) | (even_bytes(d, std::uint8_t{}) << 8);
        const std::uint32_t cd_odd = odd_bytes(c, std::uint8_t{}) | (odd_bytes(d, std::uint8_t{}) << 8);
        const std::uint32_t columns[4] = {low_halves(ab_even, cd_even), low_halves(ab_odd, cd_odd),
                                          high_halves(ab_even, cd_even), high_halves(ab_odd, cd_odd)};
        std::memcpy(dst + 4 * j, columns, 16);  // (little-endian: column j's bytes a_j b_j c_j d_j)
      }
#endif
      for (; j < chunk; ++j) {
        dst[4 * j] = rows[0][j];
        dst[4 * j + 1] = rows[1][j];
        dst[4 * j + 2] = rows[2][j];
        dst[4 * j + 3] = rows[3][j];
      }
    }
  }
}

#if (defined(__AVX512VNNI__) && defined(__AVX512BW__)) || defined(__AVX2__) || \
    (defined(ONNXC_SIMD) && defined(__aarch64__))  // (qconv_tile on these)
// The four weights w[m, 4g .. 4g + 3] as one little-endian int32 (0 past the row's end).
inline std::int32_t weight_group(const std::int8_t* row, index_t k_total, index_t g) {
  if (4 * g + 4 <= k_total) {
    std::int32_t v;
    std::memcpy(&v, row + 4 * g, 4);  // the targets with VNNI are little-endian
    return v;
  }
  std::uint8_t b[4] = {0, 0, 0, 0};
  for (index_t t = 0; t < 4 && 4 * g + t < k_total; ++t) b[t] = static_cast<std::uint8_t>(row[4 * g + t]);
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(b[0]) | (static_cast<std::uint32_t>(b[1]) << 8) |
                                   (static_cast<std::uint32_t>(b[2]) << 16) | (static_cast<std::uint32_t>(b[3]) << 24));
}
#endif

}  // namespace detail
}  // namespace rt
}  // namespace onnxc

#include "onnxc/quant_gemm_armv7em_dsp.h"  // (uses the dual 16-bit helpers above; tested on hosts too)
#if defined(ONNXC_QUANT_MVE)
#include "onnxc/quant_gemm_mve.h"  // (tested under QEMU: tests/firmware/kernels)
#elif defined(ONNXC_SIMD) && defined(__aarch64__)
#include "onnxc/quant_gemm_neon.h"  // (tested under qemu-aarch64: tests/cross_unit_tests.sh)
#else
namespace onnxc {
namespace rt {
namespace detail {
constexpr std::int32_t kQConvTileXOffset = 0;  // what qconv_tile's sums take off each x
}  // namespace detail
}  // namespace rt
}  // namespace onnxc
#endif

namespace onnxc {
namespace rt {
namespace detail {

// acc[r][j] (r < rows, j < 16 * vectors) = dot of weight rows m..m+rows with block columns
// [j0, j0 + 16 * vectors).
template <int Rows, int Vectors>
inline void qconv_tile(const std::int8_t* w, index_t k_total, index_t groups, const std::uint8_t* col,
                       index_t stride_cols, index_t j0, std::int32_t (*acc)[kQConvColumnQuantum * 4]) {
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
  __m512i sums[Rows][Vectors];
  for (int r = 0; r < Rows; ++r)
    for (int v = 0; v < Vectors; ++v) sums[r][v] = _mm512_setzero_si512();
  for (index_t g = 0; g < groups; ++g) {
    __m512i xv[Vectors];
    for (int v = 0; v < Vectors; ++v)
      xv[v] = _mm512_loadu_si512(col + (g * stride_cols + j0 + v * kQConvColumnQuantum) * 4);
    for (int r = 0; r < Rows; ++r) {
      const __m512i wv = _mm512_set1_epi32(weight_group(w + r * k_total, k_total, g));
      for (int v = 0; v < Vectors; ++v) sums[r][v] = _mm512_dpbusd_epi32(sums[r][v], xv[v], wv);
    }
  }
  for (int r = 0; r < Rows; ++r)
    for (int v = 0; v < Vectors; ++v) _mm512_storeu_si512(acc[r] + v * kQConvColumnQuantum, sums[r][v]);
#elif defined(ONNXC_QUANT_GEMM_NEON_H)
  qconv_tile_neon<Rows, Vectors>(w, k_total, groups, col, stride_cols, j0, acc);
#elif defined(ONNXC_QUANT_MVE)
  // Tiles of two rows times two columns, sixteen k per vector (quant_gemm_mve.h).
  for (int r = 0; r + 1 < Rows; r += 2)
    qconv_tile_mve<2>(w + r * k_total, k_total, groups, col + j0 * 4, stride_cols, kQConvColumnQuantum * Vectors, acc + r);
  if (Rows % 2)
    qconv_tile_mve<1>(w + (Rows - 1) * k_total, k_total, groups, col + j0 * 4, stride_cols, kQConvColumnQuantum * Vectors,
                      acc + (Rows - 1));
#elif defined(__AVX2__)
  // Eight columns per 256-bit vector, one vector of accumulators per row for the whole
  // reduction. Each column's four bytes (k0 k1 k2 k3) split into the 16-bit pairs (k0, k2) and
  // (k1, k3); each weight group's bytes sign-extended the same way; two vpmaddwd give the four
  // products' sum exactly (vpmaddubsw would saturate at 16 bits).
  const __m256i low_bytes = _mm256_set1_epi16(0x00FF);
  for (int v = 0; v < 2 * Vectors; ++v) {
    __m256i sums[Rows];
    for (int r = 0; r < Rows; ++r) sums[r] = _mm256_setzero_si256();
    for (index_t g = 0; g < groups; ++g) {
      const __m256i xv =
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(col + (g * stride_cols + j0 + v * 8) * 4));
      const __m256i x02 = _mm256_and_si256(xv, low_bytes), x13 = _mm256_srli_epi16(xv, 8);
      for (int r = 0; r < Rows; ++r) {
        const __m256i wv = _mm256_set1_epi32(weight_group(w + r * k_total, k_total, g));
        const __m256i w02 = _mm256_srai_epi16(_mm256_slli_epi16(wv, 8), 8), w13 = _mm256_srai_epi16(wv, 8);
        sums[r] = _mm256_add_epi32(sums[r], _mm256_add_epi32(_mm256_madd_epi16(x02, w02), _mm256_madd_epi16(x13, w13)));
      }
    }
    for (int r = 0; r < Rows; ++r) _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc[r] + v * 8), sums[r]);
  }
#elif defined(ONNXC_QUANT_DUAL_MAC)
  // Tiles of two rows times two columns in registers (quant_gemm_armv7em_dsp.h).
  for (int r = 0; r + 1 < Rows; r += 2)
    qconv_tile_dual_mac<2>(w + r * k_total, k_total, groups, col + j0 * 4, stride_cols, kQConvColumnQuantum * Vectors, acc + r);
  if (Rows % 2)
    qconv_tile_dual_mac<1>(w + (Rows - 1) * k_total, k_total, groups, col + j0 * 4, stride_cols,
                           kQConvColumnQuantum * Vectors, acc + (Rows - 1));
#else
  for (int r = 0; r < Rows; ++r) {
    std::int32_t* a = acc[r];
    for (index_t j = 0; j < kQConvColumnQuantum * Vectors; ++j) a[j] = 0;
    const std::int8_t* row = w + r * k_total;
    for (index_t g = 0; g < groups; ++g) {
      const std::uint8_t* c = col + (g * stride_cols + j0) * 4;
      std::int32_t w4[4];
      for (index_t t = 0; t < 4; ++t) w4[t] = 4 * g + t < k_total ? row[4 * g + t] : 0;
      for (index_t j = 0; j < kQConvColumnQuantum * Vectors; ++j)
        a[j] += c[4 * j] * w4[0] + c[4 * j + 1] * w4[1] + c[4 * j + 2] * w4[2] + c[4 * j + 3] * w4[3];
    }
  }
#endif
}

// qconv_tile for a run-time number of vectors (1 to 4).
template <int Rows>
inline void qconv_tile_vectors(index_t vectors, const std::int8_t* w, index_t k_total, index_t groups,
                               const std::uint8_t* col, index_t stride_cols, index_t j0,
                               std::int32_t (*acc)[kQConvColumnQuantum * 4]) {
  switch (vectors) {
    case 4: return qconv_tile<Rows, 4>(w, k_total, groups, col, stride_cols, j0, acc);
    case 3: return qconv_tile<Rows, 3>(w, k_total, groups, col, stride_cols, j0, acc);
    case 2: return qconv_tile<Rows, 2>(w, k_total, groups, col, stride_cols, j0, acc);
    default: return qconv_tile<Rows, 1>(w, k_total, groups, col, stride_cols, j0, acc);
  }
}

}  // namespace detail

// The sum of each weight row (output channel), for qconv_gemm's zero-point correction; the
// compiler computes them with this function and passes them as constants.
inline void qconv_weight_row_sums(const ConvParams& p, const std::int8_t* w, index_t* sums) {
  const index_t k_total = p.in_channels * p.k_d * p.k_h * p.k_w;
  for (index_t m = 0; m < p.out_channels; ++m) {
    index_t sum = 0;
    for (index_t k = 0; k < k_total; ++k) sum += w[m * k_total + k];
    sums[m] = sum;
  }
}

// One-group integer convolution through the blocked matrix product above. `cols` (a multiple of
// kQConvColumnQuantum) is the block width the compiler chose; scratch holds
// qconv_gemm_scratch_bytes(p, cols) bytes; row_sums: qconv_weight_row_sums of w.
// out(channel, flat index, acc) as for conv_integer.
template <class Out>
inline void qconv_gemm(const ConvParams& p, const std::uint8_t* x, std::uint8_t x_zero_point, const std::int8_t* w,
                       const index_t* row_sums, Out out, index_t cols, std::uint8_t* scratch) {
  constexpr int kRows = 4, kVectors = 4;
  const index_t k_total = p.in_channels * p.k_d * p.k_h * p.k_w, groups = qconv_gemm_k_groups(p);
  const index_t n_total = p.out_d * p.out_h * p.out_w, in_image = p.in_channels * p.in_d * p.in_h * p.in_w;
  const std::int32_t zx = x_zero_point;
  std::int32_t acc[kRows][kQConvColumnQuantum * 4];
  for (index_t b = 0; b < p.batch; ++b) {
    for (index_t first = 0; first < n_total; first += cols) {
      const index_t n = n_total - first < cols ? n_total - first : cols;
      const index_t stride_cols = (n + kQConvColumnQuantum - 1) / kQConvColumnQuantum * kQConvColumnQuantum;
      detail::qconv_pack_block(p, x + b * in_image, x_zero_point, first, n, stride_cols, scratch);
      for (index_t m = 0; m < p.out_channels; m += kRows) {
        const index_t rows = p.out_channels - m < kRows ? p.out_channels - m : kRows;
        std::int32_t correction[kRows];
        for (index_t r = 0; r < rows; ++r)
          correction[r] = (zx - detail::kQConvTileXOffset) * static_cast<std::int32_t>(row_sums[m + r]);
        for (index_t j0 = 0; j0 < stride_cols; j0 += kQConvColumnQuantum * kVectors) {
          const index_t vectors = (stride_cols - j0) / kQConvColumnQuantum < kVectors
                                      ? (stride_cols - j0) / kQConvColumnQuantum
                                      : kVectors;
          const std::int8_t* wm = w + m * k_total;
          // Tiles of the full height are the common case; the last rows go one at a time.
          for (index_t r0 = 0; r0 < rows;) {
            const index_t tile_rows = rows - r0 == kRows ? kRows : 1;
            std::int32_t(*a)[kQConvColumnQuantum * 4] = acc + r0;
            const std::int8_t* wr = wm + r0 * k_total;
            if (tile_rows == kRows)
              detail::qconv_tile_vectors<kRows>(vectors, wr, k_total, groups, scratch, stride_cols, j0, a);
            else
              detail::qconv_tile_vectors<1>(vectors, wr, k_total, groups, scratch, stride_cols, j0, a);
            r0 += tile_rows;
          }
          const index_t valid = n - j0 < kQConvColumnQuantum * vectors ? n - j0 : kQConvColumnQuantum * vectors;
          for (index_t r = 0; r < rows; ++r) {
            const index_t base = (b * p.out_channels + m + r) * n_total + first + j0;
            store_row(out, m + r, base, acc[r], valid, correction[r]);
          }
        }
      }
    }
  }
}

// ---- register-tiled integer 1x1 convolution for dual 16-bit multiply-accumulate cores ----
//
// A 1x1 convolution of stride 1 without padding (y[m] = sum_c w[m, c] x[c] at every position),
// uint8 x, int8 w with zero point 0: four output channels x two positions are one tile of eight
// int32 accumulators, kept in registers for the whole reduction, and the input is read in place
// (no im2col, no scratch). For each pair of input channels (c, c + 1) the two positions' bytes of
// both channels are one word [x_c,p  x_c,p+1  x_c+1,p  x_c+1,p+1], split into the 16-bit pairs
// (x_c,p, x_c+1,p) and (x_c,p+1, x_c+1,p+1) by one mask each (UXTB16's work); the weights were
// paired the same way at compile time (qconv_pointwise_pack_weights: (w[m, c], w[m, c + 1]) as
// the low and high halves of one word, the tile's four channels adjacent), so each of the eight
// accumulators takes the pair's two products in one SMLAD. x's zero point leaves the loop as in
// qconv_gemm: sum_c w (x - zx) = sum_c w x - zx * row_sum. On targets without the DSP extension
// the same arithmetic runs in portable C++ (dual_mac), so hosts compute and test the same bits.
constexpr index_t kPointwiseTileChannels = 4;  // output channels per register tile
constexpr index_t kPointwiseTilePositions = 2;
constexpr index_t kPointwiseBlock = 16;  // positions requantized together (a multiple of the tile's)

// Whether qconv_pointwise computes this convolution (with qconv_gemm's types: uint8 x, int8 w of
// zero point 0, one group).
inline bool qconv_pointwise_applies(const ConvParams& p) { return p.group == 1 && conv_reads_input_as_matrix(p); }

inline index_t qconv_pointwise_channel_pairs(const ConvParams& p) { return (p.in_channels + 1) / 2; }

// Words of the packed weights: word (t * pairs + k) * 4 + r holds (w[4t + r, 2k], w[4t + r, 2k + 1])
// as signed 16-bit halves (0 past the channels).
inline index_t qconv_pointwise_weight_words(const ConvParams& p) {
  const index_t tiles = (p.out_channels + kPointwiseTileChannels - 1) / kPointwiseTileChannels;
  return tiles * qconv_pointwise_channel_pairs(p) * kPointwiseTileChannels;
}

inline void qconv_pointwise_pack_weights(const ConvParams& p, const std::int8_t* w, std::int32_t* packed) {
  const index_t pairs = qconv_pointwise_channel_pairs(p), words = qconv_pointwise_weight_words(p);
  for (index_t i = 0; i < words; ++i) {
    const index_t m = i / (pairs * kPointwiseTileChannels) * kPointwiseTileChannels + i % kPointwiseTileChannels;
    const index_t c = i / kPointwiseTileChannels % pairs * 2;
    auto half = [&](index_t ic) -> std::uint32_t {
      const bool real = m < p.out_channels && ic < p.in_channels;
      return real ? static_cast<std::uint16_t>(static_cast<std::int16_t>(w[m * p.in_channels + ic])) : 0u;
    };
    packed[i] = static_cast<std::int32_t>(half(c) | (half(c + 1) << 16));
  }
}

namespace detail {

using PointwiseTile = std::int32_t[kPointwiseTileChannels][kPointwiseTilePositions];

// Adds to the tile's accumulators the products of one pair of input channels (rows x and x1)
// at `Positions` (1 or 2) positions. w: the tile's four packed words of the pair.
template <int Positions>
ONNXC_INLINE void pointwise_step(const std::uint8_t* x, const std::uint8_t* x1, const std::int32_t* w,
                                 PointwiseTile& acc) {
  // Bytes [x_c,p  x_c,p+1  x_c+1,p  x_c+1,p+1] of one word (Positions 1: [x_c,p  0  x_c+1,p  0]).
  const std::uint32_t both = Positions == 2 ? load_u16(x) | (load_u16(x1) << 16)
                                            : static_cast<std::uint32_t>(x[0]) | (static_cast<std::uint32_t>(x1[0]) << 16);
  const std::uint32_t pairs[2] = {even_bytes(both, std::uint8_t{}), odd_bytes(both, std::uint8_t{})};
  ONNXC_UNROLL for (int r = 0; r < kPointwiseTileChannels; ++r) {
    const std::uint32_t wr = static_cast<std::uint32_t>(w[r]);
    ONNXC_UNROLL for (int j = 0; j < Positions; ++j) acc[r][j] = dual_mac(pairs[j], wr, acc[r][j]);
  }
}

// The tile's accumulators for `Positions` positions from x0 on (channel 0 of the image, planes
// `plane` bytes apart): channels in pairs, an odd last channel paired with itself (its packed
// high weights are 0). w: the tile's packed words. (The sums stay in a local tile until the end:
// written through `out` in the loop, they would be stored after every step, since the byte
// loads may alias them.)
template <int Positions>
ONNXC_INLINE void pointwise_tile(const std::uint8_t* x0, index_t plane, index_t channels, const std::int32_t* w,
                                 PointwiseTile& out) {
  PointwiseTile acc;
  ONNXC_UNROLL for (int r = 0; r < kPointwiseTileChannels; ++r)
    ONNXC_UNROLL for (int j = 0; j < kPointwiseTilePositions; ++j) acc[r][j] = 0;
  const std::uint8_t* x = x0;
  const std::uint8_t* const pairs_end = x0 + channels / 2 * 2 * plane;
  for (; x != pairs_end; x += 2 * plane, w += kPointwiseTileChannels) pointwise_step<Positions>(x, x + plane, w, acc);
  if (channels % 2) pointwise_step<Positions>(x, x, w, acc);
  ONNXC_UNROLL for (int r = 0; r < kPointwiseTileChannels; ++r)
    ONNXC_UNROLL for (int j = 0; j < kPointwiseTilePositions; ++j) out[r][j] = acc[r][j];
}

}  // namespace detail

// The int8 weights of rt::qconv_pointwise_s8 (the Cortex-M55's 1x1 kernel, 16 channels per
// VMLADAVA.S8): per tile of four output channels and vector of sixteen input channels, the four
// channels' sixteen bytes one after the other, byte ((t * vectors + v) * 4 + r) * 16 + i holding
// w[4t + r, 16v + i] (0 past the channels).
constexpr index_t kPointwiseS8Lanes = 16;
inline index_t qconv_pointwise_s8_vectors(const ConvParams& p) {
  return (p.in_channels + kPointwiseS8Lanes - 1) / kPointwiseS8Lanes;
}
inline index_t qconv_pointwise_s8_weight_bytes(const ConvParams& p) {
  const index_t tiles = (p.out_channels + kPointwiseTileChannels - 1) / kPointwiseTileChannels;
  return tiles * qconv_pointwise_s8_vectors(p) * kPointwiseTileChannels * kPointwiseS8Lanes;
}
inline void qconv_pointwise_s8_pack_weights(const ConvParams& p, const std::int8_t* w, std::int8_t* packed) {
  const index_t vectors = qconv_pointwise_s8_vectors(p), bytes = qconv_pointwise_s8_weight_bytes(p);
  for (index_t i = 0; i < bytes; ++i) {
    const index_t lane = i % kPointwiseS8Lanes, r = i / kPointwiseS8Lanes % kPointwiseTileChannels;
    const index_t v = i / (kPointwiseS8Lanes * kPointwiseTileChannels) % vectors;
    const index_t m = i / (kPointwiseS8Lanes * kPointwiseTileChannels * vectors) * kPointwiseTileChannels + r;
    const index_t c = v * kPointwiseS8Lanes + lane;
    packed[i] = m < p.out_channels && c < p.in_channels ? w[m * p.in_channels + c] : std::int8_t{0};
  }
}

}  // namespace rt
}  // namespace onnxc

#if defined(ONNXC_QUANT_MVE)
#include "onnxc/quant_pointwise_mve.h"  // (tested under QEMU: tests/firmware/kernels)
#endif
#include "onnxc/quant_pointwise_armv7em_dsp.h"  // (portable forms tested on hosts too)
#include "onnxc/quant_gemm_pairs_armv7em_dsp.h"
#if defined(ONNXC_QUANT_DUAL_MAC) && !defined(ONNXC_QUANT_MVE)
// Generated code takes rt::qconv_gemm_pairs (weights widened at compile time) where the compiler
// gave a QLinearConv those weights; Helium's rt::qconv_gemm reads the bytes.
#define ONNXC_QCONV_GEMM_PAIRS 1
#endif

namespace onnxc {
namespace rt {

// y = conv(x - x_zp, w): out(channel, flat index, acc) as for conv_integer. w_packed:
// qconv_pointwise_pack_weights; row_sums: qconv_weight_row_sums. scratch: where the M4's and
// M7's kernel widens its block (qconv_pointwise_dsp_scratch_bytes(p) bytes, 4-byte aligned: the
// plan's, where it had room), or null: on the stack; the other forms take none.
template <class Out>
inline void qconv_pointwise(const ConvParams& p, const std::uint8_t* x, std::uint8_t x_zero_point,
                            const std::int32_t* w_packed, const index_t* row_sums, Out out,
                            std::uint8_t* scratch = nullptr) {
#if defined(ONNXC_QUANT_DUAL_MAC) && !defined(ONNXC_QUANT_MVE)
  return detail::qconv_pointwise_dsp(p, x, x_zero_point, w_packed, row_sums, out,
                                     reinterpret_cast<std::uint32_t*>(scratch));
#else
  static_cast<void>(scratch);
#endif
  const index_t plane = p.in_d * p.in_h * p.in_w, pairs = qconv_pointwise_channel_pairs(p);
  const index_t pair_positions = plane / kPointwiseTilePositions * kPointwiseTilePositions;
  detail::PointwiseTile acc;
  std::int32_t sums[kPointwiseTileChannels][kPointwiseBlock + 1];
  for (index_t b = 0; b < p.batch; ++b) {
    const std::uint8_t* xb = x + b * p.in_channels * plane;
    for (index_t m = 0; m < p.out_channels; m += kPointwiseTileChannels) {
      const index_t rows = p.out_channels - m < kPointwiseTileChannels ? p.out_channels - m : kPointwiseTileChannels;
      const std::int32_t* wt = w_packed + m * pairs;
      std::int32_t correction[kPointwiseTileChannels];
      for (index_t r = 0; r < rows; ++r)
        correction[r] = static_cast<std::int32_t>(x_zero_point) * static_cast<std::int32_t>(row_sums[m + r]);
      const index_t y0 = (b * p.out_channels + m) * plane;
      // Blocks of positions: the tiles' sums gathered per channel, then requantized by one
      // store_row per channel and block (its per-channel loads once per block, not per tile).
      for (index_t i0 = 0; i0 < plane; i0 += kPointwiseBlock) {
        const index_t block = plane - i0 < kPointwiseBlock ? plane - i0 : kPointwiseBlock;
        for (index_t j = 0; j < block; j += kPointwiseTilePositions) {
          const index_t i = i0 + j;
#if defined(ONNXC_QUANT_MVE)
          if (detail::pointwise_mve_applies(plane)) {
            if (i < pair_positions)
              detail::pointwise_tile_mve<kPointwiseTilePositions>(xb + i, plane, p.in_channels, wt, acc);
            else
              detail::pointwise_tile_mve<1>(xb + i, plane, p.in_channels, wt, acc);
          } else
#endif
          if (i < pair_positions)
            detail::pointwise_tile<kPointwiseTilePositions>(xb + i, plane, p.in_channels, wt, acc);
          else
            detail::pointwise_tile<1>(xb + i, plane, p.in_channels, wt, acc);
          ONNXC_UNROLL for (int r = 0; r < kPointwiseTileChannels; ++r) {
            sums[r][j] = acc[r][0];
            sums[r][j + 1] = acc[r][1];  // (past an odd plane's end: the block has room)
          }
        }
        for (index_t r = 0; r < rows; ++r) store_row(out, m + r, y0 + r * plane + i0, sums[r], block, correction[r]);
      }
    }
  }
}

// qconv_pointwise with the weights in qconv_pointwise_s8_pack_weights' layout (the compiler's
// choice on the Cortex-M55): Helium's kernel where built with MVE (quant_pointwise_mve.h), this
// direct loop elsewhere (the same sums).
template <class Out>
inline void qconv_pointwise_s8(const ConvParams& p, const std::uint8_t* x, std::uint8_t x_zero_point,
                               const std::int8_t* w_packed, const index_t* row_sums, Out out) {
#if defined(ONNXC_QUANT_MVE)
  return detail::qconv_pointwise_s8_mve(p, x, x_zero_point, w_packed, row_sums, out);
#endif
  static_cast<void>(row_sums);
  const index_t plane = p.in_d * p.in_h * p.in_w, vectors = qconv_pointwise_s8_vectors(p);
  for (index_t b = 0; b < p.batch; ++b)
    for (index_t m = 0; m < p.out_channels; ++m) {
      const std::int8_t* wm = w_packed + (m / kPointwiseTileChannels * vectors * kPointwiseTileChannels +
                                          m % kPointwiseTileChannels) * kPointwiseS8Lanes;
      for (index_t i = 0; i < plane; ++i) {
        std::int32_t acc = 0;
        for (index_t c = 0; c < p.in_channels; ++c)
          acc += (static_cast<std::int32_t>(x[(b * p.in_channels + c) * plane + i]) - x_zero_point) *
                 wm[c / kPointwiseS8Lanes * kPointwiseTileChannels * kPointwiseS8Lanes + c % kPointwiseS8Lanes];
        store_row(out, m, (b * p.out_channels + m) * plane + i, &acc, 1, 0);
      }
    }
}

// ---- direct integer convolution with AVX-512 VNNI ----
//
// The kernel is in quant_conv_avx512vnni.h; here what the compiler needs on any host: where it
// applies, the packed weights' layout and size.
constexpr index_t kQConvVnniChannels = 16;       // output channels per register tile
constexpr index_t kQConvVnniMaxKernelWidth = 16;
constexpr index_t kQConvVnniCacheBytes = 16384;  // stack for one vector's input vectors
constexpr index_t kQConvVnniMinWidth = 4;         // output rows narrower: too many rows per vector

// The geometry qconv_vnni walks: a 1x1 convolution of stride 1 without padding as one row of all
// the plane's positions (rows narrower than a vector would leave lanes idle).
inline ConvParams qconv_vnni_geometry(ConvParams p) {
  if (!conv_reads_input_as_matrix(p)) return p;
  p.in_w = p.out_w = p.in_d * p.in_h * p.in_w;
  p.in_d = p.in_h = p.out_d = p.out_h = 1;
  return p;
}

// Whether qconv_vnni computes this convolution (the compiler gives it packed weights only then):
// 2-D, one group, horizontal stride 1 or 2, output rows of at least kQConvVnniMinWidth (a vector
// of 16 outputs reads one masked load per output row it covers, per channel and tap).
inline bool qconv_vnni_applies(const ConvParams& conv) {
  const ConvParams p = qconv_vnni_geometry(conv);
  return p.group == 1 && p.k_d == 1 && p.in_d == 1 && p.out_d == 1 && (p.stride_w == 1 || p.stride_w == 2) &&
         p.k_w <= kQConvVnniMaxKernelWidth && p.out_w >= kQConvVnniMinWidth;
}

inline index_t qconv_vnni_padded_channels(const ConvParams& p) {
  return (p.out_channels + kQConvVnniChannels - 1) / kQConvVnniChannels * kQConvVnniChannels;
}

// Bytes of the packed weights: int32 ((c4 * k_h + kh) * k_w + kw) * padded_channels + m holds
// w[m, 4 c4 .. 4 c4 + 3, kh, kw] (0 past the channels).
inline index_t qconv_vnni_weights_bytes(const ConvParams& p) {
  return (p.in_channels + 3) / 4 * p.k_h * p.k_w * qconv_vnni_padded_channels(p) * 4;
}

inline void qconv_vnni_pack_weights(const ConvParams& p, const std::int8_t* w, std::int8_t* packed) {
  const index_t groups = (p.in_channels + 3) / 4, taps = p.k_h * p.k_w, padded = qconv_vnni_padded_channels(p);
  for (index_t c4 = 0; c4 < groups; ++c4)
    for (index_t tap = 0; tap < taps; ++tap)
      for (index_t m = 0; m < padded; ++m)
        for (index_t t = 0; t < 4; ++t) {
          const index_t ic = 4 * c4 + t;
          const bool real = m < p.out_channels && ic < p.in_channels;
          packed[((c4 * taps + tap) * padded + m) * 4 + t] = real ? w[(m * p.in_channels + ic) * taps + tap] : 0;
        }
}

// ---- direct integer convolution with AVX2 ----
//
// The kernel is in quant_conv_avx2.h; here what the compiler needs on any host: where it applies,
// the packed weights' layout and size.
constexpr index_t kQConvAvx2Channels = 4;         // output channels per register tile
constexpr index_t kQConvAvx2BufferBytes = 32768;  // stack for the widened input rows or vectors
constexpr index_t kQConvAvx2MaxRowWidth = 512;    // phase-columns of a widened row
constexpr index_t kQConvAvx2MaxTaps = 128;        // k_h * k_w

// Phase-columns of a widened input row (a multiple of 16): the last block's reads.
inline index_t qconv_avx2_row_width(const ConvParams& p) {
  return (p.out_w + (p.k_w - 1) * p.dilation_w / p.stride_w + 15 + 15) / 16 * 16;
}

// The two halves of a 16-bit pair: input channels (2 c2, 2 c2 + 1) under the same kernel row; with
// one input channel (a first layer) kernel rows (2 kh, 2 kh + 1) of that channel instead, so that
// no half is idle. QConvAvx2Pairs: the reduction as `pairs` pairs of `rows` kernel rows each.
inline bool qconv_avx2_row_pairs(const ConvParams& p) {
  return p.in_channels == 1 && p.k_h > 1 && !conv_reads_input_as_matrix(p);
}

struct QConvAvx2Pairs {
  index_t pairs, rows;
};

inline QConvAvx2Pairs qconv_avx2_pairs(const ConvParams& p) {
  if (qconv_avx2_row_pairs(p)) return {1, (p.k_h + 1) / 2};
  return {(p.in_channels + 1) / 2, p.k_h};
}

// Half t of pair c2 under kernel row kh of the pairs: its input channel and kernel row, or false
// where it is past them (a zero half).
inline bool qconv_avx2_half(const ConvParams& p, index_t c2, index_t kh, index_t t, index_t* channel, index_t* row) {
  if (qconv_avx2_row_pairs(p)) {
    *channel = 0;
    *row = 2 * kh + t;
    return *row < p.k_h;
  }
  *channel = 2 * c2 + t;
  *row = kh;
  return *channel < p.in_channels;
}

// Whether qconv_avx2 computes this convolution (the compiler gives it packed weights only then):
// 2-D, one group, its input vectors within the stack buffer.
inline bool qconv_avx2_applies(const ConvParams& p) {
  if (p.group != 1 || p.k_d != 1 || p.in_d != 1 || p.out_d != 1 || p.k_h * p.k_w > kQConvAvx2MaxTaps) return false;
  const QConvAvx2Pairs pairs = qconv_avx2_pairs(p);
  if (conv_reads_input_as_matrix(p)) return pairs.pairs * 64 <= kQConvAvx2BufferBytes;
  const index_t width = qconv_avx2_row_width(p);
  return width <= kQConvAvx2MaxRowWidth && pairs.pairs * pairs.rows * p.stride_w * width * 4 <= kQConvAvx2BufferBytes;
}

inline index_t qconv_avx2_padded_channels(const ConvParams& p) {
  return (p.out_channels + kQConvAvx2Channels - 1) / kQConvAvx2Channels * kQConvAvx2Channels;
}

// int32 words of the packed weights: word ((c2 * rows + kh) * k_w + kw) * padded_channels + m holds
// w[m, channel, row, kw] of the pair's half t (qconv_avx2_half) in its bits 16 t .. 16 t + 15 (0
// past the channels or kernel rows).
inline index_t qconv_avx2_weight_words(const ConvParams& p) {
  const QConvAvx2Pairs pairs = qconv_avx2_pairs(p);
  return pairs.pairs * pairs.rows * p.k_w * qconv_avx2_padded_channels(p);
}

inline void qconv_avx2_pack_weights(const ConvParams& p, const std::int8_t* w, std::int32_t* packed) {
  const QConvAvx2Pairs pairs = qconv_avx2_pairs(p);
  const index_t padded = qconv_avx2_padded_channels(p);
  for (index_t c2 = 0; c2 < pairs.pairs; ++c2)
    for (index_t kh = 0; kh < pairs.rows; ++kh)
      for (index_t kw = 0; kw < p.k_w; ++kw)
        for (index_t m = 0; m < padded; ++m) {
          std::uint32_t word = 0;
          for (index_t t = 0; t < 2; ++t) {
            index_t ic = 0, row = 0;
            if (m >= p.out_channels || !qconv_avx2_half(p, c2, kh, t, &ic, &row)) continue;
            const auto half = static_cast<std::int16_t>(w[((m * p.in_channels + ic) * p.k_h + row) * p.k_w + kw]);
            word |= static_cast<std::uint32_t>(static_cast<std::uint16_t>(half)) << (16 * t);
          }
          packed[((c2 * pairs.rows + kh) * p.k_w + kw) * padded + m] = static_cast<std::int32_t>(word);
        }
}

}  // namespace rt
}  // namespace onnxc
#include "onnxc/quant_conv_avx512vnni.h"  // (uses store_vector and the packing above)
#include "onnxc/quant_conv_avx2.h"        // (uses store_row and the packing above)
#include "onnxc/quant_matmul_avx512vnni.h"  // (uses qconv_vnni_interleave)
#include "onnxc/quant_depthwise_avx2.h"   // (uses store_vector8 and depthwise_avx2_applies)

namespace onnxc {
namespace rt {

// A depthwise integer convolution the compiler planned without scratch (kDepthwiseInPlaceAttr):
// the AVX-512 VBMI byte-permute kernel or the AVX2 one where built and they apply (the compiler
// marks only such nodes for its target), else conv_integer_direct (correct, slow).
template <class X, class W, class Out>
inline void depthwise_integer_in_place(const ConvParams& p, QuantOperand<X> x, QuantOperand<W> w, Out out) {
#if defined(ONNXC_DEPTHWISE_PERMUTE_AVX512)
  if (detail::depthwise_permute_applies(p)) return detail::depthwise_integer_permute(p, x, w, out);
#endif
#if defined(ONNXC_DEPTHWISE_AVX2)
  if (depthwise_avx2_applies(p)) return detail::depthwise_integer_avx2(p, x, w, out);
#endif
  conv_integer_direct(p, x, w, out);
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_QUANT_H
