// One step of the training-domain optimizers (ai.onnx.preview.training): Adagrad, Adam and
// Momentum. Each call updates one optimized tensor X of n elements from its gradient G and its
// optimizer state (H: accumulated squared gradient, V: accumulated gradient), given the scalar
// learning rate R and the update count T. A node optimizing several tensors makes one call per
// tensor: the update is elementwise, so "X as the concatenation of X1, X2, ..." that the
// specification describes is the same as updating each one independently.
//
// The per-step scalars (decayed learning rate, bias corrections) are computed in double; the
// elements in compute_t<T> (float for the 16-bit floats).
#ifndef ONNXC_OPTIMIZER_H
#define ONNXC_OPTIMIZER_H

#include <cmath>
#include <cstdint>

#include "onnxc/base.h"

namespace onnxc {
namespace rt {

struct AdagradParams {
  float decay_factor;
  float epsilon;
  float norm_coefficient;
};

// r = R / (1 + T * decay_factor); G' = norm_coefficient * X + G; H_new = H + G'^2;
// X_new = X - r * G' / (sqrt(H_new) + epsilon).
template <class T, class R>
inline void adagrad(const AdagradParams& p, const R* rate, const std::int64_t* step, index_t n, const T* x,
                    const T* g, const T* h, T* x_new, T* h_new) {
  using C = compute_t<T>;
  const double decayed = static_cast<double>(load(rate[0])) /
                         (1.0 + static_cast<double>(step[0]) * static_cast<double>(p.decay_factor));
  const C r = static_cast<C>(decayed);
  for (index_t i = 0; i < n; ++i) {
    const C xi = load(x[i]);
    const C gr = static_cast<C>(p.norm_coefficient) * xi + load(g[i]);
    const C hn = load(h[i]) + gr * gr;
    h_new[i] = store<T>(hn);
    x_new[i] = store<T>(xi - r * gr / (std::sqrt(hn) + static_cast<C>(p.epsilon)));
  }
}

struct AdamParams {
  float alpha;
  float beta;
  float epsilon;
  float norm_coefficient;
  float norm_coefficient_post;
};

// G' = norm_coefficient * X + G; V_new = alpha * V + (1 - alpha) * G';
// H_new = beta * H + (1 - beta) * G'^2;
// R' = T > 0 ? R * sqrt(1 - beta^T) / (1 - alpha^T) : R (bias correction);
// X_new = (1 - norm_coefficient_post) * (X - R' * V_new / (sqrt(H_new) + epsilon)).
template <class T, class R>
inline void adam(const AdamParams& p, const R* rate, const std::int64_t* step, index_t n, const T* x, const T* g,
                 const T* v, const T* h, T* x_new, T* v_new, T* h_new) {
  using C = compute_t<T>;
  double adjusted = static_cast<double>(load(rate[0]));
  if (step[0] > 0) {
    const double t = static_cast<double>(step[0]);
    adjusted *= std::sqrt(1.0 - std::pow(static_cast<double>(p.beta), t)) /
                (1.0 - std::pow(static_cast<double>(p.alpha), t));
  }
  const C r = static_cast<C>(adjusted);
  const C alpha = static_cast<C>(p.alpha), beta = static_cast<C>(p.beta);
  const C keep = static_cast<C>(1) - static_cast<C>(p.norm_coefficient_post);
  for (index_t i = 0; i < n; ++i) {
    const C xi = load(x[i]);
    const C gr = static_cast<C>(p.norm_coefficient) * xi + load(g[i]);
    const C vn = alpha * load(v[i]) + (static_cast<C>(1) - alpha) * gr;
    const C hn = beta * load(h[i]) + (static_cast<C>(1) - beta) * gr * gr;
    v_new[i] = store<T>(vn);
    h_new[i] = store<T>(hn);
    x_new[i] = store<T>(keep * (xi - r * vn / (std::sqrt(hn) + static_cast<C>(p.epsilon))));
  }
}

struct MomentumParams {
  float alpha;
  float beta;
  float norm_coefficient;
  bool nesterov;  // mode "nesterov"; else "standard"
};

// G' = norm_coefficient * X + G; V_new = alpha * V + (T > 0 ? beta : 1) * G';
// standard: X_new = X - R * V_new; nesterov: X_new = X - R * (G' + alpha * V_new).
template <class T, class R>
inline void momentum(const MomentumParams& p, const R* rate, const std::int64_t* step, index_t n, const T* x,
                     const T* g, const T* v, T* x_new, T* v_new) {
  using C = compute_t<T>;
  const C r = static_cast<C>(load(rate[0]));
  const C alpha = static_cast<C>(p.alpha);
  // The first step takes the whole gradient: there is no momentum to scale it against yet.
  const C beta = step[0] > 0 ? static_cast<C>(p.beta) : static_cast<C>(1);
  for (index_t i = 0; i < n; ++i) {
    const C xi = load(x[i]);
    const C gr = static_cast<C>(p.norm_coefficient) * xi + load(g[i]);
    const C vn = alpha * load(v[i]) + beta * gr;
    v_new[i] = store<T>(vn);
    x_new[i] = store<T>(xi - r * (p.nesterov ? gr + alpha * vn : vn));
  }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_OPTIMIZER_H
