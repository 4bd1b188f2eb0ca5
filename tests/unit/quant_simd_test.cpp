// The int8 kernels with per-ISA variants, against references written here.
// rt::depthwise_integer_any over the shape space against a direct sum: kernels
// k x k, 1 x k, k x 1, strides 1-3, dilations 1-2, paddings from none to past the kernel's
// reach, planes from 1 wide to wider than a 64-byte load, uint8 and int8 inputs, per-channel
// weight zero points, int32 and requantized outputs. onnxc_unit_tests runs the portable kernels
// (depthwise_integer, conv_integer); onnxc_simd_kernel_tests (-march=native) the AVX-512 VBMI
// byte-permute kernel where the build machine has it, onnxc_avx2_kernel_tests (-mavx2) the AVX2
// depthwise kernel (quant_depthwise_avx2.h), both through depthwise_integer_in_place.
// rt::lookup (table of 256) and per-tensor
// rt::quantize_linear over lengths around the vector widths.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "onnxc/eltwise.h"  // rt::zip (quant.h adds the AVX-512 QLinearAdd overload)
#include "onnxc/quant.h"

namespace rt = onnxc::rt;
using rt::index_t;

namespace {

struct Shape {
  index_t c, h, w, kh, kw, stride, dilation, pad_top, pad_left, pad_bottom, pad_right;
};

index_t out_size(index_t in, index_t k, index_t stride, index_t dilation, index_t pad_before, index_t pad_after) {
  return (in + pad_before + pad_after - dilation * (k - 1) - 1) / stride + 1;
}

// y[n, c, oh, ow] = sum over taps of (x - zx) * (w - zw[c]), x outside the plane skipped.
template <class X>
std::vector<int32_t> reference(const rt::ConvParams& p, const std::vector<X>& x, int32_t zx, const std::vector<int8_t>& w,
                               const std::vector<int8_t>& zw) {
  std::vector<int32_t> y(static_cast<std::size_t>(p.batch * p.out_channels * p.out_h * p.out_w));
  std::size_t i = 0;
  for (index_t n = 0; n < p.batch; ++n)
    for (index_t c = 0; c < p.out_channels; ++c)
      for (index_t oh = 0; oh < p.out_h; ++oh)
        for (index_t ow = 0; ow < p.out_w; ++ow, ++i) {
          int32_t sum = 0;
          for (index_t kh = 0; kh < p.k_h; ++kh)
            for (index_t kw = 0; kw < p.k_w; ++kw) {
              const index_t ih = oh * p.stride_h + kh * p.dilation_h - p.pad_h;
              const index_t iw = ow * p.stride_w + kw * p.dilation_w - p.pad_w;
              if (ih < 0 || ih >= p.in_h || iw < 0 || iw >= p.in_w) continue;
              const int32_t xv = static_cast<int32_t>(x[static_cast<std::size_t>(((n * p.in_channels + c) * p.in_h + ih) * p.in_w + iw)]);
              const int32_t wv = static_cast<int32_t>(w[static_cast<std::size_t>((c * p.k_h + kh) * p.k_w + kw)]);
              sum += (xv - zx) * (wv - zw[static_cast<std::size_t>(c)]);
            }
          y[i] = sum;
        }
  return y;
}

template <class X>
void check_shape(const Shape& s, std::mt19937& rng) {
  const index_t oh = out_size(s.h, s.kh, s.stride, s.dilation, s.pad_top, s.pad_bottom);
  const index_t ow = out_size(s.w, s.kw, s.stride, s.dilation, s.pad_left, s.pad_right);
  const rt::ConvParams p = {2, s.c, s.c, s.c, 1, s.h, s.w, 1, oh, ow, 1, s.kh, s.kw, 1, s.stride, s.stride,
                            1, s.dilation, s.dilation, 0, s.pad_top, s.pad_left};
  REQUIRE(rt::depthwise_integer_any_applies(p));
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<X> x(static_cast<std::size_t>(2 * s.c * s.h * s.w));
  std::vector<int8_t> w(static_cast<std::size_t>(s.c * s.kh * s.kw)), zw(static_cast<std::size_t>(s.c));
  for (auto& v : x) v = static_cast<X>(byte(rng));
  for (auto& v : w) v = static_cast<int8_t>(byte(rng) - 128);
  for (auto& v : zw) v = static_cast<int8_t>(byte(rng) % 7 - 3);
  // Extreme bytes in the first channel: the 16-bit products' range.
  for (index_t i = 0; i < s.h * s.w; ++i) x[static_cast<std::size_t>(i)] = static_cast<X>(i % 2 ? 255 : 0);
  for (index_t i = 0; i < s.kh * s.kw; ++i) w[static_cast<std::size_t>(i)] = -128;
  zw[0] = 127;
  const X zx = static_cast<X>(byte(rng));
  const std::vector<int32_t> expected = reference(p, x, static_cast<int32_t>(zx), w, zw);
  std::vector<int32_t> got(expected.size());
  std::vector<unsigned char> scratch(static_cast<std::size_t>(rt::depthwise_integer_any_scratch_bytes(p)) + 64);
  const rt::QuantOperand<X> xq{x.data(), &zx, 0};
  const rt::QuantOperand<int8_t> wq{w.data(), zw.data(), 1};
  rt::depthwise_integer_any(p, xq, wq, rt::StoreInt32{got.data()}, scratch.data());
  CHECK(got == expected);
  // Requantized, per-channel multipliers and bias: the requantization of the direct sums.
  std::vector<int32_t> bias(static_cast<std::size_t>(s.c));
  std::vector<rt::Requant> requant(static_cast<std::size_t>(s.c));
  for (std::size_t m = 0; m < bias.size(); ++m) {
    bias[m] = static_cast<int32_t>(m * 977) - 3000;
    requant[m] = rt::make_requant(0.0009f * static_cast<float>(m + 1));
  }
  std::vector<X> y(expected.size()), y_expected(expected.size());
  const index_t plane = oh * ow;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const std::size_t c = static_cast<std::size_t>(static_cast<index_t>(i) / plane % s.c);
    y_expected[i] = rt::requantize<X>(expected[i] + bias[c], requant[c], 5);
  }
  rt::depthwise_integer_any(p, xq, wq, rt::RequantizeOutput<X>{y.data(), bias.data(), requant.data(), 1, 5},
                            scratch.data());
  CHECK(y == y_expected);
  // Without scratch (depthwise_integer_in_place): the AVX-512 VBMI or AVX2 kernel where built,
  // conv_integer_direct in the portable build.
  std::vector<int32_t> in_place(expected.size(), -1);
  rt::depthwise_integer_in_place(p, xq, wq, rt::StoreInt32{in_place.data()});
  CHECK(in_place == expected);
  std::vector<X> y_in_place(expected.size());
  rt::depthwise_integer_in_place(p, xq, wq, rt::RequantizeOutput<X>{y_in_place.data(), bias.data(), requant.data(), 1, 5});
  CHECK(y_in_place == y_expected);
}

std::vector<Shape> shapes() {
  std::vector<Shape> all;
  for (index_t width : {1, 2, 3, 5, 7, 8, 12, 17, 24, 31, 33, 48, 70})
    for (index_t stride : {1, 2, 3})
      for (index_t k : {1, 3, 5}) {
        const index_t pad = k / 2;
        all.push_back({3, width % 9 + 3, width, k, k, stride, 1, pad, pad, pad, pad});
      }
  // "same" padding of even planes as quantizers write stride 2 (bottom/right only), dilation 2,
  // no padding, padding past the reach, 1 x k and k x 1, a 7 x 7 kernel.
  all.push_back({4, 48, 48, 3, 3, 2, 1, 0, 0, 1, 1});
  all.push_back({5, 6, 6, 3, 3, 2, 1, 0, 0, 1, 1});
  all.push_back({2, 13, 29, 3, 3, 1, 2, 2, 2, 2, 2});
  all.push_back({2, 13, 29, 3, 3, 2, 2, 2, 2, 2, 2});
  all.push_back({3, 9, 11, 3, 3, 1, 1, 0, 0, 0, 0});
  all.push_back({3, 9, 11, 3, 3, 1, 1, 4, 3, 2, 5});
  all.push_back({2, 10, 40, 1, 9, 1, 1, 0, 4, 0, 4});
  all.push_back({2, 40, 10, 9, 1, 2, 1, 4, 0, 4, 0});
  all.push_back({2, 20, 21, 7, 7, 2, 1, 3, 3, 3, 3});
  all.push_back({2, 25, 5, 3, 3, 1, 1, 1, 1, 1, 1});
  all.push_back({1, 3, 100, 2, 2, 2, 1, 0, 0, 0, 0});
  return all;
}

}  // namespace

TEST_CASE("depthwise_integer_any of every stride, dilation and padding matches the direct sum (uint8)", "[quant]") {
  std::mt19937 rng(7);
  for (const Shape& s : shapes()) {
    INFO("c " << s.c << " h " << s.h << " w " << s.w << " k " << s.kh << "x" << s.kw << " stride " << s.stride
              << " dilation " << s.dilation << " pads " << s.pad_top << "," << s.pad_left);
    check_shape<uint8_t>(s, rng);
  }
}

TEST_CASE("depthwise_integer_any of every stride, dilation and padding matches the direct sum (int8)", "[quant]") {
  std::mt19937 rng(8);
  for (const Shape& s : shapes()) {
    INFO("c " << s.c << " h " << s.h << " w " << s.w << " k " << s.kh << "x" << s.kw << " stride " << s.stride
              << " dilation " << s.dilation << " pads " << s.pad_top << "," << s.pad_left);
    check_shape<int8_t>(s, rng);
  }
}

#if defined(ONNXC_DEPTHWISE_PERMUTE_AVX512)
TEST_CASE("the byte-permute depthwise kernel takes every depthwise shape of the sweep", "[quant]") {
  for (const Shape& s : shapes()) {
    const rt::ConvParams p = {1, s.c, s.c, s.c, 1, s.h, s.w, 1, 1, 1, 1, s.kh, s.kw, 1, s.stride, s.stride,
                              1, s.dilation, s.dilation, 0, s.pad_top, s.pad_left};
    CHECK(rt::detail::depthwise_permute_applies(p));
  }
}
#endif

#if defined(ONNXC_DEPTHWISE_AVX2)
TEST_CASE("the AVX2 depthwise kernel takes every depthwise shape of the sweep", "[quant]") {
  for (const Shape& s : shapes()) {
    const index_t oh = out_size(s.h, s.kh, s.stride, s.dilation, s.pad_top, s.pad_bottom);
    const index_t ow = out_size(s.w, s.kw, s.stride, s.dilation, s.pad_left, s.pad_right);
    const rt::ConvParams p = {1, s.c, s.c, s.c, 1, s.h, s.w, 1, oh, ow, 1, s.kh, s.kw, 1, s.stride, s.stride,
                              1, s.dilation, s.dilation, 0, s.pad_top, s.pad_left};
    CHECK(rt::depthwise_avx2_applies(p));
  }
  // A plane beyond the stack budget is left to the kernels with scratch.
  const rt::ConvParams large = {1, 8, 8, 8, 1, 200, 200, 1, 200, 200, 1, 3, 3, 1, 1, 1, 1, 1, 1, 0, 1, 1};
  CHECK_FALSE(rt::depthwise_avx2_applies(large));
}
#endif

TEST_CASE("lookup reads the table at x less the type's lowest value, every length and byte", "[quant]") {
  std::mt19937 rng(9);
  std::uniform_int_distribution<int> byte(0, 255);
  auto check = [&](auto type) {
    using Q = decltype(type);
    std::vector<Q> table(256);
    for (int i = 0; i < 256; ++i) table[static_cast<std::size_t>(i)] = static_cast<Q>((i * 37 + 11) & 255);
    for (index_t n : {0, 1, 63, 64, 65, 127, 128, 256, 1000}) {
      std::vector<Q> x(static_cast<std::size_t>(n)), y(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<Q>(i < 256 ? i : static_cast<std::size_t>(byte(rng)));
      rt::lookup(x.data(), table.data(), y.data(), n);
      for (std::size_t i = 0; i < x.size(); ++i) {
        const int index = static_cast<int>(x[i]) - static_cast<int>(std::numeric_limits<Q>::lowest());
        REQUIRE(static_cast<int>(y[i]) == ((index * 37 + 11) & 255) - (std::numeric_limits<Q>::is_signed && ((index * 37 + 11) & 255) > 127 ? 256 : 0));
      }
    }
  };
  check(uint8_t{});
  check(int8_t{});
}

TEST_CASE("per-tensor quantize_linear rounds x / scale to nearest even and saturates, every length", "[quant]") {
  std::mt19937 rng(10);
  std::uniform_real_distribution<float> value(-40.0f, 40.0f);
  const float scale = 0.125f;  // ties at every 1/16
  for (index_t n : {1, 15, 16, 17, 64, 1000}) {
    std::vector<float> x(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = i % 3 ? value(rng) : static_cast<float>(static_cast<int>(i) - 300) / 16.0f;
    const rt::QuantLayout all = {1, 1, n, 1, 0, 0, 0};
    const uint8_t zp = 100;
    std::vector<uint8_t> y(x.size());
    rt::quantize_linear(all, x.data(), &scale, &zp, y.data());
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double rounded = std::nearbyint(static_cast<double>(x[i] / scale)) + 100.0;  // default mode: ties to even
      REQUIRE(static_cast<double>(y[i]) == std::min(255.0, std::max(0.0, rounded)));
    }
  }
}

TEST_CASE("QLinearAdd over two same-shape tensors equals the functor on every element", "[quant]") {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> byte(0, 255);
  auto check = [&](auto type, rt::QLinearAdd f) {
    using Q = decltype(type);
    for (index_t n : {1, 7, 8, 15, 16, 17, 31, 32, 33, 100, 4099}) {
      std::vector<Q> a(static_cast<std::size_t>(n)), b(a.size()), y(a.size());
      for (auto& v : a) v = static_cast<Q>(byte(rng));
      for (auto& v : b) v = static_cast<Q>(byte(rng));
      rt::zip(a.data(), b.data(), y.data(), n, f);
      for (std::size_t i = 0; i < a.size(); ++i) REQUIRE(y[i] == f(a[i], b[i]));
    }
  };
  check(uint8_t{}, rt::QLinearAdd{0.73f, 0.41f, 128, 120, 131});
  check(uint8_t{}, rt::QLinearAdd{0.5f, 0.25f, 0, 3, 0});  // ties
  check(int8_t{}, rt::QLinearAdd{1.3f, 0.9f, -3, 5, 0});
}

TEST_CASE("qconv_gemm (VNNI, AVX2 or portable tile) matches the direct sum of a one-group convolution", "[quant]") {
  // in channels, out channels, plane, kernel, stride, block columns: K not a multiple of 4, out
  // channels not a multiple of the 4-row tile, blocks of 16-64 columns and a last partial one.
  struct Case {
    index_t c, m, hw, k, stride, cols;
  };
  const Case cases[] = {{3, 8, 9, 3, 1, 32}, {16, 16, 8, 3, 1, 64}, {5, 7, 11, 3, 2, 16}, {32, 6, 5, 1, 1, 16},
                        {1, 4, 10, 5, 2, 48}};
  std::mt19937 rng(12);
  std::uniform_int_distribution<int> byte(0, 255);
  for (const Case& c : cases) {
    const index_t pad = c.k / 2, o = (c.hw + 2 * pad - c.k) / c.stride + 1;
    const rt::ConvParams p = {1, c.c, c.m, 1, 1, c.hw, c.hw, 1, o, o, 1, c.k, c.k, 1, c.stride, c.stride, 1, 1, 1,
                              0, pad, pad};
    std::vector<uint8_t> x(static_cast<std::size_t>(c.c * c.hw * c.hw));
    std::vector<int8_t> w(static_cast<std::size_t>(c.m * c.c * c.k * c.k));
    for (auto& v : x) v = static_cast<uint8_t>(byte(rng));
    for (auto& v : w) v = static_cast<int8_t>(byte(rng) - 128);
    w[0] = -128, x[0] = 255;
    const uint8_t zx = 77;
    std::vector<int32_t> expected(static_cast<std::size_t>(c.m * o * o)), got(expected.size());
    std::size_t i = 0;
    for (index_t m = 0; m < c.m; ++m)
      for (index_t oh = 0; oh < o; ++oh)
        for (index_t ow = 0; ow < o; ++ow, ++i)
          for (index_t ic = 0; ic < c.c; ++ic)
            for (index_t kh = 0; kh < c.k; ++kh)
              for (index_t kw = 0; kw < c.k; ++kw) {
                const index_t ih = oh * c.stride + kh - pad, iw = ow * c.stride + kw - pad;
                if (ih < 0 || ih >= c.hw || iw < 0 || iw >= c.hw) continue;
                expected[i] += (static_cast<int32_t>(x[static_cast<std::size_t>((ic * c.hw + ih) * c.hw + iw)]) - zx) *
                               w[static_cast<std::size_t>(((m * c.c + ic) * c.k + kh) * c.k + kw)];
              }
    std::vector<index_t> row_sums(static_cast<std::size_t>(c.m));
    rt::qconv_weight_row_sums(p, w.data(), row_sums.data());
    std::vector<uint8_t> scratch(static_cast<std::size_t>(rt::qconv_gemm_scratch_bytes(p, c.cols)));
    rt::qconv_gemm(p, x.data(), zx, w.data(), row_sums.data(), rt::StoreInt32{got.data()}, c.cols, scratch.data());
    CHECK(got == expected);
  }
}

namespace {

// rt::RequantizeAddOutput (TensorRT's residual taken into a QLinearConv) through every kernel this
// build has, against its definition computed here in double: clamp(round_half_even((acc + bias[m])
// * multiplier[m] + (r - zr) * r_multiplier) + zy, low, high). The multipliers are powers of two and
// 0.75, so float computes every value exactly and the ties (many) are the definition's, to even.
template <class Y, class T>
void check_residual(const rt::ConvParams& p, std::mt19937& rng, std::int32_t low, std::int32_t high) {
  std::uniform_int_distribution<int> byte(0, 255);
  const bool depthwise = p.group > 1;
  const index_t k = p.in_channels / p.group * p.k_h * p.k_w;
  std::vector<std::uint8_t> x(static_cast<std::size_t>(p.batch * p.in_channels * p.in_h * p.in_w));
  std::vector<std::int8_t> w(static_cast<std::size_t>(p.out_channels * k));
  for (auto& v : x) v = static_cast<std::uint8_t>(byte(rng));
  for (auto& v : w) v = static_cast<std::int8_t>(depthwise ? byte(rng) - 128 : byte(rng) % 17 - 8);
  const std::uint8_t zx = 93;
  const index_t plane = p.out_h * p.out_w;
  const std::size_t outputs = static_cast<std::size_t>(p.batch * p.out_channels * plane);
  std::vector<std::int32_t> acc(outputs), scratch_plane(static_cast<std::size_t>(plane));
  const rt::QuantOperand<std::uint8_t> xq{x.data(), &zx, 0};
  const rt::QuantOperand<std::int8_t> wq{w.data(), nullptr, 0};
  rt::conv_integer(p, xq, wq, rt::StoreInt32{acc.data()}, scratch_plane.data());
  std::vector<T> r(outputs);
  for (auto& v : r) v = static_cast<T>(byte(rng));
  const std::int32_t zr = std::numeric_limits<T>::is_signed ? 3 : 131;
  const std::int32_t zy = std::numeric_limits<Y>::is_signed ? -9 : 117;
  const float r_multiplier = 0.75f;
  std::vector<std::int32_t> bias(static_cast<std::size_t>(p.out_channels));
  std::vector<rt::Requant> requant(bias.size());
  for (std::size_t m = 0; m < bias.size(); ++m) {
    bias[m] = static_cast<std::int32_t>(m * 613 % 2001) - 1000;
    requant[m] = rt::make_requant(std::ldexp(1.0f, -9 - static_cast<int>(m % 3)));
  }
  std::vector<Y> expected(outputs);
  for (std::size_t i = 0; i < outputs; ++i) {
    const std::size_t m = static_cast<std::size_t>(static_cast<index_t>(i) / plane % p.out_channels);
    const double v = static_cast<double>(acc[i] + bias[m]) * std::ldexp(1.0, -9 - static_cast<int>(m % 3)) +
                     (static_cast<double>(r[i]) - zr) * 0.75;
    const double q = std::nearbyint(v) + zy;  // (the default rounding mode: ties to even)
    expected[i] = static_cast<Y>(std::min<double>(high, std::max<double>(low, q)));
  }
  const auto stage = [&](std::vector<Y>& y) {
    return rt::requantize_add(rt::RequantizeOutput<Y>{y.data(), bias.data(), requant.data(), 1, zy}, r.data(), zr,
                              r_multiplier, low, high);
  };
  std::vector<Y> y(outputs);
  rt::conv_integer(p, xq, wq, stage(y), scratch_plane.data());
  CHECK(y == expected);
  std::fill(y.begin(), y.end(), Y{0});
  rt::conv_integer_direct(p, xq, wq, stage(y));
  CHECK(y == expected);
  if (depthwise) {
    std::vector<unsigned char> scratch(static_cast<std::size_t>(rt::depthwise_integer_any_scratch_bytes(p)) + 64);
    std::fill(y.begin(), y.end(), Y{0});
    rt::depthwise_integer_any(p, xq, wq, stage(y), scratch.data());
    CHECK(y == expected);
    std::fill(y.begin(), y.end(), Y{0});
    rt::depthwise_integer_in_place(p, xq, wq, stage(y));  // (VBMI or AVX2 where built)
    CHECK(y == expected);
    return;
  }
  std::vector<index_t> row_sums(static_cast<std::size_t>(p.out_channels));
  rt::qconv_weight_row_sums(p, w.data(), row_sums.data());
  for (index_t cols : {16, 48}) {
    std::vector<std::uint8_t> scratch(static_cast<std::size_t>(rt::qconv_gemm_scratch_bytes(p, cols)));
    std::fill(y.begin(), y.end(), Y{0});
    rt::qconv_gemm(p, x.data(), zx, w.data(), row_sums.data(), stage(y), cols, scratch.data());
    CHECK(y == expected);
  }
#if defined(ONNXC_QCONV_VNNI)
  if (rt::qconv_vnni_applies(p)) {
    std::vector<std::int8_t> packed(static_cast<std::size_t>(rt::qconv_vnni_weights_bytes(p)));
    rt::qconv_vnni_pack_weights(p, w.data(), packed.data());
    std::fill(y.begin(), y.end(), Y{0});
    rt::qconv_vnni(p, x.data(), zx, packed.data(), row_sums.data(), stage(y));
    CHECK(y == expected);
  }
#endif
#if defined(ONNXC_QCONV_AVX2)
  if (rt::qconv_avx2_applies(p)) {
    std::vector<std::int32_t> packed(static_cast<std::size_t>(rt::qconv_avx2_weight_words(p)));
    rt::qconv_avx2_pack_weights(p, w.data(), packed.data());
    std::fill(y.begin(), y.end(), Y{0});
    rt::qconv_avx2(p, x.data(), zx, packed.data(), stage(y));
    CHECK(y == expected);
  }
#endif
}

}  // namespace

TEST_CASE("a residual added before the requantization (RequantizeAddOutput): every conv kernel, ties to even, clamps",
          "[quant]") {
  std::mt19937 rng(29);
  // One group: 5 -> 20 channels 3 x 3 on 9 x 20 (rows of 20: vectors and tails), batch 2; 1 x 1
  // 16 -> 33 on 8 x 8. Depthwise 16 channels 3 x 3 stride 2 on 13 x 29 and stride 1 on 7 x 40.
  const rt::ConvParams one_group = {2, 5, 20, 1, 1, 9, 20, 1, 9, 20, 1, 3, 3, 1, 1, 1, 1, 1, 1, 0, 1, 1};
  const rt::ConvParams pointwise = {1, 16, 33, 1, 1, 8, 8, 1, 8, 8, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0};
  const rt::ConvParams strided = {1, 16, 16, 16, 1, 13, 29, 1, 7, 15, 1, 3, 3, 1, 2, 2, 1, 1, 1, 0, 1, 1};
  const rt::ConvParams depthwise = {2, 16, 16, 16, 1, 7, 40, 1, 7, 40, 1, 3, 3, 1, 1, 1, 1, 1, 1, 0, 1, 1};
  for (const rt::ConvParams& p : {one_group, pointwise, strided, depthwise}) {
    check_residual<std::uint8_t, std::uint8_t>(p, rng, 0, 255);
    check_residual<std::uint8_t, std::int8_t>(p, rng, 117, 255);  // a Relu after the Q: the zero point up
    check_residual<std::int8_t, std::uint8_t>(p, rng, -9, 40);    // a Clip
    check_residual<std::int8_t, std::int8_t>(p, rng, -128, 127);
  }
}
