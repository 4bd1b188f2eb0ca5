// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// QLinearAdd of two same-shape tensors (rt::zip with the QLinearAdd functor) on AVX2 without
// AVX-512: the AVX-512 form's steps (quant_add_avx512.h) on eight values per vector, sixteen per
// turn: widened to int32, less their zero points, scaled and added in float as the functor does
// (one FMA where the target has FMA, as the compiler contracts the scalar expression), clamped to
// the output's range less its zero point, converted rounding to nearest even, narrowed to bytes:
// the functor's bits (tests/unit/quant_simd_test.cpp checks it against the functor). Included by
// quant.h after QLinearAdd.
#ifndef ONNXC_QUANT_ADD_AVX2_H
#define ONNXC_QUANT_ADD_AVX2_H

#if defined(__AVX2__) && !defined(ONNXC_QLINEAR_ADD_AVX512)
#define ONNXC_QLINEAR_ADD_AVX2 1

namespace onnxc {
namespace rt {
namespace detail {

inline __m256i widen8_bytes_to_epi32(__m128i v, std::uint8_t) { return _mm256_cvtepu8_epi32(v); }
inline __m256i widen8_bytes_to_epi32(__m128i v, std::int8_t) { return _mm256_cvtepi8_epi32(v); }

}  // namespace detail

template <class Q>
inline void zip(const Q* a, const Q* b, Q* y, index_t n, QLinearAdd f) {
  const __m256 a_ratio = _mm256_set1_ps(f.a_ratio), b_ratio = _mm256_set1_ps(f.b_ratio);
  const __m256i za = _mm256_set1_epi32(f.a_zero_point), zb = _mm256_set1_epi32(f.b_zero_point);
  const __m256i zc = _mm256_set1_epi32(f.c_zero_point);
  const __m256 lo = _mm256_set1_ps(static_cast<float>(static_cast<std::int32_t>(std::numeric_limits<Q>::lowest()) - f.c_zero_point));
  const __m256 hi = _mm256_set1_ps(static_cast<float>(static_cast<std::int32_t>(std::numeric_limits<Q>::max()) - f.c_zero_point));
  const auto eight = [&](__m128i av, __m128i bv) {
    const __m256 da = _mm256_cvtepi32_ps(_mm256_sub_epi32(detail::widen8_bytes_to_epi32(av, Q{}), za));
    const __m256 db = _mm256_cvtepi32_ps(_mm256_sub_epi32(detail::widen8_bytes_to_epi32(bv, Q{}), zb));
#if defined(__FMA__)
    __m256 v = _mm256_fmadd_ps(a_ratio, da, _mm256_mul_ps(b_ratio, db));
#else
    __m256 v = _mm256_add_ps(_mm256_mul_ps(a_ratio, da), _mm256_mul_ps(b_ratio, db));
#endif
    v = _mm256_min_ps(_mm256_max_ps(v, lo), hi);
    return _mm256_add_epi32(_mm256_cvtps_epi32(v), zc);  // in Q's range
  };
  index_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i av = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i));
    const __m128i bv = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i));
    const __m256i q0 = eight(av, bv), q1 = eight(_mm_unpackhi_epi64(av, av), _mm_unpackhi_epi64(bv, bv));
    // Two vectors of eight int32 to sixteen bytes, in order (the saturating narrowings keep Q's range).
    const __m256i words = _mm256_permute4x64_epi64(_mm256_packs_epi32(q0, q1), 0xD8);
    const __m128i lo_words = _mm256_castsi256_si128(words), hi_words = _mm256_extracti128_si256(words, 1);
    const __m128i bytes = std::numeric_limits<Q>::is_signed ? _mm_packs_epi16(lo_words, hi_words)
                                                            : _mm_packus_epi16(lo_words, hi_words);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), bytes);
  }
  for (; i < n; ++i) y[i] = f(a[i], b[i]);
}

}  // namespace rt
}  // namespace onnxc

#endif
#endif
