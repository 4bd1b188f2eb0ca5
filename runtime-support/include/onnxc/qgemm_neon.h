// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// rt::qgemm_packed on AArch64 NEON (qgemm.h has the layout and the arithmetic). A 16-byte load of
// a panel's group is four columns by four rows of b, SDOT's layout. NEON multiplies signed bytes
// by signed bytes only (USDOT is Armv8.6), so a's bytes go in as int8, a' - 128 (a uint8 a XOR
// 0x80, an int8 a as it is), and 128 times the column sums of b' come back with the column terms:
//   sum a' b' = sum (a' - 128) b' + 128 * sum_l b'[l, j].
// - neon-dotprod (__ARM_FEATURE_DOTPROD): tiles of 4 rows of a by one panel (16 int32
//   accumulators); per four groups one 16-byte load of each row, then per group four loads of b
//   and 16 SDOT by element (vdotq_laneq_s32): 16 multiply-adds per instruction.
// - neon: tiles of 2 rows by one panel; per group the row's four bytes repeated over a vector,
//   SMULL / SMULL2 with the four loads of b (exact int16 products) and SADALP into int32 pairs,
//   each column's two pair sums added at the end (ADDP).
// Tested by tests/unit/qgemm_test.cpp, cross-built (unit.neon, unit.neon_dotprod).
#ifndef ONNXC_QGEMM_NEON_H
#define ONNXC_QGEMM_NEON_H

#include <arm_neon.h>

namespace onnxc {
namespace rt {

#define ONNXC_QGEMM_PACKED 1  // qgemm_packed computes; generated code takes it where it has b packed

namespace detail {

#if defined(__ARM_FEATURE_DOTPROD)
constexpr int kQGemmNeonRows = 4;
#else
constexpr int kQGemmNeonRows = 2;
#endif

// Four bytes of row `row` of a from column l on as int8 a' - 128 (zero past k, which b' also is
// there), repeated over a vector.
template <class A>
inline int8x16_t qgemm_neon_quad(const A* row, index_t l, index_t k) {
  const std::uint32_t quad = static_cast<std::uint32_t>(qgemm_quad(row, l, k)) ^ 0x80808080u;
  return vreinterpretq_s8_u32(vdupq_n_u32(quad));
}

// Group g's 64 bytes of a panel.
inline const std::int8_t* qgemm_neon_group(const std::int8_t* panel, index_t g) {
  return panel + static_cast<std::size_t>(g) * 64;
}

#if defined(__ARM_FEATURE_DOTPROD)
// Group g + T of the panel for MR rows, whose bytes of groups g .. g + 3 are av.
template <int MR, int T>
ONNXC_INLINE void qgemm_sdot_group(const std::int8_t* panel, index_t g, const int8x16_t* av, int32x4_t (*acc)[4]) {
  int8x16_t b[4];
  ONNXC_UNROLL for (int q = 0; q < 4; ++q) b[q] = vld1q_s8(qgemm_neon_group(panel, g + T) + q * 16);
  ONNXC_UNROLL for (int r = 0; r < MR; ++r)
    ONNXC_UNROLL for (int q = 0; q < 4; ++q) acc[r][q] = vdotq_laneq_s32(acc[r][q], b[q], av[r], T);
}
#endif

// Rows [i0, i0 + MR) of a by panel p: each column's sum of (a' - 128) b' in acc[r][q] (columns
// 16p + 4q ..).
template <int MR, class A>
inline void qgemm_neon_sums(index_t i0, index_t p, index_t k, QuantOperand<A> a, const std::int8_t* packed,
                            int32x4_t (*acc)[4]) {
  const index_t groups = qgemm_groups(k);
  const A* rows[MR];
  ONNXC_UNROLL for (int r = 0; r < MR; ++r) rows[r] = a.data + (i0 + r) * k;
  const std::int8_t* panel = packed + p * groups * 64;
  index_t g = 0;
#if defined(__ARM_FEATURE_DOTPROD)
  ONNXC_UNROLL for (int r = 0; r < MR; ++r)
    ONNXC_UNROLL for (int q = 0; q < 4; ++q) acc[r][q] = vdupq_n_s32(0);
  const uint8x16_t flip = vdupq_n_u8(std::is_same<A, std::uint8_t>::value ? 0x80 : 0);
  for (; 4 * g + 16 <= k; g += 4) {
    int8x16_t av[MR];
    ONNXC_UNROLL for (int r = 0; r < MR; ++r)
      av[r] = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(reinterpret_cast<const std::uint8_t*>(rows[r]) + 4 * g), flip));
    qgemm_sdot_group<MR, 0>(panel, g, av, acc);
    qgemm_sdot_group<MR, 1>(panel, g, av, acc);
    qgemm_sdot_group<MR, 2>(panel, g, av, acc);
    qgemm_sdot_group<MR, 3>(panel, g, av, acc);
  }
  // The last groups, at most four, a quad at a time. (A loop on to `groups` made GCC 12 -O3, with k
  // known, warn of an overflow of 4 * g many iterations on: -Waggressive-loop-optimizations.)
  for (int t = 0; t < 4 && g + t < groups; ++t) {
    int8x16_t b[4];
    ONNXC_UNROLL for (int q = 0; q < 4; ++q) b[q] = vld1q_s8(qgemm_neon_group(panel, g + t) + q * 16);
    ONNXC_UNROLL for (int r = 0; r < MR; ++r) {
      const int8x16_t x = qgemm_neon_quad(rows[r], 4 * (g + t), k);
      ONNXC_UNROLL for (int q = 0; q < 4; ++q) acc[r][q] = vdotq_s32(acc[r][q], b[q], x);
    }
  }
#else
  int32x4_t pairs[MR][8];  // [2q]: columns 4q, 4q + 1 (two pair sums each); [2q + 1]: 4q + 2, 4q + 3
  ONNXC_UNROLL for (int r = 0; r < MR; ++r)
    ONNXC_UNROLL for (int h = 0; h < 8; ++h) pairs[r][h] = vdupq_n_s32(0);
  for (; g < groups; ++g) {
    int8x16_t b[4];
    ONNXC_UNROLL for (int q = 0; q < 4; ++q) b[q] = vld1q_s8(qgemm_neon_group(panel, g) + q * 16);
    ONNXC_UNROLL for (int r = 0; r < MR; ++r) {
      const int8x16_t x = qgemm_neon_quad(rows[r], 4 * g, k);
      ONNXC_UNROLL for (int q = 0; q < 4; ++q) {
        pairs[r][2 * q] = vpadalq_s16(pairs[r][2 * q], vmull_s8(vget_low_s8(b[q]), vget_low_s8(x)));
        pairs[r][2 * q + 1] = vpadalq_s16(pairs[r][2 * q + 1], vmull_high_s8(b[q], x));
      }
    }
  }
  ONNXC_UNROLL for (int r = 0; r < MR; ++r)
    ONNXC_UNROLL for (int q = 0; q < 4; ++q) acc[r][q] = vpaddq_s32(pairs[r][2 * q], pairs[r][2 * q + 1]);
#endif
}

template <int MR, class A, class Out>
inline void qgemm_neon_tile(index_t i0, index_t p, index_t n, index_t k, QuantOperand<A> a, const std::int8_t* packed,
                            const std::int32_t* terms, bool b_zero, Out out) {
  const index_t padded = qgemm_panels(n) * kQGemmPanel;
  const std::int32_t flip = std::is_same<A, std::int8_t>::value ? 128 : 0;
  int32x4_t acc[MR][4];
  qgemm_neon_sums<MR>(i0, p, k, a, packed, acc);
  ONNXC_UNROLL for (int r = 0; r < MR; ++r) {
    const index_t i = i0 + r;
    const std::int32_t za = a.zero_point_at(i) + flip;
    const std::int32_t row_term = b_zero ? 0 : qgemm_row_term(a.data + i * k, k, za);
    ONNXC_UNROLL for (int q = 0; q < 4; ++q) {
      const index_t j0 = p * kQGemmPanel + 4 * q;
      if (j0 >= n) break;
      int32x4_t v = vmlaq_n_s32(acc[r][q], vld1q_s32(terms + j0), 128 - za);
      v = vmlsq_n_s32(v, vld1q_s32(terms + padded + j0), row_term);
      const index_t lanes = n - j0 < 4 ? n - j0 : 4;
      if constexpr (std::is_same<Out, StoreInt32>::value) {
        if (lanes == 4) {
          vst1q_s32(out.y + i * n + j0, v);
          continue;
        }
      }
      std::int32_t sums[4];
      vst1q_s32(sums, v);
      for (index_t c = 0; c < lanes; ++c) out(j0 + c, i * n + j0 + c, sums[c]);
    }
  }
}

}  // namespace detail

// y = a * b for the [m, k] a and qgemm_pack's b: out(column, i * n + column, acc).
template <class A, class Out>
inline void qgemm_packed(index_t m, index_t n, index_t k, QuantOperand<A> a, const std::int8_t* packed,
                         const std::int32_t* terms, Out out) {
  using detail::kQGemmNeonRows;
  packed = detail::qgemm_opaque(packed);
  const index_t panels = qgemm_panels(n);
  const bool b_zero = detail::qgemm_b_zero(terms, n);
  for (index_t p = 0; p < panels; ++p) {
    index_t i = 0;
    for (; i + kQGemmNeonRows <= m; i += kQGemmNeonRows)
      detail::qgemm_neon_tile<kQGemmNeonRows>(i, p, n, k, a, packed, terms, b_zero, out);
    for (; i < m; ++i) detail::qgemm_neon_tile<1>(i, p, n, k, a, packed, terms, b_zero, out);
  }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_QGEMM_NEON_H
