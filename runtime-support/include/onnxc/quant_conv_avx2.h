// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// Direct integer convolution with AVX2 (rt::qconv_avx2): one-group 2-D convolutions of any kernel,
// stride, dilation and padding, no im2col, no scratch (the input vectors live on the stack).
// Included by quant.h after the portable part (qconv_avx2_applies, qconv_avx2_pack_weights);
// tested against rt::conv_integer (tests/unit/quant_conv_avx2_test.cpp).
//
// AVX2 has no byte dot product that is exact for uint8 x int8 (VPMADDUBSW saturates its 16-bit
// pair sums), so the products are 16-bit: each lane of an input vector holds one output position's
// two input channels (x[c] - x_zp, x[c + 1] - x_zp) as two int16, each weight word the output
// channel's two weights (w[m, c], w[m, c + 1]) as two int16 (packed at compile time), and one
// VPMADDWD gives the two products' sum in int32, exactly. x_zp is taken off the input (padding is
// then 0), so no weight-sum correction is needed. Eight outputs per vector, a register tile of
// kQConvAvx2Channels output channels times one or two vectors.
//
// With one input channel (a first layer) the pairs are two kernel rows of it instead of two
// channels (qconv_avx2_half), so no half of a product is idle.
//
// Input vectors: a 1x1 convolution of stride 1 without padding reads sixteen consecutive positions
// of each channel pair once per block (for all output channels); any other convolution runs by
// output rows: the input rows under one output row are widened once into a stack buffer (phase-
// column i of phase f: input column i * stride_w + f - pad_w, 0 outside the input), and every
// tap's vector is one load from it.
#ifndef ONNXC_QUANT_CONV_AVX2_H
#define ONNXC_QUANT_CONV_AVX2_H

namespace onnxc {
namespace rt {

#if defined(__AVX2__)
#define ONNXC_QCONV_AVX2 1  // qconv_avx2 computes; generated code takes it where it has its weights
namespace detail {

// store_row of the n <= 8 lanes of a vector of accumulators, less offset.
template <class Out>
inline void store_vector8(const Out& out, index_t channel, index_t i, __m256i acc, index_t n, std::int32_t offset) {
  alignas(32) std::int32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), acc);
  store_row(out, channel, i, lanes, n, offset);
}

#if !defined(ONNXC_REQUANTIZE_IN_INTEGERS)
// The requantization in the vector, bit for bit quantize_value's (as store_vector on AVX-512):
// float(acc + bias) * multiplier clamped to Q's range less the zero point, rounded to nearest
// even (the default rounding mode), plus the zero point, narrowed to bytes.
template <class Q, class R>
inline void store_vector8(const RequantizeOutput<Q, R>& out, index_t channel, index_t i, __m256i acc, index_t n,
                          std::int32_t offset) {
  static_assert(sizeof(Q) == 1, "8-bit outputs");
  const std::int32_t zp = out.zero_point;
  const std::int32_t add = static_cast<std::int32_t>(requant_addend(out, channel, offset));
  const float multiplier = out.requant[channel * out.requant_stride].multiplier;
  const float lo = static_cast<float>(static_cast<std::int32_t>(std::numeric_limits<Q>::lowest()) - zp);
  const float hi = static_cast<float>(static_cast<std::int32_t>(std::numeric_limits<Q>::max()) - zp);
  const __m256i biased = _mm256_add_epi32(acc, _mm256_set1_epi32(add));
  __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(biased), _mm256_set1_ps(multiplier));
  v = _mm256_min_ps(_mm256_max_ps(v, _mm256_set1_ps(lo)), _mm256_set1_ps(hi));
  const __m256i q = _mm256_add_epi32(_mm256_cvtps_epi32(v), _mm256_set1_epi32(zp));
  // In Q's range, so the saturating narrowings keep every value.
  const __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
  const __m128i bytes = std::numeric_limits<Q>::is_signed ? _mm_packs_epi16(words, words) : _mm_packus_epi16(words, words);
  if (n >= 8) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out.y + i), bytes);
    return;
  }
  alignas(16) Q b[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(b), bytes);
  for (index_t j = 0; j < n; ++j) out.y[i + j] = b[j];
}
#endif

// RequantizeAddOutput's row of n <= 8 lanes in the vector, bit for bit its store_row (quant.h).
template <class Q, class R, class T>
inline void store_vector8(const RequantizeAddOutput<Q, R, T>& out, index_t channel, index_t i, __m256i acc, index_t n,
                          std::int32_t offset) {
  static_assert(sizeof(Q) == 1 && sizeof(T) == 1, "8-bit outputs and residuals");
  const std::int32_t zp = out.requant.zero_point;
  const std::int32_t add = static_cast<std::int32_t>(requant_addend(out.requant, channel, offset));
  const float multiplier = requant_multiplier(out.requant.requant[channel * out.requant.requant_stride]);
  alignas(16) T rb[16] = {};
  std::int64_t eight = 0;
  if (n >= 8) {
    std::memcpy(&eight, out.residual + i, 8);
  } else {
    for (index_t j = 0; j < n; ++j) rb[j] = out.residual[i + j];
    std::memcpy(&eight, rb, 8);
  }
  const __m128i bytes = _mm_cvtsi64_si128(eight);
  const __m256i r = std::numeric_limits<T>::is_signed ? _mm256_cvtepi8_epi32(bytes) : _mm256_cvtepu8_epi32(bytes);
  const __m256 rv = _mm256_cvtepi32_ps(_mm256_sub_epi32(r, _mm256_set1_epi32(out.residual_zero_point)));
  const __m256i biased = _mm256_add_epi32(acc, _mm256_set1_epi32(add));
  __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(biased), _mm256_set1_ps(multiplier));
  v = _mm256_add_ps(v, _mm256_mul_ps(rv, _mm256_set1_ps(out.residual_multiplier)));
  v = _mm256_min_ps(_mm256_max_ps(v, _mm256_set1_ps(static_cast<float>(out.low - zp))),
                    _mm256_set1_ps(static_cast<float>(out.high - zp)));
  const __m256i q = _mm256_add_epi32(_mm256_cvtps_epi32(v), _mm256_set1_epi32(zp));
  const __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
  const __m128i packed = std::numeric_limits<Q>::is_signed ? _mm_packs_epi16(words, words) : _mm_packus_epi16(words, words);
  if (n >= 8) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out.requant.y + i), packed);
    return;
  }
  alignas(16) Q b[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(b), packed);
  for (index_t j = 0; j < n; ++j) out.requant.y[i + j] = b[j];
}

// Sixteen positions of two channels (a, b: 16 bytes each) as two vectors of eight lanes
// (a_j - zx, b_j - zx) of int16.
inline void qconv_avx2_widen(__m128i a, __m128i b, __m256i zx, __m256i* dst) {
  dst[0] = _mm256_sub_epi16(_mm256_cvtepu8_epi16(_mm_unpacklo_epi8(a, b)), zx);
  dst[1] = _mm256_sub_epi16(_mm256_cvtepu8_epi16(_mm_unpackhi_epi8(a, b)), zx);
}

// The register tiles of `lanes` <= 8 * Vectors outputs from flat index i of batch b's planes:
// the input vectors of channel pair c2 and tap t at input + c2 * pair_stride + tap_offsets[t]
// (int32 lanes), consecutive.
template <int Vectors, class Out>
inline void qconv_avx2_tiles(const ConvParams& p, const std::int32_t* input, index_t pair_stride,
                             const index_t* tap_offsets, const std::int32_t* wp, index_t b, index_t i, index_t lanes,
                             const Out& out) {
  const QConvAvx2Pairs layout = qconv_avx2_pairs(p);
  const index_t pairs = layout.pairs, padded = qconv_avx2_padded_channels(p), taps = layout.rows * p.k_w;
  const index_t out_plane = p.out_h * p.out_w;
  for (index_t m0 = 0; m0 < p.out_channels; m0 += kQConvAvx2Channels) {
    __m256i acc[kQConvAvx2Channels][Vectors];
    ONNXC_UNROLL for (int r = 0; r < kQConvAvx2Channels; ++r)
      ONNXC_UNROLL for (int v = 0; v < Vectors; ++v) acc[r][v] = _mm256_setzero_si256();
    const std::int32_t* wt = wp + m0;
    for (index_t c2 = 0; c2 < pairs; ++c2) {
      const std::int32_t* pair = input + c2 * pair_stride;
      for (index_t t = 0; t < taps; ++t, wt += padded) {
          __m256i xv[Vectors];
          ONNXC_UNROLL for (int v = 0; v < Vectors; ++v)
            xv[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(pair + tap_offsets[t] + 8 * v));
          ONNXC_UNROLL for (int r = 0; r < kQConvAvx2Channels; ++r) {
            const __m256i wv = _mm256_set1_epi32(wt[r]);
            ONNXC_UNROLL for (int v = 0; v < Vectors; ++v)
              acc[r][v] = _mm256_add_epi32(acc[r][v], _mm256_madd_epi16(xv[v], wv));
          }
      }
    }
    ONNXC_UNROLL for (int r = 0; r < kQConvAvx2Channels; ++r) {
      if (m0 + r >= p.out_channels) break;
      ONNXC_UNROLL for (int v = 0; v < Vectors; ++v) {
        const index_t n = lanes - 8 * v;
        if (n > 0)
          store_vector8(out, m0 + r, (b * p.out_channels + m0 + r) * out_plane + i + 8 * v, acc[r][v], n < 8 ? n : 8, 0);
      }
    }
  }
}

// A 1x1 convolution of stride 1 without padding (p: qconv_vnni_geometry's single row): blocks of
// sixteen positions, each channel pair widened once per block.
template <class Out>
inline void qconv_avx2_flat(const ConvParams& p, const std::uint8_t* x, std::uint8_t x_zero_point,
                            const std::int32_t* wp, Out out) {
  const index_t pairs = (p.in_channels + 1) / 2, plane = p.out_w;
  const __m256i zx = _mm256_set1_epi16(x_zero_point);
  const __m128i zx_bytes = _mm_set1_epi8(static_cast<char>(x_zero_point));
  alignas(32) __m256i inputs[kQConvAvx2BufferBytes / 32];
  const index_t tap_offset = 0;
  for (index_t b = 0; b < p.batch; ++b) {
    const std::uint8_t* xb = x + b * p.in_channels * plane;
    for (index_t q0 = 0; q0 < plane; q0 += 16) {
      const index_t lanes = plane - q0 < 16 ? plane - q0 : 16;
      for (index_t c2 = 0; c2 < pairs; ++c2) {
        __m128i r[2] = {zx_bytes, zx_bytes};
        for (index_t t = 0; t < 2 && 2 * c2 + t < p.in_channels; ++t) {
          const std::uint8_t* src = xb + (2 * c2 + t) * plane + q0;
          if (lanes == 16) {
            r[t] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
          } else {  // the plane's last positions: no read past them
            alignas(16) std::uint8_t tail[16];
            _mm_store_si128(reinterpret_cast<__m128i*>(tail), zx_bytes);
            std::memcpy(tail, src, static_cast<std::size_t>(lanes));
            r[t] = _mm_load_si128(reinterpret_cast<const __m128i*>(tail));
          }
        }
        qconv_avx2_widen(r[0], r[1], zx, inputs + 2 * c2);
      }
      qconv_avx2_tiles<2>(p, reinterpret_cast<const std::int32_t*>(inputs), 16, &tap_offset, wp, b, q0, lanes, out);
    }
  }
}

// The input rows under output row oh of one image, widened into `buffer` (qconv_avx2_row_width
// phase-columns per row, rows ordered (c2, kh, phase)).
inline void qconv_avx2_rows(const ConvParams& p, const std::uint8_t* x, std::uint8_t x_zero_point, index_t oh,
                            std::int32_t* buffer) {
  const QConvAvx2Pairs layout = qconv_avx2_pairs(p);
  const index_t s = p.stride_w, width = qconv_avx2_row_width(p);
  const __m256i zx = _mm256_set1_epi16(x_zero_point);
  alignas(16) std::uint8_t row[2][kQConvAvx2MaxRowWidth];
  for (index_t c2 = 0; c2 < layout.pairs; ++c2)
    for (index_t kh = 0; kh < layout.rows; ++kh) {
      for (index_t phase = 0; phase < s; ++phase) {
        for (index_t t = 0; t < 2; ++t) {
          std::memset(row[t], x_zero_point, static_cast<std::size_t>(width));
          index_t ic = 0, kernel_row = 0;
          if (!qconv_avx2_half(p, c2, kh, t, &ic, &kernel_row)) continue;
          const index_t ih = oh * p.stride_h + kernel_row * p.dilation_h - p.pad_h;
          if (ih < 0 || ih >= p.in_h) continue;
          const std::uint8_t* src = x + (ic * p.in_h + ih) * p.in_w;
          // Phase-columns i whose input column i * s + phase - pad_w is inside the row.
          const index_t first = phase - p.pad_w;
          const index_t lo = first < 0 ? (-first + s - 1) / s : 0;
          index_t hi = p.in_w > first ? (p.in_w - first + s - 1) / s : 0;
          hi = hi < width ? hi : width;
          if (s == 1) {
            if (hi > lo) std::memcpy(row[t] + lo, src + lo + first, static_cast<std::size_t>(hi - lo));
          } else {
            for (index_t col = lo; col < hi; ++col) row[t][col] = src[col * s + first];
          }
        }
        __m256i* dst = reinterpret_cast<__m256i*>(buffer + ((c2 * layout.rows + kh) * s + phase) * width);
        for (index_t i = 0; i < width; i += 16)
          qconv_avx2_widen(_mm_load_si128(reinterpret_cast<const __m128i*>(row[0] + i)),
                           _mm_load_si128(reinterpret_cast<const __m128i*>(row[1] + i)), zx, dst + i / 8);
      }
    }
}

template <int Vectors, class Out>
inline void qconv_avx2_by_rows(const ConvParams& p, const std::uint8_t* x, std::uint8_t x_zero_point,
                               const std::int32_t* wp, Out out) {
  const index_t s = p.stride_w, width = qconv_avx2_row_width(p), block = 8 * Vectors;
  const index_t rows = qconv_avx2_pairs(p).rows;
  alignas(32) std::int32_t buffer[kQConvAvx2BufferBytes / 4];
  // Tap (kh, kw) of the block from output column ow0 on (kh: a kernel row of the pairs): phase-column
  // ow0 + kw * dilation_w / s of phase kw * dilation_w % s (output column ow reads input column
  // ow * s + kw * dilation_w - pad_w).
  index_t tap_offsets[kQConvAvx2MaxTaps];
  for (index_t kh = 0; kh < rows; ++kh)
    for (index_t kw = 0; kw < p.k_w; ++kw) {
      const index_t shift = kw * p.dilation_w;
      tap_offsets[kh * p.k_w + kw] = (kh * s + shift % s) * width + shift / s;
    }
  for (index_t b = 0; b < p.batch; ++b) {
    const std::uint8_t* xb = x + b * p.in_channels * p.in_h * p.in_w;
    for (index_t oh = 0; oh < p.out_h; ++oh) {
      qconv_avx2_rows(p, xb, x_zero_point, oh, buffer);
      for (index_t ow0 = 0; ow0 < p.out_w; ow0 += block)
        qconv_avx2_tiles<Vectors>(p, buffer + ow0, rows * s * width, tap_offsets, wp, b, oh * p.out_w + ow0,
                                  p.out_w - ow0 < block ? p.out_w - ow0 : block, out);
    }
  }
}

}  // namespace detail
#endif

// y = conv(x - x_zp, w): out(channel, flat index, acc) as for conv_integer. w_pairs:
// qconv_avx2_pack_weights. Without AVX2 it is never called (the generated code takes another
// kernel).
template <class Out>
inline void qconv_avx2(const ConvParams& conv, const std::uint8_t* x, std::uint8_t x_zero_point,
                       const std::int32_t* w_pairs, Out out) {
#if defined(ONNXC_QCONV_AVX2)
  const ConvParams p = qconv_vnni_geometry(conv);
  if (conv_reads_input_as_matrix(conv)) return detail::qconv_avx2_flat(p, x, x_zero_point, w_pairs, out);
  if (p.out_w > 8) return detail::qconv_avx2_by_rows<2>(p, x, x_zero_point, w_pairs, out);
  detail::qconv_avx2_by_rows<1>(p, x, x_zero_point, w_pairs, out);
#else
  (void)conv, (void)x, (void)x_zero_point, (void)w_pairs, (void)out;
#endif
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_QUANT_CONV_AVX2_H
