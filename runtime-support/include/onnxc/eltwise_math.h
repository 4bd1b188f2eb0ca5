// Elementwise functors beyond arithmetic: math functions, activations, predicates,
// comparisons, logic and bit operations, Pow/Mod/Max/Min, PRelu and Where's selection.
// The kernels that apply them are in eltwise.h.
//
// Every functor takes compute types (float for the 16-bit floats). Functors that ONNX also
// defines on integers handle them explicitly, without undefined behaviour.
#ifndef ONNXC_ELTWISE_MATH_H
#define ONNXC_ELTWISE_MATH_H

#include <cmath>
#include <limits>
#include <type_traits>

#include "onnxc/activation.h"
#include "onnxc/base.h"
#include "onnxc/cast.h"
#include "onnxc/eltwise.h"
#include "onnxc/math_simd.h"

namespace onnxc {
namespace rt {

namespace detail {

template <class T> inline bool is_nan(T v) {
  if constexpr (std::is_floating_point<T>::value) {
    return v != v;
  } else {
    (void)v;
    return false;
  }
}

// The floating type a real-valued function of T is computed in: T itself, or double for
// the integers.
template <class T>
using real_t = typename std::conditional<std::is_floating_point<T>::value, T, double>::type;

// base^exponent for an integer base and integer exponent, by squaring, wrapping on overflow.
// A negative exponent gives the truncated real result: 1 or -1 for base +-1, else 0.
template <class T, class E> inline T int_pow(T base, E exponent) {
  if constexpr (std::is_signed<E>::value) {
    if (exponent < E(0)) {
      if (base == T(1)) return T(1);
      if constexpr (std::is_signed<T>::value) {
        if (base == T(-1)) return (exponent % 2 == 0) ? T(1) : T(-1);
      }
      return T(0);
    }
  }
  wrap_t<T> result = 1, b = static_cast<wrap_t<T>>(base);
  for (; exponent != E(0); exponent = static_cast<E>(exponent / 2)) {
    if (exponent % 2 != 0) result = static_cast<wrap_t<T>>(result * b);
    b = static_cast<wrap_t<T>>(b * b);
  }
  return static_cast<T>(result);
}

}  // namespace detail

// ---- unary math ----

struct Abs {
  template <class T> T operator()(T x) const {
    if constexpr (std::is_floating_point<T>::value) {
      return std::fabs(x);
    } else if constexpr (std::is_unsigned<T>::value) {
      return x;
    } else {
      return x < T(0) ? wrapping_sub(T(0), x) : x;  // INT_MIN stays INT_MIN, as in numpy
    }
  }
};
struct Neg {
  template <class T> T operator()(T x) const {
    if constexpr (std::is_integral<T>::value) {
      return wrapping_sub(T(0), x);
    } else {
      return -x;
    }
  }
#if defined(ONNXC_SIMD)
  vfloat vec(vfloat x) const { return -x; }
#endif
};
// -1, 0 or 1; NaN stays NaN.
struct Sign {
  template <class T> T operator()(T x) const {
    if (x > T(0)) return T(1);
    if constexpr (std::is_signed<T>::value) {
      if (x < T(0)) return T(-1);
    }
    return x;
  }
};
struct Reciprocal {
  template <class T> T operator()(T x) const { return T(1) / x; }
};
struct Floor {
  template <class T> T operator()(T x) const { return std::floor(x); }
};
struct Ceil {
  template <class T> T operator()(T x) const { return std::ceil(x); }
};
// Rounds half to even (1.5 -> 2, 2.5 -> 2, -0.5 -> -0), independent of the FPU rounding mode.
struct Round {
  template <class T> T operator()(T x) const {
    T r = std::floor(x);
    const T frac = x - r;  // NaN for +-inf and NaN, which then pass through unchanged
    if (frac > T(0.5) || (frac == T(0.5) && std::fmod(r, T(2)) != T(0))) r += T(1);
    return r == T(0) ? std::copysign(r, x) : r;
  }
};

#define ONNXC_FLOAT_FUNCTOR(Name, expr)                   \
  struct Name {                                           \
    template <class T> T operator()(T x) const { return expr; } \
  };
struct Exp {
  template <class T> T operator()(T x) const { return std::exp(x); }
#if defined(ONNXC_SIMD)
  // xsimd's float exp returns +inf from about 88.38, below the largest finite result (at 88.72):
  // there exp(x - 1) * e.
  vfloat vec(vfloat x) const {
    const auto high = x > vfloat(88.0f);
    return xsimd::exp(xsimd::select(high, x - vfloat(1.0f), x)) *
           xsimd::select(high, vfloat(2.71828182845904523536f), vfloat(1.0f));
  }
#endif
};
struct Log {
  template <class T> T operator()(T x) const { return std::log(x); }
#if defined(ONNXC_SIMD)
  vfloat vec(vfloat x) const { return xsimd::log(x); }
#endif
};
struct Sqrt {
  template <class T> T operator()(T x) const { return std::sqrt(x); }
#if defined(ONNXC_SIMD)
  vfloat vec(vfloat x) const { return xsimd::sqrt(x); }
#endif
};
ONNXC_FLOAT_FUNCTOR(Sin, std::sin(x))
ONNXC_FLOAT_FUNCTOR(Cos, std::cos(x))
ONNXC_FLOAT_FUNCTOR(Tan, std::tan(x))
ONNXC_FLOAT_FUNCTOR(Asin, std::asin(x))
ONNXC_FLOAT_FUNCTOR(Acos, std::acos(x))
ONNXC_FLOAT_FUNCTOR(Atan, std::atan(x))
ONNXC_FLOAT_FUNCTOR(Sinh, std::sinh(x))
ONNXC_FLOAT_FUNCTOR(Cosh, std::cosh(x))
ONNXC_FLOAT_FUNCTOR(Asinh, std::asinh(x))
ONNXC_FLOAT_FUNCTOR(Acosh, std::acosh(x))
ONNXC_FLOAT_FUNCTOR(Atanh, std::atanh(x))
#undef ONNXC_FLOAT_FUNCTOR

// Erf is also defined on integers: the real result converted back (so 0 or +-1).
struct Erf {
  template <class T> T operator()(T x) const {
    return convert<T>(std::erf(static_cast<detail::real_t<T>>(x)));
  }
#if defined(ONNXC_SIMD)
  vfloat vec(vfloat x) const { return erf_vec(x); }
#endif
};

// ---- activations ----

struct Elu {
  float alpha;
  template <class T> T operator()(T x) const { return x >= T(0) ? x : static_cast<T>(alpha) * std::expm1(x); }
};
struct Selu {
  float alpha, gamma;
  template <class T> T operator()(T x) const {
    const T g = static_cast<T>(gamma);
    return x > T(0) ? g * x : g * static_cast<T>(alpha) * std::expm1(x);
  }
};
struct Celu {
  float alpha;
  template <class T> T operator()(T x) const {
    const T a = static_cast<T>(alpha);
    return x >= T(0) ? x : a * std::expm1(x / a);
  }
};
struct HardSigmoid {
  float alpha, beta;
  template <class T> T operator()(T x) const {
    const T y = static_cast<T>(alpha) * x + static_cast<T>(beta);
    return y < T(0) ? T(0) : (y > T(1) ? T(1) : y);
  }
};
// x * HardSigmoid(x) with alpha = 1/6, beta = 1/2.
struct HardSwish {
  template <class T> T operator()(T x) const { return x * HardSigmoid{1.0f / 6.0f, 0.5f}(x); }
};
// log(1 + e^x), without overflow for large x.
struct Softplus {
  template <class T> T operator()(T x) const {
    return x > T(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  }
};
struct Softsign {
  template <class T> T operator()(T x) const { return x / (T(1) + std::fabs(x)); }
};
struct ThresholdedRelu {
  float alpha;
  template <class T> T operator()(T x) const { return x > static_cast<T>(alpha) ? x : T(0); }
};
// Shrink is also defined on integers: computed in real numbers, converted back.
struct Shrink {
  float bias, lambd;
  template <class T> T operator()(T x) const {
    using R = detail::real_t<T>;
    const R v = static_cast<R>(x);
    if (v < -static_cast<R>(lambd)) return convert<T>(v + static_cast<R>(bias));
    if (v > static_cast<R>(lambd)) return convert<T>(v - static_cast<R>(bias));
    return T(0);
  }
};
struct Mish {
  template <class T> T operator()(T x) const { return x * std::tanh(Softplus{}(x)); }
};
// Gelu with approximate = "none": x * Phi(x).
struct Gelu {
  template <class T> T operator()(T x) const {
    return T(0.5) * x * (T(1) + std::erf(x * static_cast<T>(0.70710678118654752440)));
  }
#if defined(ONNXC_SIMD)
  vfloat vec(vfloat x) const { return activate(Epilogue{Activation::Gelu, 0.0f, 0.0f}, x); }
#endif
};
// Gelu with approximate = "tanh".
struct GeluTanh {
  template <class T> T operator()(T x) const {
    const T sqrt_2_over_pi = static_cast<T>(0.79788456080286535588);
    return T(0.5) * x * (T(1) + std::tanh(sqrt_2_over_pi * (x + static_cast<T>(0.044715) * x * x * x)));
  }
#if defined(ONNXC_SIMD)
  vfloat vec(vfloat x) const { return activate(Epilogue{Activation::GeluTanh, 0.0f, 0.0f}, x); }
#endif
};
struct PRelu {
  template <class T> T operator()(T x, T slope) const {
    if constexpr (std::is_unsigned<T>::value) {
      return x;
    } else {
      return x < T(0) ? Mul{}(slope, x) : x;
    }
  }
};

// ---- predicates ----

struct IsNaN {
  template <class T> bool operator()(T x) const { return detail::is_nan(x); }
};
struct IsInf {
  bool detect_positive, detect_negative;
  template <class T> bool operator()(T x) const {
    return (detect_positive && x == std::numeric_limits<T>::infinity()) ||
           (detect_negative && x == -std::numeric_limits<T>::infinity());
  }
};

// ---- comparisons (bool results) ----

struct Equal {
  template <class T> bool operator()(T a, T b) const { return a == b; }
};
struct Less {
  template <class T> bool operator()(T a, T b) const { return a < b; }
};
struct Greater {
  template <class T> bool operator()(T a, T b) const { return a > b; }
};
struct LessOrEqual {
  template <class T> bool operator()(T a, T b) const { return a <= b; }
};
struct GreaterOrEqual {
  template <class T> bool operator()(T a, T b) const { return a >= b; }
};

// ---- logic and bits ----

struct Not {
  bool operator()(bool x) const { return !x; }
};
struct And {
  bool operator()(bool a, bool b) const { return a && b; }
};
struct Or {
  bool operator()(bool a, bool b) const { return a || b; }
};
struct Xor {
  bool operator()(bool a, bool b) const { return a != b; }
};
struct BitwiseNot {
  template <class T> T operator()(T x) const { return static_cast<T>(~x); }
};
struct BitwiseAnd {
  template <class T> T operator()(T a, T b) const { return static_cast<T>(a & b); }
};
struct BitwiseOr {
  template <class T> T operator()(T a, T b) const { return static_cast<T>(a | b); }
};
struct BitwiseXor {
  template <class T> T operator()(T a, T b) const { return static_cast<T>(a ^ b); }
};
// Shifts of unsigned integers; shifting by the width or more gives 0 (undefined in C++).
struct ShiftLeft {
  template <class T> T operator()(T x, T s) const {
    return s >= T(std::numeric_limits<T>::digits) ? T(0) : static_cast<T>(static_cast<wrap_t<T>>(x) << s);
  }
};
struct ShiftRight {
  template <class T> T operator()(T x, T s) const {
    return s >= T(std::numeric_limits<T>::digits) ? T(0) : static_cast<T>(x >> s);
  }
};

// ---- Pow, Mod, Max, Min ----

// base^exponent; the result has the base's type. Floating bases compute in their own type
// (double when either operand is double); integer bases with integer exponents are exact
// (wrapping on overflow); integer bases with floating exponents convert the real result.
struct Pow {
  template <class A, class B> A operator()(A base, B exponent) const {
    if constexpr (std::is_floating_point<A>::value) {
      using R = typename std::conditional<std::is_same<B, double>::value, double, A>::type;
      return static_cast<A>(std::pow(static_cast<R>(base), static_cast<R>(exponent)));
    } else if constexpr (std::is_integral<B>::value) {
      return detail::int_pow(base, exponent);
    } else {
      return float_to_int<A>(std::pow(static_cast<double>(base), static_cast<double>(exponent)));
    }
  }
};

// Mod with fmod = 0: the remainder takes the divisor's sign (Python's %). x mod 0 is 0.
struct Mod {
  template <class T> T operator()(T a, T b) const {
    if constexpr (std::is_floating_point<T>::value) {
      T r = std::fmod(a, b);
      if (r != T(0) && ((r < T(0)) != (b < T(0)))) r += b;
      return r;
    } else if constexpr (std::is_unsigned<T>::value) {
      return b == T(0) ? T(0) : static_cast<T>(a % b);
    } else {
      if (b == T(0) || b == T(-1)) return T(0);  // also avoids INT_MIN % -1
      T r = static_cast<T>(a % b);
      if (r != T(0) && ((r < T(0)) != (b < T(0)))) r = static_cast<T>(r + b);
      return r;
    }
  }
};
// Mod with fmod = 1: the remainder takes the dividend's sign (C's fmod and %). x mod 0 is 0
// for integers, NaN for floats.
struct FMod {
  template <class T> T operator()(T a, T b) const {
    if constexpr (std::is_floating_point<T>::value) {
      return std::fmod(a, b);
    } else if constexpr (std::is_unsigned<T>::value) {
      return b == T(0) ? T(0) : static_cast<T>(a % b);
    } else {
      if (b == T(0) || b == T(-1)) return T(0);
      return static_cast<T>(a % b);
    }
  }
};

// Max and Min propagate NaN, like numpy's maximum/minimum that the ONNX reference uses.
struct Max {
  template <class T> T operator()(T a, T b) const {
    if (detail::is_nan(a)) return a;
    return (b > a || detail::is_nan(b)) ? b : a;
  }
};
struct Min {
  template <class T> T operator()(T a, T b) const {
    if (detail::is_nan(a)) return a;
    return (b < a || detail::is_nan(b)) ? b : a;
  }
};

// ---- Where ----

struct Select {
  template <class T> T operator()(bool condition, T a, T b) const { return condition ? a : b; }
};

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_ELTWISE_MATH_H
