// Integer matrix products with a constant right operand packed at compile time (rt::qgemm_packed):
// MatMulInteger and QLinearMatMul where B is a weight, as dynamically and statically quantized
// transformers and MLPs have them. y[i, j] = sum_l (a[i, l] - za_i) (b[l, j] - zb_j) for an
// [m, k] a (uint8 or int8, zero point per tensor or per row) and the [k, n] constant b.
//
// The compiler stores b once more as int8 in groups of four rows (qgemm_pack), the layout of
// AVX-512 VNNI's VPDPBUSD (unsigned bytes times signed bytes, four products summed into each
// int32 lane): panel p holds columns 16p .. 16p + 15, and in it group g the 64 bytes
// b'[4g + t][16p + c] at c * 4 + t (zero beyond k and n). A uint8 b is stored as b - 128 with
// its zero point less 128 (the same differences); an int8 a goes in as a + 128 (its zero point
// plus 128). What the byte products leave out is added per column from qgemm_pack's column terms:
//   sum (a - za)(b' - zb') = sum a b' - za * sum_l b'[l, j] - zb'_j * (sum_l a[i, l] - k * za).
// AVX2 without VNNI widens to int16 (qgemm_avx2.h); AArch64 takes SDOT or SMULL (qgemm_neon.h);
// other targets take rt::matmul_integer on the original b (the generated code names both).
#ifndef ONNXC_QGEMM_H
#define ONNXC_QGEMM_H

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "onnxc/quant.h"

namespace onnxc {
namespace rt {

constexpr index_t kQGemmPanel = 16;  // columns per panel: one vector of int32 lanes
constexpr index_t kQGemmGroup = 4;   // rows of b per group: one int32 lane's four bytes

inline index_t qgemm_panels(index_t n) { return (n + kQGemmPanel - 1) / kQGemmPanel; }
inline index_t qgemm_groups(index_t k) { return (k + kQGemmGroup - 1) / kQGemmGroup; }
inline index_t qgemm_packed_bytes(index_t k, index_t n) { return qgemm_panels(n) * qgemm_groups(k) * 64; }
// Column terms: sum_l b'[l, j] then zb'_j, each padded to whole panels.
inline index_t qgemm_column_terms(index_t n) { return 2 * qgemm_panels(n) * kQGemmPanel; }

// Packs the constant b ([k, n], zero point per tensor (stride 0) or per column (1)) and its column
// terms. B: uint8 or int8.
template <class B>
inline void qgemm_pack(index_t k, index_t n, QuantOperand<B> b, std::int8_t* packed, std::int32_t* terms) {
  const index_t panels = qgemm_panels(n), groups = qgemm_groups(k), padded = panels * kQGemmPanel;
  const std::int32_t shift = std::is_same<B, std::uint8_t>::value ? 128 : 0;
  std::memset(packed, 0, static_cast<std::size_t>(qgemm_packed_bytes(k, n)));
  for (index_t j = 0; j < padded; ++j) {
    std::int32_t sum = 0;
    for (index_t l = 0; l < k && j < n; ++l) {
      const std::int32_t v = static_cast<std::int32_t>(b.data[l * n + j]) - shift;
      packed[((j / kQGemmPanel) * groups + l / kQGemmGroup) * 64 + (j % kQGemmPanel) * 4 + l % kQGemmGroup] =
          static_cast<std::int8_t>(v);
      sum += v;
    }
    terms[j] = sum;
    terms[padded + j] = j < n ? b.zero_point_at(j) - shift : 0;
  }
}

namespace detail {

// Four bytes of a row of a from column l on (zero past k: b' is zero there too), as one int32,
// an int8 a moved to uint8 (+128 on each byte).
template <class A>
inline std::int32_t qgemm_quad(const A* row, index_t l, index_t k) {
  std::uint32_t v = 0;
  std::memcpy(&v, row + l, static_cast<std::size_t>(l + 4 <= k ? 4 : k - l));
  if (std::is_same<A, std::int8_t>::value) v ^= 0x80808080u;
  return static_cast<std::int32_t>(v);
}

// The packed b's address hidden from the optimiser: GCC 12 at -O3 followed a constant array of
// two panels into the code of four-panel tiles that never run for it and warned
// (-Warray-bounds, werror.g++.resnet8_int8.native).
inline const std::int8_t* qgemm_opaque(const std::int8_t* p) {
#if defined(__GNUC__)
  __asm__("" : "+r"(p));
#endif
  return p;
}

// Whether b's zero points (after qgemm_pack's shift) are all zero: the row terms are then not needed.
inline bool qgemm_b_zero(const std::int32_t* terms, index_t n) {
  const index_t padded = qgemm_panels(n) * kQGemmPanel;
  for (index_t j = 0; j < padded; ++j)
    if (terms[padded + j] != 0) return false;
  return true;
}

// What zb' multiplies for row `row` of a (zero point za, both after the +128 of an int8 a):
// sum_l a[l] - k * za.
template <class A>
inline std::int32_t qgemm_row_term(const A* row, index_t k, std::int32_t za) {
  const std::int32_t flip = std::is_same<A, std::int8_t>::value ? 128 : 0;
  std::int32_t row_sum = 0;
  for (index_t l = 0; l < k; ++l) row_sum += static_cast<std::int32_t>(row[l]) + flip;
  return row_sum - static_cast<std::int32_t>(k) * za;
}

}  // namespace detail

// The portable form over the packed layout (the reference of the vector kernels' arithmetic:
// tests/unit/qgemm_test.cpp checks both against rt::matmul_integer).
template <class A, class Out>
inline void qgemm_packed_reference(index_t m, index_t n, index_t k, QuantOperand<A> a, const std::int8_t* packed,
                                   const std::int32_t* terms, Out out) {
  const index_t groups = qgemm_groups(k), padded = qgemm_panels(n) * kQGemmPanel;
  const std::int32_t flip = std::is_same<A, std::int8_t>::value ? 128 : 0;
  for (index_t i = 0; i < m; ++i) {
    const std::int32_t za = a.zero_point_at(i) + flip;
    const std::int32_t row_term = detail::qgemm_row_term(a.data + i * k, k, za);
    for (index_t j = 0; j < n; ++j) {
      std::int32_t acc = 0;
      for (index_t l = 0; l < k; ++l)
        acc += (static_cast<std::int32_t>(a.data[i * k + l]) + flip) *
               packed[((j / kQGemmPanel) * groups + l / kQGemmGroup) * 64 + (j % kQGemmPanel) * 4 + l % kQGemmGroup];
      acc -= za * terms[j] + terms[padded + j] * row_term;
      out(j, i * n + j, acc);
    }
  }
}

}  // namespace rt
}  // namespace onnxc

#if defined(__AVX512VNNI__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#include "onnxc/qgemm_avx512vnni.h"
#elif defined(__AVX2__)
#include "onnxc/qgemm_avx2.h"
#elif defined(ONNXC_SIMD) && defined(__aarch64__)
#include "onnxc/qgemm_neon.h"
#endif

#endif  // ONNXC_QGEMM_H
