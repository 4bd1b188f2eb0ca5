// Tree ensembles (ai.onnx.ml TreeEnsembleRegressor / TreeEnsembleClassifier, lowered by
// compiler/ops/ml_trees.cpp into onnxc.TreeEnsemble): every row's features walked down every
// tree, the leaves' weights summed per target. Portable C++, one variant.
//
// Layout (chosen by the compiler; 9 bytes a node with 16-bit jumps): each tree's nodes in
// depth-first order with the true branch first, so a node's true child is the next node and
// only the false child's distance is stored.
//   feature[i]   branch: the feature compared;     one-weight leaf: its target;  leaf: weight count
//   threshold[i] branch: the threshold;            one-weight leaf: its weight
//   mode[i]      TreeMode (low 4 bits) | kTreeMissingTrue (a NaN feature takes the true branch)
//   jump[i]      branch: distance to the false child;  leaf: index of its first weight
// Leaves with several weights read `count` (target, weight) pairs from leaf_target/leaf_weight.
#ifndef ONNXC_TREE_ENSEMBLE_H
#define ONNXC_TREE_ENSEMBLE_H

#include <cmath>
#include <cstdint>

#include "onnxc/base.h"

namespace onnxc {
namespace rt {

enum TreeMode : uint8_t {
  kTreeLeq = 0,
  kTreeLt = 1,
  kTreeGte = 2,
  kTreeGt = 3,
  kTreeEq = 4,
  kTreeNeq = 5,
  kTreeLeaf = 6,        // weights in leaf_target / leaf_weight
  kTreeLeafSingle = 7,  // one weight, in the node itself
};
constexpr uint8_t kTreeModeMask = 0x0f;
constexpr uint8_t kTreeMissingTrue = 0x80;

struct TreeEnsembleParams {
  index_t rows, features, trees, targets;
};

// out[rows, targets] = sum over trees of the weights of the leaf each row reaches (out is
// overwritten; base values and averaging are separate steps).
template <class Jump>
void tree_ensemble(const float* x, const uint16_t* feature, const float* threshold, const uint8_t* mode,
                   const Jump* jump, const int32_t* roots, const uint16_t* leaf_target, const float* leaf_weight,
                   float* out, const TreeEnsembleParams& p) {
  for (index_t r = 0; r < p.rows; ++r) {
    const float* row = x + r * p.features;
    float* y = out + r * p.targets;
    for (index_t t = 0; t < p.targets; ++t) y[t] = 0.0f;
    for (index_t t = 0; t < p.trees; ++t) {
      index_t i = roots[t];
      for (;;) {
        const uint8_t m = mode[i];
        const uint8_t kind = m & kTreeModeMask;
        if (kind >= kTreeLeaf) {
          if (kind == kTreeLeafSingle) {
            y[feature[i]] += threshold[i];
          } else {
            const index_t first = static_cast<index_t>(jump[i]);
            for (index_t k = 0; k < feature[i]; ++k) y[leaf_target[first + k]] += leaf_weight[first + k];
          }
          break;
        }
        const float v = row[feature[i]];
        const float th = threshold[i];
        bool go_true;
        if (std::isnan(v)) {
          go_true = (m & kTreeMissingTrue) != 0;
        } else {
          switch (kind) {
            case kTreeLeq: go_true = v <= th; break;
            case kTreeLt: go_true = v < th; break;
            case kTreeGte: go_true = v >= th; break;
            case kTreeGt: go_true = v > th; break;
            case kTreeEq: go_true = v == th; break;
            default: go_true = v != th; break;
          }
        }
        i = go_true ? i + 1 : i + static_cast<index_t>(jump[i]);
      }
    }
  }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_TREE_ENSEMBLE_H
