// Classification losses: NegativeLogLikelihoodLoss, and the loss half of
// SoftmaxCrossEntropyLoss (which runs log_softmax from normalization.h first).
#ifndef ONNXC_LOSS_H
#define ONNXC_LOSS_H

#include <cstdint>
#include <limits>

#include "onnxc/base.h"

namespace onnxc {
namespace rt {

enum class LossReduction { none, sum, mean };

// The log-probabilities are [batch, classes, inner] (inner: the product of the trailing dims
// d1..dk, 1 when there are none); the targets [batch, inner].
struct NllLossParams {
  index_t batch;
  index_t classes;
  index_t inner;
  LossReduction reduction;
  bool has_ignore_index;
  std::int64_t ignore_index;
};

// loss[n, d] = -log_prob[n, target[n, d], d] * weight[target[n, d]] (weight 1 when `weight` is
// null), 0 where the target is ignore_index. reduction none writes that [batch, inner] tensor;
// sum writes its sum; mean divides the sum by the total weight of the targets not ignored
// (0/0 = NaN when every target is ignored, as in PyTorch). A target outside [0, classes) that
// is not ignore_index breaks the operator's contract; its loss is NaN rather than a read out of
// bounds.
template <class T, class I>
inline void nll_loss(const NllLossParams& p, const T* log_prob, const I* target, const T* weight, T* loss) {
  using C = compute_t<T>;
  double loss_sum = 0, weight_sum = 0;
  for (index_t n = 0; n < p.batch; ++n) {
    for (index_t d = 0; d < p.inner; ++d) {
      const std::int64_t c = static_cast<std::int64_t>(target[n * p.inner + d]);
      C l = C(0), w = C(0);
      if (!(p.has_ignore_index && c == p.ignore_index)) {
        if (c < 0 || c >= static_cast<std::int64_t>(p.classes)) {
          l = std::numeric_limits<C>::quiet_NaN();
        } else {
          const index_t ci = static_cast<index_t>(c);
          w = weight ? load(weight[ci]) : C(1);
          l = -load(log_prob[(n * p.classes + ci) * p.inner + d]) * w;
        }
      }
      if (p.reduction == LossReduction::none) loss[n * p.inner + d] = store<T>(l);
      loss_sum += static_cast<double>(l);
      weight_sum += static_cast<double>(w);
    }
  }
  if (p.reduction == LossReduction::sum) loss[0] = store<T>(static_cast<C>(loss_sum));
  if (p.reduction == LossReduction::mean) loss[0] = store<T>(static_cast<C>(loss_sum / weight_sum));
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_LOSS_H
