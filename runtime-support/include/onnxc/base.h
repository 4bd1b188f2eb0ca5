// onnxc runtime support: basic types shared by every kernel.
//
// Header-only, freestanding-friendly: no heap, no exceptions, no I/O, no global state.
#ifndef ONNXC_BASE_H
#define ONNXC_BASE_H

#include <cstddef>
#include <cstdint>
#include <cstring>

// Fully unrolls the short fixed-count loop that follows. Register-blocked kernels need it: their
// accumulator arrays stay in registers only when every index is a constant, and GCC at -O2/-Os
// would otherwise keep them on the stack.
#if defined(__clang__)
#define ONNXC_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define ONNXC_UNROLL _Pragma("GCC unroll 16")
#else
#define ONNXC_UNROLL
#endif

// Keeps the loop that follows a loop: for the outer loops of a kernel whose inner loops are
// register tiles unrolled and inlined, where the generated code's constant geometry would let
// -O3 copy the whole body once per iteration (a ConvTranspose's phases: minutes of compile time).
#if defined(__clang__)
#define ONNXC_NO_UNROLL _Pragma("nounroll")
#elif defined(__GNUC__)
#define ONNXC_NO_UNROLL _Pragma("GCC unroll 1")
#else
#define ONNXC_NO_UNROLL
#endif

// Inlines a small function into every caller regardless of the caller's size. For the functions
// called per element or per vector inside kernels (activations, quantized arithmetic): a generated
// run() holds the whole model, and once it is large GCC stops inlining into the kernels it has
// inlined into it, leaving a call per element (and, for SIMD code, every vector register spilled
// around each call).
#if defined(__GNUC__)
#define ONNXC_INLINE __attribute__((always_inline)) inline
#else
#define ONNXC_INLINE inline
#endif

namespace onnxc {
namespace rt {

// Index arithmetic type: the target's pointer-sized signed integer (32-bit on Cortex-M).
using index_t = std::ptrdiff_t;

// An element of a string tensor: NUL-terminated UTF-8 text (see onnxc/strings.h).
using cstring = const char*;

inline float bits_to_float(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

inline std::uint32_t float_to_bits(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

// IEEE 754 binary16, stored as its bit pattern; arithmetic happens in float.
struct float16 {
  std::uint16_t bits;
};

// bfloat16 (the upper half of a binary32), stored as its bit pattern.
struct bfloat16 {
  std::uint16_t bits;
};

inline float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return bits_to_float(sign | 0x7f800000u | (mant << 13));  // inf / nan
  if (exp != 0) return bits_to_float(sign | ((exp + 112) << 23) | (mant << 13));
  if (mant == 0) return bits_to_float(sign);
  // Subnormal half: normalise.
  int e = -1;
  do {
    ++e;
    mant <<= 1;
  } while ((mant & 0x400u) == 0);
  return bits_to_float(sign | (static_cast<std::uint32_t>(112 - e) << 23) | ((mant & 0x3ffu) << 13));
}

inline std::uint16_t float_to_half(float f) {
  const std::uint32_t x = float_to_bits(f);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) {  // inf or nan
    return static_cast<std::uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u | ((absx >> 13) & 0x3ffu) : 0u));
  }
  if (absx >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (absx < 0x38800000u) {  // result is subnormal or zero
    if (absx < 0x33000000u) return sign;  // below half the smallest subnormal
    const std::uint32_t e = absx >> 23;
    const std::uint32_t m = (absx & 0x7fffffu) | 0x800000u;
    const std::uint32_t shift = 126 - e;  // 14..24
    std::uint32_t r = m >> shift;
    const std::uint32_t rem = m & ((1u << shift) - 1u);
    const std::uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1u))) ++r;
    return static_cast<std::uint16_t>(sign | r);
  }
  std::uint32_t r = absx - 0x38000000u;  // rebias exponent
  const std::uint32_t rem = r & 0x1fffu;
  r >>= 13;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;
  return static_cast<std::uint16_t>(sign | r);
}

inline float bfloat16_to_float(std::uint16_t b) { return bits_to_float(static_cast<std::uint32_t>(b) << 16); }

inline std::uint16_t float_to_bfloat16(float f) {
  const std::uint32_t x = float_to_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // quiet nan
  const std::uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>((x + rounding) >> 16);
}

// The 8-bit floats of ONNX (opset 19), stored as their bit patterns; arithmetic happens in
// float. Layout parameters: exponent and significand bits, bias; FNUZ types have no negative
// zero and one NaN (0x80); E4M3FN has no infinity (NaN is S.1111.111); E5M2 has both.
struct float8e4m3fn {
  std::uint8_t bits;
};
struct float8e4m3fnuz {
  std::uint8_t bits;
};
struct float8e5m2 {
  std::uint8_t bits;
};
struct float8e5m2fnuz {
  std::uint8_t bits;
};

template <int MantBits, int Bias, bool Fnuz, bool HasInf> struct Float8Format {
  static constexpr int kMant = MantBits, kBias = Bias;
  static constexpr bool kFnuz = Fnuz, kInf = HasInf;
  // Largest finite code without the sign.
  static constexpr std::uint32_t kMaxCode = Fnuz ? 0x7fu : HasInf ? 0x7bu : 0x7eu;
};
template <class T> struct float8_format;
template <> struct float8_format<float8e4m3fn> { using type = Float8Format<3, 7, false, false>; };
template <> struct float8_format<float8e4m3fnuz> { using type = Float8Format<3, 8, true, false>; };
template <> struct float8_format<float8e5m2> { using type = Float8Format<2, 15, false, true>; };
template <> struct float8_format<float8e5m2fnuz> { using type = Float8Format<2, 16, true, false>; };

template <class Fmt>
inline float float8_to_float(std::uint8_t b) {
  const std::uint32_t sign = static_cast<std::uint32_t>(b & 0x80u) << 24, code = b & 0x7fu;
  const std::uint32_t exp_mask = 0x7fu >> Fmt::kMant;
  const std::uint32_t e = code >> Fmt::kMant, m = code & ((1u << Fmt::kMant) - 1u);
  if (Fmt::kFnuz ? b == 0x80u : (Fmt::kInf ? e == exp_mask && m != 0 : code == 0x7fu))
    return bits_to_float(0x7fc00000u | sign);  // NaN
  if (Fmt::kInf && e == exp_mask) return bits_to_float(0x7f800000u | sign);
  if (e == 0) {  // subnormal: m units of 2^(1 - bias - mant)
    const float unit = bits_to_float(static_cast<std::uint32_t>(127 + 1 - Fmt::kBias - Fmt::kMant) << 23);
    const float v = static_cast<float>(m) * unit;
    return sign ? -v : v;
  }
  return bits_to_float(sign | ((e + 127u - static_cast<std::uint32_t>(Fmt::kBias)) << 23) | (m << (23 - Fmt::kMant)));
}

// float -> 8-bit float, rounded to nearest even. Beyond the largest finite value: that value
// when saturating, else infinity (E5M2) or NaN (the types without infinity).
template <class Fmt>
inline std::uint8_t float_to_float8(float f, bool saturate) {
  const std::uint32_t x = float_to_bits(f);
  const std::uint32_t sign = (x >> 24) & 0x80u, absx = x & 0x7fffffffu;
  const std::uint32_t nan = Fmt::kFnuz ? 0x80u : sign | 0x7fu;
  if (absx > 0x7f800000u) return static_cast<std::uint8_t>(nan);
  const std::uint32_t overflow = saturate ? sign | Fmt::kMaxCode
                                          : Fmt::kInf ? sign | 0x7cu : Fmt::kFnuz ? 0x80u : sign | 0x7fu;
  auto with_sign = [&](std::uint32_t code) {
    return static_cast<std::uint8_t>(Fmt::kFnuz && code == 0 ? 0u : sign | code);
  };
  if (absx == 0x7f800000u) return static_cast<std::uint8_t>(overflow);
  const int e = static_cast<int>(absx >> 23) - 127;  // unbiased; -127 for float subnormals
  const int emin = 1 - Fmt::kBias;
  std::uint32_t code;
  if (e >= emin) {  // normal in the target: round the significand, then rebias
    const int shift = 23 - Fmt::kMant;
    std::uint32_t r = absx >> shift;
    const std::uint32_t rem = absx & ((1u << shift) - 1u), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1u))) ++r;
    const std::uint32_t rebias = static_cast<std::uint32_t>(127 - Fmt::kBias) << Fmt::kMant;
    code = r - rebias;
  } else {  // subnormal in the target: units of 2^(emin - mant)
    const std::uint32_t m = (absx & 0x7fffffu) | (e > -127 ? 0x800000u : 0u);
    const int shift = emin - Fmt::kMant - (e > -127 ? e : -126) + 23;
    if (shift > 31) return with_sign(0);
    std::uint32_t r = m >> shift;
    const std::uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1u))) ++r;
    code = r;
  }
  if (code > Fmt::kMaxCode) return static_cast<std::uint8_t>(overflow);
  return with_sign(code);
}

// Describes one model input or output in the generated header.
struct TensorInfo {
  const char* name;        // the ONNX value name
  int dtype;               // ONNX TensorProto.DataType (1 = float, 7 = int64, ...)
  int rank;
  std::int64_t shape[8];   // the first `rank` entries are used
  std::size_t elements;
  std::size_t bytes;
  // -1, or for a bounded output: `shape` (and elements, bytes) are its upper bound and the
  // extent along this dim is known only after run(), which reports the actual shape.
  int dynamic_axis;
};

// compute_t<T>: the type arithmetic on T is done in (float for the 16-bit floats).
template <class T> struct compute_type { using type = T; };
template <> struct compute_type<float16> { using type = float; };
template <> struct compute_type<bfloat16> { using type = float; };
template <> struct compute_type<float8e4m3fn> { using type = float; };
template <> struct compute_type<float8e4m3fnuz> { using type = float; };
template <> struct compute_type<float8e5m2> { using type = float; };
template <> struct compute_type<float8e5m2fnuz> { using type = float; };
template <class T> using compute_t = typename compute_type<T>::type;

// load/store convert between storage and compute types.
template <class T> inline compute_t<T> load(T v) { return v; }
inline float load(float16 v) { return half_to_float(v.bits); }
inline float load(bfloat16 v) { return bfloat16_to_float(v.bits); }
inline float load(float8e4m3fn v) { return float8_to_float<float8_format<float8e4m3fn>::type>(v.bits); }
inline float load(float8e4m3fnuz v) { return float8_to_float<float8_format<float8e4m3fnuz>::type>(v.bits); }
inline float load(float8e5m2 v) { return float8_to_float<float8_format<float8e5m2>::type>(v.bits); }
inline float load(float8e5m2fnuz v) { return float8_to_float<float8_format<float8e5m2fnuz>::type>(v.bits); }

template <class T> inline T store(compute_t<T> v) { return v; }
template <> inline float16 store<float16>(float v) { return float16{float_to_half(v)}; }
template <> inline bfloat16 store<bfloat16>(float v) { return bfloat16{float_to_bfloat16(v)}; }
// Storing into an 8-bit float saturates (Cast's and QuantizeLinear's default).
template <> inline float8e4m3fn store<float8e4m3fn>(float v) {
  return float8e4m3fn{float_to_float8<float8_format<float8e4m3fn>::type>(v, true)};
}
template <> inline float8e4m3fnuz store<float8e4m3fnuz>(float v) {
  return float8e4m3fnuz{float_to_float8<float8_format<float8e4m3fnuz>::type>(v, true)};
}
template <> inline float8e5m2 store<float8e5m2>(float v) {
  return float8e5m2{float_to_float8<float8_format<float8e5m2>::type>(v, true)};
}
template <> inline float8e5m2fnuz store<float8e5m2fnuz>(float v) {
  return float8e5m2fnuz{float_to_float8<float8_format<float8e5m2fnuz>::type>(v, true)};
}

// Cast with saturate = 0 into an 8-bit float: out-of-range values become infinity or NaN.
// (Other inputs go through float first.)
template <class X, class T>
inline void cast_to_float8_unsaturated(const X* x, T* y, index_t n) {
  for (index_t i = 0; i < n; ++i)
    y[i] = T{float_to_float8<typename float8_format<T>::type>(static_cast<float>(load(x[i])), false)};
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_BASE_H
