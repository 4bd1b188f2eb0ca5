// Elementwise kernels: map one tensor, or combine two or three with numpy broadcasting; and
// the arithmetic and basic activation functors. The math, comparison and logic functors are
// in eltwise_math.h, the type conversions in cast.h.
//
// Functors work on compute types (float for the 16-bit floats); the kernels load/store
// between storage and compute types.
#ifndef ONNXC_ELTWISE_H
#define ONNXC_ELTWISE_H

#include <cmath>
#include <type_traits>
#include <utility>

#include "onnxc/base.h"
#include "onnxc/simd.h"

namespace onnxc {
namespace rt {

// Whether unary functor F has a vector form for floats on SIMD targets: `vfloat vec(vfloat) const`
// (the transcendental ones go through xsimd's exp, tanh, erf and log, whose float versions stay
// within a few ulp: the ONNX tests' tolerance is 1e-3 relative). The binary arithmetic functors'
// vec(a, b) serve fused chains (ops/fused_elementwise.cpp).
template <class F, class = void>
struct has_vector_form : std::false_type {};
#if defined(ONNXC_SIMD)
template <class F>
struct has_vector_form<F, std::void_t<decltype(std::declval<const F&>().vec(std::declval<vfloat>()))>>
    : std::true_type {};
#endif

// y[i] = f(x[i]) for i < n. x and y may be the same buffer. Float maps whose functor has a vector
// form go a vector at a time (the scalar std::exp, std::tanh and std::erf calls do not vectorise).
template <class X, class Y, class F>
inline void map(const X* x, Y* y, index_t n, F f) {
#if defined(ONNXC_SIMD)
  if constexpr (std::is_same<X, float>::value && std::is_same<Y, float>::value && has_vector_form<F>::value) {
    index_t i = 0;
    for (; i + kFloatLanes <= n; i += kFloatLanes) f.vec(vfloat::load_unaligned(x + i)).store_unaligned(y + i);
    if (i < n) store_partial(f.vec(load_partial(x + i, n - i)), y + i, n - i);
    return;
  }
#endif
  for (index_t i = 0; i < n; ++i) y[i] = store<Y>(f(load(x[i])));
}

// y[i] = f(a[i], b[i]): both inputs already have the output's shape.
template <class A, class B, class Y, class F>
inline void zip(const A* a, const B* b, Y* y, index_t n, F f) {
  for (index_t i = 0; i < n; ++i) y[i] = store<Y>(f(load(a[i]), load(b[i])));
}

// y[i] = f(a[i], b[0]): b is a single value.
template <class A, class B, class Y, class F>
inline void zip_scalar_b(const A* a, const B* b, Y* y, index_t n, F f) {
  const auto bv = load(b[0]);
  for (index_t i = 0; i < n; ++i) y[i] = store<Y>(f(load(a[i]), bv));
}

// y[i] = f(a[0], b[i]): a is a single value.
template <class A, class B, class Y, class F>
inline void zip_scalar_a(const A* a, const B* b, Y* y, index_t n, F f) {
  const auto av = load(a[0]);
  for (index_t i = 0; i < n; ++i) y[i] = store<Y>(f(av, load(b[i])));
}

// Walks the first rank-1 dims of `shape` in row-major order, calling
// body(y_offset, in_offsets) once per innermost row; in_offsets[k] is input k's element
// offset for that row (its strides are 0 along broadcast dims).
template <int N, class Body>
inline void for_each_row(const index_t* const* strides, const index_t* shape, int rank, Body body) {
  index_t idx[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  const index_t inner = shape[rank - 1];
  index_t outer = 1;
  for (int d = 0; d < rank - 1; ++d) outer *= shape[d];
  for (index_t o = 0; o < outer; ++o) {
    index_t offsets[N];
    for (int k = 0; k < N; ++k) {
      offsets[k] = 0;
      for (int d = 0; d < rank - 1; ++d) offsets[k] += idx[d] * strides[k][d];
    }
    body(o * inner, offsets);
    for (int d = rank - 2; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

// General broadcasting: y has `rank` (1..8) dims `shape`; a and b are read with element
// strides a_strides/b_strides (0 along broadcast dims). The innermost dim is the fast loop.
// y may be the same buffer as a when a is read with y's own (contiguous) strides.
// Adjacent dims both inputs walk as one (each input's stride of the outer dim is its inner
// stride times the inner dim's size, or 0 along both) are merged first, so the fast loop runs
// over whole runs of a plane: a squeeze-excite Mul's [1, C, 1, 1] x [1, C, H, W] becomes C rows
// of H * W, one value of a times a contiguous row of b, which the compiler vectorises (the
// strides of the fast loop are tested once per call: 0 and 1 get loops of their own).
template <class A, class B, class Y, class F>
inline void zip_broadcast(const A* a, const index_t* a_strides, const B* b, const index_t* b_strides, Y* y,
                          const index_t* shape, int rank, F f) {
  index_t dims[8], as_[8], bs_[8];
  int r = 0;
  for (int d = 0; d < rank; ++d) {
    if (shape[d] == 1 && rank > 1) continue;  // a dim of one contributes no offset
    if (r > 0 && as_[r - 1] == a_strides[d] * shape[d] && bs_[r - 1] == b_strides[d] * shape[d]) {
      dims[r - 1] *= shape[d], as_[r - 1] = a_strides[d], bs_[r - 1] = b_strides[d];
      continue;
    }
    dims[r] = shape[d], as_[r] = a_strides[d], bs_[r] = b_strides[d], ++r;
  }
  if (r == 0) dims[0] = 1, as_[0] = bs_[0] = 0, r = 1;
  const index_t* strides[2] = {as_, bs_};
  const index_t inner = dims[r - 1];
  const index_t as = as_[r - 1], bs = bs_[r - 1];
  for_each_row<2>(strides, dims, r, [&](index_t yo, const index_t* in) {
    const A* ar = a + in[0];
    const B* br = b + in[1];
    Y* yr = y + yo;
    if (as == 0 && bs == 1) {
      const auto av = load(ar[0]);
      for (index_t i = 0; i < inner; ++i) yr[i] = store<Y>(f(av, load(br[i])));
    } else if (as == 1 && bs == 0) {
      const auto bv = load(br[0]);
      for (index_t i = 0; i < inner; ++i) yr[i] = store<Y>(f(load(ar[i]), bv));
    } else if (as == 1 && bs == 1) {
      for (index_t i = 0; i < inner; ++i) yr[i] = store<Y>(f(load(ar[i]), load(br[i])));
    } else {
      for (index_t i = 0; i < inner; ++i) yr[i] = store<Y>(f(load(ar[i * as]), load(br[i * bs])));
    }
  });
}

// y[i] = f(c[i], a[i], b[i]): every input already has the output's shape.
template <class C, class A, class B, class Y, class F>
inline void zip3(const C* c, const A* a, const B* b, Y* y, index_t n, F f) {
  for (index_t i = 0; i < n; ++i) y[i] = store<Y>(f(load(c[i]), load(a[i]), load(b[i])));
}

// Three-input broadcasting (Where), strides as for zip_broadcast.
template <class C, class A, class B, class Y, class F>
inline void zip3_broadcast(const C* c, const index_t* c_strides, const A* a, const index_t* a_strides, const B* b,
                           const index_t* b_strides, Y* y, const index_t* shape, int rank, F f) {
  const index_t* strides[3] = {c_strides, a_strides, b_strides};
  const index_t inner = shape[rank - 1];
  const index_t cs = c_strides[rank - 1], as = a_strides[rank - 1], bs = b_strides[rank - 1];
  for_each_row<3>(strides, shape, rank, [&](index_t yo, const index_t* in) {
    for (index_t i = 0; i < inner; ++i)
      y[yo + i] = store<Y>(f(load(c[in[0] + i * cs]), load(a[in[1] + i * as]), load(b[in[2] + i * bs])));
  });
}

// ---- integer arithmetic without undefined behaviour ----

// The unsigned type integer T's arithmetic wraps in: at least `unsigned`, so that the usual
// promotions never turn it back into a (possibly overflowing) signed int.
template <class T>
using wrap_t = typename std::conditional<(sizeof(T) < sizeof(unsigned)), unsigned,
                                         typename std::make_unsigned<T>::type>::type;

// Two's complement results, as numpy and every ONNX runtime produce them in practice.
template <class T> inline T wrapping_add(T a, T b) {
  return static_cast<T>(static_cast<wrap_t<T>>(a) + static_cast<wrap_t<T>>(b));
}
template <class T> inline T wrapping_sub(T a, T b) {
  return static_cast<T>(static_cast<wrap_t<T>>(a) - static_cast<wrap_t<T>>(b));
}
template <class T> inline T wrapping_mul(T a, T b) {
  return static_cast<T>(static_cast<wrap_t<T>>(a) * static_cast<wrap_t<T>>(b));
}

// ---- activation functors ----

struct Relu {
  template <class T> T operator()(T x) const { return x > T(0) ? x : T(0); }
#if defined(ONNXC_SIMD)
  vfloat vec(vfloat x) const { return xsimd::select(x > vfloat(0.0f), x, vfloat(0.0f)); }  // NaN -> 0, as above
#endif
};
struct LeakyRelu {
  float alpha;
  template <class T> T operator()(T x) const { return x >= T(0) ? x : x * static_cast<T>(alpha); }
};
// min(max(x, lo), hi): when lo > hi every element becomes hi, as ONNX specifies. NaN stays NaN.
template <class T> struct Clip {
  T lo, hi;
  T operator()(T x) const {
    const T y = x < lo ? lo : x;
    return y > hi ? hi : y;
  }
};
struct Sigmoid {
  template <class T> T operator()(T x) const {
    // Stable in both tails: never exponentiates a large positive number.
    if (x >= T(0)) return T(1) / (T(1) + std::exp(-x));
    const T e = std::exp(x);
    return e / (T(1) + e);
  }
#if defined(ONNXC_SIMD)
  // exp(-x) overflows to +inf below about -88, and 1 / inf is the 0 the limit is.
  vfloat vec(vfloat x) const { return vfloat(1.0f) / (vfloat(1.0f) + xsimd::exp(-x)); }
#endif
};
// Swish (ai.onnx since 24): x * sigmoid(alpha * x); alpha = 1 is SiLU.
struct Swish {
  float alpha;
  template <class T> T operator()(T x) const { return x * Sigmoid{}(static_cast<T>(alpha) * x); }
#if defined(ONNXC_SIMD)
  vfloat vec(vfloat x) const { return x * Sigmoid{}.vec(vfloat(alpha) * x); }
#endif
};
struct Tanh {
  template <class T> T operator()(T x) const { return std::tanh(x); }
#if defined(ONNXC_SIMD)
  vfloat vec(vfloat x) const { return xsimd::tanh(x); }
#endif
};
struct Identity {
  template <class T> T operator()(T x) const { return x; }
};

// ---- arithmetic functors ----

struct Add {
  template <class T> T operator()(T a, T b) const {
    if constexpr (std::is_integral<T>::value) {
      return wrapping_add(a, b);
    } else {
      return a + b;
    }
  }
  bool operator()(bool a, bool b) const { return a || b; }
#if defined(ONNXC_SIMD)
  vfloat vec(vfloat a, vfloat b) const { return a + b; }
#endif
};
struct Sub {
  template <class T> T operator()(T a, T b) const {
    if constexpr (std::is_integral<T>::value) {
      return wrapping_sub(a, b);
    } else {
      return a - b;
    }
  }
#if defined(ONNXC_SIMD)
  vfloat vec(vfloat a, vfloat b) const { return a - b; }
#endif
};
struct Mul {
  template <class T> T operator()(T a, T b) const {
    if constexpr (std::is_integral<T>::value) {
      return wrapping_mul(a, b);
    } else {
      return a * b;
    }
  }
  bool operator()(bool a, bool b) const { return a && b; }
#if defined(ONNXC_SIMD)
  vfloat vec(vfloat a, vfloat b) const { return a * b; }
#endif
};
// Integer division truncates toward zero (numpy's true division cast back, as the ONNX
// reference does). Division by zero, undefined in C++ and unspecified by ONNX, gives 0;
// INT_MIN / -1 wraps.
struct Div {
  template <class T> T operator()(T a, T b) const {
    if constexpr (std::is_floating_point<T>::value) {
      return a / b;
    } else {
      if (b == T(0)) return T(0);
      if constexpr (std::is_signed<T>::value) {
        if (b == T(-1)) return wrapping_sub(T(0), a);
      }
      return static_cast<T>(a / b);
    }
  }
#if defined(ONNXC_SIMD)
  vfloat vec(vfloat a, vfloat b) const { return a / b; }
#endif
};
// x / count: the last step of Mean.
struct DivideBy {
  int count;
  template <class T> T operator()(T x) const { return x / static_cast<T>(count); }
};

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_ELTWISE_H
