// The row form of the reductions (reduce.h's reduce_rows, with reduce_rows_simd.h's vectors where
// this file is compiled with ONNXC_SIMD): reductions whose last kept axis is the input's last,
// over one or several reduced axes, against float64 values computed here and bit for bit against
// the general walk (each output's Reducer::apply): widths around a vector and a chunk (256),
// reduced counts around a block (512), NaN and the empty reduction.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "onnxc/reduce.h"

namespace rt = onnxc::rt;
using rt::index_t;

namespace {

// [a, b, c, d] reduced over axes 1 and (if reduce_c) 2 ... written as the strided spaces the
// compiler makes: kept (a, [c,] d), reduced (b [, c]); d is the contiguous kept axis.
rt::ReduceParams params(index_t a, index_t b, index_t c, index_t d, bool reduce_c) {
  rt::ReduceParams p{};
  if (reduce_c) {
    p.kept_rank = 2;
    p.kept_dims[0] = a;
    p.kept_strides[0] = b * c * d;
    p.kept_dims[1] = d;
    p.kept_strides[1] = 1;
    p.reduced_rank = 2;
    p.reduced_dims[0] = b;
    p.reduced_strides[0] = c * d;
    p.reduced_dims[1] = c;
    p.reduced_strides[1] = d;
  } else {
    p.kept_rank = 3;
    p.kept_dims[0] = a;
    p.kept_strides[0] = b * c * d;
    p.kept_dims[1] = c;
    p.kept_strides[1] = d;
    p.kept_dims[2] = d;
    p.kept_strides[2] = 1;
    p.reduced_rank = 1;
    p.reduced_dims[0] = b;
    p.reduced_strides[0] = c * d;
  }
  return p;
}

std::vector<float> values(std::size_t n) {
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>((i * 2654435761u >> 7) % 2001) / 1000.0f - 1.0f;
  return x;
}

// The general walk's output for every kept point, in order.
template <class Reducer>
std::vector<float> general_walk(const rt::ReduceParams& p, const float* x) {
  std::vector<float> y;
  rt::for_each_offset(p.kept_rank, p.kept_dims, p.kept_strides,
                      [&](index_t o) { y.push_back(Reducer::apply(x + o, p)); });
  return y;
}

template <class Reducer>
std::vector<float> by_rows(const rt::ReduceParams& p, const float* x, std::size_t outputs) {
  REQUIRE(rt::reduces_by_rows<Reducer, float>(p));
  std::vector<float> y(outputs, -7.0f);
  rt::reduce<Reducer>(p, x, y.data());
  return y;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

TEST_CASE("Reductions with the last axis kept match float64 and the general walk bit for bit", "[reduce]") {
  struct Shape { index_t a, b, c, d; bool reduce_c; };
  for (Shape s : {Shape{1, 3, 1, 1 + 1, false}, Shape{2, 5, 3, 7, false}, Shape{1, 4, 1, 16, false},
                  Shape{3, 2, 2, 17, true}, Shape{1, 7, 1, 33, false}, Shape{2, 3, 5, 255, true},
                  Shape{1, 2, 1, 256, false}, Shape{1, 3, 1, 600, false}, Shape{1, 513, 1, 19, false},
                  Shape{2, 300, 4, 21, true}, Shape{1, 1100, 1, 40, false}}) {
    const rt::ReduceParams p = params(s.a, s.b, s.c, s.d, s.reduce_c);
    const std::vector<float> x = values(static_cast<std::size_t>(s.a * s.b * s.c * s.d));
    const index_t reduced = s.reduce_c ? s.b * s.c : s.b;
    const std::size_t outputs = static_cast<std::size_t>(s.a * s.d * (s.reduce_c ? 1 : s.c));
    const std::vector<float> sum = by_rows<rt::ReduceSum>(p, x.data(), outputs);
    const std::vector<float> mean = by_rows<rt::ReduceMean>(p, x.data(), outputs);
    const std::vector<float> sq = by_rows<rt::ReduceSumSquare>(p, x.data(), outputs);
    const std::vector<float> l1 = by_rows<rt::ReduceL1>(p, x.data(), outputs);
    const std::vector<float> mx = by_rows<rt::ReduceMax>(p, x.data(), outputs);
    const std::vector<float> mn = by_rows<rt::ReduceMin>(p, x.data(), outputs);
    // float64 over the same elements
    std::size_t out = 0;
    rt::for_each_offset(p.kept_rank, p.kept_dims, p.kept_strides, [&](index_t o) {
      double want_sum = 0, want_sq = 0, want_l1 = 0, want_max = -1e30, want_min = 1e30;
      rt::for_each_offset(p.reduced_rank, p.reduced_dims, p.reduced_strides, [&](index_t r) {
        const double v = x[static_cast<std::size_t>(o + r)];
        want_sum += v;
        want_sq += v * v;
        want_l1 += std::fabs(v);
        want_max = v > want_max ? v : want_max;
        want_min = v < want_min ? v : want_min;
      });
      INFO("shape " << s.a << "x" << s.b << "x" << s.c << "x" << s.d << (s.reduce_c ? " axes 1,2" : " axis 1")
                    << ", output " << out);
      const double tol = 2e-6 * static_cast<double>(reduced) + 1e-6;
      CHECK(std::fabs(sum[out] - want_sum) <= tol);
      CHECK(std::fabs(mean[out] - want_sum / static_cast<double>(reduced)) <= tol / static_cast<double>(reduced));
      CHECK(std::fabs(sq[out] - want_sq) <= tol);
      CHECK(std::fabs(l1[out] - want_l1) <= tol);
      CHECK(mx[out] == static_cast<float>(want_max));
      CHECK(mn[out] == static_cast<float>(want_min));
      ++out;
    });
    REQUIRE(out == outputs);
    // the general walk, output by output (the same order of operations per output)
    const std::vector<float> sum_walk = general_walk<rt::ReduceSum>(p, x.data());
    const std::vector<float> mean_walk = general_walk<rt::ReduceMean>(p, x.data());
    const std::vector<float> mx_walk = general_walk<rt::ReduceMax>(p, x.data());
    const std::vector<float> mn_walk = general_walk<rt::ReduceMin>(p, x.data());
    for (std::size_t i = 0; i < outputs; ++i) {
      INFO("output " << i);
      CHECK(same_bits(sum[i], sum_walk[i]));
      CHECK(same_bits(mean[i], mean_walk[i]));
      CHECK(same_bits(mx[i], mx_walk[i]));
      CHECK(same_bits(mn[i], mn_walk[i]));
    }
  }
}

TEST_CASE("ReduceProd, ReduceL2 and ReduceLogSum by rows match float64", "[reduce]") {
  const rt::ReduceParams p = params(2, 6, 3, 37, false);
  std::vector<float> x = values(2 * 6 * 3 * 37);
  for (float& v : x) v = 0.5f + std::fabs(v);  // positive, so LogSum is finite
  const std::size_t outputs = 2 * 3 * 37;
  const std::vector<float> prod = by_rows<rt::ReduceProd>(p, x.data(), outputs);
  const std::vector<float> l2 = by_rows<rt::ReduceL2>(p, x.data(), outputs);
  const std::vector<float> logsum = by_rows<rt::ReduceLogSum>(p, x.data(), outputs);
  std::size_t out = 0;
  rt::for_each_offset(p.kept_rank, p.kept_dims, p.kept_strides, [&](index_t o) {
    double want_prod = 1, want_sq = 0, want_sum = 0;
    for (index_t r = 0; r < 6; ++r) {
      const double v = x[static_cast<std::size_t>(o + r * 3 * 37)];
      want_prod *= v;
      want_sq += v * v;
      want_sum += v;
    }
    INFO("output " << out);
    CHECK(std::fabs(prod[out] - want_prod) <= 1e-6 * std::fabs(want_prod));
    CHECK(std::fabs(l2[out] - std::sqrt(want_sq)) <= 1e-6 * std::sqrt(want_sq));
    CHECK(std::fabs(logsum[out] - std::log(want_sum)) <= 1e-6);
    ++out;
  });
}

TEST_CASE("ReduceLogSumExp by rows matches float64 and the general walk bit for bit", "[reduce]") {
  for (index_t d : {5, 37, 300}) {
    const rt::ReduceParams p = params(2, 9, 3, d, false);
    std::vector<float> x = values(static_cast<std::size_t>(2 * 9 * 3 * d));
    x[3] = 90.0f;  // exp(90) overflows float: the max is taken out first
    x[static_cast<std::size_t>(d + 1)] = -std::numeric_limits<float>::infinity();
    const std::size_t outputs = static_cast<std::size_t>(2 * 3 * d);
    const std::vector<float> lse = by_rows<rt::ReduceLogSumExp>(p, x.data(), outputs);
    const std::vector<float> walk = general_walk<rt::ReduceLogSumExp>(p, x.data());
    std::size_t out = 0;
    rt::for_each_offset(p.kept_rank, p.kept_dims, p.kept_strides, [&](index_t o) {
      double mx = -1e300;
      for (index_t r = 0; r < 9; ++r) mx = std::fmax(mx, x[static_cast<std::size_t>(o + r * 3 * d)]);
      double sum = 0;
      for (index_t r = 0; r < 9; ++r) sum += std::exp(x[static_cast<std::size_t>(o + r * 3 * d)] - mx);
      INFO("width " << d << ", output " << out);
      CHECK(std::fabs(lse[out] - (std::log(sum) + mx)) <= 1e-5 * std::fmax(1.0, std::fabs(mx)));
      CHECK(same_bits(lse[out], walk[out]));
      ++out;
    });
  }
}

TEST_CASE("ReduceMax and ReduceMin by rows: NaN wins in every lane it reaches, and the tail", "[reduce]") {
  const index_t b = 5, d = 37;  // lanes 0, 16 (vectors) and 36 (the tail) get a NaN in row 2
  const rt::ReduceParams p = params(1, b, 1, d, false);
  std::vector<float> x = values(static_cast<std::size_t>(b * d));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (index_t lane : {0, 16, 36}) x[static_cast<std::size_t>(2 * d + lane)] = nan;
  const std::vector<float> mx = by_rows<rt::ReduceMax>(p, x.data(), static_cast<std::size_t>(d));
  const std::vector<float> mn = by_rows<rt::ReduceMin>(p, x.data(), static_cast<std::size_t>(d));
  for (index_t j = 0; j < d; ++j) {
    const bool has_nan = j == 0 || j == 16 || j == 36;
    double want_max = -1e30, want_min = 1e30;
    for (index_t r = 0; r < b; ++r) {
      const double v = x[static_cast<std::size_t>(r * d + j)];
      want_max = v > want_max ? v : want_max;
      want_min = v < want_min ? v : want_min;
    }
    INFO("lane " << j);
    CHECK(std::isnan(mx[static_cast<std::size_t>(j)]) == has_nan);
    CHECK(std::isnan(mn[static_cast<std::size_t>(j)]) == has_nan);
    if (!has_nan) {
      CHECK(mx[static_cast<std::size_t>(j)] == static_cast<float>(want_max));
      CHECK(mn[static_cast<std::size_t>(j)] == static_cast<float>(want_min));
    }
  }
}

TEST_CASE("Reductions by rows over an empty set give the identity (Mean: NaN)", "[reduce]") {
  const rt::ReduceParams p = params(1, 0, 1, 20, false);
  const std::vector<float> sum = by_rows<rt::ReduceSum>(p, nullptr, 20);
  const std::vector<float> mx = by_rows<rt::ReduceMax>(p, nullptr, 20);
  const std::vector<float> mean = by_rows<rt::ReduceMean>(p, nullptr, 20);
  for (std::size_t j = 0; j < 20; ++j) {
    CHECK(sum[j] == 0.0f);
    CHECK(mx[j] == -std::numeric_limits<float>::infinity());
    CHECK(std::isnan(mean[j]));
  }
}

TEST_CASE("int32 ReduceSum and ReduceMax by rows match exact integer sums", "[reduce]") {
  const rt::ReduceParams p = params(2, 4, 3, 9, false);
  std::vector<std::int32_t> x(2 * 4 * 3 * 9);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<std::int32_t>((i * 37) % 101) - 50;
  std::vector<std::int32_t> sum(2 * 3 * 9), mx(sum.size());
  REQUIRE(rt::reduces_by_rows<rt::ReduceSum, std::int32_t>(p));
  rt::reduce<rt::ReduceSum>(p, x.data(), sum.data());
  rt::reduce<rt::ReduceMax>(p, x.data(), mx.data());
  std::size_t out = 0;
  rt::for_each_offset(p.kept_rank, p.kept_dims, p.kept_strides, [&](index_t o) {
    std::int32_t s = 0, m = -1000;
    for (index_t r = 0; r < 4; ++r) {
      const std::int32_t v = x[static_cast<std::size_t>(o + r * 27)];
      s += v;
      m = v > m ? v : m;
    }
    CHECK(sum[out] == s);
    CHECK(mx[out] == m);
    ++out;
  });
}

TEST_CASE("ReduceMax and ReduceMin over contiguous elements (the last axis) match float64, NaN winning", "[reduce]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (index_t n : {1, 3, 15, 16, 17, 20, 33, 100}) {
    const index_t rows = 4;
    std::vector<float> x = values(static_cast<std::size_t>(rows * n));
    x[static_cast<std::size_t>(n + n / 2)] = nan;          // row 1: a NaN in the middle
    x[static_cast<std::size_t>(3 * n + n - 1)] = nan;      // row 3: a NaN last (the tail)
    const rt::ReduceParams p{1, {rows}, {n}, 1, {n}, {1}};  // [rows, n] over its last axis
    std::vector<float> mx(static_cast<std::size_t>(rows)), mn(mx);
    rt::reduce<rt::ReduceMax>(p, x.data(), mx.data());
    rt::reduce<rt::ReduceMin>(p, x.data(), mn.data());
    for (index_t r = 0; r < rows; ++r) {
      double want_max = -1e30, want_min = 1e30;
      for (index_t i = 0; i < n; ++i) {
        const double v = x[static_cast<std::size_t>(r * n + i)];
        want_max = v > want_max ? v : want_max;
        want_min = v < want_min ? v : want_min;
      }
      INFO("n " << n << ", row " << r);
      const bool has_nan = r == 1 || r == 3;
      CHECK(std::isnan(mx[static_cast<std::size_t>(r)]) == has_nan);
      CHECK(std::isnan(mn[static_cast<std::size_t>(r)]) == has_nan);
      if (!has_nan) {
        CHECK(mx[static_cast<std::size_t>(r)] == static_cast<float>(want_max));
        CHECK(mn[static_cast<std::size_t>(r)] == static_cast<float>(want_min));
      }
    }
  }
}

TEST_CASE("ReduceMax and ReduceMin over short runs, kept points strided, a vector of rows at a time, match float64",
          "[reduce]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (index_t n : {1, 2, 3, 7, 16, 17, 32, 33, 64, 65}) {
    // kept [3, 37] with gaps between rows and blocks; reduced the n contiguous elements of a row
    const index_t rows = 37, row_stride = n + 3, block_stride = rows * row_stride + 5;
    const rt::ReduceParams p{2, {3, rows}, {block_stride, row_stride}, 1, {n}, {1}};
    std::vector<float> x = values(static_cast<std::size_t>(3 * block_stride));
    const index_t nan_rows[] = {1, 20, 36 + rows};  // in a vector of rows, in another, in the tail of block 1
    for (index_t r : nan_rows) x[static_cast<std::size_t>(r / rows * block_stride + r % rows * row_stride + n - 1)] = nan;
    std::vector<float> mx(static_cast<std::size_t>(3 * rows), -7.0f), mn(mx);
    rt::reduce<rt::ReduceMax>(p, x.data(), mx.data());
    rt::reduce<rt::ReduceMin>(p, x.data(), mn.data());
    for (index_t o = 0; o < 3 * rows; ++o) {
      const float* row = x.data() + o / rows * block_stride + o % rows * row_stride;
      double want_max = -1e30, want_min = 1e30;
      bool has_nan = false;
      for (index_t i = 0; i < n; ++i) {
        has_nan = has_nan || std::isnan(row[i]);
        want_max = row[i] > want_max ? row[i] : want_max;
        want_min = row[i] < want_min ? row[i] : want_min;
      }
      INFO("n " << n << ", output " << o);
      REQUIRE(std::isnan(mx[static_cast<std::size_t>(o)]) == has_nan);
      REQUIRE(std::isnan(mn[static_cast<std::size_t>(o)]) == has_nan);
      if (!has_nan) {
        REQUIRE(mx[static_cast<std::size_t>(o)] == static_cast<float>(want_max));
        REQUIRE(mn[static_cast<std::size_t>(o)] == static_cast<float>(want_min));
      }
    }
  }
}

TEST_CASE("ReduceMax and ReduceMin over two axes, the last a short run (axes 1 and 3 of NCHW), match float64",
          "[reduce]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (index_t h : {3, 16, 37})
    for (index_t w : {2, 7, 20}) {
      // [2, 5, h, w] reduced over axes 1 and 3: kept (2, h), reduced (5, w)
      const index_t c = 5, plane = h * w;
      const rt::ReduceParams p{2, {2, h}, {c * plane, w}, 2, {c, w}, {plane, 1}};
      std::vector<float> x = values(static_cast<std::size_t>(2 * c * plane));
      x[static_cast<std::size_t>(c * plane + 3 * plane + (h - 1) * w)] = nan;  // image 1, the last row
      std::vector<float> mx(static_cast<std::size_t>(2 * h), -7.0f), mn(mx);
      rt::reduce<rt::ReduceMax>(p, x.data(), mx.data());
      rt::reduce<rt::ReduceMin>(p, x.data(), mn.data());
      for (index_t o = 0; o < 2 * h; ++o) {
        double want_max = -1e30, want_min = 1e30;
        bool has_nan = false;
        for (index_t ch = 0; ch < c; ++ch)
          for (index_t j = 0; j < w; ++j) {
            const float v = x[static_cast<std::size_t>(o / h * c * plane + ch * plane + o % h * w + j)];
            has_nan = has_nan || std::isnan(v);
            want_max = v > want_max ? v : want_max;
            want_min = v < want_min ? v : want_min;
          }
        INFO("h " << h << ", w " << w << ", output " << o);
        REQUIRE(has_nan == (o == 2 * h - 1));
        REQUIRE(std::isnan(mx[static_cast<std::size_t>(o)]) == has_nan);
        REQUIRE(std::isnan(mn[static_cast<std::size_t>(o)]) == has_nan);
        if (!has_nan) {
          REQUIRE(mx[static_cast<std::size_t>(o)] == static_cast<float>(want_max));
          REQUIRE(mn[static_cast<std::size_t>(o)] == static_cast<float>(want_min));
        }
      }
    }
}

TEST_CASE("Sums, ReduceProd, ReduceLogSum and ReduceLogSumExp over short runs and strided elements, a vector of outputs at a time, match float64",
          "[reduce]") {
  // One output's reduced elements: the n contiguous elements of a row (kept [3, 37] with gaps),
  // or axes 1 and 3 of [2, 5, h, w] (a strided axis and a short run); values in [0.5, 1.5], so
  // the logarithm and the product are defined and finite.
  struct Shape {
    rt::ReduceParams p;
    index_t inputs, outputs;
  };
  std::vector<Shape> shapes;
  for (index_t n : {1, 2, 3, 7, 16, 17, 33, 64, 65}) {
    const index_t rows = 37, row_stride = n + 3, block_stride = rows * row_stride + 5;
    shapes.push_back({{2, {3, rows}, {block_stride, row_stride}, 1, {n}, {1}}, 3 * block_stride, 3 * rows});
  }
  for (index_t w : {2, 7, 20}) shapes.push_back({{2, {2, 13}, {5 * 13 * w, w}, 2, {5, w}, {13 * w, 1}}, 2 * 5 * 13 * w, 26});
  for (const Shape& s : shapes) {
    std::vector<float> x = values(static_cast<std::size_t>(s.inputs));
    for (float& v : x) v = 1.0f + 0.5f * v;
    const auto out = [&s](auto reducer, const float* in) {
      std::vector<float> y(static_cast<std::size_t>(s.outputs), -7.0f);
      rt::reduce<decltype(reducer)>(s.p, in, y.data());
      return y;
    };
    const std::vector<float> sum = out(rt::ReduceSum{}, x.data()), mean = out(rt::ReduceMean{}, x.data()),
                             sq = out(rt::ReduceSumSquare{}, x.data()), l1 = out(rt::ReduceL1{}, x.data()),
                             l2 = out(rt::ReduceL2{}, x.data()), prod = out(rt::ReduceProd{}, x.data()),
                             log_sum = out(rt::ReduceLogSum{}, x.data()),
                             log_sum_exp = out(rt::ReduceLogSumExp{}, x.data());
    // the points of a strided space of rank 1 or 2, row-major (written here, not the kernel's walk)
    const auto walk = [](int rank, const index_t* dims, const index_t* strides, auto f) {
      for (index_t a = 0; a < dims[0]; ++a)
        for (index_t b = 0; b < (rank > 1 ? dims[1] : 1); ++b) f(a * strides[0] + (rank > 1 ? b * strides[1] : 0));
    };
    index_t o = 0;
    walk(s.p.kept_rank, s.p.kept_dims, s.p.kept_strides, [&](index_t at) {
      double want_sum = 0, want_sq = 0, want_prod = 1, want_exp = 0;
      index_t count = 0;
      walk(s.p.reduced_rank, s.p.reduced_dims, s.p.reduced_strides, [&](index_t r) {
        const double v = x[static_cast<std::size_t>(at + r)];
        want_sum += v;
        want_sq += v * v;
        want_prod *= v;
        want_exp += std::exp(v);
        ++count;
      });
      const auto near = [](float got, double want) { return std::fabs(got - want) <= 1e-5 * std::fabs(want) + 1e-6; };
      const std::size_t i = static_cast<std::size_t>(o++);
      INFO("reduced " << count << " elements, output " << i);
      CHECK(near(sum[i], want_sum));
      CHECK(near(l1[i], want_sum));
      CHECK(near(mean[i], want_sum / static_cast<double>(count)));
      CHECK(near(sq[i], want_sq));
      CHECK(near(l2[i], std::sqrt(want_sq)));
      CHECK(near(prod[i], want_prod));
      CHECK(near(log_sum[i], std::log(want_sum)));
      CHECK(near(log_sum_exp[i], std::log(want_exp)));
    });
    REQUIRE(o == s.outputs);
  }
}
