// Tree ensembles (ai.onnx.ml TreeEnsembleRegressor / TreeEnsembleClassifier, lowered by
// compiler/ops/ml_trees.cpp into onnxc.TreeEnsemble): every row's features walked down every
// tree, the leaves' weights summed per target. Portable C++, one variant.
//
// Layout (chosen by the compiler): each tree's nodes in depth-first order with the true branch
// first, so a node's true child is the next node and only the false child's distance is stored.
// A node is one record of Words 32-bit words (2: 8 bytes; 3 when a distance or index needs more
// than 14 bits), read with two or three loads:
//   word 0       branch: the threshold (float bits);  one-weight leaf: its weight;  leaf: weight count
//   word 1       Words 2: feature | next << 16;  Words 3: feature
//   word 2       Words 3: next
//   feature      branch: the feature compared;  leaf: 0 (a leaf reads feature 0 and stays put)
//   next         bit 0: leaf.  branch: bit 1 kTreeMissingTrue (a NaN feature takes the true
//                branch), next >> kTreeShift the distance to the false child.  leaf: bit 1 set when
//                its weights are in leaf_target / leaf_weight (next >> kTreeShift the first, word
//                0 the count as a float), clear for one weight (next >> kTreeShift its target)
// Every branch compares one of three ways (TreeKind; the compiler turns GTE, GT and NEQ into LT,
// LEQ and EQ by swapping the children). A forest of one kind names it as the Kind template
// argument; trees that mix kinds (kTreeMixed) keep a branch's kind in bits 2-3 of next (LEQ 1, LT 2, EQ 3).
// depth[t] is the number of branches on tree t's longest path.
#ifndef ONNXC_TREE_ENSEMBLE_H
#define ONNXC_TREE_ENSEMBLE_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "onnxc/base.h"

namespace onnxc {
namespace rt {

enum TreeKind : int {
  kTreeLeq = 0,    // value <= threshold
  kTreeLt = 1,     // value < threshold
  kTreeEq = 2,     // value == threshold
  kTreeMixed = -1  // per branch, in next
};
constexpr uint32_t kTreeLeafBit = 1u;
constexpr uint32_t kTreeMissingTrue = 2u;  // branch: a NaN goes true;  leaf: weights in leaf_target

// Where a node's distance (or target, or first weight) starts in next.
constexpr uint32_t tree_shift(int kind) { return kind == kTreeMixed ? 4u : 2u; }

// How the reached leaves' weights combine per target (a leaf's several weights one by one).
enum TreeAggregate : int { kTreeSum = 0, kTreeMin = 1, kTreeMax = 2 };

struct TreeEnsembleParams {
  index_t rows, features, trees, targets;
};

namespace tree_detail {

// Whether value v takes the true branch of a node comparing with threshold th the Kind way (in
// next when Mixed). A NaN compares false in each, so it goes true only with the missing-value
// flag (never set when not Missing). Bitwise, not short-circuit: the comparison results are data,
// not branches. Mixed: le and lt picked by next's bits 2 and 3 (LEQ le, LT lt, EQ le ^ lt).
template <int Kind, bool Missing> inline uint32_t goes_true(float v, float th, uint32_t next) {
  const uint32_t missing = Missing ? static_cast<uint32_t>(v != v) & (next >> 1) : 0u;
  if (Kind == kTreeLeq) return static_cast<uint32_t>(v <= th) | missing;
  if (Kind == kTreeLt) return static_cast<uint32_t>(v < th) | missing;
  if (Kind == kTreeEq) return static_cast<uint32_t>(v == th) | missing;
  return ((static_cast<uint32_t>(v <= th) & (next >> 2)) ^ (static_cast<uint32_t>(v < th) & (next >> 3))) | missing;
}

// One node's fields.
template <int Words> struct TreeNodeView {
  float value;
  uint32_t feature, next;
  explicit TreeNodeView(const uint32_t* rec) {
    std::memcpy(&value, rec, sizeof value);
    feature = Words == 2 ? rec[1] & 0xffffu : rec[1];
    next = Words == 2 ? rec[1] >> 16 : rec[Words - 1];
  }
};

// The index of the node a row at node i goes to (i itself at a leaf).
template <int Kind, int Words, bool Missing>
inline index_t step(const float* row, const uint32_t* nodes, index_t i) {
  const TreeNodeView<Words> n(nodes + i * Words);
  const uint32_t go = goes_true<Kind, Missing>(row[n.feature], n.value, n.next) & 1u;
  const uint32_t distance = go | ((go - 1u) & (n.next >> tree_shift(Kind)));  // 1 when true, the jump when false
  return i + static_cast<index_t>(distance & ((n.next & kTreeLeafBit) - 1u));  // 0 at a leaf
}

template <int Aggregate> inline void combine(float& y, float w) {
  if (Aggregate == kTreeSum) y += w;
  if (Aggregate == kTreeMin) y = w < y ? w : y;
  if (Aggregate == kTreeMax) y = w > y ? w : y;
}

template <int Kind, int Words, int Aggregate>
inline void add_leaf(float* y, const uint32_t* nodes, index_t i, const uint16_t* leaf_target, const float* leaf_weight) {
  const TreeNodeView<Words> n(nodes + i * Words);
  if (!(n.next & kTreeMissingTrue)) {
    combine<Aggregate>(y[n.next >> tree_shift(Kind)], n.value);
    return;
  }
  const index_t first = static_cast<index_t>(n.next >> tree_shift(Kind)), count = static_cast<index_t>(n.value);
  for (index_t k = 0; k < count; ++k) combine<Aggregate>(y[leaf_target[first + k]], leaf_weight[first + k]);
}

}  // namespace tree_detail

// out[rows, targets] = sum (minimum, maximum: Aggregate) over trees of the weights of the leaf
// each row reaches (out is overwritten; a target no leaf reached is 0 for a sum, +inf for a
// minimum, -inf for a maximum; base values and averaging are separate steps). Rows go down each tree in groups
// of kTreeLanes, all of a group one level per turn for as many turns as the tree is deep (depth[t],
// computed by the compiler) or until every row of the group is at a leaf, a row at a leaf
// staying there: no branch depends on one row's data, and the group's walks are independent, so
// their loads and comparisons overlap.
constexpr index_t kTreeLanes = 8;

// Missing: some branch sends a NaN to its true child (kTreeMissingTrue); without it a NaN goes
// false everywhere and is not tested for.
template <int Kind = kTreeMixed, int Words = 2, bool Missing = true, int Aggregate = kTreeSum>
void tree_ensemble(const float* x, const uint32_t* nodes, const int32_t* roots,
                   const uint16_t* depth, const uint16_t* leaf_target, const float* leaf_weight, float* out,
                   const TreeEnsembleParams& p) {
  static_assert(Words == 2 || Words == 3, "a node is two or three words");
  const float inf = std::numeric_limits<float>::infinity();
  const float start = Aggregate == kTreeMin ? inf : Aggregate == kTreeMax ? -inf : 0.0f;
  for (index_t i = 0; i < p.rows * p.targets; ++i) out[i] = start;
  if (p.rows == 1) {
    // One row: no walks to overlap, so each walk stops at its leaf (on an in-order core, e.g. a
    // Cortex-M4, far fewer instructions than fixed-depth turns).
    for (index_t t = 0; t < p.trees; ++t) {
      index_t i = roots[t];
      for (;;) {
        const tree_detail::TreeNodeView<Words> n(nodes + i * Words);
        if (n.next & kTreeLeafBit) break;
        const uint32_t go = tree_detail::goes_true<Kind, Missing>(x[n.feature], n.value, n.next) & 1u;
        i += go ? 1 : static_cast<index_t>(n.next >> tree_shift(Kind));
      }
      tree_detail::add_leaf<Kind, Words, Aggregate>(out, nodes, i, leaf_target, leaf_weight);
    }
    return;
  }
  for (index_t r0 = 0; r0 < p.rows; r0 += kTreeLanes) {
    const index_t lanes = p.rows - r0 < kTreeLanes ? p.rows - r0 : kTreeLanes;
    for (index_t t = 0; t < p.trees; ++t) {
      index_t at[kTreeLanes];
      for (index_t g = 0; g < lanes; ++g) at[g] = roots[t];
      index_t moving = 1;
      for (index_t level = 0; level < depth[t] && moving; ++level) {
        moving = 0;
        for (index_t g = 0; g < lanes; ++g) {
          const index_t i = tree_detail::step<Kind, Words, Missing>(x + (r0 + g) * p.features, nodes, at[g]);
          moving |= i ^ at[g];
          at[g] = i;
        }
      }
      for (index_t g = 0; g < lanes; ++g)
        tree_detail::add_leaf<Kind, Words, Aggregate>(out + (r0 + g) * p.targets, nodes, at[g], leaf_target, leaf_weight);
    }
  }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_TREE_ENSEMBLE_H
