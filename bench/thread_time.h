// Timing for the kernel benchmarks beside it (conv_transpose_bench.cpp, conv_gemm_stacked_bench.cpp):
// thread CPU time, since the machine is shared and wall-clock time counts the other processes'.
#pragma once

#include <time.h>

namespace bench {

inline double thread_seconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Microseconds a run of f, over enough runs for about 20 ms (after one run to warm up).
template <class F>
double us_per_run(F f) {
  f();
  int runs = 1;
  for (;;) {
    const double start = thread_seconds();
    for (int r = 0; r < runs; ++r) f();
    const double s = thread_seconds() - start;
    if (s > 0.02 || runs >= 1 << 16) return 1e6 * s / runs;
    runs *= s > 0.002 ? static_cast<int>(0.025 / s) + 1 : 10;
  }
}

}  // namespace bench
