// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// Depthwise convolution of any kernel size, stride, dilation and padding over stride phases
// (SIMD targets: AVX-512 and AVX2 through xsimd's vfloat; included by conv.h, which defines
// ConvParams and the padded-row helpers it uses; the plain C++ build keeps depthwise_detail).
//
// Under stride S, output column ow of tap kw reads padded input column ow * S + kw * dilation_w,
// a strided load. Here each input row is split once, when it enters the ring of rows, into its
// S phases (phase q: padded columns q, q + S, q + 2S, ...), zero where the window overhangs
// the input. Tap kw then reads phase (kw * dilation_w) % S from column ow + (kw * dilation_w) / S
// on: a contiguous load, whatever the stride or dilation, so every tap is one load and one FMA
// per vector of outputs and the split costs one pass over the row. The taps' phase offsets are
// computed once per layer; the kernel width is a template argument (3, 5, 7, or 0: any).
#ifndef ONNXC_DEPTHWISE_PHASES_SIMD_H
#define ONNXC_DEPTHWISE_PHASES_SIMD_H

namespace onnxc {
namespace rt {
namespace depthwise_phases_detail {

// The geometry (scratch sizes) is here for every target: the compiler, built without SIMD,
// sizes the scratch of the code it emits for SIMD targets.
constexpr index_t kMaxKernelColumns = 32;

// Floats of one phase of a row: the padded columns it holds and kDepthwiseRowSlack floats after
// them (four AVX-512 vectors: the last group's loads read past the row; those lanes are never
// stored).
inline index_t phase_floats(const ConvParams& p) {
  return (padded_input_w(p) + p.stride_w - 1) / p.stride_w + kDepthwiseRowSlack;
}
inline index_t row_floats(const ConvParams& p) { return p.stride_w * phase_floats(p); }
// The ring of split rows: the input rows of kMaxRowsAtOnce adjacent output rows, and one zero
// row after it (the rows of the vertical padding).
constexpr index_t kMaxRowsAtOnce = 4;
inline index_t ring_rows(const ConvParams& p) { return depthwise_span_h(p) + (kMaxRowsAtOnce - 1) * p.stride_h; }
// The padded copy of an input row the split reads, with two vectors of slack for whole-vector
// loads past its end.
inline index_t padded_row_floats(const ConvParams& p) { return padded_input_w(p) + 2 * kDepthwiseRowSlack; }
inline index_t scratch_floats(const ConvParams& p) { return (ring_rows(p) + 1) * row_floats(p) + padded_row_floats(p); }

inline bool applies(const ConvParams& p) {
  return p.in_d == 1 && p.k_d == 1 && p.k_h <= depthwise_detail::kMaxKernelRows && p.k_w <= kMaxKernelColumns;
}

#if defined(ONNXC_SIMD)

using depthwise_detail::KernelRows;
using depthwise_detail::kDepthwiseVectors;

// even[j] = padded column 2j, odd[j] = padded column 2j + 1 of input row xrow (padded column c is
// input column c - pad, zero outside [0, in_w)) for j < n, whole vectors: writes up to L floats
// past even[n) and odd[n) (the rows' slack). The loads are masked to the input row's columns
// (masked lanes read nothing, so no fault past either end), so the padded row is never stored
// first: loading whole vectors of a row just written by narrower stores defeats store forwarding
// (a stall per vector), which cost more than the taps (240 x 28 x 28 5x5 stride 2: 153 -> 94 us).
inline void split_pairs(const float* xrow, index_t pad, index_t in_w, index_t n, float* even, float* odd) {
  index_t j = 0;
#if defined(__AVX512F__)
  const __m512i evens = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odds = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  // Lanes [lo, hi) of the vector whose lane 0 is input column c: those inside the row.
  auto lanes_in_row = [in_w](index_t c) -> __mmask16 {
    const index_t lo = c < 0 ? -c : 0, hi = in_w - c < 16 ? in_w - c : 16;
    if (hi <= lo) return 0;
    return static_cast<__mmask16>(((1u << hi) - 1u) & ~((1u << lo) - 1u));
  };
  for (; j < n; j += 16) {
    const index_t c = 2 * j - pad;
    const __m512 a = _mm512_maskz_loadu_ps(lanes_in_row(c), xrow + c);
    const __m512 b = _mm512_maskz_loadu_ps(lanes_in_row(c + 16), xrow + c + 16);
    _mm512_storeu_ps(even + j, _mm512_permutex2var_ps(a, evens, b));
    _mm512_storeu_ps(odd + j, _mm512_permutex2var_ps(a, odds, b));
  }
#elif defined(__AVX2__)
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i before = _mm256_set1_epi32(-1), end = _mm256_set1_epi32(static_cast<int>(in_w));
  // All ones in the lanes of the vector whose lane 0 is input column c that lie inside the row.
  auto lanes_in_row = [&](index_t c) {
    const __m256i col = _mm256_add_epi32(iota, _mm256_set1_epi32(static_cast<int>(c)));
    return _mm256_and_si256(_mm256_cmpgt_epi32(col, before), _mm256_cmpgt_epi32(end, col));
  };
  for (; j < n; j += 8) {  // [a0 a2 b0 b2 | a4 a6 b4 b6], then the 64-bit lanes reordered
    const index_t c = 2 * j - pad;
    const __m256 a = _mm256_maskload_ps(xrow + c, lanes_in_row(c));
    const __m256 b = _mm256_maskload_ps(xrow + c + 8, lanes_in_row(c + 8));
    const __m256 e = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)), o = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
    _mm256_storeu_ps(even + j, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0))));
    _mm256_storeu_ps(odd + j, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(o), _MM_SHUFFLE(3, 1, 2, 0))));
  }
#endif
  for (; j < n; ++j) {
    const index_t c = 2 * j - pad;
    even[j] = c >= 0 && c < in_w ? xrow[c] : 0.0f;
    odd[j] = c + 1 >= 0 && c + 1 < in_w ? xrow[c + 1] : 0.0f;
  }
}

// Splits input row xrow into its stride phases at row (phase q at row + q * stride_floats, which
// is phase_floats(p)): phase q's column j is padded column q + j * S. padded: a row of
// padded_row_floats(p) floats, for the padded copy the split reads (stride 1: the padded copy is
// the row itself; stride 2 reads the input row directly).
inline void split_row(const ConvParams& p, index_t stride_floats, const float* xrow, float* padded, float* row) {
  const index_t s = p.stride_w;
  if (s == 1) return pad_input_row(p, xrow, row);
  const index_t width = padded_input_w(p);
  if (s == 2) return split_pairs(xrow, p.pad_w, p.in_w, (width + 1) / 2, row, row + stride_floats);
  pad_input_row(p, xrow, padded);
  for (index_t q = 0; q < s; ++q) {
    float* phase = row + q * stride_floats;
    for (index_t j = 0, c = q; c < width; ++j, c += s) phase[j] = padded[c];
  }
}

// Where tap column kw reads in a split row: its phase's offset plus its column in the phase; and
// the ring's sizes. All computed once per layer (the divisions cost more than a small plane's
// taps, computed per plane or per row).
struct TapColumns {
  index_t offset[kMaxKernelColumns];
  index_t phase_floats, row_floats, ring_rows;
};
inline TapColumns tap_columns(const ConvParams& p) {
  TapColumns t{};
  t.phase_floats = phase_floats(p), t.row_floats = row_floats(p), t.ring_rows = ring_rows(p);
  for (index_t kw = 0; kw < p.k_w; ++kw) {
    const index_t c = kw * p.dilation_w;
    t.offset[kw] = (c % p.stride_w) * t.phase_floats + c / p.stride_w;
  }
  return t;
}

// Output columns [ow, ow + V * L) of R adjacent output rows (rows[r]: the split input rows of row
// r), every tap accumulated in registers, clamped and stored (y: columns from ow of the first
// row); `cols` is the number of columns the last vector stores.
template <int KW, int R, int V>
inline void output_group(const ConvParams& p, const TapColumns& taps, const KernelRows* rows, const float* wc,
                         float bias, index_t ow, index_t cols, float* y, const packed_gemm_detail::Clamp& c) {
  const index_t k_w = KW ? KW : p.k_w;
  vfloat acc[R][V];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) acc[r][v] = vfloat(bias);
  for (index_t kh = 0; kh < p.k_h; ++kh)
    for (index_t kw = 0; kw < k_w; ++kw) {
      const vfloat wv(wc[kh * k_w + kw]);
      for (int r = 0; r < R; ++r) {
        const float* first = rows[r][kh] + taps.offset[kw] + ow;
        for (int v = 0; v < V; ++v)
          acc[r][v] = xsimd::fma(wv, vfloat::load_unaligned(first + v * kFloatLanes), acc[r][v]);
      }
    }
  depthwise_detail::store_group<R, V>(acc, p.out_w, cols, y + ow, c);
}

// R adjacent output rows (y: the first), kDepthwiseVectors / R vectors per row at a time; the
// last group has the vectors left, the last of them partial.
template <int KW, int R>
inline void output_rows(const ConvParams& p, const TapColumns& taps, const KernelRows* rows, const float* wc,
                        float bias, float* y, const Epilogue& e) {
  constexpr int V = kDepthwiseVectors / R;
  const packed_gemm_detail::Clamp c = packed_gemm_detail::clamp_of(e);
  index_t ow = 0;
  for (; ow + V * kFloatLanes <= p.out_w; ow += V * kFloatLanes)
    output_group<KW, R, V>(p, taps, rows, wc, bias, ow, kFloatLanes, y, c);
  if (ow < p.out_w) {
    const index_t vectors = (p.out_w - ow + kFloatLanes - 1) / kFloatLanes;
    const index_t cols = p.out_w - ow - (vectors - 1) * kFloatLanes;
    if (vectors == 1) output_group<KW, R, 1>(p, taps, rows, wc, bias, ow, cols, y, c);
    else if (vectors == 2) output_group<KW, R, 2>(p, taps, rows, wc, bias, ow, cols, y, c);
    else if (vectors == 3) output_group<KW, R, 3>(p, taps, rows, wc, bias, ow, cols, y, c);
    else output_group<KW, R, V>(p, taps, rows, wc, bias, ow, cols, y, c);
  }
  if (!packed_gemm_detail::is_clamp(e)) activate_row(e, y, R * p.out_w);
}

// One channel plane over the ring (`ring`: scratch_floats(p), zeroed by the caller: the zero row
// and the padded row's slack stay so).
template <int KW>
inline void plane(const ConvParams& p, const TapColumns& taps, const float* xc, const float* wc, float bias, float* yc,
                  float* ring, const Epilogue& e) {
  const index_t slots = taps.ring_rows, floats = taps.row_floats;
  const float* zero_row = ring + slots * floats;
  float* padded = ring + (slots + 1) * floats;
  // The ring holds input rows [next_row - slots, next_row), row r in slot r % slots.
  index_t next_row = 0, next_slot = 0;
  auto read_rows = [&](index_t oh, KernelRows& rows) {
    const index_t ih0 = oh * p.stride_h - p.pad_h, span = (p.k_h - 1) * p.dilation_h;
    const index_t last = ih0 + span < p.in_h ? ih0 + span : p.in_h - 1;
    if (next_row < last - slots + 1) {
      next_row = last - slots + 1;
      next_slot = next_row % slots;
    }
    for (; next_row <= last; ++next_row) {
      split_row(p, taps.phase_floats, xc + next_row * p.in_w, padded, ring + next_slot * floats);
      if (++next_slot == slots) next_slot = 0;
    }
    for (index_t kh = 0; kh < p.k_h; ++kh) {
      const index_t ih = ih0 + kh * p.dilation_h;
      if (ih < 0 || ih >= p.in_h) {
        rows[kh] = zero_row;
        continue;
      }
      index_t slot = next_slot - (next_row - ih);
      if (slot < 0) slot += slots;
      rows[kh] = ring + slot * floats;
    }
  };
  // kDepthwiseVectors independent accumulators: output rows of one vector go four at a time, of
  // two vectors two at a time (the plane's last rows fewer).
  const index_t vectors_per_row = (p.out_w + kFloatLanes - 1) / kFloatLanes;
  const index_t at_once = vectors_per_row == 1 ? 4 : vectors_per_row == 2 ? 2 : 1;
  KernelRows rows[kMaxRowsAtOnce];
  for (index_t oh = 0; oh < p.out_h;) {
    const index_t left = p.out_h - oh;
    const index_t n = at_once == 4 && left >= 4 ? 4 : at_once >= 2 && left >= 2 ? 2 : 1;
    for (index_t r = 0; r < n; ++r) read_rows(oh + r, rows[r]);
    float* y = yc + oh * p.out_w;
    if (n == 4) output_rows<KW, 4>(p, taps, rows, wc, bias, y, e);
    else if (n == 2) output_rows<KW, 2>(p, taps, rows, wc, bias, y, e);
    else output_rows<KW, 1>(p, taps, rows, wc, bias, y, e);
    oh += n;
  }
}

// The planes [range) of a depthwise Conv, `ring` zeroed by the caller (scratch_floats(p)).
template <int KW>
inline void planes_of_width(const ConvParams& p, const float* x, const float* w, const float* bias, float* y,
                            Range range, float* ring, const Epilogue& e) {
  const TapColumns taps = tap_columns(p);
  for (index_t plane_index = range.begin; plane_index < range.end; ++plane_index) {
    const DepthwisePlane d = depthwise_plane(p, plane_index, x, w, bias, y);
    plane<KW>(p, taps, d.x, d.w, d.bias, d.y, ring, e);
  }
}

inline void planes(const ConvParams& p, const float* x, const float* w, const float* bias, float* y, Range range,
                   float* ring, const Epilogue& e) {
  if (p.k_w == 3) return planes_of_width<3>(p, x, w, bias, y, range, ring, e);
  if (p.k_w == 5) return planes_of_width<5>(p, x, w, bias, y, range, ring, e);
  if (p.k_w == 7) return planes_of_width<7>(p, x, w, bias, y, range, ring, e);
  if (p.k_w == 1) return planes_of_width<1>(p, x, w, bias, y, range, ring, e);
  planes_of_width<0>(p, x, w, bias, y, range, ring, e);
}

#endif  // ONNXC_SIMD

}  // namespace depthwise_phases_detail
}  // namespace rt
}  // namespace onnxc
#endif  // ONNXC_DEPTHWISE_PHASES_SIMD_H
