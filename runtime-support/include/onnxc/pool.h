// Pooling (MaxPool, AveragePool, LpPool, the global pools) and MaxUnpool over 1, 2 or 3
// spatial dims, NCHW layout, normalised to three spatial dims like conv.h.
#ifndef ONNXC_POOL_H
#define ONNXC_POOL_H

#include <cmath>
#include <limits>
#include <type_traits>

#include "onnxc/base.h"
#include "onnxc/numeric.h"
#include "onnxc/parallel.h"
#include "onnxc/simd.h"

namespace onnxc {
namespace rt {

struct PoolParams {
  index_t planes;  // batch * channels
  index_t in_d, in_h, in_w;
  index_t out_d, out_h, out_w;
  index_t k_d, k_h, k_w;
  index_t stride_d, stride_h, stride_w;
  index_t dilation_d, dilation_h, dilation_w;
  index_t pad_d, pad_h, pad_w;              // padding before each dim
  index_t pad_d_end, pad_h_end, pad_w_end;  // explicit padding after each dim
  bool count_include_pad;                   // AveragePool: divide by the padded window size
};

namespace pool_detail {

// The window's first input position along one dim.
inline index_t window_start(index_t o, index_t stride, index_t pad) { return o * stride - pad; }

// Taps of a window along one dim whose positions lie in [lo, hi).
inline index_t taps_within(index_t start, index_t k, index_t dilation, index_t lo, index_t hi) {
  index_t n = 0;
  for (index_t i = 0; i < k; ++i) {
    const index_t at = start + i * dilation;
    if (at >= lo && at < hi) ++n;
  }
  return n;
}

// Calls f(od, oh, ow, o) for every output position of one plane, o being its flat index.
template <class F> inline void for_each_output(const PoolParams& p, F f) {
  index_t o = 0;
  for (index_t od = 0; od < p.out_d; ++od)
    for (index_t oh = 0; oh < p.out_h; ++oh)
      for (index_t ow = 0; ow < p.out_w; ++ow) f(od, oh, ow, o++);
}

// Calls f(id, ih, iw) for every tap of output (od, oh, ow)'s window that lies inside the input
// (padding is skipped), in row-major order.
template <class F> inline void for_each_tap(const PoolParams& p, index_t od, index_t oh, index_t ow, F f) {
  const index_t d0 = window_start(od, p.stride_d, p.pad_d), h0 = window_start(oh, p.stride_h, p.pad_h),
                w0 = window_start(ow, p.stride_w, p.pad_w);
  for (index_t kd = 0; kd < p.k_d; ++kd) {
    const index_t id = d0 + kd * p.dilation_d;
    if (id < 0 || id >= p.in_d) continue;
    for (index_t kh = 0; kh < p.k_h; ++kh) {
      const index_t ih = h0 + kh * p.dilation_h;
      if (ih < 0 || ih >= p.in_h) continue;
      for (index_t kw = 0; kw < p.k_w; ++kw) {
        const index_t iw = w0 + kw * p.dilation_w;
        if (iw < 0 || iw >= p.in_w) continue;
        f(id, ih, iw);
      }
    }
  }
}

// Taps of output (od, oh, ow)'s window inside the input, or inside the explicitly padded input.
inline index_t window_size(const PoolParams& p, index_t od, index_t oh, index_t ow, bool with_pads) {
  const index_t d0 = window_start(od, p.stride_d, p.pad_d), h0 = window_start(oh, p.stride_h, p.pad_h),
                w0 = window_start(ow, p.stride_w, p.pad_w);
  if (with_pads)
    return taps_within(d0, p.k_d, p.dilation_d, -p.pad_d, p.in_d + p.pad_d_end) *
           taps_within(h0, p.k_h, p.dilation_h, -p.pad_h, p.in_h + p.pad_h_end) *
           taps_within(w0, p.k_w, p.dilation_w, -p.pad_w, p.in_w + p.pad_w_end);
  return taps_within(d0, p.k_d, p.dilation_d, 0, p.in_d) * taps_within(h0, p.k_h, p.dilation_h, 0, p.in_h) *
         taps_within(w0, p.k_w, p.dilation_w, 0, p.in_w);
}

template <class C> constexpr C lowest() {
  return std::numeric_limits<C>::has_infinity ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::lowest();
}

}  // namespace pool_detail

// y = max over each window; indices (optional, may be nullptr) gets the flat index of the max
// in the whole input tensor, the spatial part in row-major (storage_order 0) or column-major (1)
// order. The first maximum wins ties.
namespace pool_detail {

constexpr index_t kMaxPoolRows = 16;  // kernel rows the row kernel takes (more: the general loop)

// The max over the window of output column ow, of the input rows `rows` (those inside the input).
inline float window_max(const PoolParams& p, const float* const* rows, index_t count, index_t ow) {
  float best = -std::numeric_limits<float>::infinity();
  for (index_t kw = 0; kw < p.k_w; ++kw) {
    const index_t iw = ow * p.stride_w - p.pad_w + kw * p.dilation_w;
    if (iw < 0 || iw >= p.in_w) continue;
    for (index_t r = 0; r < count; ++r) best = rows[r][iw] > best ? rows[r][iw] : best;
  }
  return best;
}

#if defined(ONNXC_SIMD)
// v where v > best, else best: a NaN tap is skipped, as in window_max. x86's max is exactly that
// (it returns its second operand when either is NaN) in one instruction; NEON's returns the NaN.
inline vfloat max_skipping_nan(vfloat v, vfloat best) {
#if defined(__SSE2__)
  return xsimd::max(v, best);
#else
  return xsimd::select(v > best, v, best);
#endif
}

// The max of x[0..n), n >= L, in vectors: lanes start at x[0] and take a value only where it is
// greater (max_skipping_nan), as global_max_pool's scalar loop does (a NaN first value stays, NaNs
// later are skipped); the last vector overlaps the one before it rather than padding.
inline float max_floats(const float* x, index_t n) {
  vfloat best(x[0]);
  index_t i = 0;
  for (; i + kFloatLanes <= n; i += kFloatLanes) best = max_skipping_nan(vfloat::load_unaligned(x + i), best);
  if (i < n) best = max_skipping_nan(vfloat::load_unaligned(x + n - kFloatLanes), best);
  alignas(64) float lanes[kFloatLanes];
  best.store_aligned(lanes);
  float m = lanes[0];
  for (index_t j = 1; j < kFloatLanes; ++j)
    if (lanes[j] > m) m = lanes[j];
  return m;
}

// Output columns [ow, ow + cols), cols <= L, whose windows lie inside the input row; a whole
// vector's strided loads must lie inside it too (window_columns).
template <int S>
inline vfloat window_max_vector(const PoolParams& p, const float* const* rows, index_t count, index_t ow, index_t cols) {
  vfloat best(-std::numeric_limits<float>::infinity());
  for (index_t kw = 0; kw < p.k_w; ++kw) {
    const index_t first = ow * S - p.pad_w + kw * p.dilation_w;
    for (index_t r = 0; r < count; ++r) {
      best = max_skipping_nan(load_strided<S>(rows[r] + first, S, cols), best);
    }
  }
  return best;
}
#endif

// Output columns [lo, hi) are the windows inside the input row; `whole` ends the ones that can
// be computed as whole vectors (their loads, L * S floats from each tap, inside the row too).
struct WindowColumns {
  index_t lo, whole, hi;
};

template <int S>
inline WindowColumns window_columns(const PoolParams& p) {
  const index_t reach = (p.k_w - 1) * p.dilation_w - p.pad_w;  // last tap's column of output 0
  const index_t lo = (p.pad_w + S - 1) / S;
  index_t hi = p.in_w - 1 - reach < 0 ? 0 : (p.in_w - 1 - reach) / S + 1;
  if (hi > p.out_w) hi = p.out_w;
  if (hi < lo) hi = lo;
  index_t whole = lo;
  while (whole + kFloatLanes <= hi && (whole + kFloatLanes) * S + reach <= p.in_w) whole += kFloatLanes;
  return {lo, whole, hi};
}

// One output row: vectors where the whole window is inside the input (stride 1 or 2 with
// SIMD), scalar windows at the borders.
template <int S>
inline void max_pool_row(const PoolParams& p, const float* const* rows, index_t count, float* yrow) {
  index_t ow = 0;
#if defined(ONNXC_SIMD)
  if constexpr (S != 0) {
    const WindowColumns w = window_columns<S>(p);
    for (; ow < w.lo; ++ow) yrow[ow] = window_max(p, rows, count, ow);
    for (; ow < w.whole; ow += kFloatLanes)
      window_max_vector<S>(p, rows, count, ow, kFloatLanes).store_unaligned(yrow + ow);
    for (; ow < w.hi; ow += kFloatLanes) {  // partial vectors: exact loads
      const index_t cols = w.hi - ow < kFloatLanes ? w.hi - ow : kFloatLanes;
      store_partial(window_max_vector<S>(p, rows, count, ow, cols), yrow + ow, cols);
    }
    ow = w.hi;
  }
#endif
  for (; ow < p.out_w; ++ow) yrow[ow] = window_max(p, rows, count, ow);
}

#if defined(ONNXC_SIMD)
// Input rows up to this wide are reduced to one row of column maxima first (a buffer on the stack).
constexpr index_t kMaxPoolColumnFloats = 512;

// column[iw] = the max of rows[0..count)[iw] (NaNs skipped): a window's max
// is then the max of its k_w columns, so each input value is compared once per output row
// instead of once per horizontal tap (3 x 3 stride 2: 9 strided loads per output vector -> 3).
// Taps are still taken kernel column by kernel column, top row first: the same value wins a tie.
inline void column_max(const float* const* rows, index_t count, index_t width, float* column) {
  for (index_t iw = 0; iw < width; iw += kFloatLanes) {
    const index_t cols = width - iw < kFloatLanes ? width - iw : kFloatLanes;
    vfloat best(-std::numeric_limits<float>::infinity());
    for (index_t r = 0; r < count; ++r) {
      best = max_skipping_nan(cols == kFloatLanes ? vfloat::load_unaligned(rows[r] + iw) : load_partial(rows[r] + iw, cols), best);
    }
    store_partial(best, column + iw, cols);
  }
}
#endif

#if defined(ONNXC_SIMD) && defined(__AVX512F__)
// Stride 2 on AVX-512 keeps the column maxima in registers: reloading them from column_max's
// buffer at the taps' odd offsets straddles two of its stores, which the core cannot forward
// (squeezenet1_1's three 3 x 3 stride-2 MaxPools spent about twice ORT's time). The column
// maxima of the 48 input columns under 16 windows are three registers; tap kw = 2j + r of the
// windows is lanes j..j+15 of their even (r = 0) or odd (r = 1) columns, picked by permutes.
constexpr index_t kStride2MaxKernel = 16;  // taps whose columns lie within the three registers

// The max over rows[0..count) of the `floats` (<= 16, may be <= 0) columns from input column iw.
inline __m512 column_max_vector(const float* const* rows, index_t count, index_t iw, index_t floats) {
  const __mmask16 mask = static_cast<__mmask16>(floats >= 16 ? 0xffffu : floats <= 0 ? 0u : (1u << floats) - 1u);
  __m512 best = _mm512_maskz_loadu_ps(mask, rows[0] + iw);
  for (index_t r = 1; r < count; ++r) best = max_skipping_nan(_mm512_maskz_loadu_ps(mask, rows[r] + iw), best);
  return best;
}

// Output columns [ow, ow + cols), cols <= 16, of a stride-2 row (dilation 1, k_w <= 16) whose
// windows lie inside the input row: each input value is loaded once per output row.
inline vfloat stride2_window_max(const PoolParams& p, const float* const* rows, index_t count, index_t ow,
                                 index_t cols) {
  const index_t first = 2 * ow - p.pad_w, floats = 2 * (cols - 1) + p.k_w;  // the input columns the windows read
  const __m512 v0 = column_max_vector(rows, count, first, floats);
  const __m512 v1 = column_max_vector(rows, count, first + 16, floats - 16);
  const __m512 v2 = column_max_vector(rows, count, first + 32, floats - 32);
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i even = _mm512_add_epi32(lane, lane), odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  // The even and odd columns as two 32-lane streams (lanes 0-15 from v0, v1; 16-23 from v2).
  const __m512 even_lo = _mm512_permutex2var_ps(v0, even, v1), odd_lo = _mm512_permutex2var_ps(v0, odd, v1);
  const __m512 even_hi = _mm512_permutex2var_ps(v2, even, v2);
  const __m512 odd_hi = p.k_w > 3 ? _mm512_permutex2var_ps(v2, odd, v2) : even_hi;  // read from tap 3 on
  vfloat best = even_lo;  // tap 0
  for (index_t kw = 1; kw < p.k_w; ++kw) {
    const __m512 lo = kw % 2 ? odd_lo : even_lo, hi = kw % 2 ? odd_hi : even_hi;
    const index_t j = kw / 2;
    const __m512 tap = j == 0 ? lo : _mm512_permutex2var_ps(lo, _mm512_add_epi32(lane, _mm512_set1_epi32(static_cast<int>(j))), hi);
    best = max_skipping_nan(tap, best);
  }
  return best;
}

// One stride-2 output row: vectors over the windows inside the input row, scalar windows at the
// borders.
inline void max_pool_row_stride2(const PoolParams& p, const float* const* rows, index_t count, float* yrow) {
  const WindowColumns w = window_columns<2>(p);
  index_t ow = 0;
  for (; ow < w.lo; ++ow) yrow[ow] = window_max(p, rows, count, ow);
  for (; ow < w.hi; ow += kFloatLanes) {
    const index_t cols = w.hi - ow < kFloatLanes ? w.hi - ow : kFloatLanes;
    store_partial(stride2_window_max(p, rows, count, ow, cols), yrow + ow, cols);
  }
  for (ow = w.hi; ow < p.out_w; ++ow) yrow[ow] = window_max(p, rows, count, ow);
}
#endif

// One output row from the input rows its windows cover: through their column maxima where the
// row fits the buffer (SIMD targets; any stride: strides over 2 then fold k_w column maxima per
// window, not count x k_w taps), else tap by tap.
inline void max_pool_output_row(const PoolParams& p, const float* const* rows, index_t count, float* yrow) {
#if defined(ONNXC_SIMD) && defined(__AVX512F__)
  if (count > 0 && p.stride_w == 2 && p.dilation_w == 1 && p.k_w <= kStride2MaxKernel)
    return max_pool_row_stride2(p, rows, count, yrow);
#endif
#if defined(ONNXC_SIMD)
  alignas(64) float column[kMaxPoolColumnFloats];
  const float* column_row = column;
  if (count > 1 && p.in_w <= kMaxPoolColumnFloats) {
    column_max(rows, count, p.in_w, column);
    rows = &column_row;
    count = 1;
  }
#endif
  if (p.stride_w == 1) max_pool_row<1>(p, rows, count, yrow);
  else if (p.stride_w == 2) max_pool_row<2>(p, rows, count, yrow);
  else max_pool_row<0>(p, rows, count, yrow);
}

#if defined(ONNXC_SIMD) && (defined(__AVX512F__) || defined(__AVX2__))
// ---- 3 x 3 windows, stride 2 (squeezenet1_1's three MaxPools) ----
//
// The general stride-2 row above costs 34-41 cycles per vector of 16 outputs (squeezenet1_1's
// 64 x 111 x 111 -> 55 x 55: 122 us with the input in L3, ORT 99 us in its profile): run-time
// kernel sizes and row counts, masked loads and five permutes per vector, the column bounds
// recomputed per row. With the window's size known, the 33 input columns under 16 windows are
// two whole loads and one broadcast per row, the taps two permutes and one lane shift; and two
// output rows are computed per pass, sharing the input row between them (5 input rows loaded
// for 2 output rows instead of 6). Same taps, same order as stride2_window_max: column maxima
// top row first, then kernel columns left to right (the same value wins a tie, NaNs likewise;
// bit-identical outputs on 3000 random shapes, pads and ceil modes with NaNs and signed zeros).
// One thread, input in L3: 64 x 111 x 111 122 -> 62-65 us, 128 x 55 x 55 69 -> 33-35 us,
// 256 x 27 x 27 38 -> 19-20 us. (With the input in DRAM the first is memory-bound, 130-170 us
// either way; prefetching the next input rows did not change that.)
namespace k3s2 {

#if defined(__AVX512F__)
inline __m512 column_max(__m512 r0, __m512 r1, __m512 r2) {
  return max_skipping_nan(r2, max_skipping_nan(r1, r0));
}

// 16 windows from the column maxima of their 33 input columns: c0 = columns 0-15, c1 =
// columns 16-31, lane 0 of c2 = column 32. Window i is columns 2i, 2i + 1, 2i + 2: the even
// columns, the odd ones, and the even ones shifted by one lane with column 32 coming in.
inline __m512 windows(__m512 c0, __m512 c1, __m512 c2) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  const __m512 e = _mm512_permutex2var_ps(c0, even, c1), o = _mm512_permutex2var_ps(c0, odd, c1);
  const __m512 next = _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(c2), _mm512_castps_si512(e), 1));
  return max_skipping_nan(next, max_skipping_nan(o, e));
}

// One input row's 33 columns from `at` (whole loads: they lie inside the row).
struct Row {
  __m512 v0, v1, v2;
};

inline Row load(const float* row, index_t at) {
  return {_mm512_loadu_ps(row + at), _mm512_loadu_ps(row + at + 16), _mm512_set1_ps(row[at + 32])};
}

// The first `floats` (< 33) of them: masked loads (fault-free past the row's end).
// (Masks of no lanes skip their load: 17.6 against 19.3 us on 256 x 27 x 27, where the windows
// of a row read 27 columns and so never the third register.)
inline Row load(const float* row, index_t at, __mmask16 m0, __mmask16 m1, __mmask16 m2) {
  return {_mm512_maskz_loadu_ps(m0, row + at), m1 ? _mm512_maskz_loadu_ps(m1, row + at + 16) : _mm512_setzero_ps(),
          m2 ? _mm512_maskz_loadu_ps(m2, row + at + 32) : _mm512_setzero_ps()};
}

inline __m512 windows(const Row& a, const Row& b, const Row& c) {
  return windows(column_max(a.v0, b.v0, c.v0), column_max(a.v1, b.v1, c.v1), column_max(a.v2, b.v2, c.v2));
}

inline __mmask16 first_lanes(index_t n) {
  return static_cast<__mmask16>(n >= 16 ? 0xffffu : n <= 0 ? 0u : (1u << n) - 1u);
}

// Output columns [w.lo, w.hi) of Rows (1 or 2) output rows: y0 from input rows r[0..3), y1 from
// r[2..5).
// The columns of a row's last, partial vector of windows (if any) and their masks, computed
// once per MaxPool rather than per pair of rows.
struct Tail {
  index_t ow, at;
  __mmask16 m0, m1, m2, out;
};

inline Tail tail_of(const PoolParams& p, const WindowColumns& w) {
  const index_t cols = w.hi - w.whole, floats = 2 * cols + 1;
  return {w.whole, 2 * w.whole - p.pad_w, first_lanes(floats), first_lanes(floats - 16), first_lanes(floats - 32),
          first_lanes(cols)};
}

template <int Rows>
inline void rows(const PoolParams& p, const WindowColumns& w, const Tail& t, const float* const* r, float* y0,
                 float* y1) {
  for (index_t ow = w.lo; ow < w.whole; ow += 16) {
    const index_t at = 2 * ow - p.pad_w;
    const Row a = load(r[0], at), b = load(r[1], at), c = load(r[2], at);
    _mm512_storeu_ps(y0 + ow, windows(a, b, c));
    if (Rows == 2) {
      const Row d = load(r[3], at), f = load(r[4], at);
      _mm512_storeu_ps(y1 + ow, windows(c, d, f));
    }
  }
  if (t.out) {
    const Row a = load(r[0], t.at, t.m0, t.m1, t.m2), b = load(r[1], t.at, t.m0, t.m1, t.m2),
              c = load(r[2], t.at, t.m0, t.m1, t.m2);
    _mm512_mask_storeu_ps(y0 + t.ow, t.out, windows(a, b, c));
    if (Rows == 2) {
      const Row d = load(r[3], t.at, t.m0, t.m1, t.m2), f = load(r[4], t.at, t.m0, t.m1, t.m2);
      _mm512_mask_storeu_ps(y1 + t.ow, t.out, windows(c, d, f));
    }
  }
}

#else
#include "onnxc/pool_max_k3s2_avx2.h"
#endif

// The scalar windows at a row's borders (padding), columns outside [w.lo, w.hi).
inline void borders(const PoolParams& p, const WindowColumns& w, const float* const* r, float* y) {
  for (index_t ow = 0; ow < w.lo; ++ow) y[ow] = window_max(p, r, 3, ow);
  for (index_t ow = w.hi; ow < p.out_w; ++ow) y[ow] = window_max(p, r, 3, ow);
}

inline bool applies(const PoolParams& p) {
  return p.k_h == 3 && p.k_w == 3 && p.stride_h == 2 && p.stride_w == 2 && p.dilation_h == 1 && p.dilation_w == 1;
}

// The planes of a 3 x 3 stride-2 MaxPool: pairs of output rows whose five input rows lie inside
// the input, single rows at the padded top and bottom (those with fewer rows: the general row).
inline void planes(const PoolParams& p, const float* x, float* y, Range planes) {
  const WindowColumns w = window_columns<2>(p);
  const Tail t = tail_of(p, w);
  const index_t in_plane = p.in_h * p.in_w, out_plane = p.out_h * p.out_w;
  for (index_t c = planes.begin; c < planes.end; ++c) {
    const float* xp = x + c * in_plane;
    float* yp = y + c * out_plane;
    for (index_t oh = 0; oh < p.out_h;) {
      const index_t ih = 2 * oh - p.pad_h;
      const float* r[5];
      for (index_t i = 0; i < 5; ++i) r[i] = xp + (ih + i) * p.in_w;  // used only where inside
      float* y0 = yp + oh * p.out_w;
      if (ih >= 0 && ih + 4 < p.in_h && oh + 1 < p.out_h) {
        rows<2>(p, w, t, r, y0, y0 + p.out_w);
        borders(p, w, r, y0);
        borders(p, w, r + 2, y0 + p.out_w);
        oh += 2;
      } else if (ih >= 0 && ih + 2 < p.in_h) {
        rows<1>(p, w, t, r, y0, nullptr);
        borders(p, w, r, y0);
        oh += 1;
      } else {
        const float* inside[3];
        index_t count = 0;
        for (index_t i = 0; i < 3; ++i)
          if (ih + i >= 0 && ih + i < p.in_h) inside[count++] = r[i];
        max_pool_output_row(p, inside, count, y0);
        oh += 1;
      }
    }
  }
}

}  // namespace k3s2
#endif

#if defined(ONNXC_SIMD)
// ---- stride 1 on narrow planes: a whole plane at a time ----
//
// Rows narrower than two vectors cost the row kernel more in per-row work (window bounds, masks,
// scalar border windows) than in maxima: 512 planes of 7 x 7, 3 x 3 s1 p1 took 1.4x ORT. A plane
// whose window span fits the buffer is copied once into it with -inf around it (never greater
// than a tap), then both passes run over the flat buffer in whole vectors, each in place (a
// position reads only itself and positions after it): the max over the k_h rows below each
// position, then over the k_w columns right of it. Output (oh, ow) is then at oh * width + ow;
// the columns past out_w of each row are discarded.
constexpr index_t kMaxPoolPlaneFloats = 2048;

struct PlaneSpan {
  index_t width, height, floats;  // the padded plane the windows span; the buffer's floats used
};

inline PlaneSpan plane_span(const PoolParams& p) {
  const index_t width = p.out_w + (p.k_w - 1) * p.dilation_w, height = p.out_h + (p.k_h - 1) * p.dilation_h;
  const index_t rows_read = (p.out_h * width + kFloatLanes - 1) / kFloatLanes * kFloatLanes;  // vectors of outputs
  const index_t reach = (p.k_h - 1) * p.dilation_h * width > (p.k_w - 1) * p.dilation_w
                            ? (p.k_h - 1) * p.dilation_h * width
                            : (p.k_w - 1) * p.dilation_w;
  const index_t floats = rows_read + reach > height * width ? rows_read + reach : height * width;
  return {width, height, floats};
}

inline bool pools_whole_planes(const PoolParams& p) {
  // (a plane of one row is one row: the row kernel, without the copies)
  return p.stride_h == 1 && p.stride_w == 1 && p.in_h > 1 && p.in_w < 2 * kFloatLanes && p.pad_h < p.in_h && p.pad_w < p.in_w &&
         plane_span(p).floats <= kMaxPoolPlaneFloats;
}

inline void max_pool_planes(const PoolParams& p, const float* x, float* y, Range planes) {
  alignas(64) float buf[kMaxPoolPlaneFloats];
  const PlaneSpan s = plane_span(p);
  const index_t outputs = p.out_h * s.width;
  const index_t rows = p.in_h < s.height - p.pad_h ? p.in_h : s.height - p.pad_h;  // input rows spanned
  const index_t cols = p.in_w < s.width - p.pad_w ? p.in_w : s.width - p.pad_w;
  const vfloat lowest(-std::numeric_limits<float>::infinity());
  for (index_t c = planes.begin; c < planes.end; ++c) {
    for (index_t i = 0; i < s.floats; i += kFloatLanes)
      store_partial(lowest, buf + i, s.floats - i < kFloatLanes ? s.floats - i : kFloatLanes);
    const float* xp = x + c * p.in_h * p.in_w;
    for (index_t ih = 0; ih < rows; ++ih) copy_floats(xp + ih * p.in_w, cols, buf + (ih + p.pad_h) * s.width + p.pad_w);
    for (index_t f = 0; f < outputs; f += kFloatLanes) {
      vfloat best = lowest;
      for (index_t kh = 0; kh < p.k_h; ++kh)
        best = max_skipping_nan(vfloat::load_unaligned(buf + f + kh * p.dilation_h * s.width), best);
      best.store_unaligned(buf + f);
    }
    for (index_t f = 0; f < outputs; f += kFloatLanes) {
      vfloat best = lowest;
      for (index_t kw = 0; kw < p.k_w; ++kw) best = max_skipping_nan(vfloat::load_unaligned(buf + f + kw * p.dilation_w), best);
      best.store_unaligned(buf + f);
    }
    float* yp = y + c * p.out_h * p.out_w;
    for (index_t oh = 0; oh < p.out_h; ++oh) copy_floats(buf + oh * s.width, p.out_w, yp + oh * p.out_w);
  }
}
#endif

// Float 2-d MaxPool without indices, one output row at a time over the input rows its windows
// cover. Same result as the general loop except when a window's first tap is NaN (that loop
// returns the NaN, this one the max of the other taps).
inline void max_pool_rows(const PoolParams& p, const float* x, float* y, Range planes) {
#if defined(ONNXC_SIMD) && (defined(__AVX512F__) || defined(__AVX2__))
  if (k3s2::applies(p)) return k3s2::planes(p, x, y, planes);
#endif
#if defined(ONNXC_SIMD)
  if (pools_whole_planes(p)) return max_pool_planes(p, x, y, planes);
#endif
  const index_t in_plane = p.in_h * p.in_w;
  const float* rows[kMaxPoolRows];
  for (index_t c = planes.begin; c < planes.end; ++c) {
    const float* xp = x + c * in_plane;
    for (index_t oh = 0; oh < p.out_h; ++oh) {
      index_t count = 0;
      for (index_t kh = 0; kh < p.k_h; ++kh) {
        const index_t ih = oh * p.stride_h - p.pad_h + kh * p.dilation_h;
        if (ih >= 0 && ih < p.in_h) rows[count++] = xp + ih * p.in_w;
      }
      max_pool_output_row(p, rows, count, y + (c * p.out_h + oh) * p.out_w);
    }
  }
}

}  // namespace pool_detail

// With a parallel-for, the float 2-d path without indices runs as kPoolTasks ranges of planes.
constexpr index_t kPoolTasks = 8;

template <class T>
inline void max_pool(const PoolParams& p, const T* x, T* y, std::int64_t* indices, int storage_order,
                     Parallel parallel = nullptr) {
  if constexpr (std::is_same<T, float>::value) {
    if (!indices && p.in_d == 1 && p.k_d == 1 && p.out_d == 1 && p.k_h <= pool_detail::kMaxPoolRows) {
      if (!parallel) return pool_detail::max_pool_rows(p, x, y, {0, p.planes});
      const index_t tasks = p.planes < kPoolTasks ? p.planes : kPoolTasks;
      return parallel_for(parallel, tasks, [&](index_t t) {
        pool_detail::max_pool_rows(p, x, y, part_of(p.planes, tasks, t));
      });
    }
  }
  using C = compute_t<T>;
  const index_t in_plane = p.in_d * p.in_h * p.in_w, out_plane = p.out_d * p.out_h * p.out_w;
  for (index_t c = 0; c < p.planes; ++c) {
    const T* xp = x + c * in_plane;
    pool_detail::for_each_output(p, [&](index_t od, index_t oh, index_t ow, index_t o) {
      C best = pool_detail::lowest<C>();
      index_t best_at = -1;
      pool_detail::for_each_tap(p, od, oh, ow, [&](index_t id, index_t ih, index_t iw) {
        const C v = load(xp[(id * p.in_h + ih) * p.in_w + iw]);
        if (best_at < 0 || v > best) {
          best = v;
          best_at = storage_order == 0 ? (id * p.in_h + ih) * p.in_w + iw : (iw * p.in_h + ih) * p.in_d + id;
        }
      });
      y[c * out_plane + o] = store<T>(best);
      if (indices) indices[c * out_plane + o] = static_cast<std::int64_t>(c * in_plane + (best_at < 0 ? 0 : best_at));
    });
  }
}

// y = mean over each window, of the taps inside the input, or (count_include_pad) dividing by
// the taps inside the explicitly padded input.
template <class T>
inline void global_average_pool(index_t planes, index_t plane_size, const T* x, T* y);

// Whether one window covers each whole plane and nothing else (no padding, no dilation):
// exporters write the global pool at the end of a CNN as AveragePool with the plane as kernel.
inline bool pools_whole_plane(const PoolParams& p) {
  return p.out_d == 1 && p.out_h == 1 && p.out_w == 1 && p.k_d == p.in_d && p.k_h == p.in_h && p.k_w == p.in_w &&
         p.pad_d == 0 && p.pad_h == 0 && p.pad_w == 0 && p.pad_d_end == 0 && p.pad_h_end == 0 && p.pad_w_end == 0;
}

}  // namespace rt
}  // namespace onnxc

#if defined(ONNXC_SIMD)
#include "onnxc/pool_average_simd.h"
#endif

namespace onnxc {
namespace rt {
namespace pool_detail {

// Float 1-d/2-d AveragePool by rows: an output row's window rows are summed column by column
// once (a buffer on the stack, rows up to this wide), then each output column sums its window's
// k_w column sums and divides by its window's size, the product of the taps counted along H and
// along W (inside the input, or inside the padded input with count_include_pad), as window_size
// counts them. The general loop adds tap by tap, one lambda call and bounds check each.
constexpr index_t kAveragePoolColumns = 512;

// (A window of one row, as every 1-d pool has, reads its row as the column sums: any width.)
inline bool average_pool_by_rows(const PoolParams& p) {
  return p.in_d == 1 && p.k_d == 1 && p.out_d == 1 && (p.in_w <= kAveragePoolColumns || p.k_h == 1) &&
         p.k_h <= kMaxPoolRows;
}

// column[iw] = rows[0][iw] + ... + rows[count - 1][iw].
inline void column_sum(const float* const* rows, index_t count, index_t width, float* column) {
#if defined(ONNXC_SIMD)
  if (count > 0) {
    average_simd::column_sum(rows, count, width, column);
    return;
  }
#endif
  for (index_t iw = 0; iw < width; ++iw) {
    float sum = 0;
    for (index_t r = 0; r < count; ++r) sum += rows[r][iw];
    column[iw] = sum;
  }
}

// Output column ow of a row whose window rows' column sums are `column`; `rows_counted` its
// window's rows counted for the divisor.
inline float window_mean(const PoolParams& p, const float* column, index_t rows_counted, index_t ow) {
  const index_t w0 = window_start(ow, p.stride_w, p.pad_w);
  float sum = 0;
  for (index_t kw = 0; kw < p.k_w; ++kw) {
    const index_t iw = w0 + kw * p.dilation_w;
    if (iw >= 0 && iw < p.in_w) sum += column[iw];
  }
  const index_t cols = p.count_include_pad ? taps_within(w0, p.k_w, p.dilation_w, -p.pad_w, p.in_w + p.pad_w_end)
                                           : taps_within(w0, p.k_w, p.dilation_w, 0, p.in_w);
  const index_t div = rows_counted * cols;
  return div > 0 ? sum / static_cast<float>(div) : 0.0f;
}

template <int S>
inline void average_pool_row(const PoolParams& p, const float* column, index_t rows_counted, float* yrow) {
  index_t ow = 0;
#if defined(ONNXC_SIMD)
  if constexpr (S != 0) {
    const WindowColumns w = window_columns<S>(p);
    for (; ow < w.lo; ++ow) yrow[ow] = window_mean(p, column, rows_counted, ow);
    average_simd::window_means<S>(p, column, static_cast<float>(rows_counted * p.k_w), w, yrow);
    ow = w.hi;
  }
#endif
  for (; ow < p.out_w; ++ow) yrow[ow] = window_mean(p, column, rows_counted, ow);
}

inline void average_pool_rows(const PoolParams& p, const float* x, float* y) {
  float column[kAveragePoolColumns];
  const float* rows[kMaxPoolRows];
  const index_t in_plane = p.in_h * p.in_w;
  for (index_t c = 0; c < p.planes; ++c) {
    const float* xp = x + c * in_plane;
    for (index_t oh = 0; oh < p.out_h; ++oh, y += p.out_w) {
      const index_t h0 = window_start(oh, p.stride_h, p.pad_h);
      index_t count = 0;
      for (index_t kh = 0; kh < p.k_h; ++kh) {
        const index_t ih = h0 + kh * p.dilation_h;
        if (ih >= 0 && ih < p.in_h) rows[count++] = xp + ih * p.in_w;
      }
      const index_t rows_counted =
          p.count_include_pad ? taps_within(h0, p.k_h, p.dilation_h, -p.pad_h, p.in_h + p.pad_h_end) : count;
      if (rows_counted == 0 || count == 0) {  // windows wholly in the padding: mean 0, as the general loop gives
        for (index_t ow = 0; ow < p.out_w; ++ow) y[ow] = 0.0f;
        continue;
      }
      const float* sums = column;
      if (count == 1) sums = rows[0];
      else column_sum(rows, count, p.in_w, column);
      if (p.stride_w == 1) average_pool_row<1>(p, sums, rows_counted, y);
      else if (p.stride_w == 2) average_pool_row<2>(p, sums, rows_counted, y);
      else average_pool_row<0>(p, sums, rows_counted, y);
    }
  }
}

}  // namespace pool_detail

template <class T>
inline void average_pool(const PoolParams& p, const T* x, T* y) {
  using C = compute_t<T>;
  const index_t in_plane = p.in_d * p.in_h * p.in_w, out_plane = p.out_d * p.out_h * p.out_w;
  // The global mean's vector sums (resnet8-cifar's 8 x 8 window over 64 channels: 3.8 -> 0.3 us;
  // the loop below adds one tap at a time, each add waiting for the last).
  if (pools_whole_plane(p)) return global_average_pool(p.planes, in_plane, x, y);
  if constexpr (std::is_same<T, float>::value) {
    if (pool_detail::average_pool_by_rows(p)) return pool_detail::average_pool_rows(p, x, y);
  }
  for (index_t c = 0; c < p.planes; ++c) {
    const T* xp = x + c * in_plane;
    pool_detail::for_each_output(p, [&](index_t od, index_t oh, index_t ow, index_t o) {
      C sum = C(0);
      pool_detail::for_each_tap(p, od, oh, ow,
                                [&](index_t id, index_t ih, index_t iw) { sum += load(xp[(id * p.in_h + ih) * p.in_w + iw]); });
      const index_t div = pool_detail::window_size(p, od, oh, ow, p.count_include_pad);
      y[c * out_plane + o] = store<T>(div > 0 ? sum / static_cast<C>(div) : C(0));
    });
  }
}

// y = (sum over each window of |x|^norm)^(1/norm); padding counts as zeros.
template <class T>
inline void lp_pool(const PoolParams& p, float norm, const T* x, T* y) {
  using C = compute_t<T>;
  const C e = static_cast<C>(norm);
  const index_t in_plane = p.in_d * p.in_h * p.in_w, out_plane = p.out_d * p.out_h * p.out_w;
  for (index_t c = 0; c < p.planes; ++c) {
    const T* xp = x + c * in_plane;
    pool_detail::for_each_output(p, [&](index_t od, index_t oh, index_t ow, index_t o) {
      C sum = C(0);
      pool_detail::for_each_tap(p, od, oh, ow, [&](index_t id, index_t ih, index_t iw) {
        sum += std::pow(std::fabs(load(xp[(id * p.in_h + ih) * p.in_w + iw])), e);
      });
      y[c * out_plane + o] = store<T>(std::pow(sum, C(1) / e));
    });
  }
}

// y[c] = mean of x's plane c (GlobalAveragePool).
template <class T>
inline void global_average_pool(index_t planes, index_t plane_size, const T* x, T* y) {
  using C = compute_t<T>;
#if defined(ONNXC_SIMD)
  if constexpr (std::is_same<T, float>::value) {
    for (index_t c = 0; c < planes; ++c) y[c] = sum_floats(x + c * plane_size, plane_size) / static_cast<float>(plane_size);
    return;
  }
#endif
  for (index_t c = 0; c < planes; ++c) {
    const T* xc = x + c * plane_size;
    const C sum = blocked_sum<C>(plane_size, [xc](index_t i) { return static_cast<C>(load(xc[i])); });
    y[c] = store<T>(sum / static_cast<C>(plane_size));
  }
}

// y[c] = max of x's plane c (GlobalMaxPool).
template <class T>
inline void global_max_pool(index_t planes, index_t plane_size, const T* x, T* y) {
  using C = compute_t<T>;
#if defined(ONNXC_SIMD)
  if constexpr (std::is_same<T, float>::value) {
    if (plane_size >= kFloatLanes) {
      for (index_t c = 0; c < planes; ++c) y[c] = pool_detail::max_floats(x + c * plane_size, plane_size);
      return;
    }
  }
#endif
  for (index_t c = 0; c < planes; ++c) {
    C best = load(x[c * plane_size]);
    for (index_t i = 1; i < plane_size; ++i) {
      const C v = load(x[c * plane_size + i]);
      if (v > best) best = v;
    }
    y[c] = store<T>(best);
  }
}

// y[c] = (sum of |x|^norm over x's plane c)^(1/norm) (GlobalLpPool).
template <class T>
inline void global_lp_pool(index_t planes, index_t plane_size, float norm, const T* x, T* y) {
  using C = compute_t<T>;
  const C e = static_cast<C>(norm);
  for (index_t c = 0; c < planes; ++c) {
    C sum = C(0);
    for (index_t i = 0; i < plane_size; ++i) sum += std::pow(std::fabs(load(x[c * plane_size + i])), e);
    y[c] = store<T>(std::pow(sum, C(1) / e));
  }
}

// MaxUnpool: y (y_size elements) is zero except y[indices[i]] = x[i] for the n elements of x;
// indices are flat indices into y, as MaxPool's second output gives them. Out-of-range
// indices are ignored.
template <class T>
inline void max_unpool(index_t n, const T* x, const std::int64_t* indices, index_t y_size, T* y) {
  for (index_t i = 0; i < y_size; ++i) y[i] = store<T>(compute_t<T>(0));
  for (index_t i = 0; i < n; ++i) {
    const std::int64_t at = indices[i];
    if (at >= 0 && at < static_cast<std::int64_t>(y_size)) y[at] = x[i];
  }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_POOL_H
