// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// Depthwise integer convolution with AVX2 and no scratch (detail::depthwise_integer_avx2): any
// kernel, stride, dilation and padding, uint8 or int8 x, weight zero points per channel. Included
// by quant.h after the portable depthwise kernels and depthwise_avx2_applies; tested against
// rt::conv_integer (tests/unit/quant_simd_test.cpp).
//
// One channel at a time: its input plane with the padding (x's zero point) is copied onto the
// stack, each row split by the horizontal stride into phases (phase f holds input columns
// i * stride_w + f - pad_w), so that eight consecutive outputs of a row read eight consecutive
// bytes under every tap. Each byte widened to a 32-bit lane (value in the low 16 bits) and one
// VPMADDWD by the weight broadcast as 16-bit pairs (w - zw, 0) gives x * (w - zw) exactly; x's
// zero point leaves the loop as zx * sum(w - zw), one constant per channel.
#ifndef ONNXC_QUANT_DEPTHWISE_AVX2_H
#define ONNXC_QUANT_DEPTHWISE_AVX2_H

namespace onnxc {
namespace rt {

#if defined(__AVX2__)
#define ONNXC_DEPTHWISE_AVX2 1
namespace detail {

inline __m256i widen8_to_epi32(const std::uint8_t* p) {
  return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}
inline __m256i widen8_to_epi32(const std::int8_t* p) {
  return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}

template <class X, class W, class Out>
inline void depthwise_integer_avx2(const ConvParams& p, QuantOperand<X> x, QuantOperand<W> w, Out out) {
  const X zx = static_cast<X>(x.zero_point_at(0));
  const index_t s = p.stride_w, rows = depthwise_avx2_rows(p), width = depthwise_avx2_width(p);
  const index_t in_plane = p.in_h * p.in_w, out_plane = p.out_h * p.out_w, taps = p.k_h * p.k_w;
  alignas(32) X plane[kDepthwiseAvx2PlaneBytes / sizeof(X)];
  // Tap (kh, kw) of the outputs from column ow0 of output row oh: phase-column ow0 + kw * dilation_w / s
  // of phase kw * dilation_w % s in padded row oh * stride_h + kh * dilation_h.
  index_t tap_offsets[kDepthwiseAvx2MaxTaps];
  for (index_t kh = 0; kh < p.k_h; ++kh)
    for (index_t kw = 0; kw < p.k_w; ++kw) {
      const index_t shift = kw * p.dilation_w;
      tap_offsets[kh * p.k_w + kw] = (kh * p.dilation_h * s + shift % s) * width + shift / s;
    }
  for (index_t n = 0; n < p.batch; ++n)
    for (index_t c = 0; c < p.out_channels; ++c) {
      // The padded, phase-split plane: padded row r holds input row r - pad_h.
      std::memset(plane, static_cast<unsigned char>(zx), static_cast<std::size_t>(rows * s * width) * sizeof(X));
      const X* src = x.data + (n * p.in_channels + c) * in_plane;
      for (index_t phase = 0; phase < s; ++phase) {
        const index_t first = phase - p.pad_w;  // input column of phase-column 0
        const index_t lo = first < 0 ? (-first + s - 1) / s : 0;
        index_t hi = p.in_w > first ? (p.in_w - first + s - 1) / s : 0;
        hi = hi < width ? hi : width;
        for (index_t ih = 0; ih < p.in_h; ++ih) {
          const index_t r = ih + p.pad_h;
          if (r >= rows || hi <= lo) continue;
          X* dst = plane + (r * s + phase) * width;
          const X* row = src + ih * p.in_w + first;
          if (s == 1)
            std::memcpy(dst + lo, row + lo, static_cast<std::size_t>(hi - lo) * sizeof(X));
          else
            for (index_t i = lo; i < hi; ++i) dst[i] = row[i * s];
        }
      }
      const W* wc = w.data + c * taps;
      const std::int32_t zw = w.zero_point_at(c);
      std::int32_t weight_sum = 0;
      __m256i weights[kDepthwiseAvx2MaxTaps];
      for (index_t t = 0; t < taps; ++t) {
        const std::int32_t weight = static_cast<std::int32_t>(wc[t]) - zw;
        weight_sum += weight;
        weights[t] = _mm256_set1_epi32(weight & 0xFFFF);
      }
      const std::int32_t correction = static_cast<std::int32_t>(zx) * weight_sum;
      for (index_t oh = 0; oh < p.out_h; ++oh) {
        const X* base = plane + oh * p.stride_h * s * width;
        for (index_t ow0 = 0; ow0 < p.out_w; ow0 += 8) {
          __m256i sum = _mm256_setzero_si256();
          for (index_t t = 0; t < taps; ++t)
            sum = _mm256_add_epi32(sum, _mm256_madd_epi16(widen8_to_epi32(base + tap_offsets[t] + ow0), weights[t]));
          const index_t lanes = p.out_w - ow0 < 8 ? p.out_w - ow0 : 8;
          store_vector8(out, c, (n * p.out_channels + c) * out_plane + oh * p.out_w + ow0, sum, lanes, correction);
        }
      }
    }
}

}  // namespace detail
#endif

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_QUANT_DEPTHWISE_AVX2_H
