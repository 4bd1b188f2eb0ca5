// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// Integer matrix product with AVX-512 VNNI (detail::matmul_integer_vnni, which rt::matmul_integer
// takes where built): MatMulInteger and QLinearMatMul of any shape, uint8 or int8 on either side,
// zero points per tensor, row (a) or column (b); b read in place, nothing packed at compile time.
// Included by quant.h after qconv_vnni_interleave; tested against the portable loop
// (tests/unit/quant_matmul_vnni_test.cpp).
//
// Sixteen columns of b are one vector: for each group of four k, b's four rows of the block
// interleaved (qconv_vnni_interleave) so each 32-bit lane holds one column's four k, and one
// VPDPBUSD per row of a adds a's four bytes (broadcast) times them. VPDPBUSD multiplies unsigned
// by signed bytes, so int8 a is read as a ^ 0x80 (a + 128) and uint8 b as b ^ 0x80 (b - 128); the
// zero points, with those offsets, leave the loop:
//   sum (a - za)(b - zb) = S - ZA * colsum(b') - ZB * rowsum(a') + k * ZA * ZB,
// S the bytes' product, ZA = za + 128 for int8 a (else za), ZB = zb - 128 for uint8 b (else zb);
// the column sums come from one more VPDPBUSD by ones, the row sums from VPSADBW. The block's
// interleaved vectors are kept on the stack for the next rows where they fit.
#ifndef ONNXC_QUANT_MATMUL_AVX512VNNI_H
#define ONNXC_QUANT_MATMUL_AVX512VNNI_H

namespace onnxc {
namespace rt {

#if defined(ONNXC_MATMUL_INTEGER_VNNI)
namespace detail {

constexpr index_t kMatMulVnniRows = 8;             // rows of a per register tile
constexpr index_t kMatMulVnniCacheBytes = 16384;  // the block's interleaved b (k up to 1024)

// Out's requantization of a block of up to 16 columns: out(column, flat index, acc) per value.
template <class Out>
struct MatMulVnniColumns {
  MatMulVnniColumns(const Out&, index_t, index_t) {}
  void store(const Out& out, index_t j0, index_t i, __m512i acc, index_t cols) const {
    alignas(64) std::int32_t v[16];
    _mm512_store_si512(v, acc);
    for (index_t j = 0; j < cols; ++j) out(j0 + j, i + j, v[j]);
  }
};

#if !defined(ONNXC_REQUANTIZE_IN_INTEGERS)
// The columns' biases and multipliers loaded once per block; store_vector's requantization with
// a multiplier per lane (quantize_value's bits).
template <class Q, class R>
struct MatMulVnniColumns<RequantizeOutput<Q, R>> {
  __m512i bias;
  __m512 multiplier;
  MatMulVnniColumns(const RequantizeOutput<Q, R>& out, index_t j0, index_t cols) {
    const __mmask16 mask = static_cast<__mmask16>(cols >= 16 ? 0xFFFF : (1u << cols) - 1u);
    bias = out.bias ? _mm512_maskz_loadu_epi32(mask, out.bias + j0) : _mm512_setzero_si512();
    alignas(64) float m[16] = {};
    for (index_t j = 0; j < cols; ++j) m[j] = out.requant[(j0 + j) * out.requant_stride].multiplier;
    multiplier = _mm512_load_ps(m);
  }
  void store(const RequantizeOutput<Q, R>& out, index_t, index_t i, __m512i acc, index_t cols) const {
    const __mmask16 all = 0xFFFF;  // (the zero-masked forms: the unmasked ones trip GCC 12's -Wuninitialized)
    const std::int32_t zp = out.zero_point;
    const float lo = static_cast<float>(static_cast<std::int32_t>(std::numeric_limits<Q>::lowest()) - zp);
    const float hi = static_cast<float>(static_cast<std::int32_t>(std::numeric_limits<Q>::max()) - zp);
    __m512 v = _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(all, _mm512_add_epi32(acc, bias)), multiplier);
    v = _mm512_maskz_min_ps(all, _mm512_maskz_max_ps(all, v, _mm512_set1_ps(lo)), _mm512_set1_ps(hi));
    const __m512i q = _mm512_add_epi32(_mm512_maskz_cvtps_epi32(all, v), _mm512_set1_epi32(zp));
    const __mmask16 mask = static_cast<__mmask16>(cols >= 16 ? 0xFFFF : (1u << cols) - 1u);
    _mm512_mask_cvtepi32_storeu_epi8(out.y + i, mask, q);  // in Q's range: truncation keeps it
  }
};
#endif

// a's four bytes k = 4g .. 4g + 3 of a row of k (0 past its end), flipped to unsigned.
inline std::int32_t matmul_vnni_a_group(const std::uint8_t* row, index_t k, index_t g, std::uint32_t flip) {
  std::uint32_t v = 0;
  if (4 * g + 4 <= k) {
    std::memcpy(&v, row + 4 * g, 4);
  } else {
    for (index_t t = 0; 4 * g + t < k; ++t) v |= static_cast<std::uint32_t>(row[4 * g + t]) << (8 * t);
  }
  return static_cast<std::int32_t>(v ^ flip);
}

// The sum of a row's k bytes, each flipped (xor flip): the row sum of a'.
inline std::int32_t matmul_vnni_row_sum(const std::uint8_t* row, index_t k, std::uint8_t flip) {
  __m512i sums = _mm512_setzero_si512();
  const __m512i flips = _mm512_set1_epi8(static_cast<char>(flip));
  for (index_t l = 0; l < k; l += 64) {
    const __mmask64 mask = k - l >= 64 ? ~__mmask64{0} : (__mmask64{1} << (k - l)) - 1;
    const __m512i bytes = _mm512_maskz_mov_epi8(mask, _mm512_xor_si512(_mm512_maskz_loadu_epi8(mask, row + l), flips));
    sums = _mm512_add_epi64(sums, _mm512_sad_epu8(bytes, _mm512_setzero_si512()));
  }
  alignas(64) std::int64_t lanes[8];  // (_mm512_reduce_add_epi64 trips GCC 12's -Wmaybe-uninitialized)
  _mm512_store_si512(lanes, sums);
  std::int64_t total = 0;
  for (const std::int64_t v : lanes) total += v;
  return static_cast<std::int32_t>(total);
}

// One tile of Rows rows of a (from row i0) times the block of columns from j0: group(g) gives the
// block's interleaved b'; row_zero_points[r] = ZA of the row, zb the block's ZB per lane.
template <int Rows, class Group, class Columns, class Out>
inline void matmul_vnni_tile(const std::uint8_t* a, index_t k, index_t i0, index_t n, index_t j0, index_t cols,
                             const Group& group, std::uint32_t a_flip, const std::int32_t* row_zero_points,
                             __m512i colsum, __m512i zb, index_t flat0, const Columns& columns, const Out& out) {
  const index_t groups = (k + 3) / 4;
  __m512i acc[Rows];
  ONNXC_UNROLL for (int r = 0; r < Rows; ++r) acc[r] = _mm512_setzero_si512();
  for (index_t g = 0; g < groups; ++g) {
    const __m512i bv = group(g);
    ONNXC_UNROLL for (int r = 0; r < Rows; ++r)
      acc[r] = _mm512_dpbusd_epi32(acc[r], _mm512_set1_epi32(matmul_vnni_a_group(a + (i0 + r) * k, k, g, a_flip)), bv);
  }
  const std::uint8_t row_flip = static_cast<std::uint8_t>(a_flip);
  ONNXC_UNROLL for (int r = 0; r < Rows; ++r) {
    const std::int32_t za = row_zero_points[r];
    const std::int32_t row_sum = matmul_vnni_row_sum(a + (i0 + r) * k, k, row_flip);
    // acc - ZA colsum - ZB rowsum + k ZA ZB = acc - ZA colsum - ZB (rowsum - k ZA)
    const __m512i corrected = _mm512_sub_epi32(
        _mm512_sub_epi32(acc[r], _mm512_mullo_epi32(_mm512_set1_epi32(za), colsum)),
        _mm512_mullo_epi32(zb, _mm512_set1_epi32(static_cast<std::int32_t>(
                                   static_cast<std::uint32_t>(row_sum) - static_cast<std::uint32_t>(k) * static_cast<std::uint32_t>(za)))));
    columns.store(out, j0, flat0 + (i0 + r) * n + j0, corrected, cols);
  }
}

template <class A, class B, class Out>
inline void matmul_integer_vnni(index_t batches, const index_t* a_offsets, const index_t* b_offsets, index_t m,
                                index_t n, index_t k, QuantOperand<A> a, QuantOperand<B> b, Out out) {
  const bool a_signed = std::numeric_limits<A>::is_signed, b_signed = std::numeric_limits<B>::is_signed;
  const std::uint32_t a_flip = a_signed ? 0x80808080u : 0u;
  const __m128i b_flip = _mm_set1_epi8(static_cast<char>(b_signed ? 0 : 0x80));
  const std::int32_t a_offset = a_signed ? 128 : 0, b_offset = b_signed ? 0 : 128;
  const index_t groups = (k + 3) / 4;
  const bool cached = groups * 64 <= kMatMulVnniCacheBytes;
  const __m512i ones = _mm512_set1_epi8(1);
  alignas(64) std::uint8_t cache[kMatMulVnniCacheBytes];
  for (index_t batch = 0; batch < batches; ++batch) {
    const std::uint8_t* ap = reinterpret_cast<const std::uint8_t*>(a.data + a_offsets[batch]);
    const std::uint8_t* bp = reinterpret_cast<const std::uint8_t*>(b.data + b_offsets[batch]);
    for (index_t j0 = 0; j0 < n; j0 += 16) {
      const index_t cols = n - j0 < 16 ? n - j0 : 16;
      const __mmask16 mask = static_cast<__mmask16>(cols >= 16 ? 0xFFFF : (1u << cols) - 1u);
      const MatMulVnniColumns<Out> columns(out, j0, cols);
      alignas(64) std::int32_t zb_lanes[16] = {};
      for (index_t j = 0; j < cols; ++j) zb_lanes[j] = b.zero_point_at(j0 + j) - b_offset;
      const __m512i zb = _mm512_load_si512(zb_lanes);
      const auto build = [&](index_t g) {
        __m128i r[4];
        for (index_t t = 0; t < 4; ++t)
          r[t] = 4 * g + t < k ? _mm_xor_si128(_mm_maskz_loadu_epi8(mask, bp + (4 * g + t) * n + j0), b_flip)
                               : _mm_setzero_si128();
        return qconv_vnni_interleave(r[0], r[1], r[2], r[3]);
      };
      // The block's column sums of b' (and its interleaved vectors, where they fit).
      __m512i colsum = _mm512_setzero_si512();
      for (index_t g = 0; g < groups; ++g) {
        const __m512i bv = build(g);
        colsum = _mm512_dpbusd_epi32(colsum, ones, bv);
        if (cached) _mm512_store_si512(cache + g * 64, bv);
      }
      const auto group = [&](index_t g) { return cached ? _mm512_load_si512(cache + g * 64) : build(g); };
      std::int32_t za[kMatMulVnniRows];
      for (index_t i0 = 0; i0 < m;) {
        const index_t left = m - i0;
        const index_t rows = left >= 8 ? 8 : left >= 4 ? 4 : left >= 2 ? 2 : 1;
        for (index_t r = 0; r < rows; ++r) za[r] = a.zero_point_at(i0 + r) + a_offset;
        const index_t flat0 = batch * m * n;
        if (rows == 8)
          matmul_vnni_tile<8>(ap, k, i0, n, j0, cols, group, a_flip, za, colsum, zb, flat0, columns, out);
        else if (rows == 4)
          matmul_vnni_tile<4>(ap, k, i0, n, j0, cols, group, a_flip, za, colsum, zb, flat0, columns, out);
        else if (rows == 2)
          matmul_vnni_tile<2>(ap, k, i0, n, j0, cols, group, a_flip, za, colsum, zb, flat0, columns, out);
        else
          matmul_vnni_tile<1>(ap, k, i0, n, j0, cols, group, a_flip, za, colsum, zb, flat0, columns, out);
        i0 += rows;
      }
    }
  }
}

}  // namespace detail
#endif

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_QUANT_MATMUL_AVX512VNNI_H
