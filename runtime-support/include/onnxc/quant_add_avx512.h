// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// QLinearAdd of two same-shape tensors (rt::zip with the QLinearAdd functor) on AVX-512: sixteen
// values per step, widened to int32, less their zero points, scaled and added in float as the
// functor does (a_ratio * da + b_ratio * db: one FMA where the target has FMA, as the compiler
// contracts the scalar expression), clamped to the output's range less its zero point and
// converted rounding to nearest even: the functor's bits (tests/unit/quant_simd_test.cpp checks
// it against the functor). Included by quant.h after QLinearAdd.
#ifndef ONNXC_QUANT_ADD_AVX512_H
#define ONNXC_QUANT_ADD_AVX512_H

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)  // (widen_to_epi32's condition)
#define ONNXC_QLINEAR_ADD_AVX512 1

namespace onnxc {
namespace rt {

template <class Q>
inline void zip(const Q* a, const Q* b, Q* y, index_t n, QLinearAdd f) {
  const __mmask16 all = 0xFFFF;  // (the zero-masked forms: the unmasked ones trip GCC 12's -Wuninitialized)
  const __m512 a_ratio = _mm512_set1_ps(f.a_ratio), b_ratio = _mm512_set1_ps(f.b_ratio);
  const __m512i za = _mm512_set1_epi32(f.a_zero_point), zb = _mm512_set1_epi32(f.b_zero_point);
  const __m512i zc = _mm512_set1_epi32(f.c_zero_point);
  const __m512 lo = _mm512_set1_ps(static_cast<float>(static_cast<std::int32_t>(std::numeric_limits<Q>::lowest()) - f.c_zero_point));
  const __m512 hi = _mm512_set1_ps(static_cast<float>(static_cast<std::int32_t>(std::numeric_limits<Q>::max()) - f.c_zero_point));
  index_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i av = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i));
    const __m128i bv = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i));
    const __m512 da = _mm512_maskz_cvtepi32_ps(all, _mm512_sub_epi32(detail::widen_to_epi32(av, Q{}), za));
    const __m512 db = _mm512_maskz_cvtepi32_ps(all, _mm512_sub_epi32(detail::widen_to_epi32(bv, Q{}), zb));
#if defined(__FMA__)
    __m512 v = _mm512_fmadd_ps(a_ratio, da, _mm512_mul_ps(b_ratio, db));
#else
    __m512 v = _mm512_add_ps(_mm512_mul_ps(a_ratio, da), _mm512_mul_ps(b_ratio, db));
#endif
    v = _mm512_maskz_min_ps(all, _mm512_maskz_max_ps(all, v, lo), hi);
    const __m512i q = _mm512_add_epi32(_mm512_maskz_cvtps_epi32(all, v), zc);
    _mm512_mask_cvtepi32_storeu_epi8(y + i, all, q);  // in Q's range: truncation keeps it
  }
  for (; i < n; ++i) y[i] = f(a[i], b[i]);
}

}  // namespace rt
}  // namespace onnxc

#endif
#endif
