// Conversions between element types: the Cast/CastLike operators, and every functor whose
// real-valued result must land in an integer type (Pow on integers, Erf on integers, ...).
#ifndef ONNXC_CAST_H
#define ONNXC_CAST_H

#include <cstdint>
#include <limits>
#include <type_traits>

#include "onnxc/base.h"

namespace onnxc {
namespace rt {

// Floating -> integer: truncates toward zero like a C cast. ONNX leaves out-of-range values
// undefined (and C++ makes them undefined behaviour); here they saturate to the type's bounds
// and NaN becomes 0, so every input has one deterministic result.
template <class I, class F>
inline I float_to_int(F v) {
  static_assert(std::is_integral<I>::value && std::is_floating_point<F>::value, "float_to_int<Integer>(floating)");
  // One past the largest value: 2^bits (unsigned) or 2^(bits-1) (signed), exact in F.
  const F limit = static_cast<F>(std::numeric_limits<I>::max() / 2 + 1) * F(2);
  if (v != v) return I(0);
  if (v >= limit) return std::numeric_limits<I>::max();
  if (v <= static_cast<F>(std::numeric_limits<I>::lowest())) return std::numeric_limits<I>::lowest();
  return static_cast<I>(v);
}

// Converts compute type From to compute type To as ONNX Cast does:
//   to bool: v != 0 (NaN is true);
//   floating -> integer: float_to_int;
//   integer -> narrower integer: keeps the low bits (two's complement wrap-around);
//   to floating: rounds to nearest even (the 16-bit floats when stored, see Cast).
template <class To, class From>
inline To convert(From v) {
  if constexpr (std::is_same<To, bool>::value) {
    return v != From(0);
  } else if constexpr (std::is_integral<To>::value && std::is_floating_point<From>::value) {
    return float_to_int<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

// double -> float rounded to odd: truncated toward zero, with the last significand bit set
// when inexact. Rounding that float to nearest even in a format with at least two fewer
// significand bits (float16, bfloat16) then gives the correctly rounded result, which rounding
// twice to nearest (double -> float -> float16) does not.
inline float double_to_float_round_odd(double d) {
  const float f = static_cast<float>(d);
  if (static_cast<double>(f) == d || f != f) return f;
  std::uint32_t bits = float_to_bits(f);
  if (static_cast<double>(f < 0 ? -f : f) > (d < 0 ? -d : d)) --bits;  // rounded away from zero: step back
  return bits_to_float(bits | 1u);
}

// The Cast functor: y = convert(x) into the compute type of To; storing rounds to To.
template <class To> struct Cast {
  template <class From> compute_t<To> operator()(From v) const {
    if constexpr (std::is_same<From, double>::value && sizeof(To) == 2 && std::is_same<compute_t<To>, float>::value) {
      return double_to_float_round_odd(v);  // the 16-bit floats: round once, from the double
    } else {
      return convert<compute_t<To>>(v);
    }
  }
};

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_CAST_H
