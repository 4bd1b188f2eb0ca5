// One-group Conv kernels that need no scratch from the arena, side by side: the packed direct
// kernel (rt::conv_direct_packed) against the matrix product over im2col blocks on the stack
// (rt::conv_gemm_stacked), and conv_gemm with the whole image's im2col in scratch (what --scratch
// speed gives), over the operator sweep's dense conv2d shapes (bench/sweep/cases.py) given as
// sweep case names; with the cost-model estimates fit-scratch chooses between the first two by.
// Each round runs every kernel once per shape, alternated, timed in thread CPU time (the machine
// is shared); the medians of the rounds are printed. Every kernel's output is checked against
// the reference loops (rt::conv) first.
// Build: c++ -std=c++17 -O3 -march=native -DONNXC_SIMD -I runtime-support/include bench/conv_gemm_stacked_bench.cpp
// Run:   ./a.out ROUNDS CASE_NAME...   (e.g. conv2d_n1_c512_o512_14x14_k3x3_s2x2_d1x1_same_relu)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "thread_time.h"
#include "onnxc/conv.h"
#include "onnxc/conv_gemm_stacked.h"

#if !defined(ONNXC_SIMD)
#error "build with -DONNXC_SIMD: this measures the SIMD kernels"
#endif

using onnxc::rt::ConvParams;
using onnxc::rt::index_t;

namespace {

using bench::us_per_run;

// conv2d_nN_cC_oM_HxW_kKHxKW_sSxS_dDxD_{same,valid}_ACT (one group) as the kernels' geometry;
// 'same' pads as SAME_UPPER (the smaller half before).
bool parse(const char* name, ConvParams& p) {
  long n, c, m, h, w, kh, kw, sh, sw, dh, dw;
  char pad[8] = {};
  if (std::sscanf(name, "conv2d_n%ld_c%ld_o%ld_%ldx%ld_k%ldx%ld_s%ldx%ld_d%ldx%ld_%5[a-z]", &n, &c, &m, &h, &w, &kh,
                  &kw, &sh, &sw, &dh, &dw, pad) != 12)
    return false;
  const bool same = pad[0] == 's';
  auto out = [&](long in, long k, long s, long d) { return same ? (in + s - 1) / s : (in - (k - 1) * d - 1) / s + 1; };
  auto before = [&](long in, long k, long s, long d, long o) {
    const long total = (o - 1) * s + (k - 1) * d + 1 - in;
    return same && total > 0 ? total / 2 : 0;
  };
  const long oh = out(h, kh, sh, dh), ow = out(w, kw, sw, dw);
  p = ConvParams{n, c, m, 1, 1, h, w, 1, oh, ow, 1, kh, kw, 1, sh, sw, 1, dh, dw, 0, before(h, kh, sh, dh, oh),
                 before(w, kw, sw, dw, ow)};
  return oh > 0 && ow > 0;
}

// The largest difference from the reference, relative to the reference's largest magnitude (the
// kernels sum in other orders: the stacked one per block of depth).
double max_error(const std::vector<float>& a, const std::vector<float>& reference) {
  double e = 0, scale = 1e-30;
  for (std::size_t i = 0; i < a.size(); ++i) {
    e = std::max(e, static_cast<double>(std::fabs(a[i] - reference[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(reference[i])));
  }
  return e / scale;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
  {  // the machine now: packed_gemm 512^3 (247 GFLOP/s on the idle machine, bench/gemm_bench)
    const index_t d = 512;
    std::vector<float> a(d * d, 0.5f), b(d * d, 0.25f), c(d * d), packed(d * d);
    onnxc::rt::pack_weights(a.data(), d, d, packed.data());
    const double us = us_per_run([&] {
      onnxc::rt::packed_gemm(d, d, d, packed.data(), b.data(), d, c.data(), d, nullptr, onnxc::rt::kNoActivation);
    });
    std::printf("packed_gemm 512^3: %.1f us, %.1f GFLOP/s\n", us, 2.0 * d * d * d / us * 1e-3);
  }
  std::printf("case | direct us | stacked us | scratch us | stacked/direct | model stacked/direct\n");
  for (int a = 2; a < argc; ++a) {
    ConvParams p;
    if (!parse(argv[a], p) || !onnxc::rt::conv_stack_im2col_applies(p)) {
      std::printf("%s | not a one-group 2-d case\n", argv[a]);
      continue;
    }
    const index_t k = onnxc::rt::conv_gemm_k(p), n = onnxc::rt::conv_gemm_n(p);
    std::vector<float> x(static_cast<std::size_t>(p.batch * p.in_channels * p.in_h * p.in_w)),
        w(static_cast<std::size_t>(p.out_channels * k)), bias(static_cast<std::size_t>(p.out_channels));
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 13) * 0.1f - 0.6f;
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 7) * 0.05f - 0.15f;
    for (std::size_t i = 0; i < bias.size(); ++i) bias[i] = static_cast<float>(i % 5) * 0.1f;
    std::vector<float> direct(w.size()), packed(w.size()), y(static_cast<std::size_t>(p.batch * p.out_channels * n)),
        reference(y.size()), cols(static_cast<std::size_t>(k * n));
    onnxc::rt::pack_direct_weights(w.data(), p.out_channels, k, direct.data());
    onnxc::rt::pack_weights(w.data(), p.out_channels, k, packed.data());
    onnxc::rt::conv(p, x.data(), w.data(), bias.data(), reference.data());
    auto run_direct = [&] { onnxc::rt::conv_direct_packed(p, x.data(), direct.data(), bias.data(), y.data()); };
    auto run_stacked = [&] {
      onnxc::rt::conv_gemm_stacked(p, x.data(), packed.data(), bias.data(), y.data(), onnxc::rt::kNoActivation);
    };
    auto run_scratch = [&] {
      onnxc::rt::conv_gemm(p, x.data(), packed.data(), bias.data(), y.data(), cols.data(), n, onnxc::rt::kNoActivation);
    };
    double errors[3];
    run_direct(), errors[0] = max_error(y, reference);
    run_stacked(), errors[1] = max_error(y, reference);
    run_scratch(), errors[2] = max_error(y, reference);
    std::vector<double> t[3];
    for (int r = 0; r < rounds; ++r) {
      t[0].push_back(us_per_run(run_direct));
      t[1].push_back(us_per_run(run_stacked));
      t[2].push_back(us_per_run(run_scratch));
    }
    auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    const double model_direct = onnxc::rt::conv_direct_packed_cost(p, onnxc::rt::kFloatLanes, onnxc::rt::kVectorRegisters);
    const double model_stacked = onnxc::rt::conv_gemm_stacked_cost(p, onnxc::rt::kFloatLanes, onnxc::rt::kVectorRegisters);
    std::printf("%s | %.1f | %.1f | %.1f | %.2f | %.2f%s\n", argv[a], median(t[0]), median(t[1]), median(t[2]),
                median(t[1]) / median(t[0]), model_stacked / model_direct,
                std::max({errors[0], errors[1], errors[2]}) > 1e-4 ? " | WRONG" : "");
    std::fflush(stdout);
  }
  return 0;
}
