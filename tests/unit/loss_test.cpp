// NegativeLogLikelihoodLoss kernel (and SoftmaxCrossEntropyLoss as log_softmax + nll_loss)
// against the ONNX specification's worked examples and values computed by hand.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>

#include "onnxc/loss.h"
#include "onnxc/normalization.h"

using namespace onnxc;

namespace {

// The specification's example: N = 2, C = 3, d1 = 2.
const float kLogProb[] = {1, 2, 2, 2, 3, 2, 0, 1, 2, 2, 1, 2};
const int64_t kTarget[] = {2, 1, 0, 2};
const float kWeight[] = {0.2f, 0.3f, 0.1f};

rt::NllLossParams example(rt::LossReduction r) { return {2, 3, 2, r, false, 0}; }

}  // namespace

TEST_CASE("nll_loss without reduction picks -log_prob of each target class", "[loss]") {
  float loss[4];
  rt::nll_loss(example(rt::LossReduction::none), kLogProb, kTarget, static_cast<const float*>(nullptr), loss);
  CHECK(loss[0] == -3.f);
  CHECK(loss[1] == -2.f);
  CHECK(loss[2] == 0.f);
  CHECK(loss[3] == -2.f);
}

TEST_CASE("nll_loss sum and mean with class weights", "[loss]") {
  float loss = 0;
  rt::nll_loss(example(rt::LossReduction::sum), kLogProb, kTarget, kWeight, &loss);
  CHECK(loss == Approx(-1.1f));
  // The mean divides by the weights of the targets: 0.1 + 0.3 + 0.2 + 0.1.
  rt::nll_loss(example(rt::LossReduction::mean), kLogProb, kTarget, kWeight, &loss);
  CHECK(loss == Approx(-1.1f / 0.7f));
}

TEST_CASE("nll_loss ignore_index: no loss and no weight in the mean", "[loss]") {
  rt::NllLossParams p = example(rt::LossReduction::mean);
  p.has_ignore_index = true;
  p.ignore_index = 2;
  const int32_t target[] = {2, 1, 0, 2};  // int32 targets as well
  float loss = 0;
  rt::nll_loss(p, kLogProb, target, static_cast<const float*>(nullptr), &loss);
  CHECK(loss == Approx(-1.f));  // (-2 + -0) / 2 samples left

  // Every target ignored: 0 / 0.
  const int32_t all_ignored[] = {2, 2, 2, 2};
  rt::nll_loss(p, kLogProb, all_ignored, kWeight, &loss);
  CHECK(std::isnan(loss));

  // ignore_index outside [0, C) (here negative) is allowed and matches only itself.
  p.ignore_index = -1;
  p.reduction = rt::LossReduction::none;
  const int64_t with_negative[] = {-1, 1, 0, 2};
  float each[4];
  rt::nll_loss(p, kLogProb, with_negative, kWeight, each);
  CHECK(each[0] == 0.f);
  CHECK(each[1] == Approx(-0.6f));
}

TEST_CASE("nll_loss gives NaN for a target outside the classes instead of reading out of bounds", "[loss]") {
  const int64_t target[] = {2, 3, 0, -4};
  float loss[4];
  rt::nll_loss(example(rt::LossReduction::none), kLogProb, target, static_cast<const float*>(nullptr), loss);
  CHECK(loss[0] == -3.f);
  CHECK(std::isnan(loss[1]));
  CHECK(std::isnan(loss[3]));
}

TEST_CASE("softmax cross entropy: log_softmax along the classes, then nll_loss", "[loss]") {
  // scores [0, ln 3] -> probabilities [1/4, 3/4]; two samples with targets 1 and 0.
  const double scores[] = {0, std::log(3.0), 0, std::log(3.0)};
  double log_prob[4];
  rt::log_softmax(scores, log_prob, 2, 2, 1);
  const int64_t target[] = {1, 0};
  double loss = 0;
  rt::nll_loss(rt::NllLossParams{2, 2, 1, rt::LossReduction::mean, false, 0}, log_prob, target,
               static_cast<const double*>(nullptr), &loss);
  CHECK(log_prob[0] == Approx(std::log(0.25)));
  CHECK(loss == Approx((-std::log(0.75) - std::log(0.25)) / 2));
}

TEST_CASE("nll_loss on float16 computes in float", "[loss]") {
  const rt::float16 log_prob[] = {rt::store<rt::float16>(-0.5f), rt::store<rt::float16>(-1.5f)};
  const int64_t target[] = {1};
  rt::float16 loss;
  rt::nll_loss(rt::NllLossParams{1, 2, 1, rt::LossReduction::sum, false, 0}, log_prob, target,
               static_cast<const rt::float16*>(nullptr), &loss);
  CHECK(rt::load(loss) == 1.5f);
}
