// Reduction, arg-reduction, softmax, normalisation, TopK, Det and Einsum kernels, checked
// against values computed by hand; and the compiler's split of a shape into kept and reduced
// index spaces.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>

#include "onnxc/linalg.h"
#include "onnxc/normalization.h"
#include "onnxc/reduce.h"
#include "onnxc/topk.h"
#include "ops/reduction.h"

using namespace onnxc;

namespace {

// One output per `kept` point, reducing `count` contiguous elements.
rt::ReduceParams rows(rt::index_t kept, rt::index_t count) {
  rt::ReduceParams p{};
  p.kept_rank = 1;
  p.kept_dims[0] = kept;
  p.kept_strides[0] = count;
  p.reduced_rank = 1;
  p.reduced_dims[0] = count;
  p.reduced_strides[0] = 1;
  return p;
}

Node node_named(const char* op) {
  Node n;
  n.op_type = op;
  n.name = "test";
  return n;
}

}  // namespace

TEST_CASE("reduce_params drops extent-1 axes and merges neighbours of the same kind") {
  Node n = node_named("ReduceSum");
  rt::ReduceParams p = reduce_params(n, {2, 1, 3, 4}, {false, false, true, true});
  REQUIRE(p.kept_rank == 1);
  CHECK(p.kept_dims[0] == 2);
  CHECK(p.kept_strides[0] == 12);
  REQUIRE(p.reduced_rank == 1);
  CHECK(p.reduced_dims[0] == 12);
  CHECK(p.reduced_strides[0] == 1);
}

TEST_CASE("ReduceSum over the middle axis of [2, 3, 2] walks strided lanes") {
  Node n = node_named("ReduceSum");
  rt::ReduceParams p = reduce_params(n, {2, 3, 2}, {false, true, false});
  float x[12];
  for (int i = 0; i < 12; ++i) x[i] = static_cast<float>(i);
  float y[4] = {};
  rt::reduce<rt::ReduceSum>(p, x, y);
  CHECK(y[0] == 0 + 2 + 4);
  CHECK(y[1] == 1 + 3 + 5);
  CHECK(y[2] == 6 + 8 + 10);
  CHECK(y[3] == 7 + 9 + 11);
}

TEST_CASE("axes_mask refuses a repeated axis") {
  Node n = node_named("ReduceSum");
  CHECK_THROWS(axes_mask(n, {1, -2}, 3));
  CHECK(axes_mask(n, {-1}, 3) == std::vector<bool>{false, false, true});
}

TEST_CASE("ReduceLogSumExp subtracts the max, so large inputs do not overflow") {
  const float x[2] = {1000.0f, 1000.0f};
  float y = 0;
  rt::reduce<rt::ReduceLogSumExp>(rows(1, 2), x, &y);
  CHECK(y == Approx(1000.0f + std::log(2.0f)));

  const float minus_inf[2] = {-std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()};
  rt::reduce<rt::ReduceLogSumExp>(rows(1, 2), minus_inf, &y);
  CHECK(std::isinf(y));
  CHECK(y < 0);
}

TEST_CASE("reductions over an empty set give the operation's identity") {
  const float none[1] = {0};
  float y = 7;
  rt::reduce<rt::ReduceSum>(rows(1, 0), none, &y);
  CHECK(y == 0);
  rt::reduce<rt::ReduceProd>(rows(1, 0), none, &y);
  CHECK(y == 1);
  rt::reduce<rt::ReduceMax>(rows(1, 0), none, &y);
  CHECK(y == -std::numeric_limits<float>::infinity());
  rt::reduce<rt::ReduceLogSum>(rows(1, 0), none, &y);
  CHECK(y == -std::numeric_limits<float>::infinity());
  rt::reduce<rt::ReduceMean>(rows(1, 0), none, &y);
  CHECK(std::isnan(y));

  const int32_t ints[1] = {0};
  int32_t iy = 7;
  rt::reduce<rt::ReduceMin>(rows(1, 0), ints, &iy);
  CHECK(iy == std::numeric_limits<int32_t>::max());
  rt::reduce<rt::ReduceMean>(rows(1, 0), ints, &iy);
  CHECK(iy == 0);
}

TEST_CASE("ReduceMax propagates NaN; ReduceMean and ReduceL2 of integers truncate") {
  const float x[3] = {1.0f, std::numeric_limits<float>::quiet_NaN(), 5.0f};
  float y = 0;
  rt::reduce<rt::ReduceMax>(rows(1, 3), x, &y);
  CHECK(std::isnan(y));

  const int32_t v[3] = {1, 2, 2};
  int32_t iy = 0;
  rt::reduce<rt::ReduceMean>(rows(1, 3), v, &iy);
  CHECK(iy == 1);  // 5 / 3
  rt::reduce<rt::ReduceL2>(rows(1, 3), v, &iy);
  CHECK(iy == 3);  // sqrt(9)
  rt::reduce<rt::ReduceL1>(rows(1, 3), v, &iy);
  CHECK(iy == 5);
}

TEST_CASE("ReduceSum of float16 accumulates in float") {
  // 2048 + 1 + 1 rounds to 2048 at every step in float16, to 2050 in float.
  const rt::float16 x[3] = {rt::store<rt::float16>(2048.0f), rt::store<rt::float16>(1.0f),
                            rt::store<rt::float16>(1.0f)};
  rt::float16 y{};
  rt::reduce<rt::ReduceSum>(rows(1, 3), x, &y);
  CHECK(rt::load(y) == 2050.0f);
}

TEST_CASE("ArgMax and ArgMin take the first extreme, or the last with select_last_index") {
  const float x[4] = {1, 3, 3, 2};
  int64_t y = -1;
  rt::arg_max(x, &y, 1, 4, 1, false);
  CHECK(y == 1);
  rt::arg_max(x, &y, 1, 4, 1, true);
  CHECK(y == 2);
  const int32_t m[4] = {5, 0, 7, 0};
  rt::arg_min(m, &y, 1, 4, 1, false);
  CHECK(y == 1);
  rt::arg_min(m, &y, 1, 4, 1, true);
  CHECK(y == 3);
}

TEST_CASE("ArgMax along the outer axis of [3, 2]") {
  const float x[6] = {0, 9, 5, 1, 4, 8};  // columns: {0, 5, 4} and {9, 1, 8}
  int64_t y[2] = {-1, -1};
  rt::arg_max(x, y, 1, 3, 2, false);
  CHECK(y[0] == 1);
  CHECK(y[1] == 0);
}

TEST_CASE("Softmax of large equal inputs is uniform; LogSoftmax is its log") {
  const float x[2] = {1000.0f, 1000.0f};
  float y[2];
  rt::softmax(x, y, 1, 2, 1);
  CHECK(y[0] == Approx(0.5f));
  CHECK(y[1] == Approx(0.5f));
  const float z[3] = {1.0f, 2.0f, 3.0f};
  rt::log_softmax(z, y, 1, 2, 1);
  // log(e^1 / (e^1 + e^2)) = -log(1 + e)
  CHECK(y[0] == Approx(-std::log(1.0f + std::exp(1.0f))));
}

TEST_CASE("Hardmax marks only the first maximum") {
  const float x[4] = {2, 7, 7, 1};
  float y[4];
  rt::hardmax(x, y, 1, 4, 1);
  CHECK(y[0] == 0);
  CHECK(y[1] == 1);
  CHECK(y[2] == 0);
  CHECK(y[3] == 0);
}

TEST_CASE("LayerNormalization of [1, 2, 3, 4]: mean 2.5, variance 1.25") {
  const float x[4] = {1, 2, 3, 4};
  const float scale[1] = {2};
  const float bias[1] = {1};
  float y[4], mean = 0, inv_std = 0;
  rt::layer_norm<float>(x, scale, bias, y, &mean, &inv_std, 1, 4, 1, 1, 0.0f);
  const float s = 1.0f / std::sqrt(1.25f);
  CHECK(mean == Approx(2.5f));
  CHECK(inv_std == Approx(s));
  CHECK(y[0] == Approx(2 * (-1.5f * s) + 1));
  CHECK(y[3] == Approx(2 * (1.5f * s) + 1));
}

TEST_CASE("RMSNormalization divides by the root mean square") {
  const float x[2] = {3, 4};  // mean square 12.5
  const float scale[2] = {1, 2};
  float y[2];
  rt::rms_norm<float>(x, scale, y, 1, 2, 2, 0.0f);
  CHECK(y[0] == Approx(3 / std::sqrt(12.5f)));
  CHECK(y[1] == Approx(2 * 4 / std::sqrt(12.5f)));
}

TEST_CASE("GroupNormalization scales per group before version 21 and per channel after") {
  // One batch, 2 channels in 1 group, 2 elements each: x = {0, 2 | 4, 6}, mean 3, var 5.
  const float x[4] = {0, 2, 4, 6};
  const float scale[2] = {1, 10}, bias[2] = {0, 100};
  float y[4];
  const float s = 1 / std::sqrt(5.0f);
  rt::group_norm<float>(x, scale, bias, y, 1, 1, 2, 2, 0.0f, false);
  CHECK(y[0] == Approx(-3 * s));
  CHECK(y[2] == Approx(10 * s + 100));
  rt::group_norm<float>(x, scale, bias, y, 1, 1, 2, 2, 0.0f, true);
  CHECK(y[2] == Approx(1 * s));  // group 0's scale and bias for both channels
}

TEST_CASE("BatchNormalization in training mode uses the batch statistics") {
  // 2 batches, 1 channel, 1 element: x = {1, 3}, mean 2, population variance 1.
  const float x[2] = {1, 3}, scale[1] = {1}, bias[1] = {0}, mean[1] = {10}, var[1] = {20};
  float y[2], running_mean = 0, running_var = 0;
  rt::batch_norm_training(x, scale, bias, mean, var, 0.0f, 0.9f, y, &running_mean, &running_var, 2, 1, 1);
  CHECK(y[0] == Approx(-1));
  CHECK(y[1] == Approx(1));
  CHECK(running_mean == Approx(10 * 0.9f + 2 * 0.1f));
  CHECK(running_var == Approx(20 * 0.9f + 1 * 0.1f));
}

TEST_CASE("LRN sums squares over the clipped channel window") {
  const float x[3] = {1, 2, 3};  // 3 channels, 1 element; alpha/size = 1, beta = 1, bias = 0
  float y[3];
  rt::lrn(x, y, 1, 3, 1, 3, 3.0f, 1.0f, 0.0f);
  CHECK(y[0] == Approx(1.0f / (1 + 4)));
  CHECK(y[1] == Approx(2.0f / (1 + 4 + 9)));
  CHECK(y[2] == Approx(3.0f / (4 + 9)));
}

TEST_CASE("TopK orders ties by the lower index") {
  const float x[5] = {3, 1, 3, 2, 3};
  float values[3];
  int64_t indices[3], order[5];
  rt::top_k(x, values, indices, 1, 5, 1, 3, true, order);
  CHECK(indices[0] == 0);
  CHECK(indices[1] == 2);
  CHECK(indices[2] == 4);
  CHECK(values[2] == 3);
  rt::top_k(x, values, indices, 1, 5, 1, 2, false, order);
  CHECK(indices[0] == 1);
  CHECK(indices[1] == 3);
  CHECK(values[1] == 2);
}

TEST_CASE("TopK along the outer axis writes strided lanes") {
  const int32_t x[6] = {1, 6, 5, 2, 3, 4};  // [3, 2]: columns {1, 5, 3} and {6, 2, 4}
  int32_t values[2];
  int64_t indices[2], order[3];
  rt::top_k(x, values, indices, 1, 3, 2, 1, true, order);
  CHECK(values[0] == 5);
  CHECK(indices[0] == 1);
  CHECK(values[1] == 6);
  CHECK(indices[1] == 0);
}

TEST_CASE("Det pivots past a zero and counts row swaps") {
  const double x[9] = {0, 1, 2, 1, 0, 3, 4, -3, 8};
  double y = 0, lu[9];
  rt::det(x, &y, 1, 3, lu);
  CHECK(y == Approx(-2.0));
  const float two[8] = {4, 3, 6, 3, 1, 2, 2, 4};
  float dets[2];
  rt::det(two, dets, 2, 2, lu);
  CHECK(dets[0] == Approx(-6.0f));
  CHECK(dets[1] == Approx(0.0f));
}

TEST_CASE("Einsum 'ij,jk->ik' is a matrix product and 'ii->i' a diagonal") {
  // a [2, 3], b [3, 2]; labels i, k in the output, j summed.
  const float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1};
  rt::EinsumParams p{};
  p.operands = 2;
  p.out_rank = 2;
  p.out_dims[0] = 2;  // i
  p.out_strides[0][0] = 3;
  p.out_strides[0][1] = 0;
  p.out_dims[1] = 2;  // k
  p.out_strides[1][0] = 0;
  p.out_strides[1][1] = 1;
  p.sum_rank = 1;
  p.sum_dims[0] = 3;  // j
  p.sum_strides[0][0] = 1;
  p.sum_strides[0][1] = 2;
  const float* const operands[] = {a, b};
  float y[4];
  rt::einsum(p, operands, y);
  CHECK(y[0] == 1 + 3);
  CHECK(y[1] == 2 + 3);
  CHECK(y[2] == 4 + 6);
  CHECK(y[3] == 5 + 6);

  rt::EinsumParams d{};
  d.operands = 1;
  d.out_rank = 1;
  d.out_dims[0] = 2;
  d.out_strides[0][0] = 2 + 1;  // the repeated label adds both strides
  const float m[4] = {7, 8, 9, 10};
  const float* const one[] = {m};
  rt::einsum(d, one, y);
  CHECK(y[0] == 7);
  CHECK(y[1] == 10);
}
