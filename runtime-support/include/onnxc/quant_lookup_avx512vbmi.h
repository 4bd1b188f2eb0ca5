// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// rt::lookup (y = table[x] over 8-bit x) on AVX-512 VBMI: the 256-byte table in four registers,
// 64 inputs at a time by two two-register byte permutes (each indexes 128 bytes by the low
// seven bits) and a blend on the top bit. Included by quant.h, which falls back to the scalar
// loop elsewhere and for the tail.
#ifndef ONNXC_QUANT_LOOKUP_AVX512VBMI_H
#define ONNXC_QUANT_LOOKUP_AVX512VBMI_H

#if defined(__AVX512BW__) && defined(__AVX512VBMI__)
#define ONNXC_LOOKUP_AVX512VBMI 1

namespace onnxc {
namespace rt {
namespace detail {

// y[i] = table[x[i] - lowest] for i < n rounded down to 64; returns how many it did.
template <class Q>
inline index_t lookup_avx512vbmi(const Q* x, const Q* table, Q* y, index_t n) {
  // The table index: x for uint8, x + 128 = x ^ 0x80 for int8.
  const __m512i flip = _mm512_set1_epi8(std::numeric_limits<Q>::is_signed ? static_cast<char>(0x80) : 0);
  const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64);
  const __m512i t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
  index_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512i index = _mm512_xor_si512(_mm512_loadu_si512(x + i), flip);
    const __m512i low = _mm512_permutex2var_epi8(t0, index, t1);
    const __m512i high = _mm512_permutex2var_epi8(t2, index, t3);
    _mm512_storeu_si512(y + i, _mm512_mask_blend_epi8(_mm512_movepi8_mask(index), low, high));
  }
  return i;
}

}  // namespace detail
}  // namespace rt
}  // namespace onnxc

#endif
#endif
