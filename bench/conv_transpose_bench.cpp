// ConvTranspose kernels side by side (no scratch from the arena): the stride phases
// (rt::conv_transpose_phases_simd) against the product plus col2im with its columns on the stack
// (rt::conv_transpose_gemm_stacked), and the product with the whole image's columns in scratch
// (rt::conv_transpose_gemm, what --scratch speed gives), over the operator sweep's ConvTranspose
// grid and more shapes; with the cost-model estimates fit-scratch chooses between the first two
// by. Each round runs every kernel once per shape, alternated, timed in thread CPU time (the
// machine is shared); the medians of the rounds are printed.
// Build: c++ -std=c++17 -O3 -march=native -DONNXC_SIMD -I runtime-support/include bench/conv_transpose_bench.cpp
// Run:   ./a.out [ROUNDS]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "thread_time.h"
#include "onnxc/conv_transpose_gemm.h"
#include "onnxc/conv_transpose_phases_simd.h"

#if !defined(ONNXC_SIMD)
#error "build with -DONNXC_SIMD: this measures the SIMD kernels"
#endif

using onnxc::rt::ConvParams;
using onnxc::rt::index_t;

namespace {

using bench::us_per_run;

struct Shape {
  index_t batch, c, m, group, h, w, k, stride, pad, output_padding;
};

ConvParams params(const Shape& s) {
  auto out = [&](index_t in) { return (in - 1) * s.stride - 2 * s.pad + s.k + s.output_padding; };
  return ConvParams{s.batch, s.c, s.m, s.group, 1, s.h, s.w, 1, out(s.h), out(s.w), 1, s.k, s.k, 1, s.stride, s.stride,
                    1, 1, 1, 0, s.pad, s.pad};
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
  // The sweep's (bench/sweep/cases.py) ConvTransposes that need columns, then more of the space:
  // few and many output channels, deep and shallow inputs, kernels 2-5 at strides 1-4.
  const std::vector<Shape> shapes = {
      {1, 64, 32, 1, 28, 28, 2, 2, 0, 0},   {1, 256, 128, 1, 14, 14, 4, 2, 1, 0}, {1, 16, 16, 16, 56, 56, 4, 2, 1, 0},
      {1, 3, 8, 1, 32, 32, 3, 2, 1, 1},     {1, 512, 256, 1, 7, 7, 3, 2, 1, 1},   {4, 32, 16, 1, 32, 32, 2, 2, 0, 0},
      {1, 128, 32, 1, 7, 7, 4, 4, 1, 0},    {1, 128, 16, 1, 7, 7, 3, 2, 0, 0},    {1, 8, 8, 1, 28, 28, 2, 2, 0, 1},
      {1, 256, 1, 1, 28, 28, 3, 2, 1, 0},   {4, 16, 16, 16, 112, 112, 3, 2, 0, 0}, {4, 1, 1, 1, 112, 112, 3, 2, 1, 1},
      {1, 8, 16, 1, 56, 56, 2, 2, 0, 0},    {1, 32, 1, 1, 1, 1, 4, 4, 0, 1},      {4, 32, 128, 1, 7, 7, 3, 1, 0, 0},
      {1, 64, 8, 1, 28, 28, 5, 2, 0, 0},
      // beyond the sweep
      {1, 64, 1, 1, 56, 56, 3, 2, 1, 1},    {1, 128, 3, 1, 32, 32, 4, 2, 1, 0},   {1, 32, 2, 1, 64, 64, 3, 2, 1, 1},
      {1, 512, 4, 1, 14, 14, 3, 2, 1, 1},   {1, 1024, 512, 1, 4, 4, 3, 2, 1, 1},  {1, 256, 256, 1, 8, 8, 4, 2, 1, 0},
      {1, 512, 256, 1, 14, 14, 2, 2, 0, 0}, {1, 256, 128, 1, 28, 28, 2, 2, 0, 0}, {1, 128, 64, 1, 28, 28, 3, 2, 1, 1},
      {1, 64, 32, 1, 56, 56, 4, 2, 1, 0},   {1, 96, 48, 1, 20, 20, 3, 1, 1, 0},   {1, 200, 100, 1, 9, 9, 5, 3, 2, 2},
      {1, 32, 64, 1, 16, 16, 3, 2, 1, 1},   {2, 48, 24, 1, 30, 30, 4, 4, 0, 0},   {1, 1024, 1024, 1, 2, 2, 2, 2, 0, 0},
      {1, 16, 3, 1, 128, 128, 4, 2, 1, 0},
  };
  std::printf("shape | phases us | stacked us | scratch us | stacked/phases | model stacked/phases\n");
  for (const Shape& s : shapes) {
    const ConvParams p = params(s);
    if (!onnxc::rt::conv_transpose_phases_simd_apply(p) || !onnxc::rt::conv_transpose_stack_applies(p)) continue;
    const index_t icg = p.in_channels / p.group, weights = p.in_channels * (p.out_channels / p.group) * p.k_h * p.k_w;
    std::vector<float> x(static_cast<std::size_t>(p.batch * p.in_channels * p.in_h * p.in_w)), w(weights), bias(p.out_channels);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 13) * 0.1f - 0.6f;
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 7) * 0.05f - 0.15f;
    std::vector<float> phased(weights), packed(weights),
        t(static_cast<std::size_t>(onnxc::rt::conv_transpose_gemm_rows(p) * icg)),
        y(static_cast<std::size_t>(p.batch * p.out_channels * p.out_h * p.out_w)),
        cols(static_cast<std::size_t>(onnxc::rt::conv_transpose_gemm_scratch_floats(p, p.in_h)) + 1);
    onnxc::rt::pack_conv_transpose_phase_weights(p, w.data(), phased.data());
    onnxc::rt::pack_conv_transpose_weights(p, w.data(), t.data(), packed.data());
    std::vector<double> a, b, c;
    for (int r = 0; r < rounds; ++r) {
      a.push_back(us_per_run([&] {
        onnxc::rt::conv_transpose_phases_simd(p, x.data(), phased.data(), bias.data(), y.data());
      }));
      b.push_back(us_per_run([&] {
        onnxc::rt::conv_transpose_gemm_stacked(p, x.data(), packed.data(), bias.data(), y.data(),
                                               onnxc::rt::kNoActivation);
      }));
      c.push_back(us_per_run([&] {
        onnxc::rt::conv_transpose_gemm(p, x.data(), packed.data(), bias.data(), y.data(), cols.data(), p.in_h,
                                       onnxc::rt::kNoActivation);
      }));
    }
    auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    const double model_phases = onnxc::rt::conv_transpose_phases_cost(p, onnxc::rt::kFloatLanes, onnxc::rt::kVectorRegisters);
    const double model_stacked = onnxc::rt::conv_transpose_stacked_cost(p, onnxc::rt::kFloatLanes, onnxc::rt::kVectorRegisters);
    std::printf("n%ld c%ld o%ld g%ld %ldx%ld k%ld s%ld p%ld op%ld | %.1f | %.1f | %.1f | %.2f | %.2f\n",
                static_cast<long>(s.batch), static_cast<long>(s.c), static_cast<long>(s.m), static_cast<long>(s.group),
                static_cast<long>(s.h), static_cast<long>(s.w), static_cast<long>(s.k), static_cast<long>(s.stride),
                static_cast<long>(s.pad), static_cast<long>(s.output_padding), median(a), median(b), median(c),
                median(b) / median(a), model_stacked / model_phases);
    std::fflush(stdout);
  }
  return 0;
}
