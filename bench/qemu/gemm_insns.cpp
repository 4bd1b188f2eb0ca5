// rt::packed_gemm on an M x K x N product, `runs` times: built for a qemu-user target and counted by
// templates/qemu_insn_count.c.tmpl, the difference between two run counts is the instructions of
// that many products (docs/embedded.md, "AArch64 (NEON, SDOT)"). The output's sum is printed so no product is dropped.
//   aarch64-linux-gnu-g++ -std=c++17 -O3 -static -DONNXC_SIMD -Iruntime-support/include
//     bench/qemu/gemm_insns.cpp -o /tmp/gemm_insns
//   qemu-aarch64 -plugin /tmp/insn_count.so /tmp/gemm_insns 512 512 512 1   (then ... 3)
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "onnxc/packed_gemm.h"

int main(int argc, char** argv) {
  using onnxc::rt::index_t;
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s M K N RUNS\n", argv[0]);
    return 2;
  }
  const index_t m = std::atol(argv[1]), k = std::atol(argv[2]), n = std::atol(argv[3]);
  const int runs = std::atoi(argv[4]);
  std::vector<float> a(static_cast<std::size_t>(m * k)), packed(a.size()), b(static_cast<std::size_t>(k * n)),
      y(static_cast<std::size_t>(m * n));
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(static_cast<int>(i % 7) - 3) * 0.25f;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(static_cast<int>(i % 5) - 2) * 0.5f;
  onnxc::rt::pack_weights(a.data(), m, k, packed.data());
  double sum = 0;
  for (int r = 0; r < runs; ++r) {
    onnxc::rt::packed_gemm(m, n, k, packed.data(), b.data(), n, y.data(), n, nullptr, onnxc::rt::kNoActivation);
    sum += y[static_cast<std::size_t>(r) % y.size()];
  }
  std::printf("%g\n", sum);
  return 0;
}
