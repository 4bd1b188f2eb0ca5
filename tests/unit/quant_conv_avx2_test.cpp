// rt::qconv_avx2 (quant_conv_avx2.h, 16-bit products on AVX2) against the portable reference
// rt::conv_integer: int32 accumulators and requantized uint8 and int8 outputs (per-channel bias and
// multipliers, both ends saturating). Built in onnxc_avx2_kernel_tests (-mavx2) and
// onnxc_simd_kernel_tests (-march=native); the portable build has no AVX2 and skips it.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <vector>

#include "onnxc/quant.h"

namespace rt = onnxc::rt;
using rt::ConvParams;
using rt::index_t;

#if defined(ONNXC_QCONV_AVX2)
namespace {

template <class Y>
void check_requantized(const ConvParams& p, const std::vector<std::uint8_t>& x, std::uint8_t zx,
                       const std::vector<std::int8_t>& w, const std::vector<std::int32_t>& packed) {
  const std::size_t outputs = static_cast<std::size_t>(p.batch * p.out_channels * p.out_h * p.out_w);
  std::vector<std::int32_t> bias(static_cast<std::size_t>(p.out_channels));
  std::vector<rt::Requant> requant;
  for (index_t m = 0; m < p.out_channels; ++m) {
    bias[static_cast<std::size_t>(m)] = static_cast<std::int32_t>(m * 997 % 4001) - 2000;
    requant.push_back(rt::make_requant(0.0004f * static_cast<float>(m + 1)));
  }
  const std::int32_t zy = std::numeric_limits<Y>::is_signed ? -5 : 121;
  std::vector<Y> reference(outputs), y(outputs);
  std::vector<std::int32_t> plane(static_cast<std::size_t>(p.out_h * p.out_w));
  rt::conv_integer(p, rt::QuantOperand<std::uint8_t>{x.data(), &zx, 0}, rt::QuantOperand<std::int8_t>{w.data(), nullptr, 0},
                   rt::RequantizeOutput<Y>{reference.data(), bias.data(), requant.data(), 1, zy}, plane.data());
  rt::qconv_avx2(p, x.data(), zx, packed.data(), rt::RequantizeOutput<Y>{y.data(), bias.data(), requant.data(), 1, zy});
  CHECK(y == reference);
}

}  // namespace

TEST_CASE("qconv_avx2 equals conv_integer: odd channels, tails, strides, dilation, padding, zero points") {
  // in channels (odd ones leave half a pair), out channels (not multiples of the 4-channel tile),
  // input height x width, kernel h x w, stride h x w, pad, dilation; batch 2. The 1x1 stride-1
  // cases walk the plane flat (a last block of fewer than 16 positions); the others by rows,
  // eight-lane vectors for rows of up to 8 outputs and two vectors beyond; one input channel pairs
  // kernel rows.
  struct Case {
    index_t c, m, h, w, kh, kw, sh, sw, pad, dilation;
  };
  const Case cases[] = {{3, 5, 9, 20, 3, 3, 1, 1, 1, 1},    {5, 20, 11, 37, 3, 3, 2, 2, 1, 1},
                        {8, 33, 8, 8, 1, 1, 1, 1, 0, 1},    {7, 9, 25, 5, 1, 1, 1, 1, 0, 1},
                        {64, 64, 25, 5, 1, 1, 1, 1, 0, 1},  {6, 16, 10, 24, 3, 3, 1, 1, 2, 2},
                        {1, 7, 5, 40, 5, 5, 2, 2, 2, 1},    {16, 17, 12, 18, 1, 1, 2, 2, 0, 1},
                        {1, 64, 49, 10, 10, 4, 2, 2, 4, 1}, {12, 40, 6, 16, 3, 1, 1, 2, 1, 1},
                        {16, 33, 8, 8, 3, 3, 1, 1, 1, 1},   {9, 20, 16, 16, 3, 3, 2, 2, 1, 1},
                        {3, 5, 9, 6, 3, 3, 1, 1, 0, 1},     {5, 7, 7, 7, 3, 3, 2, 2, 1, 1},
                        {6, 17, 5, 6, 3, 3, 1, 1, 1, 2},    {3, 8, 13, 13, 3, 3, 3, 3, 1, 1},
                        {2, 3, 1, 1, 1, 1, 1, 1, 0, 1},     {4, 4, 3, 3, 3, 3, 1, 1, 2, 1},
                        // One input channel: pairs of kernel rows (odd k_h: the last pair's second half 0).
                        {1, 6, 9, 11, 3, 3, 1, 1, 1, 2},    {1, 9, 12, 12, 5, 2, 2, 1, 2, 1}};
  std::mt19937 rng(29);
  std::uniform_int_distribution<int> byte(0, 255);
  for (const Case& c : cases) {
    const index_t oh = (c.h + 2 * c.pad - c.dilation * (c.kh - 1) - 1) / c.sh + 1;
    const index_t ow = (c.w + 2 * c.pad - c.dilation * (c.kw - 1) - 1) / c.sw + 1;
    const ConvParams p = {2, c.c, c.m, 1, 1, c.h, c.w, 1, oh, ow, 1, c.kh, c.kw, 1, c.sh, c.sw,
                          1, c.dilation, c.dilation, 0, c.pad, c.pad};
    INFO("c " << c.c << " m " << c.m << " plane " << c.h << "x" << c.w << " kernel " << c.kh << "x" << c.kw << " stride "
              << c.sh << "x" << c.sw << " pad " << c.pad << " dilation " << c.dilation);
    REQUIRE(rt::qconv_avx2_applies(p));
    std::vector<std::uint8_t> x(static_cast<std::size_t>(2 * c.c * c.h * c.w));
    std::vector<std::int8_t> w(static_cast<std::size_t>(c.m * c.c * c.kh * c.kw));
    for (auto& v : x) v = static_cast<std::uint8_t>(byte(rng));
    for (auto& v : w) v = static_cast<std::int8_t>(byte(rng) - 128);  // -128 included: |w| up to 128
    std::vector<std::int32_t> packed(static_cast<std::size_t>(rt::qconv_avx2_weight_words(p)));
    rt::qconv_avx2_pack_weights(p, w.data(), packed.data());
    for (const std::uint8_t zx : {std::uint8_t{0}, std::uint8_t{101}, std::uint8_t{255}}) {
      const std::size_t outputs = static_cast<std::size_t>(2 * c.m * oh * ow);
      std::vector<std::int32_t> reference(outputs), y(outputs, -1), plane(static_cast<std::size_t>(oh * ow));
      rt::conv_integer(p, rt::QuantOperand<std::uint8_t>{x.data(), &zx, 0}, rt::QuantOperand<std::int8_t>{w.data(), nullptr, 0},
                       rt::StoreInt32{reference.data()}, plane.data());
      rt::qconv_avx2(p, x.data(), zx, packed.data(), rt::StoreInt32{y.data()});
      CHECK(y == reference);
    }
    check_requantized<std::uint8_t>(p, x, 37, w, packed);
    check_requantized<std::int8_t>(p, x, 200, w, packed);
  }
}

TEST_CASE("qconv_avx2 does not apply where its input rows outgrow the stack buffer") {
  const ConvParams deep = {1, 512, 8, 1, 1, 14, 14, 1, 14, 14, 1, 3, 3, 1, 1, 1, 1, 1, 1, 0, 1, 1};
  CHECK_FALSE(rt::qconv_avx2_applies(deep));
  const ConvParams grouped = {1, 8, 8, 2, 1, 8, 8, 1, 8, 8, 1, 3, 3, 1, 1, 1, 1, 1, 1, 0, 1, 1};
  CHECK_FALSE(rt::qconv_avx2_applies(grouped));
}
#endif
