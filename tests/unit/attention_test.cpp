// rt::attention (onnxc/attention.h) against softmax(scale Q K^T + M) V computed here in float64
// with the whole score row materialised: odd query/key counts (tails of the row tile and of the
// key block), head dims that end in vector tails, masks per row, broadcast over heads and rows,
// causal (-inf above the diagonal) and a fully masked row, and operands laid out [S, H, D] (the
// head split read through strides). Built into onnxc_unit_tests (the portable reference) and,
// with ONNXC_SIMD, into onnxc_simd_kernel_tests (-march=native) and onnxc_avx2_kernel_tests,
// where rt::attention takes attention_simd.h; attention_reference is checked in every build.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "onnxc/attention.h"

namespace {

using onnxc::rt::AttentionParams;
using onnxc::rt::index_t;

enum class Mask { None, PerRow, RowBroadcast, Causal };

struct Case {
  index_t heads, q_rows, k_rows, depth, v_depth;
  Mask mask;
  bool interleaved;  // Q, V, O as [S, H, D] (rows strided by H * D), K^T as [D, H, S]
};

// Tensors of one case and the strides that read them.
struct Operands {
  std::vector<float> q, kt, v, mask;
  AttentionParams p;
};

Operands make_operands(const Case& c, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Operands o;
  AttentionParams& p = o.p;
  p.groups0 = 1;
  p.groups1 = c.heads;
  p.q_rows = c.q_rows;
  p.k_rows = c.k_rows;
  p.depth = c.depth;
  p.v_depth = c.v_depth;
  p.scale = 1.0f / std::sqrt(static_cast<float>(c.depth));
  const index_t h = c.heads;
  if (c.interleaved) {
    p.q = {0, c.depth, h * c.depth, 1};
    p.k = {0, c.k_rows, h * c.k_rows, 1};
    p.v = {0, c.v_depth, h * c.v_depth, 1};
    p.out = {0, c.v_depth, h * c.v_depth, 1};
  } else {
    p.q = {0, c.q_rows * c.depth, c.depth, 1};
    p.k = {0, c.depth * c.k_rows, c.k_rows, 1};
    p.v = {0, c.k_rows * c.v_depth, c.v_depth, 1};
    p.out = {0, c.q_rows * c.v_depth, c.v_depth, 1};
  }
  o.q.resize(static_cast<std::size_t>(h * c.q_rows * c.depth));
  o.kt.resize(static_cast<std::size_t>(h * c.depth * c.k_rows));
  o.v.resize(static_cast<std::size_t>(h * c.k_rows * c.v_depth));
  // Scores of a few units: the softmax neither flat nor one-hot.
  for (auto& x : o.q) x = 3.0f * u(rng);
  for (auto& x : o.kt) x = u(rng);
  for (auto& x : o.v) x = u(rng);
  const float inf = std::numeric_limits<float>::infinity();
  switch (c.mask) {
    case Mask::None: break;
    case Mask::PerRow:  // [H, Sq, Sk], with -inf entries and a fully masked last row of head 0
      o.mask.resize(static_cast<std::size_t>(h * c.q_rows * c.k_rows));
      for (std::size_t i = 0; i < o.mask.size(); ++i) o.mask[i] = i % 7 == 3 ? -inf : 2.0f * u(rng);
      for (index_t j = 0; j < c.k_rows; ++j) o.mask[static_cast<std::size_t>((c.q_rows - 1) * c.k_rows + j)] = -inf;
      p.mask = {0, c.q_rows * c.k_rows, c.k_rows, 1};
      break;
    case Mask::RowBroadcast:  // [1, 1, Sk] (a padding mask)
      o.mask.resize(static_cast<std::size_t>(c.k_rows));
      for (std::size_t j = 0; j < o.mask.size(); ++j) o.mask[j] = j % 5 == 4 ? -inf : u(rng);
      o.mask[0] = 0.0f;
      p.mask = {0, 0, 0, 1};
      break;
    case Mask::Causal:  // [Sq, Sk], shared by the heads
      o.mask.resize(static_cast<std::size_t>(c.q_rows * c.k_rows));
      for (index_t i = 0; i < c.q_rows; ++i)
        for (index_t j = 0; j < c.k_rows; ++j) o.mask[static_cast<std::size_t>(i * c.k_rows + j)] = j > i ? -inf : 0.0f;
      p.mask = {0, 0, c.k_rows, 1};
      break;
  }
  return o;
}

// softmax(scale q k^T + m) v in float64, the whole row of scores at once. NaN for a row with no
// finite score.
std::vector<double> expected(const Operands& o) {
  const AttentionParams& p = o.p;
  std::vector<double> out(static_cast<std::size_t>(p.groups1 * p.q_rows * p.v_depth));
  for (index_t b = 0; b < p.groups1; ++b)
    for (index_t i = 0; i < p.q_rows; ++i) {
      std::vector<double> s(static_cast<std::size_t>(p.k_rows));
      double mx = -INFINITY;
      for (index_t j = 0; j < p.k_rows; ++j) {
        double dot = 0;
        for (index_t d = 0; d < p.depth; ++d)
          dot += double(o.q[static_cast<std::size_t>(b * p.q.g1 + i * p.q.row + d)]) *
                 o.kt[static_cast<std::size_t>(b * p.k.g1 + d * p.k.row + j)];
        double x = double(p.scale) * dot;
        if (!o.mask.empty()) x += o.mask[static_cast<std::size_t>(b * p.mask.g1 + i * p.mask.row + j * p.mask.col)];
        s[static_cast<std::size_t>(j)] = x;
        mx = std::max(mx, x);
      }
      double sum = 0;
      for (double& x : s) sum += (x = std::exp(x - mx));
      for (index_t d = 0; d < p.v_depth; ++d) {
        double acc = 0;
        for (index_t j = 0; j < p.k_rows; ++j)
          acc += s[static_cast<std::size_t>(j)] * o.v[static_cast<std::size_t>(b * p.v.g1 + j * p.v.row + d)];
        out[static_cast<std::size_t>((b * p.q_rows + i) * p.v_depth + d)] = mx == -INFINITY ? NAN : acc / sum;
      }
    }
  return out;
}

template <class Kernel>
void check(const Case& c, Kernel kernel) {
  const Operands o = make_operands(c, static_cast<unsigned>(c.q_rows * 131 + c.k_rows * 7 + c.depth));
  const AttentionParams& p = o.p;
  std::vector<float> y(static_cast<std::size_t>(c.heads * c.q_rows * c.v_depth), -7.0f);
  kernel(o.q.data(), o.kt.data(), o.v.data(), o.mask.empty() ? nullptr : o.mask.data(), y.data(), p);
  const std::vector<double> want = expected(o);
  for (index_t b = 0; b < c.heads; ++b)
    for (index_t i = 0; i < c.q_rows; ++i)
      for (index_t d = 0; d < c.v_depth; ++d) {
        const double w = want[static_cast<std::size_t>((b * c.q_rows + i) * c.v_depth + d)];
        const float got = y[static_cast<std::size_t>(b * p.out.g1 + i * p.out.row + d)];
        INFO("heads " << c.heads << " q " << c.q_rows << " k " << c.k_rows << " depth " << c.depth << " v_depth "
                      << c.v_depth << " mask " << static_cast<int>(c.mask) << " interleaved " << c.interleaved
                      << " at " << b << "," << i << "," << d);
        if (std::isnan(w)) {
          CHECK(std::isnan(got));
        } else {
          CHECK(std::abs(got - w) <= 2e-6 + 2e-5 * std::abs(w));
        }
      }
}

const std::vector<Case>& cases() {
  static const std::vector<Case> all = [] {
    std::vector<Case> v;
    const index_t rows[] = {1, 3, 5, 17, 64};
    const index_t keys[] = {1, 7, 33, 64, 100};
    const index_t dims[][2] = {{32, 32}, {64, 64}, {80, 80}, {5, 3}, {16, 33}};
    const Mask masks[] = {Mask::None, Mask::PerRow, Mask::RowBroadcast, Mask::Causal};
    int k = 0;
    for (index_t r : rows)
      for (index_t s : keys)
        for (const auto& d : dims) {
          ++k;
          v.push_back(Case{1 + k % 3, r, s, d[0], d[1], masks[k % 4], k % 2 == 0});
        }
    return v;
  }();
  return all;
}

}  // namespace

TEST_CASE("attention_reference matches softmax(scale Q K^T + M) V over row/key tails, masks and strides") {
  for (const Case& c : cases())
    check(c, [](const float* q, const float* kt, const float* v, const float* m, float* y, const AttentionParams& p) {
      onnxc::rt::attention_reference(q, kt, v, m, y, p);
    });
}

TEST_CASE("attention (the build's variant) matches softmax(scale Q K^T + M) V over row/key tails, masks and strides") {
  for (const Case& c : cases())
    check(c, [](const float* q, const float* kt, const float* v, const float* m, float* y, const AttentionParams& p) {
      onnxc::rt::attention(q, kt, v, m, y, p);
    });
}

TEST_CASE("attention with a large head and a long sequence: every causal row, all four masks") {
  for (Mask m : {Mask::None, Mask::PerRow, Mask::RowBroadcast, Mask::Causal})
    check(Case{2, 197, 197, 128, 128, m, true},
          [](const float* q, const float* kt, const float* v, const float* mk, float* y, const AttentionParams& p) {
            onnxc::rt::attention(q, kt, v, mk, y, p);
          });
}
