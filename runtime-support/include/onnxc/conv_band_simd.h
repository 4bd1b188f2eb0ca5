// onnxc runtime support: 2-d convolution over bands of output rows whose input rows are first
// copied onto the stack, padded and split into column phases (SIMD targets; xsimd, so AVX-512 and
// AVX2 alike). Any group count and group width, kernel size, stride and dilation: made for the
// convolutions whose products are too small for the matrix-product kernels to fill their tiles,
// grouped ones (group widths 2-64, ResNeXt/RegNet) and first layers of 1-4 input channels.
//
// For a band of R output rows of one group, the buffer holds, for every input channel c, kernel
// row kh and column phase ph (stride_w of them), R rows of Wq floats: row r is the input row
// under output row r for kernel row kh, its columns ph, ph + stride_w, ... (zero where the
// window overhangs the padding). In that layout every tap (c, kh, kw) of the output at row r,
// column j reads the float at r * Wq + j + (kw * dilation_w) / stride_w of one (c, kh, phase)
// plane: the band's outputs are one flat run of R * Wq columns (the Wq - out_w columns past each
// row are computed and dropped), and each tap is a contiguous load of whole vectors, whatever
// the stride and dilation. A register tile is MR output channels x NV vectors of those flat
// columns: per tap NV loads and MR broadcast weights for MR * NV FMAs, across the group's
// input channels x taps with no bounds checks. The band's copy costs about 1 / (kernel columns
// x output channels) of the product's loads and is in L1 while the group's output channels are
// computed from it.
//
// Weights as pack_direct_weights lays out each group's [out_channels / group, K] rows (the
// compiler packs them group by group): panels of kDirectPanelChannels rows, a tap's rows side by
// side. Bias and the fused activation are applied in registers.
#pragma once

#include "onnxc/conv.h"
#include "onnxc/parallel.h"

namespace onnxc {
namespace rt {
namespace band_detail {

constexpr index_t kMaxBufferFloats = 12 * 1024;  // the band on the stack (48 KB, about L1)
constexpr index_t kMaxVectors = 4;               // vectors of flat columns per register tile
constexpr index_t kMaxKernelColumns = 16;
constexpr index_t kMaxStride = 8;
constexpr index_t kMaxRowTiles = 6;              // MR of the widest tile (NV = 4 on AVX-512)

// Columns of one band row (Wq): the output row and the farthest tap's offset in its phase.
constexpr index_t row_cols(const ConvParams& p) { return p.out_w + (p.k_w - 1) * p.dilation_w / p.stride_w; }
// Rows a plane holds past the band's output rows: the lowest kernel row's offset in its phase.
constexpr index_t extra_rows(const ConvParams& p) { return (p.k_h - 1) * p.dilation_h / p.stride_h; }
// Floats of one band row over every (input channel, row phase, column phase) plane.
constexpr index_t row_floats(const ConvParams& p) {
  return p.in_channels / p.group * p.stride_h * p.stride_w * row_cols(p);
}
// Floats of a band of `rows` output rows.
constexpr index_t band_floats(const ConvParams& p, index_t rows) { return row_floats(p) * (rows + extra_rows(p)); }
// Floats read past the last plane's band by a tile's last vector (for vectors of up to 16 lanes:
// the compiler asks too, without SIMD).
constexpr index_t kMaxLanes = 16;
constexpr index_t slack_floats(const ConvParams& p) {
  return (kMaxVectors + 1) * kMaxLanes + (p.k_w - 1) * p.dilation_w / p.stride_w;
}

// Whether conv_band can compute the Conv: 2-d (or 1-d as one row), a band row fitting the buffer.
constexpr bool applies(const ConvParams& p) {
  return p.in_d == 1 && p.k_d == 1 && p.out_d == 1 && p.k_w <= kMaxKernelColumns && p.k_h <= kMaxKernelColumns &&
         p.stride_w <= kMaxStride && p.stride_h <= kMaxStride && band_floats(p, 1) + slack_floats(p) <= kMaxBufferFloats;
}

#if defined(ONNXC_SIMD)
constexpr index_t kAccumulators = kVectorRegisters == 32 ? 24 : 12;
#else
constexpr index_t kAccumulators = 12;
#endif

// Output channels per register tile for NV vectors of columns.
constexpr index_t tile_rows(index_t nv) {
  const index_t r = kAccumulators / nv;
  return r < 8 ? r : 8;
}

// The cost model's per-tap overhead of a register tile, in FMAs: the tap's loop, offset and
// weight pointer, and the latency a tile of few accumulators leaves uncovered. Fitted by hand to
// one layer alone (AVX-512, 256 channels in 16 groups on 28 x 28): tiles of 8 x 1 vectors took
// twice the time of 6 x 4 though they drop fewer lanes.
constexpr index_t kTileOverhead = 4;

// Rows per band and vectors per register tile: the pair of the least estimated work, counted
// in FMAs of whole tiles (flat columns past the band's end or out_w in a row computed and
// dropped) plus each tile's overhead per tap and each band's setup (about a tile's work: the
// copy, the loops over panels).
struct Plan {
  index_t rows, vectors;
};

constexpr Plan plan(const ConvParams& p) {
  const index_t wq = row_cols(p),
                most_rows = (kMaxBufferFloats - slack_floats(p)) / row_floats(p) - extra_rows(p);
  const index_t max_rows = most_rows < p.out_h ? most_rows : p.out_h, mg = p.out_channels / p.group;
  Plan best{1, 1};
  index_t best_cost = -1;
  for (index_t nv = 1; nv <= kMaxVectors; ++nv) {
    const index_t tile = nv * kFloatLanes, mr = tile_rows(nv);
    // FMAs plus overhead per tap of one column tile over the group's output channels (panels of 16).
    index_t per_columns = 0;
    for (index_t first = 0; first < mg; first += kDirectPanelChannels) {
      const index_t panel = mg - first < kDirectPanelChannels ? mg - first : kDirectPanelChannels;
      for (index_t r0 = 0; r0 < panel; r0 += mr) per_columns += ((panel - r0 < mr ? panel - r0 : mr) * nv + kTileOverhead);
    }
    for (index_t r = 1; r <= max_rows; ++r) {
      const index_t full = p.out_h / r, last = p.out_h % r;
      auto tiles = [&](index_t rows) { return (rows * wq + tile - 1) / tile + 1; };
      const index_t cost = (full * tiles(r) + (last ? tiles(last) : 0)) * per_columns;
      if (best_cost < 0 || cost <= best_cost) {
        best_cost = cost;
        best = Plan{r, nv};
      }
    }
  }
  return best;
}

#if defined(ONNXC_SIMD)

// Lanes [lo, hi) of v to p[lo, hi); the others untouched (and not accessed on AVX-512 and AVX2,
// where p + lane may lie outside the output for them).
ONNXC_INLINE void store_lanes(vfloat v, float* p, index_t lo, index_t hi) {
#if defined(__AVX512F__)
  const unsigned mask = ((1u << hi) - 1u) & ~((1u << lo) - 1u);
  _mm512_mask_storeu_ps(p, static_cast<__mmask16>(mask), v);
#elif defined(__AVX2__)
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i in = _mm256_and_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(hi)), lane),
                                      _mm256_cmpgt_epi32(lane, _mm256_set1_epi32(static_cast<int>(lo) - 1)));
  _mm256_maskstore_ps(p, in, v);
#else
  alignas(64) float lanes[kFloatLanes];
  v.store_aligned(lanes);
  for (index_t j = lo; j < hi; ++j) p[j] = lanes[j];
#endif
}

#if defined(__AVX512F__) || defined(__AVX2__)
// p[lo, hi) in lanes [lo, hi), zeros elsewhere; nothing outside [p + lo, p + hi) is read.
ONNXC_INLINE vfloat load_lanes(const float* p, index_t lo, index_t hi) {
  if (hi <= lo) return vfloat(0.0f);
#if defined(__AVX512F__)
  const unsigned mask = ((1u << hi) - 1u) & ~((1u << lo) - 1u);
  return _mm512_maskz_loadu_ps(static_cast<__mmask16>(mask), p);
#else
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i in = _mm256_and_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(hi)), lane),
                                      _mm256_cmpgt_epi32(lane, _mm256_set1_epi32(static_cast<int>(lo) - 1)));
  return _mm256_maskload_ps(p, in);
#endif
}
#endif

// Where a tile's outputs go: flat column q of the band is output row q / wq (of `rows`), column
// q % wq (kept when < out_w), of output channel m at y + m * out_plane.
struct BandOutput {
  float* y;  // the tile's first output channel at the band's first row
  index_t out_plane, out_w, wq, rows;
};

// One register tile: MR output channels (weights w + l * w_stride + m for tap l) x NV vectors of
// flat columns from `in` (the band buffer at flat column q0); bias per output channel (or
// nullptr); activated, straight from the registers into the output rows the columns belong to
// (masked stores: a round trip through the stack stalls on store forwarding).
template <int MR, int NV>
ONNXC_INLINE void tile(const ConvParams& p, const float* in, index_t q0, const index_t* kh_offset, const index_t* kw_offset,
                       const float* w, index_t w_stride, const float* bias, const Epilogue& e, const BandOutput& out) {
  vfloat acc[MR][NV];
  ONNXC_UNROLL for (int m = 0; m < MR; ++m) {
    const vfloat b(bias ? bias[m] : 0.0f);
    ONNXC_UNROLL for (int v = 0; v < NV; ++v) acc[m][v] = b;
  }
  const index_t cg = p.in_channels / p.group, channel = kh_offset[p.k_h];
  const float* wl = w;
  for (index_t c = 0; c < cg; ++c)
    for (index_t kh = 0; kh < p.k_h; ++kh) {
      const float* row = in + c * channel + kh_offset[kh];
      for (index_t kw = 0; kw < p.k_w; ++kw, wl += w_stride) {
        const float* a = row + q0 + kw_offset[kw];
        vfloat xv[NV];
        ONNXC_UNROLL for (int v = 0; v < NV; ++v) xv[v] = vfloat::load_unaligned(a + v * kFloatLanes);
        ONNXC_UNROLL for (int m = 0; m < MR; ++m) {
          const vfloat wv(wl[m]);
          ONNXC_UNROLL for (int v = 0; v < NV; ++v) acc[m][v] = xsimd::fma(wv, xv[v], acc[m][v]);
        }
      }
    }
  ONNXC_UNROLL for (int v = 0; v < NV; ++v) {
    const index_t a = q0 + v * kFloatLanes;  // the vector's first flat column
    const index_t last_row = (a + kFloatLanes - 1) / out.wq < out.rows ? (a + kFloatLanes - 1) / out.wq : out.rows - 1;
    for (index_t r = a / out.wq; r <= last_row; ++r) {
      const index_t row_start = r * out.wq - a;  // lane of the row's column 0 (may be negative)
      const index_t lo = row_start > 0 ? row_start : 0;
      const index_t hi = row_start + out.out_w < kFloatLanes ? row_start + out.out_w : kFloatLanes;
      if (hi <= lo) continue;
      float* dst = out.y + r * out.out_w - row_start;  // lane j to dst[j]
      ONNXC_UNROLL for (int m = 0; m < MR; ++m) store_lanes(activate(e, acc[m][v]), dst + m * out.out_plane, lo, hi);
    }
  }
}

template <int NV, int MR>
ONNXC_INLINE void tile_of_rows(index_t rows, const ConvParams& p, const float* in, index_t q0,
                               const index_t* kh_offset, const index_t* kw_offset, const float* w, index_t w_stride, const float* bias,
                               const Epilogue& e, const BandOutput& out) {
  if constexpr (MR > 1) {
    if (rows < MR) return tile_of_rows<NV, MR - 1>(rows, p, in, q0, kh_offset, kw_offset, w, w_stride, bias, e, out);
  }
  tile<MR, NV>(p, in, q0, kh_offset, kw_offset, w, w_stride, bias, e, out);
}

// The band's input rows of one group into buf (layout above): rows [oh0, oh0 + rows) of the
// output, planes of `plane` floats.
inline void fill_band(const ConvParams& p, const float* xg, index_t oh0, index_t rows, index_t plane, float* buf) {
  const index_t cg = p.in_channels / p.group, wq = row_cols(p), sw = p.stride_w;
  // Input column of phase ph's column j: j * sw + ph - pad_w, inside [0, in_w) for j in
  // [lo[ph], hi[ph]) (the same for every row: divisions once per band).
  index_t lo[kMaxStride], hi[kMaxStride];
  for (index_t ph = 0; ph < sw; ++ph) {
    const index_t first = p.pad_w - ph, last = p.in_w - 1 + p.pad_w - ph;
    hi[ph] = last < 0 ? 0 : last / sw + 1;
    if (hi[ph] > wq) hi[ph] = wq;
    lo[ph] = first > 0 ? (first + sw - 1) / sw : 0;
    if (lo[ph] > hi[ph]) lo[ph] = hi[ph];
  }
  const index_t sh = p.stride_h, band_rows = rows + extra_rows(p);
  for (index_t c = 0; c < cg; ++c)
    for (index_t rp = 0; rp < sh; ++rp)
      for (index_t r = 0; r < band_rows; ++r) {
        const index_t ih = (oh0 + r) * sh + rp - p.pad_h;
        const bool inside = ih >= 0 && ih < p.in_h;
        const float* src_row = inside ? xg + (c * p.in_h + ih) * p.in_w : xg;
        for (index_t ph = 0; ph < sw; ++ph) {
          float* dst = buf + ((c * sh + rp) * sw + ph) * plane + r * wq;
#if defined(__AVX512F__) || defined(__AVX2__)
          if (sw == 1) {
            // Whole vectors over the row, zeros outside [lo, hi) (masked loads: no calls and no
            // partial stores; the last vector's lanes past wq land on the next row, written
            // after, or on the slack).
            const float* at = src_row - p.pad_w;  // the input column under phase column j: at[j]
            const index_t a0 = inside ? lo[0] : 0, b0 = inside ? hi[0] : 0;
            for (index_t j0 = 0; j0 < wq; j0 += kFloatLanes) {
              const index_t a = a0 - j0 > 0 ? a0 - j0 : 0, b = b0 - j0 < kFloatLanes ? b0 - j0 : kFloatLanes;
              load_lanes(at + j0, a, b).store_unaligned(dst + j0);
            }
            continue;
          }
#endif
          const index_t l = inside ? lo[ph] : wq, h = inside ? hi[ph] : wq;
          for (index_t j = 0; j < l; ++j) dst[j] = 0.0f;
          const float* src = src_row + l * sw + ph - p.pad_w;
          const index_t n = h - l;
          if (sw == 2) {
            index_t j = 0;
            // A whole vector reads 2L floats from src + 2j: the row's last input must be past them.
            for (; j + kFloatLanes <= n && 2 * (j + kFloatLanes) <= p.in_w - (l * sw + ph - p.pad_w); j += kFloatLanes)
              load_strided<2>(src + 2 * j, 2, kFloatLanes).store_unaligned(dst + l + j);
            for (; j < n; ++j) dst[l + j] = src[2 * j];
          } else {
            for (index_t j = 0; j < n; ++j) dst[l + j] = src[j * sw];
          }
          for (index_t j = h; j < wq; ++j) dst[j] = 0.0f;
        }
      }
}

// One band (output rows [oh0, oh0 + rows)) of one group of one image.
template <int NV>
inline void band(const ConvParams& p, const float* xg, const float* wg, const float* bg, float* yg, index_t oh0,
                 index_t rows, index_t plan_rows, const Epilogue& e) {
  constexpr index_t MR = tile_rows(NV);
  const index_t wq = row_cols(p), plane = (plan_rows + extra_rows(p)) * wq, cols = rows * wq;
  const index_t mg = p.out_channels / p.group, k = p.in_channels / p.group * p.k_h * p.k_w;
  alignas(64) float buf[kMaxBufferFloats];
  fill_band(p, xg, oh0, rows, plane, buf);
  const index_t used = band_floats(p, plan_rows);
  for (index_t i = used; i < used + slack_floats(p); ++i) buf[i] = 0.0f;
  // Tap (c, kh, kw) reads plane (c, row phase, column phase) from its row and column offset
  // on; kh_offset[k_h] is one input channel's planes.
  index_t kw_offset[kMaxKernelColumns], kh_offset[kMaxKernelColumns + 1];
  for (index_t kw = 0; kw < p.k_w; ++kw)
    kw_offset[kw] = (kw * p.dilation_w % p.stride_w) * plane + kw * p.dilation_w / p.stride_w;
  for (index_t kh = 0; kh < p.k_h; ++kh)
    kh_offset[kh] = (kh * p.dilation_h % p.stride_h) * p.stride_w * plane + kh * p.dilation_h / p.stride_h * wq;
  kh_offset[p.k_h] = p.stride_h * p.stride_w * plane;
  const index_t out_plane = p.out_h * p.out_w;
  for (index_t first = 0; first < mg; first += kDirectPanelChannels) {
    const index_t panel_rows = mg - first < kDirectPanelChannels ? mg - first : kDirectPanelChannels;
    const float* panel = wg + first * k;
    for (index_t r0 = 0; r0 < panel_rows; r0 += MR) {
      const index_t mr = panel_rows - r0 < MR ? panel_rows - r0 : MR;
      const BandOutput out{yg + (first + r0) * out_plane + oh0 * p.out_w, out_plane, p.out_w, wq, rows};
      for (index_t q0 = 0; q0 < cols; q0 += NV * kFloatLanes)
        tile_of_rows<NV, MR>(mr, p, buf, q0, kh_offset, kw_offset, panel + r0, panel_rows, bg ? bg + first + r0 : nullptr,
                             e, out);
    }
  }
}

#endif  // ONNXC_SIMD

}  // namespace band_detail

// Tasks conv_band splits its (image, group, band) triples into when given a parallel-for.
constexpr index_t kBandTasks = 4;

#if defined(ONNXC_SIMD)

// y = conv(x, w) + bias, activated; w packed group by group by pack_direct_weights.
inline void conv_band(const ConvParams& p, const float* x, const float* w_packed, const float* bias, float* y,
                      const Epilogue& e = kNoActivation, Parallel parallel = nullptr) {
  const band_detail::Plan plan = band_detail::plan(p);
  const index_t cg = p.in_channels / p.group, mg = p.out_channels / p.group;
  const index_t in_group = cg * p.in_h * p.in_w, out_group = mg * p.out_h * p.out_w;
  const index_t w_group = mg * cg * p.k_h * p.k_w;
  const index_t bands = (p.out_h + plan.rows - 1) / plan.rows, count = p.batch * p.group * bands;
  auto one = [&](index_t at) {  // at = (image * group + g) * bands + band
    const index_t b = at / bands, g = b % p.group, oh0 = at % bands * plan.rows;
    const index_t rows = p.out_h - oh0 < plan.rows ? p.out_h - oh0 : plan.rows;
    const float* xg = x + b * in_group;
    const float* wg = w_packed + g * w_group;
    const float* bg = bias ? bias + g * mg : nullptr;
    float* yg = y + b * out_group;
    switch (plan.vectors) {
      case 1: return band_detail::band<1>(p, xg, wg, bg, yg, oh0, rows, plan.rows, e);
      case 2: return band_detail::band<2>(p, xg, wg, bg, yg, oh0, rows, plan.rows, e);
      case 3: return band_detail::band<3>(p, xg, wg, bg, yg, oh0, rows, plan.rows, e);
      default: return band_detail::band<4>(p, xg, wg, bg, yg, oh0, rows, plan.rows, e);
    }
  };
  if (!parallel || count < 2) {
    for (index_t at = 0; at < count; ++at) one(at);
    return;
  }
  const index_t tasks = count < kBandTasks ? count : kBandTasks;
  parallel_for(parallel, tasks, [&](index_t t) {
    const Range r = part_of(count, tasks, t);
    for (index_t at = r.begin; at < r.end; ++at) one(at);
  });
}

#else

// Without SIMD the compiler never emits conv_band; this plain loop over the packed layout keeps
// code generated for a SIMD target compiling when its headers were parsed without ONNXC_SIMD.
inline void conv_band(const ConvParams& p, const float* x, const float* w_packed, const float* bias, float* y,
                      const Epilogue& e = kNoActivation, Parallel = nullptr) {
  const index_t cg = p.in_channels / p.group, mg = p.out_channels / p.group, k = cg * p.k_h * p.k_w;
  for (index_t b = 0; b < p.batch; ++b)
    for (index_t o = 0; o < p.out_channels; ++o) {
      const index_t g = o / mg, row = o % mg, first = row / kDirectPanelChannels * kDirectPanelChannels;
      const index_t panel_rows = mg - first < kDirectPanelChannels ? mg - first : kDirectPanelChannels;
      const float* panel = w_packed + g * mg * k + first * k;
      for (index_t oh = 0; oh < p.out_h; ++oh)
        for (index_t ow = 0; ow < p.out_w; ++ow) {
          float s = bias ? bias[o] : 0.0f;
          for (index_t c = 0; c < cg; ++c)
            for (index_t kh = 0; kh < p.k_h; ++kh)
              for (index_t kw = 0; kw < p.k_w; ++kw) {
                const index_t ih = oh * p.stride_h - p.pad_h + kh * p.dilation_h;
                const index_t iw = ow * p.stride_w - p.pad_w + kw * p.dilation_w;
                if (ih < 0 || ih >= p.in_h || iw < 0 || iw >= p.in_w) continue;
                const index_t l = (c * p.k_h + kh) * p.k_w + kw;
                s += panel[l * panel_rows + row - first] * x[((b * p.in_channels + g * cg + c) * p.in_h + ih) * p.in_w + iw];
              }
          y[((b * p.out_channels + o) * p.out_h + oh) * p.out_w + ow] = activate(e, s);
        }
    }
}

#endif

}  // namespace rt
}  // namespace onnxc
