// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// Depthwise convolution on AArch64 NEON, read in place (no scratch): any kernel size, dilation and
// padding, any stride; 3x3 and 5x5 kernels of stride 1 or 2 (dilation 1) in register tiles whose
// taps are unrolled at compile time. Included by conv.h (which defines ConvParams and
// DepthwisePlane); conv_depthwise and conv_depthwise_in_place take it on AArch64 wherever
// applies(p).
//
// Output columns are in the lanes. A tile is R output rows x V vectors of 4 columns: the R rows'
// (R - 1) * S + K input rows are each read once per tile, and every vector loaded from one feeds
// the FMLA (by element: the kernel's weights stay in K * K / 4 registers) of each output row whose
// window holds that input row, so a 3x3 stride-1 tile of 4 rows x 2 vectors takes 6 x 3 LD1 of
// two vectors for 72 FMLA. Stride 2 loads with LD2, whose two registers are the even and the odd
// columns: one load serves two kernel columns. Planes whose padded copy fits kPaddedPlaneFloats
// are copied, padded, to the stack and read from there; larger ones are read in place, a tile
// that reaches past either end of the row (the borders, a row's last partial vector) reading its
// input rows from strips on the stack, zero outside the row, and an input row above or below the
// plane being a row of zeros. Other kernels (any size, dilation, stride) take a tile of one row whose taps are
// loops, broadcasting each weight. Tested against rt::conv (tests/unit/depthwise_phases_test.cpp,
// cross-built: unit.neon_depthwise).
#ifndef ONNXC_DEPTHWISE_ROWS_NEON_H
#define ONNXC_DEPTHWISE_ROWS_NEON_H

#include <limits>
#include <utility>
#if defined(ONNXC_SIMD) && defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace onnxc {
namespace rt {
namespace depthwise_neon_detail {

constexpr index_t kStripFloats = 96;  // a tile's reads of one input row (a strip, the zero row)
constexpr int kTileRows = 4, kTileVectors = 2;
constexpr index_t kMaxTileInputRows = 16;  // (R - 1) * S + K of the fixed tiles, k_h of the loop tile

// The columns a tile of `vectors` vectors reads from its first input column on (LD2's last load
// reads one column past the last even one).
inline index_t span_of(const ConvParams& p, index_t vectors) {
  return 4 * vectors * p.stride_w + (p.k_w - 1) * p.dilation_w + (p.stride_w == 2 ? 1 : 0);
}

inline bool applies(const ConvParams& p) {
  return p.in_d == 1 && p.k_d == 1 && p.k_h <= kMaxTileInputRows &&
         span_of(p, kTileVectors) <= kStripFloats;
}

#if defined(ONNXC_SIMD) && defined(__aarch64__)
#define ONNXC_DEPTHWISE_NEON 1  // conv_depthwise(_in_place) take depthwise_neon_detail

struct Clamp {
  float32x4_t lo, hi;
};

// Columns [0, cols) of v stored at y (cols < 4).
ONNXC_INLINE void store_part(float32x4_t v, float* y, index_t cols) {
  if (cols >= 2) {
    vst1_f32(y, vget_low_f32(v));
    if (cols == 3) vst1q_lane_f32(y + 2, v, 2);
  } else {
    vst1q_lane_f32(y, v, 0);
  }
}

// Clamped to [lo, hi] (-inf and inf where the activation is not a clamp: FMAX and FMIN keep
// NaN), stored.
template <int R, int V>
ONNXC_INLINE void store_tile(float32x4_t (&acc)[R][V], float* y, index_t out_w, index_t cols, const Clamp& c) {
  const float32x4_t lo = c.lo, hi = c.hi;  // in registers across the stores
  ONNXC_UNROLL for (int r = 0; r < R; ++r) {
    ONNXC_UNROLL for (int v = 0; v < V; ++v) {
      const float32x4_t o = vminq_f32(vmaxq_f32(acc[r][v], lo), hi);
      if (v + 1 < V || cols == 4) vst1q_f32(y + r * out_w + 4 * v, o);
      else store_part(o, y + r * out_w + 4 * v, cols);
    }
  }
}

// One kernel column pair's taps (S = 2: columns 2Q and 2Q + 1 from one LD2; S = 1: column Q) of
// input row I of a fixed tile: the multiply-adds of each output row r whose kernel row I - r * S
// lies in the kernel.
template <int S, int K, int R, int V, int I, int Q>
ONNXC_INLINE void fixed_taps(const float* row, const float32x4_t* w, float32x4_t (&acc)[R][V]) {
  float32x4x2_t pair;  // S = 1, V = 2: both vectors by one LD1
  if (S == 1 && V == 2) pair = vld1q_f32_x2(row + Q);
  ONNXC_UNROLL for (int v = 0; v < V; ++v) {
    float32x4_t x0, x1;
    if (S == 1) {
      x0 = V == 2 ? pair.val[v] : vld1q_f32(row + Q + 4 * v);
      x1 = x0;
    } else {
      const float32x4x2_t xx = vld2q_f32(row + 2 * Q + 8 * v);
      x0 = xx.val[0], x1 = xx.val[1];
    }
    constexpr int kw0 = S == 1 ? Q : 2 * Q;
    ONNXC_UNROLL for (int r = 0; r < R; ++r) {
      const int kh = I - r * S;
      if (kh < 0 || kh >= K) continue;
      // The lanes are constants after unrolling; spelled out so that no compiler needs it to.
      switch ((kh * K + kw0) % 4) {
        case 0: acc[r][v] = vfmaq_laneq_f32(acc[r][v], x0, w[(kh * K + kw0) / 4], 0); break;
        case 1: acc[r][v] = vfmaq_laneq_f32(acc[r][v], x0, w[(kh * K + kw0) / 4], 1); break;
        case 2: acc[r][v] = vfmaq_laneq_f32(acc[r][v], x0, w[(kh * K + kw0) / 4], 2); break;
        default: acc[r][v] = vfmaq_laneq_f32(acc[r][v], x0, w[(kh * K + kw0) / 4], 3); break;
      }
      if (S == 2 && kw0 + 1 < K) {
        const int t = kh * K + kw0 + 1;
        switch (t % 4) {
          case 0: acc[r][v] = vfmaq_laneq_f32(acc[r][v], x1, w[t / 4], 0); break;
          case 1: acc[r][v] = vfmaq_laneq_f32(acc[r][v], x1, w[t / 4], 1); break;
          case 2: acc[r][v] = vfmaq_laneq_f32(acc[r][v], x1, w[t / 4], 2); break;
          default: acc[r][v] = vfmaq_laneq_f32(acc[r][v], x1, w[t / 4], 3); break;
        }
      }
    }
  }
}

template <int S, int K, int R, int V, int... T>
ONNXC_INLINE void fixed_all_taps(const float* const* in, const float32x4_t* w, float32x4_t (&acc)[R][V],
                                 std::integer_sequence<int, T...>) {
  constexpr int kPairs = S == 1 ? K : (K + 1) / 2;
  (fixed_taps<S, K, R, V, T / kPairs, T % kPairs>(in[T / kPairs], w, acc), ...);
}

// A fixed tile: output rows [0, R) x columns [0, 4 V) from input rows in[0 .. (R - 1) S + K),
// each pointing at the tile's first input column.
template <int S, int K, int R, int V>
inline void fixed_tile(const float* const* in, const float32x4_t* w, float bias, float* y, index_t out_w, index_t cols,
                       const Clamp& c) {
  float32x4_t acc[R][V];
  ONNXC_UNROLL for (int r = 0; r < R; ++r) ONNXC_UNROLL for (int v = 0; v < V; ++v) acc[r][v] = vdupq_n_f32(bias);
  constexpr int kPairs = S == 1 ? K : (K + 1) / 2;
  fixed_all_taps<S, K, R, V>(in, w, acc, std::make_integer_sequence<int, ((R - 1) * S + K) * kPairs>{});
  store_tile<R, V>(acc, y, out_w, cols, c);
}

// The loop tile: one output row, columns [0, 4 V), kernel row kh from in[kh].
template <int V>
inline void loop_tile(const ConvParams& p, const float* const* in, const float* wc, float bias, float* y, index_t cols,
                      const Clamp& c) {
  float32x4_t acc[1][V];
  ONNXC_UNROLL for (int v = 0; v < V; ++v) acc[0][v] = vdupq_n_f32(bias);
  const index_t s = p.stride_w;
  for (index_t kh = 0; kh < p.k_h; ++kh)
    for (index_t kw = 0; kw < p.k_w; ++kw) {
      const float wv = wc[kh * p.k_w + kw];
      const float* at = in[kh] + kw * p.dilation_w;
      ONNXC_UNROLL for (int v = 0; v < V; ++v) {
        const float* a = at + 4 * v * s;
        float32x4_t x;
        if (s == 1) {
          x = vld1q_f32(a);
        } else if (s == 2) {
          x = vld2q_f32(a).val[0];
        } else {
          const float lanes[4] = {a[0], a[s], a[2 * s], a[3 * s]};
          x = vld1q_f32(lanes);
        }
        acc[0][v] = vfmaq_n_f32(acc[0][v], x, wv);
      }
    }
  store_tile<1, V>(acc, y, p.out_w, cols, c);
}

// dst[i] = src[i] for i < n, by vectors and then floats (short rows: a call of memcpy, which
// GCC makes of a plain loop, costs more than the copy).
ONNXC_INLINE void copy_row(const float* src, index_t n, float* dst) {
  index_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(dst + i, vld1q_f32(src + i));
  for (; i < n; ++i) vst1q_lane_f32(dst + i, vld1q_dup_f32(src + i), 0);
}

// Where a tile's input rows come from. In place: input row ih of plane x from column c0 on, the
// row itself where the tile's `span` columns all lie in it, else a copy in strip `slot`, zero
// outside the row (zeroed by whole vectors, the row's part copied by copy_row); a row outside
// the plane is the zero row.
struct InPlaceRows {
  const ConvParams& p;
  const float* x;
  const float* zero_row;
  float* strips;
  // Whether a tile reading columns [c0, c0 + span) of every row reads it in place.
  bool in_row(index_t c0, index_t span) const { return c0 >= 0 && c0 + span <= p.in_w; }
  // Row ih from column 0 (a row of the plane).
  const float* row(index_t ih) const { return x + ih * p.in_w; }
  bool in_plane(index_t ih) const { return ih >= 0 && ih < p.in_h; }
  const float* operator()(index_t ih, index_t c0, index_t span, index_t slot) const {
    if (ih < 0 || ih >= p.in_h) return zero_row;
    const float* row = x + ih * p.in_w;
    if (c0 >= 0 && c0 + span <= p.in_w) return row + c0;
    float* strip = strips + slot * kStripFloats;
    for (index_t j = 0; j < span; j += 4) vst1q_f32(strip + j, vdupq_n_f32(0.0f));
    const index_t lo = c0 < 0 ? 0 : c0, hi = c0 + span < p.in_w ? c0 + span : p.in_w;
    if (hi > lo) copy_row(row + lo, hi - lo, strip + (lo - c0));
    return strip;
  }
};

// A padded copy of the whole plane (where it fits kPaddedPlaneFloats): every tile reads it in
// place. Copying a row costs about half an instruction per float where a border tile's strips
// cost several times the tile (MobileNet-v2's 32 x 112 x 112 3x3: 0.96 -> 1.21 MACs per
// instruction, its 96 x 112 x 112 stride 2 0.55 -> 0.79).
struct PaddedRows {
  const float* plane;
  index_t width, pad_h, pad_w;
  bool in_row(index_t, index_t) const { return true; }
  const float* row(index_t ih) const { return plane + (ih + pad_h) * width + pad_w; }
  bool in_plane(index_t) const { return true; }
  const float* operator()(index_t ih, index_t c0, index_t, index_t) const {
    return plane + (ih + pad_h) * width + c0 + pad_w;
  }
};

// The padded plane's rows and columns: those the tiles read (whole tiles of columns).
inline index_t padded_width(const ConvParams& p) {
  const index_t tile = 4 * kTileVectors;
  return (p.out_w + tile - 1) / tile * tile * p.stride_w + (p.k_w - 1) * p.dilation_w + 1;
}
inline index_t padded_height(const ConvParams& p) { return (p.out_h - 1) * p.stride_h + (p.k_h - 1) * p.dilation_h + 1; }
constexpr index_t kPaddedPlaneFloats = 16384;  // on the stack (64 KB: MobileNet's 112 x 112 planes)
inline bool pads_plane(const ConvParams& p) { return padded_width(p) * padded_height(p) <= kPaddedPlaneFloats; }

// The vectors and the stored columns of the last of the tile of columns from ow.
struct TileColumns {
  index_t vectors, cols;
};
inline TileColumns tile_columns(index_t out_w, index_t ow) {
  const index_t left = out_w - ow;
  if (left >= 4 * kTileVectors) return {kTileVectors, 4};
  const index_t vectors = (left + 3) / 4;
  return {vectors, left - 4 * (vectors - 1)};
}

// Output rows [oh, oh + R) of a fixed plane (S, K: stride and kernel, dilation 1).
template <int S, int K, int R, class Rows>
inline void fixed_rows(const ConvParams& p, const Rows& rows, const float32x4_t* w, float bias, float* yc, index_t oh,
                       const Clamp& c) {
  constexpr int kIn = (R - 1) * S + K;
  const index_t ih0 = oh * S - p.pad_h;
  constexpr index_t kTile = 4 * kTileVectors;
  const float* in[kIn];
  float* y = yc + oh * p.out_w;
  auto any_tile = [&](index_t ow) {
    const TileColumns t = tile_columns(p.out_w, ow);
    const index_t c0 = ow * S - p.pad_w, span = span_of(p, t.vectors);
    for (int i = 0; i < kIn; ++i) in[i] = rows(ih0 + i, c0, span, i);
    if (t.vectors == kTileVectors) fixed_tile<S, K, R, kTileVectors>(in, w, bias, y + ow, p.out_w, t.cols, c);
    else fixed_tile<S, K, R, 1>(in, w, bias, y + ow, p.out_w, t.cols, c);
  };
  const index_t span = span_of(p, kTileVectors);
  auto whole_in_row = [&](index_t ow) { return ow + kTile <= p.out_w && rows.in_row(ow * S - p.pad_w, span); };
  index_t ow = 0;
  for (; ow < p.out_w && !whole_in_row(ow); ow += kTile) any_tile(ow);  // the left border
  // The tiles inside the rows: each row's pointer moves by a tile (a row outside the plane, the
  // zero row, stays).
  if (whole_in_row(ow)) {
    const float* base[kIn];
    index_t step[kIn];
    for (int i = 0; i < kIn; ++i) {
      const bool inside = rows.in_plane(ih0 + i);
      base[i] = inside ? rows.row(ih0 + i) + (ow * S - p.pad_w) : rows(ih0 + i, 0, span, i);
      step[i] = inside ? kTile * S : 0;
    }
    for (; whole_in_row(ow); ow += kTile) {
      fixed_tile<S, K, R, kTileVectors>(base, w, bias, y + ow, p.out_w, 4, c);
      for (int i = 0; i < kIn; ++i) base[i] += step[i];
    }
  }
  for (; ow < p.out_w; ow += kTile) any_tile(ow);  // the right border and the row's tail
}

template <int S, int K, class Rows>
inline void fixed_plane(const ConvParams& p, const Rows& rows, const float* wc, float bias, float* yc, const Clamp& c) {
  constexpr int kWeightVectors = (K * K + 3) / 4;
  float32x4_t w[kWeightVectors];  // the last one's lanes past the kernel zero (no load past it)
  ONNXC_UNROLL for (int q = 0; q + 1 < kWeightVectors; ++q) w[q] = vld1q_f32(wc + 4 * q);
  w[kWeightVectors - 1] = vdupq_n_f32(0.0f);
  ONNXC_UNROLL for (int t = 4 * (kWeightVectors - 1); t < K * K; ++t) {
    switch (t % 4) {  // (the lane of vld1q_lane_f32 must be a constant)
      case 0: w[kWeightVectors - 1] = vld1q_lane_f32(wc + t, w[kWeightVectors - 1], 0); break;
      case 1: w[kWeightVectors - 1] = vld1q_lane_f32(wc + t, w[kWeightVectors - 1], 1); break;
      case 2: w[kWeightVectors - 1] = vld1q_lane_f32(wc + t, w[kWeightVectors - 1], 2); break;
      default: w[kWeightVectors - 1] = vld1q_lane_f32(wc + t, w[kWeightVectors - 1], 3); break;
    }
  }
  index_t oh = 0;
  for (; oh + kTileRows <= p.out_h; oh += kTileRows) fixed_rows<S, K, kTileRows>(p, rows, w, bias, yc, oh, c);
  if (oh + 2 <= p.out_h) {
    fixed_rows<S, K, 2>(p, rows, w, bias, yc, oh, c);
    oh += 2;
  }
  if (oh < p.out_h) fixed_rows<S, K, 1>(p, rows, w, bias, yc, oh, c);
}

template <class Rows>
inline void loop_plane(const ConvParams& p, const Rows& rows, const float* wc, float bias, float* yc, const Clamp& c) {
  const float* in[kMaxTileInputRows];
  for (index_t oh = 0; oh < p.out_h; ++oh) {
    float* y = yc + oh * p.out_w;
    for (index_t ow = 0; ow < p.out_w; ow += 4 * kTileVectors) {
      const TileColumns t = tile_columns(p.out_w, ow);
      const index_t c0 = ow * p.stride_w - p.pad_w, span = span_of(p, t.vectors);
      for (index_t kh = 0; kh < p.k_h; ++kh) in[kh] = rows(oh * p.stride_h - p.pad_h + kh * p.dilation_h, c0, span, kh);
      if (t.vectors == kTileVectors) loop_tile<kTileVectors>(p, in, wc, bias, y + ow, t.cols, c);
      else loop_tile<1>(p, in, wc, bias, y + ow, t.cols, c);
    }
  }
}

template <class Rows>
inline void plane(const ConvParams& p, const Rows& rows, const float* wc, float bias, float* yc, const Clamp& c) {
  const bool dense = p.dilation_h == 1 && p.dilation_w == 1 && p.k_h == p.k_w && p.stride_h == p.stride_w;
  if (dense && p.k_h == 3 && p.stride_w == 1) fixed_plane<1, 3>(p, rows, wc, bias, yc, c);
  else if (dense && p.k_h == 3 && p.stride_w == 2) fixed_plane<2, 3>(p, rows, wc, bias, yc, c);
  else if (dense && p.k_h == 5 && p.stride_w == 1) fixed_plane<1, 5>(p, rows, wc, bias, yc, c);
  else if (dense && p.k_h == 5 && p.stride_w == 2) fixed_plane<2, 5>(p, rows, wc, bias, yc, c);
  else loop_plane(p, rows, wc, bias, yc, c);
}

// The planes [range) (images x channels). No scratch: the zero row, the strips and a plane's
// padded copy are on the stack (70.5 KB).
inline void planes(const ConvParams& p, const float* x, const float* w, const float* bias, float* y, Range range,
                   const Epilogue& e) {
  const float inf = std::numeric_limits<float>::infinity();
  const Clamp c{vdupq_n_f32(e.activation == Activation::Clip ? e.alpha : e.activation == Activation::Relu ? 0.0f : -inf),
                vdupq_n_f32(e.activation == Activation::Clip ? e.beta : inf)};
  const bool padded = pads_plane(p);
  float zero_row[kStripFloats] = {};
  float strips[kMaxTileInputRows * kStripFloats];
  float plane_copy[kPaddedPlaneFloats];
  const index_t width = padded_width(p), height = padded_height(p);
  if (padded)
    for (index_t i = 0; i < width * height; ++i) plane_copy[i] = 0.0f;
  // The input's rectangle in the padded plane (rows and columns no tile reads left out).
  const index_t copy_rows = p.in_h < height - p.pad_h ? p.in_h : height - p.pad_h;
  const index_t copy_cols = p.in_w < width - p.pad_w ? p.in_w : width - p.pad_w;
  for (index_t i = range.begin; i < range.end; ++i) {
    const DepthwisePlane d = depthwise_plane(p, i, x, w, bias, y);
    if (padded) {
      for (index_t ih = 0; ih < copy_rows; ++ih)
        copy_row(d.x + ih * p.in_w, copy_cols, plane_copy + (ih + p.pad_h) * width + p.pad_w);
      plane(p, PaddedRows{plane_copy, width, p.pad_h, p.pad_w}, d.w, d.bias, d.y, c);
    } else {
      plane(p, InPlaceRows{p, d.x, zero_row, strips}, d.w, d.bias, d.y, c);
    }
    if (!packed_gemm_detail::is_clamp(e)) activate_row(e, d.y, p.out_h * p.out_w);
  }
}

#endif  // ONNXC_SIMD && __aarch64__

}  // namespace depthwise_neon_detail
}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_DEPTHWISE_ROWS_NEON_H
