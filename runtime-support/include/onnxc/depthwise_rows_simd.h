// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// Depthwise convolution of any kernel size, dilation and padding, stride 1 or 2, read in place
// (AVX-512 and AVX2: masked loads; included by conv.h, which defines ConvParams, KernelRows and
// the clamp epilogue it uses).
//
// Output columns are in the vector lanes; R output rows x V vectors of columns accumulate in
// registers across every tap (R * V independent FMA chains, enough to hide the FMA latency on
// both ports), so each tap costs one broadcast weight and R * V loads and FMAs. The window's
// overhang needs no padded copy: a tap's load is masked to the lanes whose input column lies in
// the row (the others read as zero, and nothing outside the row is touched), and a kernel row
// above or below the plane reads a row of zeros on the stack. Stride 2 loads the two vectors
// under a vector of outputs (each masked to the row) and keeps their even lanes. Planes of any
// width: the row is cut into chunks of at most kMaxVectors vectors.
#ifndef ONNXC_DEPTHWISE_ROWS_SIMD_H
#define ONNXC_DEPTHWISE_ROWS_SIMD_H

namespace onnxc {
namespace rt {
namespace depthwise_rows_detail {

constexpr index_t kMaxVectors = 4;         // vectors of output columns per chunk of a row
constexpr index_t kMaxZeroRow = 1024;      // input rows up to this wide (the zero row on the stack)
constexpr index_t kMaxKernelColumns = 16;  // kernel columns (their load masks are precomputed)

#if defined(ONNXC_SIMD) && (defined(__AVX512F__) || defined(__AVX2__))
#define ONNXC_DEPTHWISE_ROWS 1  // conv_depthwise(_in_place) may take depthwise_rows_detail

using depthwise_detail::KernelRows;

inline bool applies(const ConvParams& p) {
  return p.in_d == 1 && p.k_d == 1 && p.stride_w <= 2 && p.in_w <= kMaxZeroRow &&
         p.k_h <= depthwise_detail::kMaxKernelRows && p.k_w <= kMaxKernelColumns;
}
// Where conv_depthwise_in_place takes it (after the flat planes and the 3x3 stride-2 kernel):
// horizontal stride 2, where the in-place rows computed their border columns one at a time.
// AVX-512, one layer alone, Relu, against those rows: 960 x 14 x 14 5x5 stride 2 479 -> 235 us,
// 120 x 28 x 28 120 -> 53, 72 x 56 x 56 177 -> 110. Not taken for stride 1 (the flat planes:
// 960 x 14 x 14 5x5 229 against 245 us here, 960 x 7 x 7 91 against 150: the unaligned loads
// of 7- and 14-wide rows split cache lines and leave lanes empty) nor where the compiler gave
// conv_depthwise its scratch (channels in the lanes: the 14 x 14 stride-2 layer 108 us).
inline bool takes_in_place(const ConvParams& p) { return p.stride_w == 2 && applies(p); }

#if defined(__AVX512F__)
using LaneMask = __mmask16;
// Lanes l with lo <= l < hi (clipped to the vector).
inline LaneMask lanes_between(index_t lo, index_t hi) {
  if (lo < 0) lo = 0;
  if (hi > kFloatLanes) hi = kFloatLanes;
  if (hi <= lo) return 0;
  return static_cast<LaneMask>(((1u << hi) - 1u) & ~((1u << lo) - 1u));
}
inline vfloat load_lanes(const float* p, LaneMask m) { return _mm512_maskz_loadu_ps(m, p); }
inline vfloat even_lanes(vfloat a, vfloat b) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  return _mm512_permutex2var_ps(a, even, b);
}
#else
using LaneMask = __m256i;
inline LaneMask lanes_between(index_t lo, index_t hi) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i ge = _mm256_cmpgt_epi32(lane, _mm256_set1_epi32(static_cast<int>(lo) - 1));
  const __m256i lt = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(hi)), lane);
  return _mm256_and_si256(ge, lt);
}
inline vfloat load_lanes(const float* p, LaneMask m) { return _mm256_maskload_ps(p, m); }
inline vfloat even_lanes(vfloat a, vfloat b) {  // as load_strided<2> in simd.h
  const __m256 evens = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(evens), _MM_SHUFFLE(3, 1, 2, 0)));
}
#endif

// The loads of one kernel column over a chunk's vectors: vector v's input starts at column
// first + v * L * S of the row (first may be negative), masked to the row's columns.
template <int S, int V>
struct ColumnLoads {
  index_t first;
  LaneMask mask[V][S];
};

template <int S, int V>
inline vfloat load_taps(const float* row, const ColumnLoads<S, V>& c, int v) {
  const float* at = row + c.first + v * kFloatLanes * S;
  if (S == 1) return load_lanes(at, c.mask[v][0]);
  return even_lanes(load_lanes(at, c.mask[v][0]), load_lanes(at + kFloatLanes, c.mask[v][S - 1]));
}

// Output rows [oh, oh + R), columns [ow, ow + V * L) of a chunk (the last vector's `cols`
// lanes stored): rows[r][kh] is the input row under kernel row kh for output row oh + r.
template <int S, int R, int V>
inline void block(const ConvParams& p, const KernelRows* rows, const ColumnLoads<S, V>* loads, const float* wc,
                  float bias, index_t ow, index_t cols, float* y, const packed_gemm_detail::Clamp& c) {
  vfloat acc[R][V];
  ONNXC_UNROLL for (int r = 0; r < R; ++r)
    ONNXC_UNROLL for (int v = 0; v < V; ++v) acc[r][v] = vfloat(bias);
  for (index_t kh = 0; kh < p.k_h; ++kh) {
    const float* row[R];
    ONNXC_UNROLL for (int r = 0; r < R; ++r) row[r] = rows[r][kh];
    for (index_t kw = 0; kw < p.k_w; ++kw) {
      const vfloat wv(wc[kh * p.k_w + kw]);
      const ColumnLoads<S, V> l = loads[kw];
      ONNXC_UNROLL for (int r = 0; r < R; ++r)
        ONNXC_UNROLL for (int v = 0; v < V; ++v) acc[r][v] = xsimd::fma(wv, load_taps<S, V>(row[r], l, v), acc[r][v]);
    }
  }
  ONNXC_UNROLL for (int r = 0; r < R; ++r) {
    float* yr = y + r * p.out_w + ow;
    ONNXC_UNROLL for (int v = 0; v + 1 < V; ++v) packed_gemm_detail::clamp(c, acc[r][v]).store_unaligned(yr + v * kFloatLanes);
    const vfloat last = packed_gemm_detail::clamp(c, acc[r][V - 1]);
    if (cols == kFloatLanes) last.store_unaligned(yr + (V - 1) * kFloatLanes);
    else store_partial(last, yr + (V - 1) * kFloatLanes, cols);
  }
}

// Rows per block: R * V accumulators, at least 8 chains (two FMA ports, 4 cycles of latency),
// at most half the vector registers.
template <int V>
constexpr int max_rows() {
  return (kVectorRegisters / 2 / V) >= 8 ? 8 : (kVectorRegisters / 2 / V) >= 4 ? 4 : 2;
}

// The rows of one chunk of one plane, in blocks of max_rows<V>() output rows, then halves.
template <int S, int V>
inline void chunk(const ConvParams& p, const float* xc, const float* wc, float bias, float* yc, index_t ow,
                  const float* zero_row, const packed_gemm_detail::Clamp& c) {
  ColumnLoads<S, V> loads[kMaxKernelColumns];
  for (index_t kw = 0; kw < p.k_w; ++kw) {
    ColumnLoads<S, V>& l = loads[kw];
    l.first = ow * S + kw * p.dilation_w - p.pad_w;
    for (int v = 0; v < V; ++v)
      for (int s = 0; s < S; ++s) {
        const index_t start = l.first + (v * S + s) * kFloatLanes;  // input column of lane 0
        l.mask[v][s] = lanes_between(-start, p.in_w - start);
      }
  }
  const index_t end = ow + V * kFloatLanes < p.out_w ? ow + V * kFloatLanes : p.out_w;
  const index_t cols = end - ow - (V - 1) * kFloatLanes;
  auto rows_of = [&](index_t oh, KernelRows& rows) {
    for (index_t kh = 0; kh < p.k_h; ++kh) {
      const index_t ih = oh * p.stride_h - p.pad_h + kh * p.dilation_h;
      rows[kh] = ih >= 0 && ih < p.in_h ? xc + ih * p.in_w : zero_row;
    }
  };
  constexpr int kRows = max_rows<V>();
  KernelRows rows[kRows];
  index_t oh = 0;
  for (; oh + kRows <= p.out_h; oh += kRows) {
    for (int r = 0; r < kRows; ++r) rows_of(oh + r, rows[r]);
    block<S, kRows, V>(p, rows, loads, wc, bias, ow, cols, yc + oh * p.out_w, c);
  }
  for (int half = kRows / 2; half >= 1; half /= 2)
    if (oh + half <= p.out_h) {
      for (int r = 0; r < half; ++r) rows_of(oh + r, rows[r]);
      if (half == 4) block<S, (kRows >= 8 ? 4 : 1), V>(p, rows, loads, wc, bias, ow, cols, yc + oh * p.out_w, c);
      else if (half == 2) block<S, 2, V>(p, rows, loads, wc, bias, ow, cols, yc + oh * p.out_w, c);
      else block<S, 1, V>(p, rows, loads, wc, bias, ow, cols, yc + oh * p.out_w, c);
      oh += half;
    }
}

template <int S>
inline void plane(const ConvParams& p, const float* xc, const float* wc, float bias, float* yc, const float* zero_row,
                  const Epilogue& e) {
  const packed_gemm_detail::Clamp c = packed_gemm_detail::clamp_of(e);
  constexpr index_t kChunk = kMaxVectors * kFloatLanes;
  index_t ow = 0;
  for (; ow + kChunk <= p.out_w; ow += kChunk) chunk<S, kMaxVectors>(p, xc, wc, bias, yc, ow, zero_row, c);
  const index_t vectors = (p.out_w - ow + kFloatLanes - 1) / kFloatLanes;
  if (vectors == 4) chunk<S, 4>(p, xc, wc, bias, yc, ow, zero_row, c);
  else if (vectors == 1) chunk<S, 1>(p, xc, wc, bias, yc, ow, zero_row, c);
  else if (vectors == 2) chunk<S, 2>(p, xc, wc, bias, yc, ow, zero_row, c);
  else if (vectors == 3) chunk<S, 3>(p, xc, wc, bias, yc, ow, zero_row, c);
  if (!packed_gemm_detail::is_clamp(e)) activate_row(e, yc, p.out_h * p.out_w);
}

// The planes [range) (images x channels). No scratch.
inline void planes(const ConvParams& p, const float* x, const float* w, const float* bias, float* y, Range range,
                   const Epilogue& e) {
  alignas(64) float zero_row[kMaxZeroRow] = {};
  for (index_t i = range.begin; i < range.end; ++i) {
    const DepthwisePlane d = depthwise_plane(p, i, x, w, bias, y);
    if (p.stride_w == 1) plane<1>(p, d.x, d.w, d.bias, d.y, zero_row, e);
    else plane<2>(p, d.x, d.w, d.bias, d.y, zero_row, e);
  }
}

#else

inline bool applies(const ConvParams&) { return false; }
inline bool takes_in_place(const ConvParams&) { return false; }

#endif

}  // namespace depthwise_rows_detail
}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_DEPTHWISE_ROWS_SIMD_H
