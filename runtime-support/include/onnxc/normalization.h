// Softmax and friends, and the normalisations: BatchNormalization, LayerNormalization,
// GroupNormalization (and InstanceNormalization), RMSNormalization, MeanVarianceNormalization,
// LRN.
//
// Statistics are computed in a "stash" type S (float for the 16-bit types, or what the
// operator's stash_type asks for) with two passes (mean, then the mean squared deviation),
// which keeps the variance accurate when the mean is large.
#ifndef ONNXC_NORMALIZATION_H
#define ONNXC_NORMALIZATION_H

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "onnxc/base.h"
#include "onnxc/numeric.h"
#include "onnxc/reduce.h"

#if defined(ONNXC_SIMD)
#include "onnxc/layer_norm_simd.h"
#include "onnxc/softmax_simd.h"
#endif

namespace onnxc {
namespace rt {

// ---- Softmax, LogSoftmax, Hardmax: x is [outer, n, inner], normalised along n ----

// Calls f(x_lane, y_lane) for every lane; a lane's elements are `inner` apart.
template <class T, class F>
inline void for_each_lane(const T* x, T* y, index_t outer, index_t n, index_t inner, F f) {
  for (index_t o = 0; o < outer; ++o)
    for (index_t i = 0; i < inner; ++i) f(x + o * n * inner + i, y + o * n * inner + i);
}

template <class T>
inline compute_t<T> lane_max(const T* x, index_t n, index_t stride) {
  compute_t<T> mx = load(x[0]);
  for (index_t j = 1; j < n; ++j) {
    const compute_t<T> v = load(x[j * stride]);
    if (v > mx) mx = v;
  }
  return mx;
}

// y may alias x: every lane is read before (or at the same time as) it is written.
template <class T>
inline void softmax(const T* x, T* y, index_t outer, index_t n, index_t inner) {
  using C = compute_t<T>;
  // When T is its own compute type the exponentials can wait in y; a 16-bit y would round them,
  // so they are computed again instead.
  constexpr bool keep_exp_in_y = std::is_same<T, C>::value;
  if (n == 0) return;
#if defined(ONNXC_SIMD)
  if constexpr (std::is_same<T, float>::value) {
    softmax_simd<false>(x, y, outer, n, inner);
    return;
  }
#endif
  for_each_lane(x, y, outer, n, inner, [=](const T* xl, T* yl) {
    const C mx = lane_max(xl, n, inner);
    const C sum = blocked_sum<C>(n, [=](index_t j) {
      const C e = std::exp(load(xl[j * inner]) - mx);
      if (keep_exp_in_y) yl[j * inner] = store<T>(e);
      return e;
    });
    const C inv = C(1) / sum;
    for (index_t j = 0; j < n; ++j) {
      const C e = keep_exp_in_y ? load(yl[j * inner]) : std::exp(load(xl[j * inner]) - mx);
      yl[j * inner] = store<T>(e * inv);
    }
  });
}

// log(softmax(x)) = x - max - log(sum(exp(x - max))). y may alias x.
template <class T>
inline void log_softmax(const T* x, T* y, index_t outer, index_t n, index_t inner) {
  using C = compute_t<T>;
  if (n == 0) return;
#if defined(ONNXC_SIMD)
  if constexpr (std::is_same<T, float>::value) {
    softmax_simd<true>(x, y, outer, n, inner);
    return;
  }
#endif
  for_each_lane(x, y, outer, n, inner, [=](const T* xl, T* yl) {
    const C mx = lane_max(xl, n, inner);
    const C sum = blocked_sum<C>(n, [=](index_t j) { return static_cast<C>(std::exp(load(xl[j * inner]) - mx)); });
    const C offset = mx + std::log(sum);
    for (index_t j = 0; j < n; ++j) yl[j * inner] = store<T>(load(xl[j * inner]) - offset);
  });
}

// 1 at the first maximum of each lane, 0 elsewhere. y may alias x.
template <class T>
inline void hardmax(const T* x, T* y, index_t outer, index_t n, index_t inner) {
  using C = compute_t<T>;
  if (n == 0) return;
  for_each_lane(x, y, outer, n, inner, [=](const T* xl, T* yl) {
    C best = load(xl[0]);
    index_t at = 0;
    for (index_t j = 1; j < n; ++j) {
      const C v = load(xl[j * inner]);
      if (v > best) {
        best = v;
        at = j;
      }
    }
    for (index_t j = 0; j < n; ++j) yl[j * inner] = store<T>(j == at ? C(1) : C(0));
  });
}

// ---- statistics ----

template <class S>
struct Moments {
  S mean;
  S variance;  // population variance: mean squared deviation
};

// Mean and variance of n contiguous elements.
template <class S, class T>
inline Moments<S> moments(const T* x, index_t n) {
  const S mean = blocked_sum<S>(n, [x](index_t i) { return static_cast<S>(load(x[i])); }) / static_cast<S>(n);
  const S sq = blocked_sum<S>(n, [x, mean](index_t i) {
    const S d = static_cast<S>(load(x[i])) - mean;
    return d * d;
  });
  return {mean, sq / static_cast<S>(n)};
}

// Mean and variance of the elements reached by the reduced space of p from x.
template <class S, class T>
inline Moments<S> moments(const T* x, const ReduceParams& p) {
  const S n = static_cast<S>(reduced_count(p));
  const S mean = accumulate_sum<S>(x, p, [](S v) { return v; }) / n;
  const S sq = accumulate_sum<S>(x, p, [mean](S v) { return (v - mean) * (v - mean); });
  return {mean, sq / n};
}

template <class S>
inline S inverse_std(const Moments<S>& m, float epsilon) {
  return S(1) / std::sqrt(m.variance + static_cast<S>(epsilon));
}

// ---- BatchNormalization: x is [batch, channels, inner] ----

// Inference: y = (x - mean) / sqrt(var + epsilon) * scale + bias, folded into y = x * a + b.
template <class T, class P, class M>
inline void batch_norm(const T* x, const P* scale, const P* bias, const M* mean, const M* var, float epsilon, T* y,
                       index_t batch, index_t channels, index_t inner) {
  using R = real_t<T>;
  for (index_t c = 0; c < channels; ++c) {
    const R a = static_cast<R>(load(scale[c])) / std::sqrt(static_cast<R>(load(var[c])) + static_cast<R>(epsilon));
    const R b = static_cast<R>(load(bias[c])) - static_cast<R>(load(mean[c])) * a;
    for (index_t n = 0; n < batch; ++n) {
      const index_t off = (n * channels + c) * inner;
      for (index_t i = 0; i < inner; ++i) y[off + i] = store<T>(static_cast<compute_t<T>>(load(x[off + i]) * a + b));
    }
  }
}

// Training mode: normalises with the batch's own statistics (population variance over batch
// and inner) and, when running_mean/running_var are not null, writes
// running = input * momentum + current * (1 - momentum).
template <class T, class P, class M>
inline void batch_norm_training(const T* x, const P* scale, const P* bias, const M* input_mean, const M* input_var,
                                float epsilon, float momentum, T* y, M* running_mean, M* running_var, index_t batch,
                                index_t channels, index_t inner) {
  using S = real_t<T>;
  const S count = static_cast<S>(batch * inner);
  for (index_t c = 0; c < channels; ++c) {
    S sum = S(0);
    for (index_t n = 0; n < batch; ++n)
      for (index_t i = 0; i < inner; ++i) sum += static_cast<S>(load(x[(n * channels + c) * inner + i]));
    const S mean = sum / count;
    S sq = S(0);
    for (index_t n = 0; n < batch; ++n)
      for (index_t i = 0; i < inner; ++i) {
        const S d = static_cast<S>(load(x[(n * channels + c) * inner + i])) - mean;
        sq += d * d;
      }
    const S var = sq / count;
    const S a = static_cast<S>(load(scale[c])) / std::sqrt(var + static_cast<S>(epsilon));
    const S b = static_cast<S>(load(bias[c])) - mean * a;
    for (index_t n = 0; n < batch; ++n) {
      const index_t off = (n * channels + c) * inner;
      for (index_t i = 0; i < inner; ++i) y[off + i] = store<T>(static_cast<compute_t<T>>(load(x[off + i]) * a + b));
    }
    const S m = static_cast<S>(momentum);
    if (running_mean)
      running_mean[c] = store<M>(static_cast<compute_t<M>>(static_cast<S>(load(input_mean[c])) * m + mean * (S(1) - m)));
    if (running_var)
      running_var[c] = store<M>(static_cast<compute_t<M>>(static_cast<S>(load(input_var[c])) * m + var * (S(1) - m)));
  }
}

// ---- LayerNormalization and RMSNormalization: x is [outer, n], normalised over n ----

// y = (x - mean) / sqrt(var + epsilon) * scale + bias. scale and bias (bias may be null) hold
// n values, or 1 to broadcast. mean_out and inv_std_out (nullable) get one value per row.
template <class S, class T>
inline void layer_norm(const T* x, const T* scale, const T* bias, T* y, S* mean_out, S* inv_std_out, index_t outer,
                       index_t n, index_t scale_n, index_t bias_n, float epsilon) {
  using C = compute_t<T>;
#if defined(ONNXC_SIMD)
  if constexpr (std::is_same<T, float>::value && std::is_same<S, float>::value) {
    layer_norm_simd(x, scale, bias, y, mean_out, inv_std_out, outer, n, scale_n, bias_n, epsilon);
    return;
  }
#endif
  for (index_t o = 0; o < outer; ++o) {
    const T* xr = x + o * n;
    T* yr = y + o * n;
    const Moments<S> m = moments<S>(xr, n);
    const S inv = inverse_std(m, epsilon);
    if (mean_out) mean_out[o] = m.mean;
    if (inv_std_out) inv_std_out[o] = inv;
    for (index_t i = 0; i < n; ++i) {
      const C normalized = static_cast<C>((static_cast<S>(load(xr[i])) - m.mean) * inv);
      const C shift = bias ? load(bias[bias_n == 1 ? 0 : i]) : C(0);
      yr[i] = store<T>(normalized * load(scale[scale_n == 1 ? 0 : i]) + shift);
    }
  }
}

// y = x / sqrt(mean(x^2) + epsilon) * scale; scale holds n values, or 1 to broadcast.
template <class S, class T>
inline void rms_norm(const T* x, const T* scale, T* y, index_t outer, index_t n, index_t scale_n, float epsilon) {
  using C = compute_t<T>;
  for (index_t o = 0; o < outer; ++o) {
    const T* xr = x + o * n;
    T* yr = y + o * n;
    const S sq = blocked_sum<S>(n, [xr](index_t i) {
      const S v = static_cast<S>(load(xr[i]));
      return v * v;
    });
    const S inv = S(1) / std::sqrt(sq / static_cast<S>(n) + static_cast<S>(epsilon));
    for (index_t i = 0; i < n; ++i)
      yr[i] = store<T>(static_cast<C>(static_cast<S>(load(xr[i])) * inv) * load(scale[scale_n == 1 ? 0 : i]));
  }
}

// ---- GroupNormalization and InstanceNormalization ----

// x is [batch, groups, channels_per_group, spatial]; each (batch, group) block is normalised on
// its own, then scaled and shifted by scale/bias indexed per channel, or per group when
// per_group_affine (GroupNormalization before version 21).
template <class S, class T>
inline void group_norm(const T* x, const T* scale, const T* bias, T* y, index_t batch, index_t groups,
                       index_t channels_per_group, index_t spatial, float epsilon, bool per_group_affine) {
  using C = compute_t<T>;
  const index_t block = channels_per_group * spatial;
  for (index_t b = 0; b < batch; ++b)
    for (index_t g = 0; g < groups; ++g) {
      const index_t off = (b * groups + g) * block;
      const Moments<S> m = moments<S>(x + off, block);
      const S inv = inverse_std(m, epsilon);
      for (index_t c = 0; c < channels_per_group; ++c) {
        const index_t affine = per_group_affine ? g : g * channels_per_group + c;
        const C a = load(scale[affine]), sh = load(bias[affine]);
        const index_t row = off + c * spatial;
        for (index_t i = 0; i < spatial; ++i) {
          const C normalized = static_cast<C>((static_cast<S>(load(x[row + i])) - m.mean) * inv);
          y[row + i] = store<T>(normalized * a + sh);
        }
      }
    }
}

// ---- MeanVarianceNormalization: y = (x - mean) / (sqrt(var) + 1e-9) over the reduced axes ----

template <class T>
inline void mean_variance_norm(const ReduceParams& p, const T* x, T* y) {
  using S = real_t<T>;
  // ONNX defines MVN as a function whose epsilon is the float constant 1e-9.
  const S epsilon = static_cast<S>(1e-9f);
  for_each_offset(p.kept_rank, p.kept_dims, p.kept_strides, [&](index_t o) {
    const Moments<S> m = moments<S>(x + o, p);
    const S inv = S(1) / (std::sqrt(m.variance) + epsilon);
    for_each_offset(p.reduced_rank, p.reduced_dims, p.reduced_strides, [&](index_t r) {
      y[o + r] = store<T>(static_cast<compute_t<T>>((static_cast<S>(load(x[o + r])) - m.mean) * inv));
    });
  });
}

// ---- LRN: x is [batch, channels, spatial] ----

// y = x / (bias + alpha / size * sum of x^2 over the window of channels) ^ beta, the window
// running from c - floor((size - 1) / 2) to c + ceil((size - 1) / 2), clipped to the tensor.
template <class T>
inline void lrn(const T* x, T* y, index_t batch, index_t channels, index_t spatial, index_t size, float alpha,
                float beta, float bias) {
  using R = real_t<T>;
  const index_t before = (size - 1) / 2, after = size - 1 - before;
  const R scale = static_cast<R>(alpha) / static_cast<R>(size);
  for (index_t n = 0; n < batch; ++n)
    for (index_t c = 0; c < channels; ++c) {
      const index_t lo = c - before < 0 ? 0 : c - before;
      const index_t hi = c + after >= channels ? channels - 1 : c + after;
      for (index_t s = 0; s < spatial; ++s) {
        R sum = R(0);
        for (index_t k = lo; k <= hi; ++k) {
          const R v = static_cast<R>(load(x[(n * channels + k) * spatial + s]));
          sum += v * v;
        }
        const index_t at = (n * channels + c) * spatial + s;
        const R denom = std::pow(static_cast<R>(bias) + scale * sum, static_cast<R>(beta));
        y[at] = store<T>(static_cast<compute_t<T>>(static_cast<R>(load(x[at])) / denom));
      }
    }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_NORMALIZATION_H
