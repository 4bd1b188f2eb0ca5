// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// rt::qgemm_packed with AVX-512 VNNI (qgemm.h has the layout and the arithmetic): register tiles
// of up to 4 rows of a by 4 panels (64 columns), 16 int32 accumulators; per group of four rows
// of b, four 64-byte loads of b, one broadcast of four bytes of each row of a, 16 VPDPBUSD. The
// column terms are applied in the vector before the output stage; StoreInt32 stores the vector,
// other outputs take its lanes one by one.
#ifndef ONNXC_QGEMM_AVX512VNNI_H
#define ONNXC_QGEMM_AVX512VNNI_H

namespace onnxc {
namespace rt {

#define ONNXC_QGEMM_PACKED 1  // qgemm_packed computes; generated code takes it where it has b packed

namespace detail {

template <class Out>
inline void qgemm_store(const Out& out, index_t i, index_t n, index_t j0, __m512i v) {
  const index_t lanes = n - j0 < 16 ? n - j0 : 16;
  if constexpr (std::is_same<Out, StoreInt32>::value) {
    _mm512_mask_storeu_epi32(out.y + i * n + j0, static_cast<__mmask16>((1u << lanes) - 1u), v);
  } else {
    alignas(64) std::int32_t acc[16];
    _mm512_store_si512(acc, v);
    for (index_t c = 0; c < lanes; ++c) out(j0 + c, i * n + j0 + c, acc[c]);
  }
}

template <int MR, int NR, class A, class Out>
inline void qgemm_vnni_tile(index_t i0, index_t p0, index_t n, index_t k, QuantOperand<A> a,
                            const std::int8_t* packed, const std::int32_t* terms, bool b_zero, Out out) {
  const index_t groups = qgemm_groups(k), padded = qgemm_panels(n) * kQGemmPanel;
  const std::int32_t flip = std::is_same<A, std::int8_t>::value ? 128 : 0;
  __m512i acc[MR][NR];
  for (int r = 0; r < MR; ++r)
    for (int c = 0; c < NR; ++c) acc[r][c] = _mm512_setzero_si512();
  const A* rows[MR];
  for (int r = 0; r < MR; ++r) rows[r] = a.data + (i0 + r) * k;
  const std::int8_t* panel = packed + p0 * groups * 64;
  const __m512i flip_bytes = _mm512_set1_epi32(std::is_same<A, std::int8_t>::value ? static_cast<std::int32_t>(0x80808080u) : 0);
  const index_t whole = k / 4;  // groups of four bytes of a inside the row; a last partial one after
  for (index_t g = 0; g < whole; ++g) {
    __m512i b[NR];
    for (int c = 0; c < NR; ++c) b[c] = _mm512_loadu_si512(panel + (c * groups + g) * 64);
    for (int r = 0; r < MR; ++r) {
      std::int32_t quad;
      std::memcpy(&quad, rows[r] + g * 4, 4);
      const __m512i x = _mm512_xor_si512(_mm512_set1_epi32(quad), flip_bytes);
      for (int c = 0; c < NR; ++c) acc[r][c] = _mm512_dpbusd_epi32(acc[r][c], x, b[c]);
    }
  }
  if (whole < groups) {
    __m512i b[NR];
    for (int c = 0; c < NR; ++c) b[c] = _mm512_loadu_si512(panel + (c * groups + whole) * 64);
    for (int r = 0; r < MR; ++r) {
      const __m512i x = _mm512_set1_epi32(qgemm_quad(rows[r], whole * 4, k));
      for (int c = 0; c < NR; ++c) acc[r][c] = _mm512_dpbusd_epi32(acc[r][c], x, b[c]);
    }
  }
  for (int r = 0; r < MR; ++r) {
    const std::int32_t za = a.zero_point_at(i0 + r) + flip;
    const std::int32_t row_term = b_zero ? 0 : qgemm_row_term(rows[r], k, za);
    for (int c = 0; c < NR; ++c) {
      const index_t j0 = (p0 + c) * kQGemmPanel;
      __m512i v = _mm512_sub_epi32(acc[r][c], _mm512_mullo_epi32(_mm512_set1_epi32(za),
                                                                 _mm512_loadu_si512(terms + j0)));
      if (!b_zero)
        v = _mm512_sub_epi32(v, _mm512_mullo_epi32(_mm512_set1_epi32(row_term),
                                                   _mm512_loadu_si512(terms + padded + j0)));
      qgemm_store(out, i0 + r, n, j0, v);
    }
  }
}

template <int MR, class A, class Out>
inline void qgemm_vnni_rows(index_t i0, index_t n, index_t k, QuantOperand<A> a, const std::int8_t* packed,
                            const std::int32_t* terms, bool b_zero, Out out) {
  const index_t panels = qgemm_panels(n);
  index_t p = 0;
  for (; p + 4 <= panels; p += 4) qgemm_vnni_tile<MR, 4>(i0, p, n, k, a, packed, terms, b_zero, out);
  switch (panels - p) {
    case 3: qgemm_vnni_tile<MR, 3>(i0, p, n, k, a, packed, terms, b_zero, out); break;
    case 2: qgemm_vnni_tile<MR, 2>(i0, p, n, k, a, packed, terms, b_zero, out); break;
    case 1: qgemm_vnni_tile<MR, 1>(i0, p, n, k, a, packed, terms, b_zero, out); break;
    default: break;
  }
}

}  // namespace detail

// y = a * b for the [m, k] a and qgemm_pack's b: out(column, i * n + column, acc).
template <class A, class Out>
inline void qgemm_packed(index_t m, index_t n, index_t k, QuantOperand<A> a, const std::int8_t* packed,
                         const std::int32_t* terms, Out out) {
  packed = detail::qgemm_opaque(packed);
  const bool b_zero = detail::qgemm_b_zero(terms, n);
  index_t i = 0;
  for (; i + 4 <= m; i += 4) detail::qgemm_vnni_rows<4>(i, n, k, a, packed, terms, b_zero, out);
  switch (m - i) {
    case 3: detail::qgemm_vnni_rows<3>(i, n, k, a, packed, terms, b_zero, out); break;
    case 2: detail::qgemm_vnni_rows<2>(i, n, k, a, packed, terms, b_zero, out); break;
    case 1: detail::qgemm_vnni_rows<1>(i, n, k, a, packed, terms, b_zero, out); break;
    default: break;
  }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_QGEMM_AVX512VNNI_H
