// Kernel micro-benchmark: the packed-weight product of runtime-support (onnxc/packed_gemm.h) on
// 512^3 floats, and convolution layers of the model corpus through each kernel that computes
// them, against the single-core FMA peak, measured rather than taken from a datasheet.
// Build: c++ -std=c++17 -O3 -march=native -DONNXC_SIMD -I runtime-support/include bench/gemm_bench.cpp
// Prints `fma_peak_gflops: X`, `gemm_512_gflops: Y` and, per layer and kernel,
// `conv_gflops: <layer> | <kernel> | <us> | <GFLOP/s>` (medians over repeated runs; GFLOP/s counts
// the direct convolution's multiply-adds, so Winograd's can pass the peak).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include "onnxc/conv_channel_lanes.h"
#include "onnxc/packed_gemm.h"
#include "onnxc/winograd.h"

#if !defined(ONNXC_SIMD)
#error "build with -DONNXC_SIMD: this measures the SIMD kernels"
#endif

using onnxc::rt::index_t;
using onnxc::rt::vfloat;

namespace {

template <class F>
double median_seconds(int repeats, F f) {
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    auto start = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Independent FMA chains, enough of them (12) to hide the FMA latency on every current core;
// named variables rather than an array, so they stay in registers.
double fma_peak_gflops() {
  constexpr long kIterations = 200'000;  // short runs: on a shared machine the median is an unloaded one
  constexpr int kChains = 12;
  float sink = 0;
  double s = median_seconds(201, [&] {
    vfloat c0(0.f), c1(1.f), c2(2.f), c3(3.f), c4(4.f), c5(5.f), c6(6.f), c7(7.f), c8(8.f), c9(9.f), c10(10.f),
        c11(11.f);
    const vfloat a(0.999999f), b(1e-7f);
    for (long i = 0; i < kIterations; ++i) {
      c0 = xsimd::fma(c0, a, b), c1 = xsimd::fma(c1, a, b), c2 = xsimd::fma(c2, a, b), c3 = xsimd::fma(c3, a, b);
      c4 = xsimd::fma(c4, a, b), c5 = xsimd::fma(c5, a, b), c6 = xsimd::fma(c6, a, b), c7 = xsimd::fma(c7, a, b);
      c8 = xsimd::fma(c8, a, b), c9 = xsimd::fma(c9, a, b), c10 = xsimd::fma(c10, a, b), c11 = xsimd::fma(c11, a, b);
    }
    sink += xsimd::hadd(c0 + c1 + c2 + c3 + c4 + c5 + c6 + c7 + c8 + c9 + c10 + c11);
  });
  std::printf("(sink %g)\n", static_cast<double>(sink));
  return 2.0 * kChains * static_cast<double>(onnxc::rt::kFloatLanes) * kIterations / s / 1e9;
}

double gemm_gflops(index_t n) {
  std::vector<float> a(static_cast<std::size_t>(n * n)), packed(a.size()), b(a.size()), y(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<float>(i % 13) - 6.0f;
    b[i] = static_cast<float>(i % 11) - 5.0f;
  }
  onnxc::rt::pack_weights(a.data(), n, n, packed.data());
  double s = median_seconds(31, [&] {
    onnxc::rt::packed_gemm(n, n, n, packed.data(), b.data(), n, y.data(), n, nullptr, onnxc::rt::kNoActivation);
  });
  // One spot check, so a broken kernel cannot report a speed.
  float expected = 0;
  for (index_t l = 0; l < n; ++l) expected += a[static_cast<std::size_t>(3 * n + l)] * b[static_cast<std::size_t>(l * n + 5)];
  if (expected != y[static_cast<std::size_t>(3 * n + 5)]) {
    std::printf("error: wrong product\n");
    return 0;
  }
  return 2.0 * static_cast<double>(n) * n * n / s / 1e9;
}

// One convolution layer: 2-d, square, padding (k - 1) / 2, batch 1.
struct ConvLayer {
  const char* name;
  index_t in_channels, out_channels, size, kernel, stride;
};

onnxc::rt::ConvParams params_of(const ConvLayer& l) {
  const index_t pad = (l.kernel - 1) / 2, out = (l.size + 2 * pad - l.kernel) / l.stride + 1;
  return onnxc::rt::ConvParams{1, l.in_channels, l.out_channels, 1, 1, l.size, l.size, 1, out, out, 1, l.kernel,
                               l.kernel, 1, l.stride, l.stride, 1, 1, 1, 0, pad, pad};
}

// Each kernel that computes the layer (the matrix product with its fastest block, the in-place and
// Winograd ones where they apply), checked against rt::conv at one output before it is timed.
void conv_layer(const ConvLayer& l) {
  namespace rt = onnxc::rt;
  const rt::ConvParams p = params_of(l);
  const index_t k = rt::conv_gemm_k(p), n = rt::conv_gemm_n(p), m = p.out_channels;
  std::vector<float> x(static_cast<std::size_t>(p.in_channels * p.in_h * p.in_w)), w(static_cast<std::size_t>(m * k));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) * 0.25f - 0.75f;
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 5) * 0.125f - 0.25f;
  std::vector<float> bias(static_cast<std::size_t>(m), 0.5f), expected(static_cast<std::size_t>(m * n)), y(expected.size());
  std::vector<float> packed(w.size());
  rt::conv(p, x.data(), w.data(), bias.data(), expected.data());
  rt::pack_weights(w.data(), m, k, packed.data());
  const double flops = 2.0 * static_cast<double>(m) * k * n;
  auto report = [&](const char* kernel, auto run) {
    std::fill(y.begin(), y.end(), 0.0f);
    run();
    const std::size_t at = y.size() / 3;
    if (std::abs(y[at] - expected[at]) > 1e-3f * (1.0f + std::abs(expected[at]))) {
      std::printf("error: %s through %s gives %g at %zu, the reference %g\n", l.name, kernel, y[at], at, expected[at]);
      return;
    }
    const double s = median_seconds(n > 4096 ? 51 : 201, run);
    std::printf("conv_gflops: %s | %s | %.1f | %.1f\n", l.name, kernel, s * 1e6, flops / s / 1e9);
  };
  const index_t block = rt::packed_gemm_block_cols(k);
  std::vector<float> scratch(static_cast<std::size_t>(rt::conv_gemm_scratch_floats(p, block)));
  report("matrix product (scratch of the fastest block)", [&] {
    rt::conv_gemm(p, x.data(), packed.data(), bias.data(), y.data(), scratch.data(), block, rt::kNoActivation);
  });
  // The kernels the compiler weighs against the product on few output columns
  // (kDirectPackedMaxColumns, conv_prefers_channel_lanes).
  std::vector<float> direct(w.size());
  rt::pack_direct_weights(w.data(), m, k, direct.data());
  report("packed direct (conv_direct_packed, no scratch)",
         [&] { rt::conv_direct_packed(p, x.data(), direct.data(), bias.data(), y.data()); });
  std::vector<float> lanes(static_cast<std::size_t>(rt::channel_lanes_group_floats(p)));
  rt::pack_channel_lane_weights(w.data(), m, 1, k, lanes.data());
  report("channel lanes (conv_channel_lanes, scratch of the fastest block)", [&] {
    rt::conv_channel_lanes(p, x.data(), lanes.data(), bias.data(), y.data(), scratch.data(), block, rt::kNoActivation);
  });
  if (rt::kShiftedInputProduct && rt::conv_shape_reads_shifted_input(p))
    report("in place (conv_shifted, no scratch)",
           [&] { rt::conv_shifted(p, x.data(), packed.data(), bias.data(), y.data(), rt::kNoActivation); });
  if (rt::conv_fits_winograd(p)) {
    std::vector<float> u(static_cast<std::size_t>(16 * m * p.in_channels));
    rt::winograd_pack_weights(w.data(), m, p.in_channels, u.data());
    const index_t tw = rt::winograd_tiles_w(p), rows = std::max<index_t>(1, 65536 / (16 * p.in_channels * tw));
    const index_t group = rt::winograd_block_is_narrow(tw * std::min(rows, rt::winograd_tiles_h(p))) ? 32 : 8;
    std::vector<float> wscratch(static_cast<std::size_t>(rt::winograd_scratch_floats(p, rows, 1, group)));
    report("Winograd F(2x2, 3x3)", [&] {
      rt::conv_winograd(p, x.data(), u.data(), bias.data(), y.data(), wscratch.data(), rows, 1, rt::kNoActivation,
                        nullptr, group);
    });
  }
}

}  // namespace

int main() {
  std::printf("lanes: %d\n", static_cast<int>(onnxc::rt::kFloatLanes));
  std::printf("fma_peak_gflops: %.1f\n", fma_peak_gflops());
  std::printf("gemm_512_gflops: %.1f\n", gemm_gflops(512));
  // Layers of the corpus: resnet8-cifar's 3x3 ones, squeezenet1_1's first layer and 3x3 expands,
  // mobilenet_v2's 1x1 expansion and projection on 56 x 56 and 14 x 14, regnet_x_400mf's 7 x 7.
  const ConvLayer layers[] = {{"resnet8 16->16 3x3 32x32", 16, 16, 32, 3, 1},
                              {"resnet8 16->32 3x3/2 32x32", 16, 32, 32, 3, 2},
                              {"resnet8 64->64 3x3 8x8", 64, 64, 8, 3, 1},
                              {"squeezenet 3->64 3x3/2 224x224", 3, 64, 224, 3, 2},
                              {"squeezenet 16->64 3x3 55x55", 16, 64, 55, 3, 1},
                              {"squeezenet 64->256 3x3 13x13", 64, 256, 13, 3, 1},
                              {"mobilenet 24->144 1x1 56x56", 24, 144, 56, 1, 1},
                              {"mobilenet 144->24 1x1 56x56", 144, 24, 56, 1, 1},
                              // Small planes (issue #21: 1x1 products of 49 and 196 columns), and an odd one.
                              {"mobilenet 160->960 1x1 14x14", 160, 960, 14, 1, 1},
                              {"mobilenet 960->160 1x1 14x14", 960, 160, 14, 1, 1},
                              {"mobilenet 576->96 1x1 14x14", 576, 96, 14, 1, 1},
                              {"regnet 400->400 1x1 7x7", 400, 400, 7, 1, 1},
                              {"odd 200->300 1x1 19x19", 200, 300, 19, 1, 1},
                              // Few output columns (kDirectPackedMaxColumns: the packed direct kernel
                              // against the product, per vector width).
                              {"regnet 160->400 1x1/2 14x14", 160, 400, 14, 1, 2},
                              {"narrow 256->256 3x3 4x4", 256, 256, 4, 3, 1},
                              {"narrow 128->128 3x3/2 12x12", 128, 128, 12, 3, 2},
                              {"narrow 64->128 1x1 5x5", 64, 128, 5, 1, 1},
                              {"narrow 96->96 3x3 8x8", 96, 96, 8, 3, 1},
                              {"narrow 128->64 1x1/2 8x8", 128, 64, 8, 1, 2},
                              {"narrow 32->48 3x3 6x6", 32, 48, 6, 3, 1},
                              {"narrow 48->48 3x3 5x5", 48, 48, 5, 3, 1},
                              {"narrow 32->64 3x3 4x4", 32, 64, 4, 3, 1},
                              {"narrow 256->128 1x1 3x3", 256, 128, 3, 1, 1},
                              {"squeezenet 512->1000 1x1 13x13", 512, 1000, 13, 1, 1}};
  for (const ConvLayer& l : layers) conv_layer(l);
}
