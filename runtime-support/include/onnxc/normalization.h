// Softmax and normalisations.
#ifndef ONNXC_NORMALIZATION_H
#define ONNXC_NORMALIZATION_H

#include <cmath>

#include "onnxc/base.h"

namespace onnxc {
namespace rt {

// Softmax along an axis of length n; the tensor is [outer, n, inner].
template <class T>
inline void softmax(const T* x, T* y, index_t outer, index_t n, index_t inner) {
  using C = compute_t<T>;
  for (index_t o = 0; o < outer; ++o)
    for (index_t i = 0; i < inner; ++i) {
      const T* xp = x + o * n * inner + i;
      T* yp = y + o * n * inner + i;
      C mx = load(xp[0]);
      for (index_t j = 1; j < n; ++j) {
        const C v = load(xp[j * inner]);
        if (v > mx) mx = v;
      }
      C sum = C(0);
      for (index_t j = 0; j < n; ++j) {
        const C e = std::exp(load(xp[j * inner]) - mx);
        yp[j * inner] = store<T>(e);
        sum += e;
      }
      const C inv = C(1) / sum;
      for (index_t j = 0; j < n; ++j) yp[j * inner] = store<T>(load(yp[j * inner]) * inv);
    }
}

// Inference BatchNormalization: x is [batch, channels, inner].
template <class T>
inline void batch_norm(const T* x, const T* scale, const T* bias, const T* mean, const T* var, float epsilon, T* y,
                       index_t batch, index_t channels, index_t inner) {
  using C = compute_t<T>;
  for (index_t c = 0; c < channels; ++c) {
    const C a = load(scale[c]) / std::sqrt(load(var[c]) + static_cast<C>(epsilon));
    const C b = load(bias[c]) - load(mean[c]) * a;
    for (index_t n = 0; n < batch; ++n) {
      const index_t off = (n * channels + c) * inner;
      for (index_t i = 0; i < inner; ++i) y[off + i] = store<T>(load(x[off + i]) * a + b);
    }
  }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_NORMALIZATION_H
