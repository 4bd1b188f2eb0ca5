// rt::attention alone: heads x seq x head dim, thread CPU time of RUNS calls (min and median).
// g++ -std=c++17 -O3 -march=native -DONNXC_SIMD -Iruntime-support/include bench/attention_bench.cpp -o /tmp/attention_bench
// /tmp/attention_bench HEADS SEQ DIM RUNS   (docs/performance.md, 'Attention (third round)')
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>
#include <algorithm>
#include "onnxc/attention.h"
using namespace onnxc::rt;
static double cpu_us() { timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }
int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s HEADS SEQ DIM RUNS\n", argv[0]);
    return 2;
  }
  index_t h = atoi(argv[1]), s = atoi(argv[2]), d = atoi(argv[3]); int runs = atoi(argv[4]);
  std::vector<float> q(h*s*d), k(h*s*d), v(h*s*d), o(h*s*d);
  for (size_t i = 0; i < q.size(); ++i) { q[i] = (i * 7 % 13) / 13.f - .5f; k[i] = (i * 5 % 11) / 11.f - .5f; v[i] = (i % 17) / 17.f; }
  AttentionParams p; p.groups1 = h; p.q_rows = s; p.k_rows = s; p.depth = d; p.v_depth = d; p.scale = 0.125f;
  p.q = {0, s*d, d, 1}; p.k = {0, s*d, s, 1}; p.v = {0, s*d, d, 1}; p.out = {0, s*d, d, 1};
  std::vector<double> t;
  for (int r = 0; r < runs; ++r) { double a = cpu_us(); attention(q.data(), k.data(), v.data(), nullptr, o.data(), p); t.push_back(cpu_us() - a); }
  std::sort(t.begin(), t.end());
  double macs = 2.0 * h * s * s * d;
  printf("h%ld s%ld d%ld: min %.1f us med %.1f us  %.2f GMAC/s (min)  o=%f\n", (long)h, (long)s, (long)d, t[0], t[t.size()/2], macs / t[0] / 1e3, o[5]);
}
