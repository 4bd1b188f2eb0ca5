// Quantization kernels (onnxc/quant.h): rounding ties, saturation, per-axis and blocked layouts,
// DynamicQuantizeLinear on hand-computed cases, and integer requantization against the float
// computation ONNX Runtime performs; the lower-qdq pass on a QDQ model.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <type_traits>

#include "onnxc/quant.h"
#include "onnxc/quant_resize.h"
#include "onnxc/quant_softmax.h"
#include "ops/conv_algorithm.h"
#include "ops/quant_common.h"
#include "passes/pipeline.h"
#include "passes/qdq_patterns.h"

namespace rt = onnxc::rt;

namespace {

// ONNX Runtime's requantization, in float: round(float(acc) * multiplier) + zero point, saturated.
template <class Q> Q float_requantize(int32_t acc, float multiplier, int32_t zero_point) {
  const float v = static_cast<float>(acc) * multiplier;
  return rt::saturate_to<Q>(std::nearbyint(v) + static_cast<float>(zero_point));
}

// Both requantization paths (integers only; float), checked equal; returns the result.
template <class Q> int requantize_both(int32_t acc, float multiplier, int32_t zero_point) {
  const rt::Requant r = rt::make_requant(multiplier);
  const Q in_integers = rt::requantize_in_integers<Q>(acc, r, zero_point);
  CHECK(int(in_integers) == int(rt::requantize_in_float<Q>(acc, r, zero_point)));
  return in_integers;
}

}  // namespace

TEST_CASE("round_half_even rounds ties to the even neighbour", "[quant]") {
  CHECK(rt::round_half_even(2.5f) == 2.0f);
  CHECK(rt::round_half_even(3.5f) == 4.0f);
  CHECK(rt::round_half_even(-2.5f) == -2.0f);
  CHECK(rt::round_half_even(-3.5f) == -4.0f);
  CHECK(rt::round_half_even(0.5f) == 0.0f);
  CHECK(rt::round_half_even(1.49999988f) == 1.0f);
  CHECK(rt::round_half_even(-0.7f) == -1.0f);
  CHECK(rt::round_half_even(16777216.0f) == 16777216.0f);
}

TEST_CASE("quantize_linear: ties to even, zero point added after rounding, saturation", "[quant]") {
  const float x[] = {0.5f, 1.5f, 2.5f, -2.5f, 1000.0f, -1000.0f};
  const float scale = 1.0f;
  const uint8_t zp_u8 = 10;
  uint8_t y[6];
  const rt::QuantLayout all = {1, 1, 6, 1, 0, 0, 0};
  rt::quantize_linear(all, x, &scale, &zp_u8, y);
  // 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -2.5 -> -2; plus 10; then [0, 255].
  CHECK(std::vector<int>(y, y + 6) == std::vector<int>{10, 12, 12, 8, 255, 0});
  int8_t z[6];
  rt::quantize_linear(all, x, &scale, static_cast<const int8_t*>(nullptr), z);
  CHECK(std::vector<int>(z, z + 6) == std::vector<int>{0, 2, 2, -2, 127, -128});
}

TEST_CASE("quantize_linear and dequantize_linear per axis and blocked", "[quant]") {
  // x [2, 4] quantized along axis 1 in blocks of 2: scale [2, 2].
  const float x[] = {1, 2, 3, 4, 5, 6, 7, 8};
  const float scale[] = {1, 2, 0.5f, 4};
  const int16_t zp[] = {0, 1, 2, 3};
  const rt::QuantLayout blocked = {/*outer*/ 2, /*axis*/ 4, /*inner*/ 1, /*block*/ 2, /*scale_outer*/ 2,
                                   /*scale_axis*/ 1, /*scale_inner*/ 0};
  int16_t q[8];
  rt::quantize_linear(blocked, x, scale, zp, q);
  // Row 0: 1/1, 2/1, 3/2=1.5->2, 4/2=2, then +0 +0 +1 +1. Row 1: 5/0.5, 6/0.5, 7/4=1.75->2,
  // 8/4=2, then +2 +2 +3 +3.
  CHECK(std::vector<int>(q, q + 8) == std::vector<int>{1, 2, 3, 3, 12, 14, 5, 5});
  float back[8];
  rt::dequantize_linear(blocked, q, scale, zp, back);
  CHECK(std::vector<float>(back, back + 8) == std::vector<float>{1, 2, 4, 4, 5, 6, 8, 8});

  // Per axis 0 of [2, 3]: scale [2] shared by every element of a row.
  const uint8_t xq[] = {10, 20, 30, 10, 20, 30};
  const float row_scale[] = {0.5f, 2.0f};
  const uint8_t row_zp[] = {10, 20};
  const rt::QuantLayout per_axis = {1, 2, 3, 1, 0, 1, 0};
  float y[6];
  rt::dequantize_linear(per_axis, xq, row_scale, row_zp, y);
  CHECK(std::vector<float>(y, y + 6) == std::vector<float>{0, 5, 10, -20, 0, 20});
}

TEST_CASE("dynamic_quantize_linear on hand-computed ranges", "[quant]") {
  // Range [-1, 1.55]: scale 2.55 / 255 = 0.01, zero point round(1 / 0.01) = 100.
  const float x[] = {-1.0f, 0.0f, 1.55f, 0.005f};
  uint8_t y[4], zp = 0;
  float scale = 0;
  rt::dynamic_quantize_linear(4, x, y, &scale, &zp);
  CHECK(scale == Approx(0.01f));
  CHECK(zp == 100);
  CHECK(y[0] == 0);
  CHECK(y[1] == 100);
  CHECK(y[2] == 255);
  // All zeros: scale 1/255, zero point 0.
  const float zeros[] = {0.0f, 0.0f};
  rt::dynamic_quantize_linear(2, zeros, y, &scale, &zp);
  CHECK(scale == 1.0f / 255.0f);
  CHECK(zp == 0);
}

TEST_CASE("make_requant holds the float multiplier exactly", "[quant]") {
  for (float m : {1.0f, 0.5f, 0.0123f, 3.0e-5f, 7.25f}) {
    const rt::Requant r = rt::make_requant(m);
    CHECK(r.mantissa >= (1 << 23));
    CHECK(r.mantissa < (1 << 24));
    CHECK(std::ldexp(static_cast<double>(r.mantissa), r.exponent) == static_cast<double>(m));
  }
  CHECK(rt::make_requant(0.0f).mantissa == 0);
  CHECK(rt::make_requant(-1.0f).mantissa == 0);
}

TEST_CASE("requantize in integers and in float equal the float computation bit for bit", "[quant]") {
  // Ties and double rounding: 5 * 0.5 = 2.5 -> 2, 7 * 0.5 = 3.5 -> 4; acc beyond 2^24 is
  // rounded to float first.
  CHECK(requantize_both<int8_t>(5, 0.5f, 0) == 2);
  CHECK(requantize_both<int8_t>(7, 0.5f, 0) == 4);
  CHECK(requantize_both<int8_t>(-5, 0.5f, 0) == -2);
  CHECK(requantize_both<uint8_t>(-1000, 0.01f, 128) == 118);
  CHECK(requantize_both<uint8_t>(1 << 30, 1.0f, 0) == 255);
  CHECK(requantize_both<int8_t>(0, 0.3f, -7) == -7);

  std::mt19937 rng(1234);
  std::uniform_int_distribution<int32_t> small(-300000, 300000);
  std::uniform_int_distribution<int32_t> large(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
  std::uniform_real_distribution<float> log_multiplier(-24.0f, 2.0f);
  std::uniform_int_distribution<int32_t> zero_point(-128, 127);
  int mismatches = 0;
  auto check = [&](int32_t acc, float m, int32_t zp, auto q_tag) {
    using Q = decltype(q_tag);
    const Q expected = float_requantize<Q>(acc, m, zp);
    const rt::Requant r = rt::make_requant(m);
    if (rt::requantize_in_integers<Q>(acc, r, zp) != expected || rt::requantize_in_float<Q>(acc, r, zp) != expected)
      ++mismatches;
  };
  for (int i = 0; i < 200000; ++i) {
    const int32_t acc = (i % 4 == 0) ? large(rng) : small(rng);
    check(acc, std::exp2(log_multiplier(rng)), zero_point(rng), int8_t{});
    // Exact ties of the product: multipliers 2^-k with odd accumulators.
    check(acc | 1, std::ldexp(1.0f, -(i % 12 + 1)), 0, int16_t{});
  }
  CHECK(mismatches == 0);
}

TEST_CASE("matmul_integer subtracts per-row and per-column zero points", "[quant]") {
  // a [2, 2] with row zero points {1, 2}; b [2, 2] with column zero points {0, 3}.
  const uint8_t a[] = {3, 5, 2, 4};
  const int8_t b[] = {1, 4, 2, 5};
  const uint8_t za[] = {1, 2};
  const int8_t zb[] = {0, 3};
  const rt::index_t offsets[] = {0};
  int32_t y[4];
  rt::matmul_integer(1, offsets, offsets, 2, 2, 2, rt::QuantOperand<uint8_t>{a, za, 1},
                     rt::QuantOperand<int8_t>{b, zb, 1}, rt::StoreInt32{y});
  // a - za = [[2, 4], [0, 2]]; b - zb = [[1, 1], [2, 2]].
  CHECK(std::vector<int32_t>(y, y + 4) == std::vector<int32_t>{10, 10, 4, 4});
}

TEST_CASE("conv_integer pads with the zero point and requantizes per channel with bias", "[quant]") {
  // 1-D: x [1, 1, 3], w [2, 1, 3] (two output channels), pad 1 on both sides.
  const rt::ConvParams p = {1, 1, 2, 1, 1, 1, 3, 1, 1, 3, 1, 1, 3, 1, 1, 1, 1, 1, 1, 0, 0, 1};
  const uint8_t x[] = {12, 14, 16};
  const uint8_t zx = 10;
  const int8_t w[] = {1, 1, 1, 0, 2, 0};
  int32_t acc[6], plane[3];
  rt::conv_integer(p, rt::QuantOperand<uint8_t>{x, &zx, 0}, rt::QuantOperand<int8_t>{w, nullptr, 0},
                   rt::StoreInt32{acc}, plane);
  // x - zx = [2, 4, 6] padded with 0: channel 0 sums windows, channel 1 doubles the centre.
  CHECK(std::vector<int32_t>(acc, acc + 6) == std::vector<int32_t>{6, 12, 10, 4, 8, 12});
  const int32_t bias[] = {1, -2};
  const rt::Requant requant[] = {rt::make_requant(0.5f), rt::make_requant(0.25f)};
  uint8_t y[6];
  rt::conv_integer(p, rt::QuantOperand<uint8_t>{x, &zx, 0}, rt::QuantOperand<int8_t>{w, nullptr, 0},
                   rt::RequantizeOutput<uint8_t>{y, bias, requant, 1, 100}, plane);
  // (6+1)/2=3.5->4, 13/2=6.5->6, 11/2=5.5->6; (4-2)/4=0.5->0, 6/4=1.5->2, 10/4=2.5->2; plus 100.
  CHECK(std::vector<int>(y, y + 6) == std::vector<int>{104, 106, 106, 100, 102, 102});
}

TEST_CASE("conv_integer_direct (no scratch) equals the hand-computed case and conv_integer", "[quant]") {
  // The hand-computed 1-D case above.
  const rt::ConvParams p1 = {1, 1, 2, 1, 1, 1, 3, 1, 1, 3, 1, 1, 3, 1, 1, 1, 1, 1, 1, 0, 0, 1};
  const uint8_t x1[] = {12, 14, 16};
  const uint8_t zx1 = 10;
  const int8_t w1[] = {1, 1, 1, 0, 2, 0};
  int32_t acc1[6];
  rt::conv_integer_direct(p1, rt::QuantOperand<uint8_t>{x1, &zx1, 0}, rt::QuantOperand<int8_t>{w1, nullptr, 0},
                          rt::StoreInt32{acc1});
  CHECK(std::vector<int32_t>(acc1, acc1 + 6) == std::vector<int32_t>{6, 12, 10, 4, 8, 12});
  // Groups (depthwise and two groups), strides, dilation, padding, per-channel w zero points.
  struct Case {
    int64_t c, m, group, h, w, kh, kw, stride, dilation, pad;
  };
  const Case cases[] = {{3, 5, 1, 9, 11, 3, 3, 1, 1, 1}, {6, 6, 6, 10, 7, 3, 3, 2, 1, 1}, {4, 6, 2, 8, 9, 5, 3, 2, 1, 2},
                        {5, 3, 1, 12, 10, 3, 3, 1, 2, 2}, {1, 7, 1, 49, 10, 10, 4, 2, 1, 4}};
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> byte(0, 255);
  for (const Case& c : cases) {
    const int64_t oh = (c.h + 2 * c.pad - c.dilation * (c.kh - 1) - 1) / c.stride + 1;
    const int64_t ow = (c.w + 2 * c.pad - c.dilation * (c.kw - 1) - 1) / c.stride + 1;
    const rt::ConvParams p = {2, c.c, c.m, c.group, 1, c.h, c.w, 1, oh, ow, 1, c.kh, c.kw, 1, c.stride, c.stride,
                              1, c.dilation, c.dilation, 0, c.pad, c.pad};
    std::vector<int8_t> x(static_cast<std::size_t>(2 * c.c * c.h * c.w));
    std::vector<uint8_t> w(static_cast<std::size_t>(c.m * c.c / c.group * c.kh * c.kw)), zw(static_cast<std::size_t>(c.m));
    for (auto& v : x) v = static_cast<int8_t>(byte(rng) - 128);
    for (auto& v : w) v = static_cast<uint8_t>(byte(rng));
    for (auto& v : zw) v = static_cast<uint8_t>(byte(rng));
    const int8_t zx = -7;
    const std::size_t outputs = static_cast<std::size_t>(2 * c.m * oh * ow);
    std::vector<int32_t> reference(outputs), direct(outputs, -1), plane(static_cast<std::size_t>(oh * ow));
    const rt::QuantOperand<int8_t> xq{x.data(), &zx, 0};
    const rt::QuantOperand<uint8_t> wq{w.data(), zw.data(), 1};
    rt::conv_integer(p, xq, wq, rt::StoreInt32{reference.data()}, plane.data());
    rt::conv_integer_direct(p, xq, wq, rt::StoreInt32{direct.data()});
    CHECK(direct == reference);
  }
}

TEST_CASE("qconv_gemm and qconv_gemm_pairs equal conv_integer (the direct kernel) on odd shapes", "[quant]") {
  // K not a multiple of 4, output channels not a multiple of the 4-row tile, columns not a
  // multiple of 16 and more than one block, padding on every side, strides 1 and 2, dilation.
  struct Case {
    int64_t ic, oc, h, w, k, stride, pad, dilation, block;
  };
  // The M4's form with weights paired at compile time (qconv_gemm_pairs, portable here) too:
  // pairs not a multiple of the tile's four, reductions past 64 pairs (narrower widened blocks)
  // and past 512 (passes of pairs).
  const Case cases[] = {{3, 5, 9, 7, 3, 1, 1, 1, 16},   {2, 8, 11, 13, 3, 2, 1, 1, 32},  {5, 3, 6, 6, 1, 1, 0, 1, 16},
                        {4, 6, 10, 9, 3, 1, 2, 2, 48},  {1, 7, 5, 17, 5, 2, 2, 1, 256},  {16, 3, 6, 5, 3, 1, 1, 1, 16},
                        {130, 3, 4, 5, 3, 1, 1, 1, 32}, {1, 64, 49, 10, 4, 2, 1, 1, 128}};
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> byte(0, 255);
  for (const Case& c : cases) {
    const int64_t oh = (c.h + 2 * c.pad - c.dilation * (c.k - 1) - 1) / c.stride + 1;
    const int64_t ow = (c.w + 2 * c.pad - c.dilation * (c.k - 1) - 1) / c.stride + 1;
    const rt::ConvParams p = {2, c.ic, c.oc, 1, 1, c.h, c.w, 1, oh, ow, 1, c.k, c.k, 1, c.stride, c.stride, 1,
                              c.dilation, c.dilation, 0, c.pad, c.pad};
    std::vector<uint8_t> x(static_cast<std::size_t>(2 * c.ic * c.h * c.w));
    std::vector<int8_t> w(static_cast<std::size_t>(c.oc * c.ic * c.k * c.k));
    for (auto& v : x) v = static_cast<uint8_t>(byte(rng));
    for (auto& v : w) v = static_cast<int8_t>(byte(rng) - 128);
    const uint8_t zx = 117;
    const std::size_t outputs = static_cast<std::size_t>(2 * c.oc * oh * ow);
    std::vector<int32_t> direct(outputs), product(outputs), plane(static_cast<std::size_t>(oh * ow));
    rt::conv_integer(p, rt::QuantOperand<uint8_t>{x.data(), &zx, 0}, rt::QuantOperand<int8_t>{w.data(), nullptr, 0},
                     rt::StoreInt32{direct.data()}, plane.data());
    std::vector<uint8_t> scratch(static_cast<std::size_t>(rt::qconv_gemm_scratch_bytes(p, c.block)));
    std::vector<rt::index_t> row_sums(static_cast<std::size_t>(c.oc));
    rt::qconv_weight_row_sums(p, w.data(), row_sums.data());
    rt::qconv_gemm(p, x.data(), zx, w.data(), row_sums.data(), rt::StoreInt32{product.data()}, c.block,
                   scratch.data());
    CHECK(product == direct);
    std::vector<int32_t> pairs(static_cast<std::size_t>(rt::qconv_gemm_pairs_weight_words(p))), paired(outputs, -1);
    rt::qconv_gemm_pairs_pack_weights(p, w.data(), pairs.data());
    rt::qconv_gemm_pairs(p, x.data(), zx, pairs.data(), row_sums.data(), rt::StoreInt32{paired.data()}, c.block,
                         scratch.data());
    CHECK(paired == direct);
  }
}

TEST_CASE("qconv_tile_dual_mac (the SMLAD tile, portable on hosts) equals plain dot products", "[quant]") {
  // k_total below 4, not a multiple of 4 (the last group's weights read byte by byte; the
  // block's bytes past k_total 0) and a multiple; one and two rows; 2 to 64 columns of a block
  // 80 wide; uint8 inputs over the whole range, int8 weights with -128.
  std::mt19937 rng(29);
  std::uniform_int_distribution<int> byte(0, 255);
  constexpr rt::index_t kStride = 80;
  for (rt::index_t k_total : {1, 3, 4, 7, 27, 36, 144, 145}) {
    const rt::index_t groups = (k_total + 3) / 4;
    std::vector<uint8_t> col(static_cast<std::size_t>(groups * kStride * 4));
    for (rt::index_t g = 0; g < groups; ++g)
      for (rt::index_t j = 0; j < kStride; ++j)
        for (rt::index_t t = 0; t < 4; ++t)
          col[static_cast<std::size_t>((g * kStride + j) * 4 + t)] = 4 * g + t < k_total ? static_cast<uint8_t>(byte(rng)) : 0;
    std::vector<int8_t> w(static_cast<std::size_t>(2 * k_total));
    for (auto& v : w) v = static_cast<int8_t>(byte(rng) - 128);
    w[0] = -128;
    col[0] = 255;
    for (rt::index_t columns : {2, 16, 64}) {
      auto want = [&](rt::index_t r, rt::index_t j) {
        int32_t sum = 0;
        for (rt::index_t k = 0; k < k_total; ++k)
          sum += int32_t(w[static_cast<std::size_t>(r * k_total + k)]) * int32_t(col[static_cast<std::size_t>((k / 4 * kStride + j) * 4 + k % 4)]);
        return sum;
      };
      for (rt::index_t j0 : {rt::index_t{0}, rt::index_t{16}}) {
        int32_t acc[2][rt::kQConvColumnQuantum * 4];
        rt::detail::qconv_tile_dual_mac<2>(w.data(), k_total, groups, col.data() + j0 * 4, kStride, columns, acc);
        for (rt::index_t j = 0; j < columns; ++j) {
          CHECK(acc[0][j] == want(0, j0 + j));
          CHECK(acc[1][j] == want(1, j0 + j));
        }
        rt::detail::qconv_tile_dual_mac<1>(w.data() + k_total, k_total, groups, col.data() + j0 * 4, kStride, columns, acc);
        for (rt::index_t j = 0; j < columns; ++j) CHECK(acc[0][j] == want(1, j0 + j));
      }
    }
  }
}

TEST_CASE("qconv_pointwise equals conv_integer on 1x1 shapes, raw and requantized", "[quant]") {
  // Odd input channels (the last pairs with itself), output channels not a multiple of the
  // 4-channel tile, odd planes (the last position alone), two images; extreme bytes included.
  // The M4's form (qconv_pointwise_dsp, portable here) too: channel pairs past 32 (blocks
  // narrower than 32 positions) and past 512 (passes of channels).
  struct Case {
    int64_t ic, oc, h, w;
  };
  const Case cases[] = {{64, 64, 25, 5}, {5, 7, 3, 3}, {1, 1, 1, 1}, {2, 4, 2, 3},    {7, 9, 1, 7},
                        {3, 2, 4, 4},    {9, 3, 1, 2}, {200, 5, 3, 7}, {1027, 3, 2, 3}, {2049, 2, 1, 3}};
  std::mt19937 rng(23);
  std::uniform_int_distribution<int> byte(0, 255);
  for (const Case& c : cases) {
    const rt::ConvParams p = {2, c.ic, c.oc, 1, 1, c.h, c.w, 1, c.h, c.w, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0};
    REQUIRE(rt::qconv_pointwise_applies(p));
    std::vector<uint8_t> x(static_cast<std::size_t>(2 * c.ic * c.h * c.w));
    std::vector<int8_t> w(static_cast<std::size_t>(c.oc * c.ic));
    for (auto& v : x) v = static_cast<uint8_t>(byte(rng));
    for (auto& v : w) v = static_cast<int8_t>(byte(rng) - 128);
    x[0] = 255, w[0] = -128;
    const uint8_t zx = 131;
    std::vector<int32_t> packed(static_cast<std::size_t>(rt::qconv_pointwise_weight_words(p)));
    rt::qconv_pointwise_pack_weights(p, w.data(), packed.data());
    std::vector<rt::index_t> row_sums(static_cast<std::size_t>(c.oc));
    rt::qconv_weight_row_sums(p, w.data(), row_sums.data());
    const std::size_t outputs = static_cast<std::size_t>(2 * c.oc * c.h * c.w);
    const rt::QuantOperand<uint8_t> xq{x.data(), &zx, 0};
    const rt::QuantOperand<int8_t> wq{w.data(), nullptr, 0};
    std::vector<int32_t> direct(outputs), tiled(outputs), plane(static_cast<std::size_t>(c.h * c.w));
    rt::conv_integer(p, xq, wq, rt::StoreInt32{direct.data()}, plane.data());
    rt::qconv_pointwise(p, x.data(), zx, packed.data(), row_sums.data(), rt::StoreInt32{tiled.data()});
    CHECK(tiled == direct);
    std::vector<int32_t> widened(outputs, -1);
    rt::detail::qconv_pointwise_dsp(p, x.data(), zx, packed.data(), row_sums.data(), rt::StoreInt32{widened.data()});
    CHECK(widened == direct);
    // The Cortex-M55's weight bytes (qconv_pointwise_s8; its Helium kernel runs under QEMU, here
    // the portable form reads the layout).
    std::vector<int8_t> bytes(static_cast<std::size_t>(rt::qconv_pointwise_s8_weight_bytes(p)));
    rt::qconv_pointwise_s8_pack_weights(p, w.data(), bytes.data());
    std::vector<int32_t> s8(outputs, -1);
    rt::qconv_pointwise_s8(p, x.data(), zx, bytes.data(), row_sums.data(), rt::StoreInt32{s8.data()});
    CHECK(s8 == direct);
    // Per-channel multipliers and bias, as QLinearConv gives them.
    std::vector<int32_t> bias(static_cast<std::size_t>(c.oc));
    std::vector<rt::Requant> requant(static_cast<std::size_t>(c.oc));
    for (std::size_t m = 0; m < bias.size(); ++m) {
      bias[m] = static_cast<int32_t>(m * 977) - 3000;
      requant[m] = rt::make_requant(0.0007f * static_cast<float>(m + 1));
    }
    std::vector<uint8_t> y_direct(outputs), y_tiled(outputs);
    rt::conv_integer(p, xq, wq, rt::RequantizeOutput<uint8_t>{y_direct.data(), bias.data(), requant.data(), 1, 7},
                     plane.data());
    rt::qconv_pointwise(p, x.data(), zx, packed.data(), row_sums.data(),
                        rt::RequantizeOutput<uint8_t>{y_tiled.data(), bias.data(), requant.data(), 1, 7});
    CHECK(y_tiled == y_direct);
  }
}

TEST_CASE("depthwise_integer equals conv_integer on depthwise shapes", "[quant]") {
  // channels, height, width, kernel h x w, pad (top/left), padded output size, per-channel w zero points
  struct Case {
    int64_t c, h, w, kh, kw, pad_h, pad_w, oh, ow;
  };
  const Case cases[] = {{3, 25, 5, 3, 3, 1, 1, 25, 5}, {2, 7, 9, 3, 5, 0, 2, 5, 9}, {4, 6, 6, 1, 1, 0, 0, 6, 6},
                        {1, 5, 4, 3, 3, 1, 1, 4, 3}};
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> byte(0, 255);
  for (const Case& c : cases) {
    const rt::ConvParams p = {2, c.c, c.c, c.c, 1, c.h, c.w, 1, c.oh, c.ow, 1, c.kh, c.kw, 1, 1, 1, 1, 1, 1, 0,
                              c.pad_h, c.pad_w};
    REQUIRE(rt::depthwise_integer_applies(p));
    std::vector<uint8_t> x(static_cast<std::size_t>(2 * c.c * c.h * c.w));
    std::vector<int8_t> w(static_cast<std::size_t>(c.c * c.kh * c.kw)), zw(static_cast<std::size_t>(c.c));
    for (auto& v : x) v = static_cast<uint8_t>(byte(rng));
    for (auto& v : w) v = static_cast<int8_t>(byte(rng) - 128);
    for (auto& v : zw) v = static_cast<int8_t>(byte(rng) % 7 - 3);
    const uint8_t zx = 99;
    const std::size_t outputs = static_cast<std::size_t>(2 * c.c * c.oh * c.ow);
    std::vector<int32_t> direct(outputs), depthwise(outputs), plane(static_cast<std::size_t>(c.oh * c.ow));
    const rt::QuantOperand<uint8_t> xq{x.data(), &zx, 0};
    const rt::QuantOperand<int8_t> wq{w.data(), zw.data(), 1};
    rt::conv_integer(p, xq, wq, rt::StoreInt32{direct.data()}, plane.data());
    std::vector<unsigned char> scratch(static_cast<std::size_t>(rt::depthwise_integer_scratch_bytes(p)));
    rt::depthwise_integer(p, xq, wq, rt::StoreInt32{depthwise.data()}, scratch.data());
    CHECK(depthwise == direct);
  }
}

TEST_CASE("depthwise_3x3 equals conv_integer on same 3x3 planes", "[quant]") {
  // Odd and even widths (an odd width's last output alone), one row, one column, the widest
  // ring row; several bands of rows (tall planes: 37 x 29 is 34 + 3 rows, 20 x 64 16 + 4);
  // per-channel weight zero points; uint8 and int8 inputs; extreme bytes.
  struct Case {
    int64_t c, h, w;
  };
  const Case cases[] = {{3, 25, 5}, {2, 4, 6}, {2, 1, 7}, {3, 6, 1}, {1, 3, 64}, {2, 37, 29}, {1, 20, 64}};
  std::mt19937 rng(31);
  std::uniform_int_distribution<int> byte(0, 255);
  auto check = [&](const Case& c, auto x_type) {
    using X = decltype(x_type);
    const rt::ConvParams p = {2, c.c, c.c, c.c, 1, c.h, c.w, 1, c.h, c.w, 1, 3, 3, 1, 1, 1, 1, 1, 1, 0, 1, 1};
    REQUIRE(rt::depthwise_3x3_applies(p));
    std::vector<X> x(static_cast<std::size_t>(2 * c.c * c.h * c.w));
    std::vector<int8_t> w(static_cast<std::size_t>(c.c * 9)), zw(static_cast<std::size_t>(c.c));
    for (auto& v : x) v = static_cast<X>(byte(rng));
    for (auto& v : w) v = static_cast<int8_t>(byte(rng) - 128);
    for (auto& v : zw) v = static_cast<int8_t>(byte(rng) % 7 - 3);
    x[0] = static_cast<X>(std::is_signed<X>::value ? -128 : 255), w[4] = -128;
    const X zx = static_cast<X>(std::is_signed<X>::value ? -9 : 99);
    const std::size_t outputs = x.size();
    std::vector<int32_t> direct(outputs), ring(outputs), plane(static_cast<std::size_t>(c.h * c.w));
    const rt::QuantOperand<X> xq{x.data(), &zx, 0};
    const rt::QuantOperand<int8_t> wq{w.data(), zw.data(), 1};
    rt::conv_integer(p, xq, wq, rt::StoreInt32{direct.data()}, plane.data());
    rt::depthwise_3x3(p, xq, wq, rt::StoreInt32{ring.data()});
    CHECK(ring == direct);
    // The M4's form by bands of rows (portable here).
    std::vector<int32_t> banded(outputs, -1);
    rt::detail::depthwise_3x3_dsp(p, xq, wq, rt::StoreInt32{banded.data()});
    CHECK(banded == direct);
  };
  for (const Case& c : cases) {
    check(c, uint8_t{});
    check(c, int8_t{});
  }
}

// ---- the lower-qdq pass on tests/models/quant/qdq_cnn (see its make.py) ----

namespace {

std::vector<std::string> op_types(const onnxc::Compilation& c) {
  std::vector<std::string> ops;
  for (const auto& n : c.model.graph.nodes) ops.push_back(n->op_type);
  return ops;
}

bool contains(const std::vector<std::string>& v, const char* s) { return std::find(v.begin(), v.end(), s) != v.end(); }

}  // namespace

TEST_CASE("lower-qdq turns DQ -> Conv/MatMul -> Q into integer ops with 1-byte activations", "[quant]") {
  const std::string path = std::string(ONNXC_TEST_DIR) + "/models/quant/qdq_cnn/model.onnx";
  const onnxc::Compilation lowered = onnxc::compile_model(path, {});
  const std::vector<std::string> ops = op_types(lowered);
  CHECK(std::count(ops.begin(), ops.end(), "QLinearConv") == 2);
  CHECK(std::count(ops.begin(), ops.end(), "QLinearMatMul") == 1);
  CHECK_FALSE(contains(ops, "Conv"));
  CHECK_FALSE(contains(ops, "MatMul"));
  CHECK_FALSE(contains(ops, "Relu"));  // Q's zero point 0 makes it redundant
  // The Reshape between conv2 and the MatMul moves uint8 data: only the input's Q and the
  // output's DQ remain.
  CHECK(std::count(ops.begin(), ops.end(), "QuantizeLinear") == 1);
  CHECK(std::count(ops.begin(), ops.end(), "DequantizeLinear") == 1);

  onnxc::CompileOptions off;
  off.disabled_passes.insert("lower-qdq");
  const onnxc::Compilation float_ops = onnxc::compile_model(path, off);
  CHECK(contains(op_types(float_ops), "Conv"));
  // Unlowered, the Convs, the Reshape and the MatMul are float steps between Q and DQ, and so are
  // the DQs and Qs among them; lowered, none is.
  std::vector<std::string> float_steps;
  for (const onnxc::FloatStep& f : onnxc::float_steps_between_integers(float_ops.model.graph))
    float_steps.push_back(f.node->op_type);
  CHECK(std::count(float_steps.begin(), float_steps.end(), "Conv") == 2);
  CHECK(std::count(float_steps.begin(), float_steps.end(), "Reshape") == 1);
  // (pack-weights computes the float MatMul by constant weights as a Gemm)
  CHECK(std::count(float_steps.begin(), float_steps.end(), "Gemm") == 1);
  CHECK(onnxc::float_steps_between_integers(lowered.model.graph).empty());
  // The largest live set: x and conv1's output as float ([1,3,8,8] + [1,8,8,8] * 4 bytes) versus
  // their uint8 versions plus one int32 accumulator plane ([8,8]) of scratch.
  CHECK(lowered.program.arena_bytes * 2 < float_ops.program.arena_bytes);
}

TEST_CASE("lower-qdq turns DQ -> Gemm (+ int32 bias, transB) -> Q into QLinearMatMulBias", "[quant]") {
  const std::string path = std::string(ONNXC_TEST_DIR) + "/models/quant/qdq_mlp/model.onnx";
  const std::vector<std::string> ops = op_types(onnxc::compile_model(path, {}));
  CHECK(std::count(ops.begin(), ops.end(), "QLinearMatMulBias") == 2);
  CHECK_FALSE(contains(ops, "Gemm"));
  CHECK_FALSE(contains(ops, "Relu"));
}

TEST_CASE("lower-qdq turns residual Adds, zero Pads and global average pools into integer ops", "[quant]") {
  // quantize.py on the corpus's resnet8-cifar: Add -> Relu -> Q after each block, a Pad of
  // zeros and an 8x8 AveragePool over the 8x8 planes before the classifier.
  const std::string path = std::string(ONNXC_TEST_DIR) + "/models/quant/resnet8_int8/model.onnx";
  const onnxc::Compilation lowered = onnxc::compile_model(path, {});
  const std::vector<std::string> ops = op_types(lowered);
  CHECK(std::count(ops.begin(), ops.end(), "QLinearAdd") == 3);
  CHECK(std::count(ops.begin(), ops.end(), "QLinearGlobalAveragePool") == 1);
  CHECK_FALSE(contains(ops, "Add"));
  CHECK_FALSE(contains(ops, "AveragePool"));
  CHECK_FALSE(contains(ops, "Relu"));
  // Only the input's Q and the classifier's DQ (Softmax reads float) remain.
  CHECK(std::count(ops.begin(), ops.end(), "QuantizeLinear") == 1);
  CHECK(std::count(ops.begin(), ops.end(), "DequantizeLinear") == 1);
  for (const auto& n : lowered.model.graph.nodes)
    if (n->op_type == "Pad") CHECK(n->inputs[0]->dtype == onnxc::DType::Uint8);
}

TEST_CASE("lower-qdq takes TensorRT's residual Adds into the products' requantization", "[quant]") {
  // make.py qdq_residual: three Convs, a Gemm and a MatMul whose float outputs only an Add with a
  // dequantized activation reads, the sum quantized (Relu or Clip before the Q, or after it).
  const std::string path = std::string(ONNXC_TEST_DIR) + "/models/quant/qdq_residual/model.onnx";
  const onnxc::Compilation lowered = onnxc::compile_model(path, {});
  const std::vector<std::string> ops = op_types(lowered);
  CHECK(std::count(ops.begin(), ops.end(), "QLinearConv") == 3);
  CHECK(std::count(ops.begin(), ops.end(), "QLinearMatMulBias") == 2);
  for (const char* op : {"Conv", "Gemm", "MatMul", "Add", "Relu", "Clip", "QLinearAdd"}) CHECK_FALSE(contains(ops, op));
  int residuals = 0, clamped = 0;
  for (const auto& n : lowered.model.graph.nodes) {
    const bool conv = n->op_type == "QLinearConv";
    if (!conv && n->op_type != "QLinearMatMulBias") continue;
    const std::size_t r = conv ? onnxc::kResidualInput : onnxc::kMatMulResidualInput;
    residuals += n->has_input(r);
    clamped += n->has_attr(onnxc::kResidualLowAttr) || n->has_attr(onnxc::kResidualHighAttr);
  }
  CHECK(residuals == 5);
  // c2's Relu after its Q and c3's Clip; c1's and m's Relus clamp nothing (their Qs' zero point is 0).
  CHECK(clamped == 2);
  CHECK(onnxc::float_steps_between_integers(lowered.model.graph).empty());
}

TEST_CASE("QLinearAdd: rescales both operands to the output scale, rounds ties to even, saturates", "[quant]") {
  // a_ratio = 0.5, b_ratio = 0.25; zero points 10, 20 -> 5.
  const rt::QLinearAdd add{0.5f, 0.25f, 10, 20, 5};
  CHECK(int(add(uint8_t(10), uint8_t(20))) == 5);     // 0 + 0
  CHECK(int(add(uint8_t(13), uint8_t(20))) == 7);     // 1.5 -> 2 (tie to even)
  CHECK(int(add(uint8_t(11), uint8_t(20))) == 5);     // 0.5 -> 0 (tie to even)
  CHECK(int(add(uint8_t(12), uint8_t(26))) == 7);     // 1 + 1.5 = 2.5 -> 2
  CHECK(int(add(uint8_t(255), uint8_t(255))) == 186); // 122.5 + 58.75 = 181.25 -> 181
  CHECK(int(add(uint8_t(0), uint8_t(0))) == 0);       // -5 - 5 = -10, + 5 saturates at 0
  const rt::QLinearAdd twice{2.0f, 1.0f, 0, 0, 5};
  CHECK(int(twice(uint8_t(255), uint8_t(255))) == 255);  // 765 + 5 saturates
  CHECK(int(twice(int8_t(-100), int8_t(-100))) == -128);  // -300 + 5 saturates
}

TEST_CASE("qlinear_global_average_pool averages each plane minus the zero point", "[quant]") {
  // Two planes of 4: sums of x - 3 are 2 and 10; multiplier 0.5 / 0.25 / 4 = 0.5 -> 1 and 5, + 7.
  const uint8_t x[8] = {3, 4, 3, 4, 5, 6, 7, 4};
  uint8_t y[2] = {};
  const float multiplier = rt::global_average_multiplier(0.5f, 0.25f, 4);
  CHECK(multiplier == 0.5f);
  rt::qlinear_global_average_pool<uint8_t>(2, 4, x, 3, multiplier, 7, y);
  CHECK(int(y[0]) == 8);
  CHECK(int(y[1]) == 12);
}

TEST_CASE("lower-qdq tabulates quantized activations and lowers Mul", "[quant]") {
  // make.py's qdq_activations: Sigmoid, Mul, HardSwish, LeakyRelu, Clip, Tanh, Add, MaxPool, all in QDQ.
  const std::string path = std::string(ONNXC_TEST_DIR) + "/models/quant/qdq_activations/model.onnx";
  const std::vector<std::string> ops = op_types(onnxc::compile_model(path, {}));
  // Sigmoid's table, and one for HardSwish -> LeakyRelu -> Clip -> Tanh (consecutive tables composed).
  CHECK(std::count(ops.begin(), ops.end(), "QLinearLookup") == 2);
  CHECK(std::count(ops.begin(), ops.end(), "QLinearMul") == 1);
  CHECK(std::count(ops.begin(), ops.end(), "QLinearAdd") == 1);
  for (const char* op : {"Sigmoid", "Mul", "HardSwish", "LeakyRelu", "Clip", "Tanh", "Add"}) CHECK_FALSE(contains(ops, op));
  // MaxPool runs on the quantized values: only the input's Q and the outputs' DQ remain.
  CHECK(std::count(ops.begin(), ops.end(), "QuantizeLinear") == 1);
  CHECK(std::count(ops.begin(), ops.end(), "DequantizeLinear") == 1);
}

TEST_CASE("QLinearMul and lookup on hand-computed values", "[quant]") {
  const rt::QLinearMul mul{0.25f, 10, 0, 3};  // (a - 10) * b * 0.25 + 3
  CHECK(int(mul(uint8_t(12), uint8_t(5))) == 5);    // 2 * 5 * 0.25 = 2.5 -> 2 (tie to even), + 3
  CHECK(int(mul(uint8_t(13), uint8_t(2))) == 5);    // 1.5 -> 2, + 3
  CHECK(int(mul(uint8_t(0), uint8_t(200))) == 0);   // -500 saturates
  int8_t table[256];
  for (int i = 0; i < 256; ++i) table[i] = static_cast<int8_t>(i - 128 == 127 ? -1 : -(i - 128) / 2);
  const int8_t x[3] = {-128, 0, 127};
  int8_t y[3];
  rt::lookup(x, table, y, 3);
  CHECK(int(y[0]) == 64);
  CHECK(int(y[1]) == 0);
  CHECK(int(y[2]) == -1);
}

// The float definition DQ -> Softmax -> Q in double, for rows of n along a stride `inner`.
template <class Q>
std::vector<int> softmax_reference(const std::vector<Q>& x, int n, int inner, double x_scale, double y_scale, int y_zero) {
  std::vector<int> y(x.size());
  for (std::size_t o = 0; o < x.size() / static_cast<std::size_t>(n * inner); ++o)
    for (int i = 0; i < inner; ++i) {
      const std::size_t base = o * static_cast<std::size_t>(n * inner) + static_cast<std::size_t>(i);
      double sum = 0;
      for (int j = 0; j < n; ++j) sum += std::exp(x[base + static_cast<std::size_t>(j * inner)] * x_scale);
      for (int j = 0; j < n; ++j) {
        const double p = std::exp(x[base + static_cast<std::size_t>(j * inner)] * x_scale) / sum;
        const double lo = std::numeric_limits<Q>::lowest(), hi = std::numeric_limits<Q>::max();
        y[base + static_cast<std::size_t>(j * inner)] = static_cast<int>(std::clamp(std::nearbyint(p / y_scale) + y_zero, lo, hi));
      }
    }
  return y;
}

template <class Q>
void check_qlinear_softmax(int outer, int n, int inner, double x_scale, float y_scale, int y_zero, std::mt19937& rng) {
  std::uniform_int_distribution<int> value(std::numeric_limits<Q>::lowest(), std::numeric_limits<Q>::max());
  std::vector<Q> x(static_cast<std::size_t>(outer * n * inner));
  for (Q& v : x) v = static_cast<Q>(value(rng));
  int bits = 23;  // as compiler/ops/quant_softmax.cpp chooses
  while ((int64_t{1} << bits) * n > (int64_t{1} << 30)) --bits;
  int32_t table[256];
  for (int d = 0; d < 256; ++d) table[d] = static_cast<int32_t>(std::nearbyint(std::ldexp(std::exp(-d * x_scale), bits)));
  std::vector<Q> y(x.size());
  rt::qlinear_softmax(x.data(), y.data(), outer, n, inner, table, y_scale, y_zero);
  const std::vector<int> expected = softmax_reference(x, n, inner, x_scale, y_scale, y_zero);
  int exact = 0;
  for (std::size_t k = 0; k < x.size(); ++k) {
    CHECK(std::abs(int(y[k]) - expected[k]) <= 1);
    exact += int(y[k]) == expected[k];
  }
  CHECK(exact >= static_cast<int>(x.size()) * 99 / 100);  // a step off only near a rounding tie
  rt::qlinear_softmax(x.data(), x.data(), outer, n, inner, table, y_scale, y_zero);  // in place
  CHECK(std::equal(x.begin(), x.end(), y.begin()));
}

TEST_CASE("qlinear_softmax is within a step of the float definition, rows along any stride", "[quant]") {
  std::mt19937 rng(29);
  // Contiguous rows (the last axis), strided rows (an inner axis), a one-element row, a long row
  // (fewer table bits), large and small input scales (the table underflows to 0 for large d).
  check_qlinear_softmax<uint8_t>(7, 10, 1, 0.1, 1.0f / 256, 0, rng);
  check_qlinear_softmax<uint8_t>(3, 197, 1, 0.05, 1.0f / 256, 0, rng);
  check_qlinear_softmax<int8_t>(2, 13, 5, 0.2, 1.0f / 256, -128, rng);
  check_qlinear_softmax<int8_t>(4, 1, 3, 0.1, 0.004f, -128, rng);
  check_qlinear_softmax<uint8_t>(1, 5000, 1, 0.01, 0.0005f, 3, rng);
  check_qlinear_softmax<uint8_t>(5, 33, 2, 0.003, 0.01f, 0, rng);
  // Hand-computed: logits (0, ln 3 / s) -> (1/4, 3/4); y_scale 1/256 gives 64 and 192.
  const double s = std::log(3.0) / 100;
  int32_t table[256];
  for (int d = 0; d < 256; ++d) table[d] = static_cast<int32_t>(std::nearbyint(std::ldexp(std::exp(-d * s), 23)));
  const uint8_t x[2] = {20, 120};
  uint8_t y[2];
  rt::qlinear_softmax(x, y, 1, 2, 1, table, 1.0f / 256, 0);
  CHECK(int(y[0]) == 64);
  CHECK(int(y[1]) == 192);
}

// ---- the QDQ canonicalisation on the placement generator's models (tests/models/quant/styles,
// written by styles.py; ctest's model.quant_style.* validate them against ONNX Runtime) ----

TEST_CASE("lower-qdq leaves no float step between integer steps, whatever the quantizer's placement", "[quant]") {
  const std::string dir = std::string(ONNXC_TEST_DIR) + "/models/quant/styles/";
  // Every style of resnet8-cifar (Conv, Relu, residual Add, Pad, AveragePool, Flatten, Gemm) and
  // the VWW MobileNetV1's Q/DQ on every tensor (Conv -> Q -> DQ -> Clip -> Q -> DQ -> Conv).
  for (const char* model : {"resnet8_qdq_u8_pt_fused", "resnet8_qdq_s8_pc_fused", "resnet8_qdq_u8_pc", "resnet8_qdq_s8_pt",
                            "resnet8_fx", "resnet8_qop", "vww_qdq_u8_pc"}) {
    INFO(model);
    const onnxc::Compilation c = onnxc::compile_model(dir + model + "/model.onnx", {});
    CHECK(onnxc::float_steps_between_integers(c.model.graph).empty());
    const std::vector<std::string> ops = op_types(c);
    for (const char* op : {"Conv", "Gemm", "Add", "Relu", "AveragePool", "GlobalAveragePool"}) CHECK_FALSE(contains(ops, op));
    // Only the input's Q and the classifier's DQ (Softmax reads float) remain.
    CHECK(std::count(ops.begin(), ops.end(), "QuantizeLinear") == 1);
    CHECK(std::count(ops.begin(), ops.end(), "DequantizeLinear") == 1);
  }
}

TEST_CASE("fuse-output-table merges the tables into the Convs on the M4 and M7 only; their blocks take free arena only", "[quant]") {
  const std::string vww = std::string(ONNXC_TEST_DIR) + "/models/quant/styles/vww_qdq_u8_pc/model.onnx";
  const auto compile_for = [](const std::string& path, const char* target) {
    onnxc::CompileOptions o;
    o.target = target;
    return onnxc::compile_model(path, o);
  };
  for (const char* target : {"cortex-m4", "cortex-m7"}) {
    const onnxc::Compilation c = compile_for(vww, target);
    const std::vector<std::string> ops = op_types(c);
    CHECK(std::count(ops.begin(), ops.end(), "QLinearConv") == 27);
    CHECK_FALSE(contains(ops, "QLinearLookup"));
    int64_t tables = 0;
    for (auto& n : c.model.graph.nodes) tables += n->has_input(onnxc::kOutputTableInput) ? 1 : 0;
    CHECK(tables == 27);
    CHECK(c.program.arena_bytes == 55296);  // (the int8 tensors' liveness bound: 18,432 + 36,864)
  }
  const onnxc::Compilation m55 = compile_for(vww, "cortex-m55");  // (Helium's lookup step stays)
  const std::vector<std::string> m55_ops = op_types(m55);
  CHECK(std::count(m55_ops.begin(), m55_ops.end(), "QLinearLookup") == 27);
  for (auto& n : m55.model.graph.nodes) CHECK_FALSE(n->has_attr(onnxc::kDspScratchAttr));
  // kws: every step reads one 8,000-byte tensor and writes another, no free byte: the M4's
  // working blocks stay on the stack and the arena is the two tensors.
  const onnxc::Compilation kws =
      compile_for(std::string(ONNXC_TEST_DIR) + "/models/quant/kws_dscnn_int8/model.onnx", "cortex-m4");
  int64_t blocks = 0;
  for (auto& n : kws.model.graph.nodes)
    if (n->has_attr(onnxc::kDspScratchAttr)) {
      ++blocks;
      CHECK(n->attr_int(onnxc::kDspScratchAttr, -1) == 0);
    }
  CHECK(blocks == 9);  // (four 1x1, four 3x3 depthwise, the first Conv's paired product)
  CHECK(kws.program.arena_bytes == 16000);
}

TEST_CASE("QDQ canonical forms: a Clip between Q/DQ pairs becomes one table, a requantization exact to ONNX", "[quant]") {
  // vww_qdq_u8_pc: each Conv's output quantized over its own range, Clip(0, 6)'s output over
  // [0, max]: DQ -> Clip -> Q is a requantizing table clamped to Q(0)..Q(6), one per Conv.
  const std::string path = std::string(ONNXC_TEST_DIR) + "/models/quant/styles/vww_qdq_u8_pc/model.onnx";
  const onnxc::Compilation c = onnxc::compile_model(path, {});
  const std::vector<std::string> ops = op_types(c);
  CHECK(std::count(ops.begin(), ops.end(), "QLinearConv") == 27);
  CHECK(std::count(ops.begin(), ops.end(), "QLinearLookup") == 27);
  CHECK_FALSE(contains(ops, "Clip"));
  // Clip and requantization are non-decreasing, so is each table; Clip(0, 6) maps the lowest
  // inputs (all negative in the Conv's range) to Q(0), the zero point 0 of uint8 [0, max].
  for (const auto& n : c.model.graph.nodes) {
    if (n->op_type != "QLinearLookup") continue;
    const onnxc::Tensor& table = *n->inputs[1]->constant;
    int increasing = 0;
    for (int v = 1; v < 256; ++v) increasing += table.bytes[static_cast<std::size_t>(v)] >= table.bytes[static_cast<std::size_t>(v - 1)];
    CHECK(increasing == 255);
    CHECK(int(table.bytes[0]) == 0);
  }
}

TEST_CASE("lower-qdq: attention, SE gates, Resize, Concat of other scales and window averages become integer", "[quant]") {
  const std::string dir = std::string(ONNXC_TEST_DIR) + "/models/quant/styles/";
  // styles.py's mobile net: only LayerNormalization (no integer form) stays float, between one DQ
  // and one Q; the attention's Softmax is QLinearSoftmax.
  for (const char* model : {"mobile_qdq_u8_pc", "mobile_qdq_s8_pc_fused", "mobile_fx"}) {
    INFO(model);
    const onnxc::Compilation c = onnxc::compile_model(dir + model + "/model.onnx", {});
    std::vector<std::string> floats;
    for (const onnxc::FloatStep& f : onnxc::float_steps_between_integers(c.model.graph))
      if (f.node->op_type != "QuantizeLinear" && f.node->op_type != "DequantizeLinear") floats.push_back(f.node->op_type);
    std::sort(floats.begin(), floats.end());
    CHECK(floats == std::vector<std::string>{"LayerNormalization"});
    const std::vector<std::string> ops = op_types(c);
    CHECK(std::count(ops.begin(), ops.end(), "QLinearSoftmax") == 1);
    for (const char* op : {"Conv", "Mul", "Add", "MatMul", "AveragePool", "Sigmoid", "HardSwish", "HardSigmoid", "Gelu",
                           "Softmax"})
      CHECK_FALSE(contains(ops, op));
    // The two attention products of activations (the Gemm is onnxc.QLinearMatMulBias).
    CHECK(std::count(ops.begin(), ops.end(), "QLinearMatMul") == 2);
    // Concat and Resize run on the 8-bit tensors (their outputs are 1-byte).
    for (const auto& n : c.model.graph.nodes)
      if (n->op_type == "Concat" || n->op_type == "Resize" || n->op_type == "Gather") CHECK(onnxc::dtype_size(n->outputs[0]->dtype) == 1);
  }
  // styles.py's pools: three AveragePools divide each window by its whole size (depthwise
  // QLinearConvs of ones); the one not counting its padding stays float.
  const onnxc::Compilation pools = onnxc::compile_model(dir + "pools_qdq_u8_pc/model.onnx", {});
  const std::vector<std::string> ops = op_types(pools);
  CHECK(std::count(ops.begin(), ops.end(), "QLinearConv") == 3);
  CHECK(std::count(ops.begin(), ops.end(), "AveragePool") == 1);
}

TEST_CASE("QDQ canonical forms: a Relu's clamp before a requantizing table is folded into it", "[quant]") {
  // Q/DQ on every tensor: Conv -> Q -> DQ -> Relu -> Q(other parameters) -> DQ. Relu moves onto the
  // 8-bit tensor (an integer Clip), DQ -> Q becomes a table; the table takes the clamp too.
  for (const char* model : {"kws_dscnn_qdq_u8_pc", "resnet8_qdq_u8_pc", "ad_autoencoder_qdq_u8_pc"}) {
    INFO(model);
    const onnxc::Compilation c =
        onnxc::compile_model(std::string(ONNXC_TEST_DIR) + "/models/quant/styles/" + model + "/model.onnx", {});
    const std::vector<std::string> ops = op_types(c);
    CHECK_FALSE(contains(ops, "Clip"));
    CHECK(contains(ops, "QLinearLookup"));
  }
}

TEST_CASE("QOperator and TFLite-converted int8 activations become uint8 (zero point + 128)", "[quant]") {
  // styles.py's tflite style: int8 activations through QLinearConv, QLinearAdd, QGemm,
  // QLinearGlobalAveragePool, Transpose, Pad and Flatten; the model's results are ONNX Runtime's
  // (ctest model.quant_style.*_tflite); here, that every activation the operators read is uint8.
  for (const char* model : {"kws_dscnn_tflite", "resnet8_tflite", "vww_tflite"}) {
    INFO(model);
    const onnxc::Compilation c =
        onnxc::compile_model(std::string(ONNXC_TEST_DIR) + "/models/quant/styles/" + model + "/model.onnx", {});
    int convs = 0;
    for (const auto& n : c.model.graph.nodes) {
      if (n->op_type != "QLinearConv") continue;
      ++convs;
      CHECK(n->inputs[0]->dtype == onnxc::DType::Uint8);
      CHECK(n->outputs[0]->dtype == onnxc::DType::Uint8);
      CHECK(n->inputs[3]->dtype == onnxc::DType::Int8);  // the weights stay int8
    }
    CHECK(convs > 0);
  }
}

// ---- rt::qresize_interpolate (onnxc.QLinearResize) against its definition in float64 ----

namespace {

// Per-axis tables of a Resize of `in` to `out` (rank 1 to 4), built here by hand: half_pixel
// linear taps (two per coordinate, edges clamped) along the axes in `blended`, the same
// coordinate elsewhere. Weights in fixed point of `bits` per blended axis (the dyadic ones of
// scale-2 upsampling are exact at any bits >= 2; others rounded, then the largest fixed so each
// coordinate's integers sum to 2^bits).
struct QResizeCase {
  std::vector<rt::index_t> out, taps, start, src;
  std::vector<int32_t> weight;
  int shift = 0;
};

QResizeCase qresize_tables(const std::vector<rt::index_t>& in, const std::vector<rt::index_t>& out,
                           const std::vector<bool>& blended, int bits) {
  QResizeCase c;
  c.out = out;
  std::vector<rt::index_t> stride(in.size(), 1);
  for (std::size_t d = in.size() - 1; d > 0; --d) stride[d - 1] = stride[d] * in[d];
  for (std::size_t d = 0; d < in.size(); ++d) {
    c.start.push_back(static_cast<rt::index_t>(c.src.size()));
    const rt::index_t k = blended[d] ? 2 : 1;
    c.taps.push_back(k);
    c.shift += blended[d] ? bits : 0;
    for (rt::index_t o = 0; o < out[d]; ++o) {
      if (!blended[d]) {
        c.src.push_back(o * in[d] / out[d] * stride[d]);
        c.weight.push_back(1);
        continue;
      }
      const double coord = (static_cast<double>(o) + 0.5) * static_cast<double>(in[d]) / static_cast<double>(out[d]) - 0.5;
      const double lo = std::floor(coord), frac = coord - lo;
      const rt::index_t i0 = std::clamp<rt::index_t>(static_cast<rt::index_t>(lo), 0, in[d] - 1);
      const rt::index_t i1 = std::clamp<rt::index_t>(static_cast<rt::index_t>(lo) + 1, 0, in[d] - 1);
      int32_t w1 = static_cast<int32_t>(std::nearbyint(frac * std::ldexp(1.0, bits)));
      c.src.push_back(i0 * stride[d]);
      c.src.push_back(i1 * stride[d]);
      c.weight.push_back((int32_t{1} << bits) - w1);
      c.weight.push_back(w1);
    }
  }
  return c;
}

// The definition: saturate(round_half_even(ratio * sum of W (x - zx) / 2^shift) + zy), in float64
// (exact for the integer weights: every product and sum is a dyadic rational of few bits).
template <class Q>
std::vector<Q> qresize_reference(const std::vector<Q>& x, const QResizeCase& c, int32_t zx, double ratio, int32_t zy,
                                 Q extrapolation) {
  const std::size_t rank = c.out.size();
  rt::index_t total = 1;
  for (rt::index_t n : c.out) total *= n;
  std::vector<Q> y(static_cast<std::size_t>(total));
  std::vector<rt::index_t> idx(rank, 0);
  for (rt::index_t e = 0; e < total; ++e) {
    // Every combination of the axes' taps.
    double sum = 0;
    bool inside = true;
    std::vector<rt::index_t> tap(rank, 0);
    for (;;) {
      rt::index_t offset = 0;
      double w = 1;
      for (std::size_t d = 0; d < rank; ++d) {
        const std::size_t at = static_cast<std::size_t>(c.start[d] + idx[d] * c.taps[d] + tap[d]);
        inside = inside && c.src[at] >= 0;
        offset += c.src[at];
        w *= c.weight[at];
      }
      if (inside) sum += w * (static_cast<double>(x[static_cast<std::size_t>(offset)]) - zx);
      std::size_t d = rank;
      while (d > 0 && ++tap[d - 1] == c.taps[d - 1]) tap[--d] = 0;
      if (d == 0) break;
    }
    const double v = std::nearbyint(ratio * std::ldexp(sum, -c.shift)) + zy;
    const double lo = std::numeric_limits<Q>::lowest(), hi = std::numeric_limits<Q>::max();
    y[static_cast<std::size_t>(e)] = inside ? static_cast<Q>(std::clamp(v, lo, hi)) : extrapolation;
    for (std::size_t d = rank; d > 0; --d) {
      if (++idx[d - 1] < c.out[d - 1]) break;
      idx[d - 1] = 0;
    }
  }
  return y;
}

template <class Q>
std::vector<Q> qresize_run(const std::vector<Q>& x, const QResizeCase& c, int32_t zx, float multiplier, int32_t zy,
                           Q extrapolation) {
  rt::index_t total = 1;
  for (rt::index_t n : c.out) total *= n;
  std::vector<Q> y(static_cast<std::size_t>(total));
  const rt::index_t rank = static_cast<rt::index_t>(c.out.size());
  const rt::index_t taps_h = rank >= 2 ? c.taps[static_cast<std::size_t>(rank - 2)] : 1;
  std::vector<rt::index_t> scratch(static_cast<std::size_t>(rt::qresize_scratch_bytes(taps_h, c.out.back())) / sizeof(rt::index_t) + 1);
  rt::qresize_interpolate(x.data(), y.data(), static_cast<int>(rank), c.out.data(), c.taps.data(), c.start.data(),
                          c.src.data(), c.weight.data(), c.shift, zx, multiplier, zy, extrapolation, scratch.data());
  return y;
}

template <class Q>
std::vector<Q> random_bytes(std::size_t n, std::mt19937& rng) {
  std::uniform_int_distribution<int> d(std::numeric_limits<Q>::lowest(), std::numeric_limits<Q>::max());
  std::vector<Q> v(n);
  for (Q& b : v) b = static_cast<Q>(d(rng));
  return v;
}

}  // namespace

TEST_CASE("qresize_interpolate rounds the fixed-point blend exactly when the scales are equal") {
  std::mt19937 rng(29);
  struct Shape { std::vector<rt::index_t> in, out; std::vector<bool> blended; int bits; };
  const std::vector<Shape> shapes = {
      {{1, 3, 5, 7}, {1, 3, 10, 14}, {false, false, true, true}, 11},  // bilinear x2: dyadic weights
      {{2, 1, 7}, {2, 1, 15}, {false, false, true}, 22},                 // one blended axis, odd output
      {{13}, {27}, {true}, 22},                                          // rank 1
      {{1, 2, 6, 1}, {1, 2, 11, 3}, {false, false, true, true}, 11},     // a column of width 1 widened
      {{1, 4, 9, 9}, {1, 4, 4, 5}, {false, false, true, true}, 9},       // shrinking, rounded weights
      {{3, 5, 4}, {3, 8, 4}, {false, true, false}, 11},                  // the last axis copied
  };
  for (const Shape& sh : shapes) {
    INFO("output of " << sh.out.size() << " axes, last " << sh.out.back());
    const QResizeCase c = qresize_tables(sh.in, sh.out, sh.blended, sh.bits);
    rt::index_t n = 1;
    for (rt::index_t d : sh.in) n *= d;
    for (int32_t zx : {0, 7, 128, 255}) {
      const std::vector<uint8_t> x = random_bytes<uint8_t>(static_cast<std::size_t>(n), rng);
      const int32_t zy = (zx * 3) % 256;
      CHECK(qresize_run(x, c, zx, 0.0f, zy, uint8_t{0}) == qresize_reference(x, c, zx, 1.0, zy, uint8_t{0}));
    }
    const std::vector<int8_t> x = random_bytes<int8_t>(static_cast<std::size_t>(n), rng);
    CHECK(qresize_run(x, c, -5, 0.0f, 3, int8_t{0}) == qresize_reference(x, c, -5, 1.0, 3, int8_t{0}));
  }
}

TEST_CASE("qresize_interpolate requantizes to other parameters within float rounding, and extrapolates") {
  std::mt19937 rng(30);
  QResizeCase c = qresize_tables({1, 2, 6, 5}, {1, 2, 9, 8}, {false, false, true, true}, 11);
  // tf_crop_and_resize's outside coordinates: a row and a column outside the input.
  c.src[static_cast<std::size_t>(c.start[2] + 2 * 8)] = -1;
  c.src[static_cast<std::size_t>(c.start[3] + 2 * 3)] = -1;
  const std::vector<uint8_t> x = random_bytes<uint8_t>(60, rng);
  for (double ratio : {0.37, 1.0 / 0.9, 1.9}) {
    const float multiplier = static_cast<float>(ratio * std::ldexp(1.0, -c.shift));
    const std::vector<uint8_t> got = qresize_run(x, c, 100, multiplier, 20, uint8_t{77});
    const std::vector<uint8_t> want = qresize_reference(x, c, 100, ratio, 20, uint8_t{77});
    int off = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      CHECK(std::abs(int(got[i]) - int(want[i])) <= 1);  // a float product near a tie
      off += got[i] != want[i];
    }
    CHECK(off <= 2);
    CHECK(got[8 * 8 + 3] == 77);  // in the row outside
    CHECK(got[3] == 77);          // in the column outside
  }
}

TEST_CASE("qresize_interpolate sums many vertical taps one row at a time, and clamps overshoots") {
  std::mt19937 rng(31);
  // A box filter of 80 rows (past kQuantResizeKeptRows) onto 2 rows, the weights 2^11 / 80 rounded
  // with the remainder on the first; then cubic-like negative weights that overshoot the range.
  QResizeCase c;
  c.out = {2, 3};
  c.taps = {80, 2};
  c.shift = 22;
  c.start = {0, 160};
  for (rt::index_t o = 0; o < 2; ++o)
    for (rt::index_t t = 0; t < 80; ++t) {
      c.src.push_back(((o * 40 + t) % 100) * 4);
      c.weight.push_back(t == 0 ? 2048 - 79 * 26 : 26);
    }
  for (rt::index_t o = 0; o < 3; ++o) {
    c.src.push_back(o);
    c.src.push_back(o + 1);
    c.weight.push_back(o == 1 ? 2048 + 700 : 1024);
    c.weight.push_back(o == 1 ? -700 : 1024);
  }
  std::vector<uint8_t> x = random_bytes<uint8_t>(400, rng);
  for (std::size_t i = 0; i < x.size(); i += 4) {
    x[i + 1] = 250;  // column 1 bright, column 2 dark: the negative tap pushes past 255
    x[i + 2] = 3;
  }
  REQUIRE(rt::kQuantResizeKeptRows < 80);
  CHECK(qresize_run(x, c, 9, 0.0f, 9, uint8_t{0}) == qresize_reference(x, c, 9, 1.0, 9, uint8_t{0}));
  CHECK(qresize_run(x, c, 9, 0.0f, 9, uint8_t{0})[1] == 255);
}
