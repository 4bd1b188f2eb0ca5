// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// im2col rows by gathers on AVX2 (included by conv.h, which defines ConvParams and
// OutputPosition): for output rows narrower than a vector (a 7 x 7 plane: regnet's and ResNet's
// last stages), where copying each output row as a segment costs a masked load and store per
// few floats. A vector of 8 output positions, spanning output rows, is one gather from the input
// plane; lanes whose tap falls in the padding (or past `cols`) are masked off and zero. The
// AVX-512 variant is conv.h's im2col_row_gathered. Tested through rt::conv_gemm against
// rt::conv (tests/unit: unit.avx2).
#ifndef ONNXC_IM2COL_GATHER_AVX2_H
#define ONNXC_IM2COL_GATHER_AVX2_H

#include <immintrin.h>

namespace onnxc {
namespace rt {

inline bool im2col_gathers_rows_avx2(const ConvParams& p) { return p.out_w < 8 && p.in_d == 1 && p.k_d == 1; }

inline void im2col_row_gathered_avx2(const ConvParams& p, const float* xc, index_t kh, index_t kw, OutputPosition from,
                                     index_t cols, float* col) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i one = _mm256_set1_epi32(1), out_w = _mm256_set1_epi32(static_cast<int>(p.out_w));
  // Each lane's output row and column; a lane at or past out_w wraps to the next row (at most
  // 8 / out_w times for the first vector, once per step after it: the step is < out_w + 8).
  auto wrap = [&](__m256i& ow, __m256i& oh) {
    for (;;) {
      const __m256i past = _mm256_cmpgt_epi32(ow, _mm256_sub_epi32(out_w, one));  // ow >= out_w
      if (_mm256_testz_si256(past, past)) return;
      ow = _mm256_sub_epi32(ow, _mm256_and_si256(past, out_w));
      oh = _mm256_sub_epi32(oh, past);  // past lanes are -1
    }
  };
  __m256i ow = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(from.ow)), lane);
  __m256i oh = _mm256_set1_epi32(static_cast<int>(from.oh));
  wrap(ow, oh);
  const __m256i step_w = _mm256_set1_epi32(static_cast<int>(8 % p.out_w));
  const __m256i step_h = _mm256_set1_epi32(static_cast<int>(8 / p.out_w));
  const __m256i stride_h = _mm256_set1_epi32(static_cast<int>(p.stride_h));
  const __m256i stride_w = _mm256_set1_epi32(static_cast<int>(p.stride_w));
  const __m256i row0 = _mm256_set1_epi32(static_cast<int>(kh * p.dilation_h - p.pad_h));
  const __m256i column0 = _mm256_set1_epi32(static_cast<int>(kw * p.dilation_w - p.pad_w));
  const __m256i in_h = _mm256_set1_epi32(static_cast<int>(p.in_h)), in_w = _mm256_set1_epi32(static_cast<int>(p.in_w));
  const __m256i minus_one = _mm256_set1_epi32(-1);
  for (index_t j = 0; j < cols; j += 8) {
    const index_t left = cols - j;
    const __m256i ih = _mm256_add_epi32(_mm256_mullo_epi32(oh, stride_h), row0);
    const __m256i iw = _mm256_add_epi32(_mm256_mullo_epi32(ow, stride_w), column0);
    // 0 <= ih < in_h and 0 <= iw < in_w, as signed compares.
    __m256i inside = _mm256_and_si256(_mm256_cmpgt_epi32(ih, minus_one), _mm256_cmpgt_epi32(in_h, ih));
    inside = _mm256_and_si256(inside, _mm256_and_si256(_mm256_cmpgt_epi32(iw, minus_one), _mm256_cmpgt_epi32(in_w, iw)));
    if (left < 8) inside = _mm256_and_si256(inside, _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(left)), lane));
    // Masked-off lanes read nothing, so their (possibly negative) index is never used.
    const __m256i at = _mm256_add_epi32(_mm256_mullo_epi32(ih, in_w), iw);
    const __m256 v = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), xc, at, _mm256_castsi256_ps(inside), 4);
    if (left >= 8) _mm256_storeu_ps(col + j, v);
    else _mm256_maskstore_ps(col + j, _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(left)), lane), v);
    ow = _mm256_add_epi32(ow, step_w);
    oh = _mm256_add_epi32(oh, step_h);
    wrap(ow, oh);
  }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_IM2COL_GATHER_AVX2_H
