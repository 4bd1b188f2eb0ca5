// Elementwise kernels: map one tensor, or combine two with numpy broadcasting.
//
// The functors (Relu, Add, ...) work on compute types (float for the 16-bit floats); the
// kernels load/store between storage and compute types.
#ifndef ONNXC_ELTWISE_H
#define ONNXC_ELTWISE_H

#include <cmath>

#include "onnxc/base.h"

namespace onnxc {
namespace rt {

// y[i] = f(x[i]) for i < n. x and y may be the same buffer.
template <class X, class Y, class F>
inline void map(const X* x, Y* y, index_t n, F f) {
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

// General broadcasting: y has `rank` dims `shape`; a and b are read with element strides
// a_strides/b_strides (0 along broadcast dims). The innermost dim is the fast loop.
template <class A, class B, class Y, class F>
inline void zip_broadcast(const A* a, const index_t* a_strides, const B* b, const index_t* b_strides, Y* y,
                          const index_t* shape, int rank, F f) {
  index_t idx[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  const index_t inner = shape[rank - 1];
  const index_t as = a_strides[rank - 1], bs = b_strides[rank - 1];
  index_t outer = 1;
  for (int d = 0; d < rank - 1; ++d) outer *= shape[d];
  for (index_t o = 0; o < outer; ++o) {
    index_t ao = 0, bo = 0;
    for (int d = 0; d < rank - 1; ++d) {
      ao += idx[d] * a_strides[d];
      bo += idx[d] * b_strides[d];
    }
    for (index_t i = 0; i < inner; ++i) y[i] = store<Y>(f(load(a[ao + i * as]), load(b[bo + i * bs])));
    y += inner;
    for (int d = rank - 2; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

// ---- functors ----

struct Relu {
  template <class T> T operator()(T x) const { return x > T(0) ? x : T(0); }
};
struct LeakyRelu {
  float alpha;
  template <class T> T operator()(T x) const { return x >= T(0) ? x : static_cast<T>(x * alpha); }
};
template <class T> struct Clip {
  T lo, hi;
  T operator()(T x) const { return x < lo ? lo : (x > hi ? hi : x); }
};
struct Sigmoid {
  float operator()(float x) const {
    // Stable in both tails: never exponentiates a large positive number.
    if (x >= 0) return 1.0f / (1.0f + std::exp(-x));
    const float e = std::exp(x);
    return e / (1.0f + e);
  }
  double operator()(double x) const {
    if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
    const double e = std::exp(x);
    return e / (1.0 + e);
  }
};
struct Tanh {
  template <class T> T operator()(T x) const { return std::tanh(x); }
};
struct Identity {
  template <class T> T operator()(T x) const { return x; }
};

struct Add {
  template <class T> T operator()(T a, T b) const { return static_cast<T>(a + b); }
  bool operator()(bool a, bool b) const { return a || b; }
};
struct Sub {
  template <class T> T operator()(T a, T b) const { return static_cast<T>(a - b); }
};
struct Mul {
  template <class T> T operator()(T a, T b) const { return static_cast<T>(a * b); }
  bool operator()(bool a, bool b) const { return a && b; }
};
struct Div {
  template <class T> T operator()(T a, T b) const { return b == T(0) ? div_by_zero(a) : static_cast<T>(a / b); }
  float operator()(float a, float b) const { return a / b; }
  double operator()(double a, double b) const { return a / b; }
  // Integer division by zero is undefined in C++; ONNX leaves it unspecified. Return 0.
  template <class T> static T div_by_zero(T) { return T(0); }
};

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_ELTWISE_H
