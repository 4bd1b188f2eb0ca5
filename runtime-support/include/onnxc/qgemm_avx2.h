// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// rt::qgemm_packed with AVX2 (no VNNI): qgemm.h's packed layout, each group of four bytes of b
// widened to int16 (VPMOVSXBW) and multiplied with the row's four bytes of a (zero-extended to
// int16, the pattern repeated) by VPMADDWD, whose pairs of int16 products summed into int32 are
// exact (VPMADDUBSW's int16 sums of two uint8 x int8 products would saturate). Each column's sum
// builds up in two adjacent lanes, added at the end (VPHADDD, then the lanes put back in order).
// Tiles of 2 rows of a by one panel of 16 columns: 8 accumulators, 4 widened vectors of b, one of
// a, within AVX2's 16 registers.
#ifndef ONNXC_QGEMM_AVX2_H
#define ONNXC_QGEMM_AVX2_H

namespace onnxc {
namespace rt {

#define ONNXC_QGEMM_PACKED 1  // qgemm_packed computes; generated code takes it where it has b packed

namespace detail {

// The four bytes of a quad as int16, repeated over the vector: [a0 a1 a2 a3] x 4.
inline __m256i qgemm_avx2_quad(std::int32_t quad) {
  const __m128i w = _mm_cvtepu8_epi16(_mm_cvtsi32_si128(quad));
  return _mm256_broadcastq_epi64(w);
}

template <int MR, class A, class Out>
inline void qgemm_avx2_tile(index_t i0, index_t p, index_t n, index_t k, QuantOperand<A> a, const std::int8_t* packed,
                            const std::int32_t* terms, bool b_zero, Out out) {
  const index_t groups = qgemm_groups(k), padded = qgemm_panels(n) * kQGemmPanel;
  const std::int32_t flip = std::is_same<A, std::int8_t>::value ? 128 : 0;
  const std::uint32_t flip_bytes = std::is_same<A, std::int8_t>::value ? 0x80808080u : 0u;
  __m256i acc[MR][4];
  for (int r = 0; r < MR; ++r)
    for (int q = 0; q < 4; ++q) acc[r][q] = _mm256_setzero_si256();
  const A* rows[MR];
  for (int r = 0; r < MR; ++r) rows[r] = a.data + (i0 + r) * k;
  const std::int8_t* panel = packed + p * groups * 64;
  const index_t whole = k / 4;
  for (index_t g = 0; g < groups; ++g) {
    __m256i b[4];  // columns 4q .. 4q + 3, four int16 of b each
    for (int q = 0; q < 4; ++q)
      b[q] = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(panel + g * 64 + q * 16)));
    for (int r = 0; r < MR; ++r) {
      std::int32_t quad;
      if (g < whole) {
        std::uint32_t v;
        std::memcpy(&v, rows[r] + g * 4, 4);
        quad = static_cast<std::int32_t>(v ^ flip_bytes);
      } else {
        quad = qgemm_quad(rows[r], g * 4, k);
      }
      const __m256i x = qgemm_avx2_quad(quad);
      for (int q = 0; q < 4; ++q) acc[r][q] = _mm256_add_epi32(acc[r][q], _mm256_madd_epi16(x, b[q]));
    }
  }
  const index_t j0 = p * kQGemmPanel;
  for (int r = 0; r < MR; ++r) {
    const std::int32_t za = a.zero_point_at(i0 + r) + flip;
    const std::int32_t row_term = b_zero ? 0 : qgemm_row_term(rows[r], k, za);
    alignas(32) std::int32_t sums[16];
    for (int h = 0; h < 2; ++h) {  // columns 8h .. 8h + 7
      // hadd: [c0 c1 c4 c5 | c2 c3 c6 c7] of the two accumulators; the permute puts them in order.
      const __m256i pairs = _mm256_hadd_epi32(acc[r][2 * h], acc[r][2 * h + 1]);
      __m256i v = _mm256_permute4x64_epi64(pairs, 0xD8);
      v = _mm256_sub_epi32(v, _mm256_mullo_epi32(_mm256_set1_epi32(za),
                                                 _mm256_loadu_si256(reinterpret_cast<const __m256i*>(terms + j0 + 8 * h))));
      if (!b_zero)
        v = _mm256_sub_epi32(v, _mm256_mullo_epi32(_mm256_set1_epi32(row_term),
                                                   _mm256_loadu_si256(reinterpret_cast<const __m256i*>(
                                                       terms + padded + j0 + 8 * h))));
      _mm256_store_si256(reinterpret_cast<__m256i*>(sums + 8 * h), v);
    }
    const index_t lanes = n - j0 < 16 ? n - j0 : 16;
    if constexpr (std::is_same<Out, StoreInt32>::value) {
      std::memcpy(out.y + (i0 + r) * n + j0, sums, static_cast<std::size_t>(lanes) * sizeof(std::int32_t));
    } else {
      for (index_t c = 0; c < lanes; ++c) out(j0 + c, (i0 + r) * n + j0 + c, sums[c]);
    }
  }
}

}  // namespace detail

// y = a * b for the [m, k] a and qgemm_pack's b: out(column, i * n + column, acc).
template <class A, class Out>
inline void qgemm_packed(index_t m, index_t n, index_t k, QuantOperand<A> a, const std::int8_t* packed,
                         const std::int32_t* terms, Out out) {
  packed = detail::qgemm_opaque(packed);
  const index_t panels = qgemm_panels(n);
  const bool b_zero = detail::qgemm_b_zero(terms, n);
  for (index_t p = 0; p < panels; ++p) {
    index_t i = 0;
    for (; i + 2 <= m; i += 2) detail::qgemm_avx2_tile<2>(i, p, n, k, a, packed, terms, b_zero, out);
    if (i < m) detail::qgemm_avx2_tile<1>(i, p, n, k, a, packed, terms, b_zero, out);
  }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_QGEMM_AVX2_H
