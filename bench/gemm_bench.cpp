// GEMM micro-benchmark: the packed-weight product of runtime-support (onnxc/packed_gemm.h) on
// 512^3 floats against the single-core FMA peak, measured rather than taken from a datasheet.
// Build: c++ -std=c++17 -O3 -march=native -DONNXC_SIMD -I runtime-support/include bench/gemm_bench.cpp
// Prints `fma_peak_gflops: X` and `gemm_512_gflops: Y` (medians over repeated runs).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "onnxc/packed_gemm.h"

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

}  // namespace

int main() {
  std::printf("lanes: %d\n", static_cast<int>(onnxc::rt::kFloatLanes));
  std::printf("fma_peak_gflops: %.1f\n", fma_peak_gflops());
  std::printf("gemm_512_gflops: %.1f\n", gemm_gflops(512));
}
