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
template <class T> using compute_t = typename compute_type<T>::type;

// load/store convert between storage and compute types.
template <class T> inline compute_t<T> load(T v) { return v; }
inline float load(float16 v) { return half_to_float(v.bits); }
inline float load(bfloat16 v) { return bfloat16_to_float(v.bits); }

template <class T> inline T store(compute_t<T> v) { return v; }
template <> inline float16 store<float16>(float v) { return float16{float_to_half(v)}; }
template <> inline bfloat16 store<bfloat16>(float v) { return bfloat16{float_to_bfloat16(v)}; }

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_BASE_H
