// Operands for the kernel tests: small multiples of 1/8 (exact in float, so a product's error
// is only its rounding), a different sequence per seed.
#ifndef ONNXC_TESTS_KERNEL_TEST_VALUES_H
#define ONNXC_TESTS_KERNEL_TEST_VALUES_H

#include <vector>

#include "onnxc/base.h"

inline std::vector<float> kernel_test_values(onnxc::rt::index_t n, int seed) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (onnxc::rt::index_t i = 0; i < n; ++i)
    v[static_cast<std::size_t>(i)] = 0.125f * static_cast<float>((i * 7 + seed * 13) % 17 - 8);
  return v;
}

#endif  // ONNXC_TESTS_KERNEL_TEST_VALUES_H
