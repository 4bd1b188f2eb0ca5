// Activation functions a Conv or Gemm applies in its epilogue, after the bias, while the result
// is still in registers (the fuse-activation pass merges the activation node into its producer).
#ifndef ONNXC_ACTIVATION_H
#define ONNXC_ACTIVATION_H

#include <cmath>

#include "onnxc/math_simd.h"
#include "onnxc/simd.h"

namespace onnxc {
namespace rt {

enum class Activation : int { None, Relu, Clip, LeakyRelu, Sigmoid, HardSigmoid, HardSwish, Tanh, Gelu, GeluTanh, Silu };

// Clip: y = min(max(x, alpha), beta). LeakyRelu: alpha is the slope below 0.
// HardSigmoid: y = max(0, min(1, alpha * x + beta)). HardSwish: x * HardSigmoid(x) with 1/6, 1/2.
// Silu (swish): x * sigmoid(x), as exporters write it (Sigmoid and Mul).
// Gelu: x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)); GeluTanh: its tanh approximation
// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
struct Epilogue {
  Activation activation;
  float alpha, beta;
};

constexpr Epilogue kNoActivation = {Activation::None, 0.0f, 0.0f};

inline float activate(const Epilogue& e, float x) {
  switch (e.activation) {
    case Activation::None: return x;
    case Activation::Relu: return x > 0.0f ? x : 0.0f;
    case Activation::Clip: return x < e.alpha ? e.alpha : (x > e.beta ? e.beta : x);
    case Activation::LeakyRelu: return x < 0.0f ? e.alpha * x : x;
    case Activation::Sigmoid: return 1.0f / (1.0f + std::exp(-x));
    case Activation::HardSigmoid: {
      const float v = e.alpha * x + e.beta;
      return v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
    }
    case Activation::HardSwish: {
      const float v = x * (1.0f / 6.0f) + 0.5f;
      return x * (v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v));
    }
    case Activation::Tanh: return std::tanh(x);
    case Activation::Gelu: return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752440f));
    case Activation::GeluTanh:
      return 0.5f * x * (1.0f + std::tanh(0.79788456080286535588f * (x + 0.044715f * x * x * x)));
    case Activation::Silu: return x * (1.0f / (1.0f + std::exp(-x)));
  }
  return x;
}

#if defined(ONNXC_SIMD)
// The activation of a vector: what the kernels apply in registers (packed_gemm.h), and
// activate_row's loop on SIMD targets.
inline vfloat activate(const Epilogue& e, vfloat x) {
  const vfloat zero(0.0f), one(1.0f);
  switch (e.activation) {
    case Activation::None: return x;
    case Activation::Relu: return xsimd::max(x, zero);
    case Activation::Clip: return xsimd::min(xsimd::max(x, vfloat(e.alpha)), vfloat(e.beta));
    case Activation::LeakyRelu: return xsimd::select(x < zero, x * vfloat(e.alpha), x);
    case Activation::Sigmoid: return one / (one + xsimd::exp(-x));
    case Activation::HardSigmoid: return xsimd::min(xsimd::max(x * vfloat(e.alpha) + vfloat(e.beta), zero), one);
    case Activation::HardSwish:
      return x * xsimd::min(xsimd::max(x * vfloat(1.0f / 6.0f) + vfloat(0.5f), zero), one);
    case Activation::Tanh: return xsimd::tanh(x);
    case Activation::Gelu: return vfloat(0.5f) * x * (one + erf_vec(x * vfloat(0.70710678118654752440f)));
    case Activation::GeluTanh:
      return vfloat(0.5f) * x *
             (one + xsimd::tanh(vfloat(0.79788456080286535588f) * (x + vfloat(0.044715f) * x * x * x)));
    case Activation::Silu: return x * (one / (one + xsimd::exp(-x)));
  }
  return x;
}
#endif

// Applies the activation to n contiguous floats in place. The common piecewise-linear ones get
// loops of their own (without the per-element switch, compilers vectorise them); on SIMD
// targets the others go a vector at a time through xsimd's exp and tanh and erf_vec (a GELU fused into
// transformer-tiny's 16 x 128 Gemm: the scalar std::erf loop took 8-12 us of its 13.5-18).
inline void activate_row(const Epilogue& e, float* y, std::ptrdiff_t n) {
  switch (e.activation) {
    case Activation::None: return;
    case Activation::Relu:
      for (std::ptrdiff_t i = 0; i < n; ++i) y[i] = y[i] > 0.0f ? y[i] : 0.0f;
      return;
    case Activation::Clip:
      for (std::ptrdiff_t i = 0; i < n; ++i) y[i] = y[i] < e.alpha ? e.alpha : (y[i] > e.beta ? e.beta : y[i]);
      return;
    default:
#if defined(ONNXC_SIMD)
      for (std::ptrdiff_t i = 0; i < n; i += kFloatLanes) {
        const std::ptrdiff_t cols = n - i < kFloatLanes ? n - i : kFloatLanes;
        if (cols == kFloatLanes) activate(e, vfloat::load_unaligned(y + i)).store_unaligned(y + i);
        else store_partial(activate(e, load_partial(y + i, cols)), y + i, cols);
      }
#else
      for (std::ptrdiff_t i = 0; i < n; ++i) y[i] = activate(e, y[i]);
#endif
      return;
  }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_ACTIVATION_H
