// rt::tree_ensemble (onnxc/tree_ensemble.h) on a hand-laid forest, against outputs worked out by
// hand: every comparison kind mixed in one tree, a NaN with and without the missing-value flag, a
// one-weight and a several-weight leaf, a tree that is a leaf; the batch walk (groups of lanes)
// and the one-row walk; two- and three-word node records; SUM, MIN and MAX.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "onnxc/tree_ensemble.h"

using namespace onnxc;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

struct HandNode {
  float value;
  uint32_t feature, next;
};

// Mixed-kind `next`: link << 4 | kind code << 2 | flags (LEQ 1, LT 2, EQ 3; leaf 1, flag 2).
uint32_t branch(uint32_t jump, uint32_t code, bool missing_true) { return jump << 4 | code << 2 | (missing_true ? 2u : 0u); }
uint32_t leaf_one(uint32_t target) { return target << 4 | 1u; }
uint32_t leaf_many(uint32_t first) { return first << 4 | 3u; }

// Tree 0 (nodes 0-6), tree 1 a leaf (node 7):
//   0: x0 <= 0.5 ? 1 : 4          1: x1 < 2 (NaN true) ? 2 : 3     2: t0 += 1      3: t1 += 10
//   4: x1 == 3 ? 5 : 6            5: t0 += 100, t1 += 1000         6: t0 += 10000
//   7: t0 += 5
const std::vector<HandNode> kForest = {
    {0.5f, 0, branch(4, 1, false)}, {2.0f, 1, branch(2, 2, true)}, {1.0f, 0, leaf_one(0)},
    {10.0f, 0, leaf_one(1)},        {3.0f, 1, branch(2, 3, false)}, {2.0f, 0, leaf_many(0)},
    {10000.0f, 0, leaf_one(0)},     {5.0f, 0, leaf_one(0)}};

std::vector<uint32_t> words(int per_node) {
  std::vector<uint32_t> out;
  for (const HandNode& n : kForest) {
    uint32_t bits = 0;
    std::memcpy(&bits, &n.value, sizeof bits);
    out.push_back(bits);
    if (per_node == 2) {
      out.push_back(n.feature | n.next << 16);
    } else {
      out.push_back(n.feature);
      out.push_back(n.next);
    }
  }
  return out;
}

const std::vector<float> kRows = {0, 1, 0.5f, 2, 0, kNaN, 1, 3, 1, 3.5f, kNaN, 0};
// Tree 0's leaf per row: 2, 3, 2 (NaN tracks true), 5, 6, 6 (NaN tracks false); tree 1 adds 5 to t0.
const std::vector<float> kTree0 = {1, 0, 0, 10, 1, 0, 100, 1000, 10000, 0, 10000, 0};

template <int Words, int Aggregate> std::vector<float> run(int32_t rows, const float* x) {
  const std::vector<uint32_t> nodes = words(Words);
  const int32_t roots[] = {0, 7};
  const uint16_t depth[] = {2, 0}, leaf_target[] = {0, 1};
  const float leaf_weight[] = {100, 1000};
  std::vector<float> out(static_cast<std::size_t>(rows) * 2);
  rt::tree_ensemble<rt::kTreeMixed, Words, true, Aggregate>(x, nodes.data(), roots, depth, leaf_target, leaf_weight,
                                                           out.data(), rt::TreeEnsembleParams{rows, 2, 2, 2});
  return out;
}

template <int Words> void check_forest() {
  std::vector<float> sum = kTree0, lowest = kTree0, highest = kTree0;
  for (int r = 0; r < 6; ++r) {
    sum[2 * r] += 5;
    // Tree 0 gives t1 a weight only at leaves 3 and 5; elsewhere MIN and MAX leave it infinite.
    const bool t1 = r == 1 || r == 3;
    lowest[2 * r] = r == 1 ? 5 : std::fmin(kTree0[2 * r], 5);
    highest[2 * r] = r == 1 ? 5 : std::fmax(kTree0[2 * r], 5);
    lowest[2 * r + 1] = t1 ? kTree0[2 * r + 1] : kInf;
    highest[2 * r + 1] = t1 ? kTree0[2 * r + 1] : -kInf;
  }
  CHECK(run<Words, rt::kTreeSum>(6, kRows.data()) == sum);
  CHECK(run<Words, rt::kTreeMin>(6, kRows.data()) == lowest);
  CHECK(run<Words, rt::kTreeMax>(6, kRows.data()) == highest);
  for (int r = 0; r < 6; ++r) {
    const std::vector<float> one = run<Words, rt::kTreeSum>(1, kRows.data() + 2 * r);
    CHECK(one == std::vector<float>{sum[2 * r], sum[2 * r + 1]});
  }
}

}  // namespace

TEST_CASE("tree_ensemble walks mixed comparisons, NaNs and leaves of one or several weights, by hand") {
  SECTION("two-word nodes") { check_forest<2>(); }
  SECTION("three-word nodes") { check_forest<3>(); }
}
