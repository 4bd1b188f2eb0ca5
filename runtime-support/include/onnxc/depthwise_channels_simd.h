// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// Depthwise convolution of narrow planes with the channels in the vector lanes (SIMD targets:
// AVX-512 and AVX2 through xsimd's vfloat; included by conv.h, which defines ConvParams and
// the depthwise helpers it uses).
//
// A plane whose output rows are narrower than a vector (a 14 x 14 plane under a stride-2 kernel:
// 7-wide rows) fills few lanes per output row, and its input rows are as costly to pad or split
// as the taps over them. Here L channels (a vector's lanes) go together: their planes are copied,
// zero-padded, into one interleaved plane (padded position i holds the L channels' values at
// floats [i * L, i * L + L)), the weights likewise (tap t's L weights at [t * L, t * L + L)),
// so every tap of every output position is one FMA of two whole vectors, whatever the kernel,
// stride or dilation; four output positions accumulate together, then the output is copied back
// into the channels' planes. The channel block's padding stays zero across blocks.
#ifndef ONNXC_DEPTHWISE_CHANNELS_SIMD_H
#define ONNXC_DEPTHWISE_CHANNELS_SIMD_H

namespace onnxc {
namespace rt {
namespace depthwise_channels_detail {

// The geometry is here for every target (the compiler sizes the scratch of SIMD code without
// SIMD): lanes are counted as AVX-512's 16, the most any target has.
constexpr index_t kMaxLanes = 16;
constexpr index_t kMaxOutputWidth = 16;     // wider rows fill the lanes of the row kernels
// Interleaved planes of up to 128 KiB (in L2): against the stride phases, whose per-row and
// per-plane work weighs on planes this small, one layer alone, AVX-512, Relu: 240 x 28 x 28 5x5
// stride 2 (32 x 32 padded) 94 -> 64 us, 480 x 28 x 28 7x7 stride 2 (34 x 34) 300 -> 191, 64 x
// 30 x 30 5x5 stride 2 30 -> 21, 'same' 240 x 16 x 16 9x9 206 -> 115 (docs/performance.md).
constexpr index_t kMaxPaddedPlane = 2048;

inline index_t padded_plane(const ConvParams& p) { return padded_input_h(p) * padded_input_w(p); }
inline bool applies(const ConvParams& p) {
  return p.in_d == 1 && p.k_d == 1 && p.out_w <= kMaxOutputWidth && padded_plane(p) <= kMaxPaddedPlane;
}
// 'Same' stride-1 planes that conv_depthwise_in_place would compute as flat arrays, which the
// kernel here computes faster when given its scratch (Target::depthwise_channel_lanes: the
// compiler gives them scratch there): kernels of at least kLanesMinTaps taps, output rows no
// wider than `lanes` (the target's vector: 16, AVX-512; 8, AVX2). One layer alone, Relu, AVX-512:
// 960 x 14 x 14 5x5 235 -> 144 us, 240 x 14 x 14 5x5 59 -> 37, 960 x 7 x 7 5x5 99 -> 49; 3x3
// about even (192 x 14 x 14 17 against 17, 480 x 14 x 14 dilation 2 44 against 43). AVX2, no
// activation: 1152 x 7 x 7 5x5 365 -> 108, 240 x 7 x 7 5x5 75 -> 22, 480 x 8 x 8 5x5 137 -> 52,
// 256 x 6 x 6 7x7 146 -> 25 (docs/performance-avx2.md, 'Eighth round').
constexpr index_t kLanesMinTaps = 25;
inline bool prefers_lanes(const ConvParams& p, index_t lanes = kMaxLanes) {
  return applies(p) && p.out_w <= lanes && p.k_h * p.k_w >= kLanesMinTaps;
}
// The interleaved padded plane, the interleaved output and the interleaved weights.
inline index_t scratch_floats(const ConvParams& p) {
  return (padded_plane(p) + p.out_h * p.out_w + p.k_h * p.k_w) * kMaxLanes + kMaxLanes;
}

#if defined(ONNXC_SIMD)

// Output positions [ow, ow + N) of output row oh, all lanes, from the interleaved plane `in`
// (padded_w positions a row) and weights `wt`, into the interleaved output row `out`.
template <int N>
inline void output_positions(const ConvParams& p, const float* in, const float* wt, vfloat bias, index_t oh,
                             index_t ow, float* out, const packed_gemm_detail::Clamp& c) {
  const index_t width = padded_input_w(p), step = p.stride_w * kFloatLanes;
  vfloat acc[N];
  for (int n = 0; n < N; ++n) acc[n] = bias;
  for (index_t kh = 0; kh < p.k_h; ++kh) {
    const float* row = in + ((oh * p.stride_h + kh * p.dilation_h) * width + ow * p.stride_w) * kFloatLanes;
    for (index_t kw = 0; kw < p.k_w; ++kw) {
      const vfloat w = vfloat::load_aligned(wt + (kh * p.k_w + kw) * kFloatLanes);
      const float* at = row + kw * p.dilation_w * kFloatLanes;
      for (int n = 0; n < N; ++n) acc[n] = xsimd::fma(w, vfloat::load_aligned(at + n * step), acc[n]);
    }
  }
  for (int n = 0; n < N; ++n) packed_gemm_detail::clamp(c, acc[n]).store_aligned(out + (ow + n) * kFloatLanes);
}

#if defined(__AVX512F__)
// r[j] = column j of the 16 x 16 matrix whose row i was r[i] (three rounds of in-lane shuffles).
inline void transpose16(__m512 (&r)[16]) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  // u[4g + c]: rows 4g..4g+3 of columns c, 4 + c, 8 + c, 12 + c (one per 128-bit lane).
  __m512 u[16];
  for (int g = 0; g < 16; g += 4) {
    u[g] = _mm512_shuffle_ps(t[g], t[g + 2], 0x44);
    u[g + 1] = _mm512_shuffle_ps(t[g], t[g + 2], 0xEE);
    u[g + 2] = _mm512_shuffle_ps(t[g + 1], t[g + 3], 0x44);
    u[g + 3] = _mm512_shuffle_ps(t[g + 1], t[g + 3], 0xEE);
  }
  for (int c = 0; c < 4; ++c) {
    const __m512 w0 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0x44), w1 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0xEE);
    const __m512 w2 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0x44);
    const __m512 w3 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0xEE);
    r[c] = _mm512_shuffle_f32x4(w0, w2, 0x88);
    r[4 + c] = _mm512_shuffle_f32x4(w0, w2, 0xDD);
    r[8 + c] = _mm512_shuffle_f32x4(w1, w3, 0x88);
    r[12 + c] = _mm512_shuffle_f32x4(w1, w3, 0xDD);
  }
}

// The channels' input rectangle into the interleaved plane (16 columns of 16 channels at a time,
// through a transpose; the lanes past `lanes` channels get zeros).
inline void interleave_input(const ConvParams& p, const float* const* xc, index_t lanes, index_t rows, index_t cols,
                             float* in) {
  const index_t width = padded_input_w(p);
  for (index_t ih = 0; ih < rows; ++ih)
    for (index_t iw = 0; iw < cols; iw += 16) {
      const index_t n = cols - iw < 16 ? cols - iw : 16;
      const __mmask16 m = static_cast<__mmask16>((1u << n) - 1u);
      __m512 r[16];
      for (index_t l = 0; l < 16; ++l)
        r[l] = l < lanes ? _mm512_maskz_loadu_ps(m, xc[l] + ih * p.in_w + iw) : _mm512_setzero_ps();
      transpose16(r);
      float* dst = in + ((ih + p.pad_h) * width + p.pad_w + iw) * 16;
      for (index_t j = 0; j < n; ++j) _mm512_store_ps(dst + j * 16, r[j]);
    }
}

// The interleaved output back into the channels' planes (16 positions at a time).
inline void deinterleave_output(const float* out, index_t outputs, index_t lanes, float* const* yc) {
  for (index_t i = 0; i < outputs; i += 16) {
    const index_t n = outputs - i < 16 ? outputs - i : 16;
    const __mmask16 m = static_cast<__mmask16>((1u << n) - 1u);
    __m512 r[16];
    for (index_t j = 0; j < 16; ++j) r[j] = j < n ? _mm512_load_ps(out + (i + j) * 16) : _mm512_setzero_ps();
    transpose16(r);
    for (index_t l = 0; l < lanes; ++l) _mm512_mask_storeu_ps(yc[l] + i, m, r[l]);
  }
}
#endif

// Channels [c0, c0 + lanes) of image `image` (lanes <= L; the lanes past them compute zeros).
inline void channel_block(const ConvParams& p, const float* x, const float* w, const float* bias, float* y,
                          index_t image, index_t c0, index_t lanes, float* in, float* out, float* wt,
                          const Epilogue& e) {
  constexpr index_t L = kFloatLanes;
  const index_t width = padded_input_w(p), taps = p.k_h * p.k_w, plane = p.in_h * p.in_w;
  const index_t rows = p.in_h < padded_input_h(p) - p.pad_h ? p.in_h : padded_input_h(p) - p.pad_h;
  const index_t cols = p.in_w < width - p.pad_w ? p.in_w : width - p.pad_w;
  alignas(64) float bias_lanes[kMaxLanes] = {};
#if defined(__AVX512F__)
  const float* xcs[kMaxLanes];
  for (index_t l = 0; l < lanes; ++l) xcs[l] = x + (image * p.in_channels + c0 + l) * plane;
  interleave_input(p, xcs, lanes, rows, cols, in);
#endif
  for (index_t l = 0; l < lanes; ++l) {
    const index_t ch = c0 + l;
#if !defined(__AVX512F__)
    const float* xc = x + (image * p.in_channels + ch) * plane;
    for (index_t ih = 0; ih < rows; ++ih) {
      float* dst = in + ((ih + p.pad_h) * width + p.pad_w) * L + l;
      for (index_t iw = 0; iw < cols; ++iw) dst[iw * L] = xc[ih * p.in_w + iw];
    }
#endif
    for (index_t t = 0; t < taps; ++t) wt[t * L + l] = w[ch * taps + t];
    bias_lanes[l] = bias ? bias[ch] : 0.0f;
  }
  for (index_t l = lanes; l < L; ++l) {  // lanes past the channels: zero weights (their inputs are stale)
    for (index_t t = 0; t < taps; ++t) wt[t * L + l] = 0.0f;
  }
  const vfloat b = vfloat::load_aligned(bias_lanes);
  const packed_gemm_detail::Clamp c = packed_gemm_detail::clamp_of(e);
  for (index_t oh = 0; oh < p.out_h; ++oh) {
    float* out_row = out + oh * p.out_w * L;
    index_t ow = 0;
    for (; ow + 4 <= p.out_w; ow += 4) output_positions<4>(p, in, wt, b, oh, ow, out_row, c);
    for (; ow + 2 <= p.out_w; ow += 2) output_positions<2>(p, in, wt, b, oh, ow, out_row, c);
    if (ow < p.out_w) output_positions<1>(p, in, wt, b, oh, ow, out_row, c);
  }
  const index_t outputs = p.out_h * p.out_w;
#if defined(__AVX512F__)
  float* ycs[kMaxLanes];
  for (index_t l = 0; l < lanes; ++l) ycs[l] = y + (image * p.out_channels + c0 + l) * outputs;
  deinterleave_output(out, outputs, lanes, ycs);
#endif
  for (index_t l = 0; l < lanes; ++l) {
    float* yc = y + (image * p.out_channels + c0 + l) * outputs;
#if !defined(__AVX512F__)
    for (index_t i = 0; i < outputs; ++i) yc[i] = out[i * L + l];
#endif
    if (!packed_gemm_detail::is_clamp(e)) activate_row(e, yc, outputs);
  }
}

// The planes [range) (images x channels) in blocks of L channels of one image. scratch:
// scratch_floats(p) floats, zeroed by the caller (the interleaved plane's padding stays so).
inline void planes(const ConvParams& p, const float* x, const float* w, const float* bias, float* y, Range range,
                   float* scratch, const Epilogue& e) {
  // 64-byte aligned parts (the scratch slot has kMaxLanes floats of room for it).
  float* in = scratch + ((64 - reinterpret_cast<std::uintptr_t>(scratch) % 64) % 64) / sizeof(float);
  float* out = in + padded_plane(p) * kFloatLanes;
  float* wt = out + p.out_h * p.out_w * kFloatLanes;
  for (index_t plane = range.begin; plane < range.end;) {
    const index_t image = plane / p.out_channels, c0 = plane % p.out_channels;
    index_t lanes = p.out_channels - c0;
    if (lanes > kFloatLanes) lanes = kFloatLanes;
    if (lanes > range.end - plane) lanes = range.end - plane;
    channel_block(p, x, w, bias, y, image, c0, lanes, in, out, wt, e);
    plane += lanes;
  }
}

#endif  // ONNXC_SIMD

}  // namespace depthwise_channels_detail
}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_DEPTHWISE_CHANNELS_SIMD_H
