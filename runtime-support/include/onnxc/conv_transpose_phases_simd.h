// onnxc runtime support: float ConvTranspose over 1 or 2 spatial dims by stride phases with
// register tiles (SIMD targets; xsimd, so AVX-512 and AVX2 alike), no scratch. The geometry and
// the weights' layout are conv_transpose_phases.h's (the sub-pixel form: each of the
// stride_h x stride_w output phases is a stride-1 correlation over X with a sub-kernel).
//
// The input is taken a band of R phase rows q (every phase's) at a time: its input rows, a block
// of input channels at a time, are copied onto the stack with the zero padding the sub-kernels
// overhang, rows of Wq = Pw + Q columns (Pw: the largest column offset of a tap, Q: the phase
// columns). In that buffer every tap of the output at band row r, phase column q reads the float
// at r * Wq + q + (Ph - offset_h) * Wq + Pw - offset_w of its channel's plane: the band's outputs
// of one phase are one flat run of R * Wq columns (the columns past a row's end computed and
// dropped), and each tap is a contiguous load of whole vectors whatever the stride, dilation
// and pads, as in conv_band_simd.h. A register tile is MR output channels x NV vectors of those
// columns: per tap NV loads and MR broadcast weights for MR x NV FMAs. The tile goes from the
// registers to every stride_w-th column of its output rows (masked stores at stride 1).
// Input channels that do not fit the buffer at once are taken in blocks, each after the first
// adding into Y (the activation then runs over the band's rows at the end).
#ifndef ONNXC_CONV_TRANSPOSE_PHASES_SIMD_H
#define ONNXC_CONV_TRANSPOSE_PHASES_SIMD_H

#include "onnxc/conv_band_simd.h"
#include "onnxc/conv_transpose_phases.h"
#include "onnxc/parallel.h"

namespace onnxc {
namespace rt {
namespace phases_simd_detail {

using namespace phases_detail;

constexpr index_t kBufferFloats = band_detail::kMaxBufferFloats;
constexpr index_t kMaxVectors = 4;
constexpr index_t kMaxLanes = 16;

// Columns of a buffer row (Wq) and the rows a band's planes hold past its R rows (Ph).
constexpr index_t row_cols(const ConvParams& p) { return max_offset(axis_w(p)) + max_end_q(axis_w(p)); }
constexpr index_t extra_rows(const ConvParams& p) { return max_offset(axis_h(p)); }
// Floats read past the last plane by a tile's last vectors.
constexpr index_t slack_floats(const ConvParams& p) { return (kMaxVectors + 1) * kMaxLanes + max_offset(axis_w(p)); }
// Whether one channel's one band row fits the buffer.
constexpr bool fits(const ConvParams& p) {
  return (1 + extra_rows(p)) * row_cols(p) + slack_floats(p) <= kBufferFloats;
}

// Phase rows per band, vectors per register tile, input channels per buffer fill.
struct Plan {
  index_t rows, vectors, channels;
};

// A plan and its estimated work for one image and group.
struct PlanCost {
  Plan plan;
  index_t cost;
};

// The cost model, in FMAs of whole tiles, for vectors of `lanes` floats and `accumulators`
// accumulator registers (band_detail::tile_rows' rule): every phase computes ceil(R * Wq / tile)
// tiles per band over the group's output channels (band_detail::kTileOverhead per tap and tile),
// each tile stored once per block of input channels (a lane at a time where stride_w > 1), each
// block's fill about one FMA a float.
constexpr PlanCost plan_for(const ConvParams& p, index_t lanes, index_t accumulators) {
  const index_t wq = row_cols(p), ph = extra_rows(p), qh = max_end_q(axis_h(p));
  const index_t cg = p.in_channels / p.group, mg = p.out_channels / p.group;
  const index_t phases = p.stride_h * p.stride_w, taps = p.k_h * p.k_w;
  Plan best{1, 1, 1};
  index_t best_cost = -1;
  for (index_t nv = 1; nv <= kMaxVectors; ++nv) {
    const index_t tile = nv * lanes, mr = accumulators / nv < 8 ? accumulators / nv : 8;
    index_t per_tap = 0, stores = 0;  // over the group's output channels, for one column tile
    for (index_t first = 0; first < mg; first += kDirectPanelChannels) {
      const index_t panel = mg - first < kDirectPanelChannels ? mg - first : kDirectPanelChannels;
      for (index_t r0 = 0; r0 < panel; r0 += mr) {
        const index_t m = panel - r0 < mr ? panel - r0 : mr;
        per_tap += m * nv + band_detail::kTileOverhead;
        stores += m * nv * (p.stride_w == 1 ? 2 : lanes);
      }
    }
    for (index_t r = 1; r <= qh; ++r) {
      const index_t plane = (r + ph) * wq, fit = (kBufferFloats - slack_floats(p)) / plane;
      if (fit < 1) break;
      const index_t cc = fit < cg ? fit : cg, blocks = (cg + cc - 1) / cc;
      auto band_cost = [&](index_t rows) {
        const index_t tiles = (rows * wq + tile - 1) / tile;
        return tiles * (per_tap * cg * taps + phases * blocks * stores) + cg * plane;
      };
      const index_t full = qh / r, last = qh % r;
      const index_t cost = full * band_cost(r) + (last ? band_cost(last) : 0);
      if (best_cost < 0 || cost <= best_cost) {
        best_cost = cost;
        best = Plan{r, nv, cc};
      }
    }
  }
  return PlanCost{best, best_cost};
}

#if defined(ONNXC_SIMD)
constexpr Plan plan(const ConvParams& p) { return plan_for(p, kFloatLanes, band_detail::kAccumulators).plan; }
#endif

#if defined(ONNXC_SIMD)

// Where a tile's lanes go: flat column f = r * wq + q of the band is output element
// y[base + r * row_step + q * stride] of the tile's first output channel (planes of out_plane),
// kept for band rows [r_lo, r_hi) and phase columns [q_lo, q_hi).
struct PhaseOutput {
  float* y;
  index_t base, row_step, stride, out_plane, wq, r_lo, r_hi, q_lo, q_hi;
  bool accumulate;  // add into Y (a later block of input channels)
};

// The lanes a tile's vector at flat column a keeps in band row r: [lo, hi) (empty when hi <= lo),
// lane lo going to y[at].
struct RowLanes {
  index_t lo, hi, at;
};
ONNXC_INLINE RowLanes row_lanes(const PhaseOutput& out, index_t a, index_t r) {
  const index_t row_start = r * out.wq - a;  // lane of the row's column 0 (may be negative)
  const index_t lo = row_start + out.q_lo > 0 ? row_start + out.q_lo : 0;
  const index_t hi = row_start + out.q_hi < kFloatLanes ? row_start + out.q_hi : kFloatLanes;
  return {lo, hi, out.base + r * out.row_step + (lo - row_start) * out.stride};
}

// Band rows [first, end) that the vector at flat column a reaches.
ONNXC_INLINE index_t first_row(const PhaseOutput& out, index_t a) { return a / out.wq > out.r_lo ? a / out.wq : out.r_lo; }
ONNXC_INLINE index_t end_row(const PhaseOutput& out, index_t a) {
  const index_t end = (a + kFloatLanes - 1) / out.wq + 1;
  return end < out.r_hi ? end : out.r_hi;
}

// A tile's `rows` x `vectors` vectors from lanes (row m's vector v at (m * vectors + v) *
// kFloatLanes) to their outputs one float at a time: any stride, out of line so that the
// register tiles of every size share one copy of the loops.
#if defined(__GNUC__)
__attribute__((noinline))
#endif
inline void scatter(const PhaseOutput& out, index_t f0, const float* lanes, index_t rows, index_t vectors) {
  for (index_t m = 0; m < rows; ++m) {
    float* y = out.y + m * out.out_plane;
    for (index_t v = 0; v < vectors; ++v) {
      const float* l = lanes + (m * vectors + v) * kFloatLanes;
      const index_t a = f0 + v * kFloatLanes;
      for (index_t r = first_row(out, a); r < end_row(out, a); ++r) {
        const RowLanes k = row_lanes(out, a, r);
        float* dst = y + k.at;
        if (out.accumulate) {
          for (index_t j = k.lo; j < k.hi; ++j) dst[(j - k.lo) * out.stride] += l[j];
        } else {
          for (index_t j = k.lo; j < k.hi; ++j) dst[(j - k.lo) * out.stride] = l[j];
        }
      }
    }
  }
}

// One register tile: MR output channels (weights w + l * w_stride + m for tap l) x NV vectors of
// flat columns from f0 of the band buffer `in` (planes of `plane` floats, `channels` of them);
// tap (i, j) of a channel at h_off[i] + w_off[j]. Bias per output channel or nullptr; activated
// when `activated` (one block of input channels).
template <int MR, int NV>
ONNXC_INLINE void tile(index_t channels, index_t th, index_t tw, const float* in, index_t plane, index_t f0,
                       const index_t* h_off, const index_t* w_off, const float* w, index_t w_stride, const float* bias,
                       const Epilogue& e, bool activated, const PhaseOutput& out) {
  vfloat acc[MR][NV];
  ONNXC_UNROLL for (int m = 0; m < MR; ++m) {
    const vfloat b(bias ? bias[m] : 0.0f);
    ONNXC_UNROLL for (int v = 0; v < NV; ++v) acc[m][v] = b;
  }
  const float* wl = w;
  for (index_t c = 0; c < channels; ++c)
    for (index_t i = 0; i < th; ++i) {
      const float* row = in + c * plane + h_off[i] + f0;
      for (index_t j = 0; j < tw; ++j, wl += w_stride) {
        const float* a = row + w_off[j];
        vfloat xv[NV];
        ONNXC_UNROLL for (int v = 0; v < NV; ++v) xv[v] = vfloat::load_unaligned(a + v * kFloatLanes);
        ONNXC_UNROLL for (int m = 0; m < MR; ++m) {
          const vfloat wv(wl[m]);
          ONNXC_UNROLL for (int v = 0; v < NV; ++v) acc[m][v] = xsimd::fma(wv, xv[v], acc[m][v]);
        }
      }
    }
  if (activated)
    ONNXC_UNROLL for (int m = 0; m < MR; ++m)
      ONNXC_UNROLL for (int v = 0; v < NV; ++v) acc[m][v] = activate(e, acc[m][v]);
#if defined(__AVX512F__) || defined(__AVX2__)
  if (out.stride == 1) {  // masked stores straight from the registers
    ONNXC_UNROLL for (int v = 0; v < NV; ++v) {
      const index_t a = f0 + v * kFloatLanes;
      for (index_t r = first_row(out, a); r < end_row(out, a); ++r) {
        const RowLanes k = row_lanes(out, a, r);
        if (k.hi <= k.lo) continue;
        ONNXC_UNROLL for (int m = 0; m < MR; ++m) {
          float* dst = out.y + m * out.out_plane + k.at - k.lo;  // lane j to dst[j]
          vfloat value = acc[m][v];
          if (out.accumulate) value += band_detail::load_lanes(dst, k.lo, k.hi);
          band_detail::store_lanes(value, dst, k.lo, k.hi);
        }
      }
    }
    return;
  }
#endif
  alignas(64) float lanes[MR * NV * kFloatLanes];
  ONNXC_UNROLL for (int m = 0; m < MR; ++m)
    ONNXC_UNROLL for (int v = 0; v < NV; ++v)
      acc[m][v].store_aligned(lanes + (m * NV + v) * kFloatLanes);
  scatter(out, f0, lanes, MR, NV);
}

template <int NV, int MR>
ONNXC_INLINE void tile_of_rows(index_t rows, index_t channels, index_t th, index_t tw, const float* in, index_t plane,
                               index_t f0, const index_t* h_off, const index_t* w_off, const float* w, index_t w_stride,
                               const float* bias, const Epilogue& e, bool activated, const PhaseOutput& out) {
  if constexpr (MR > 1) {
    if (rows < MR)
      return tile_of_rows<NV, MR - 1>(rows, channels, th, tw, in, plane, f0, h_off, w_off, w, w_stride, bias, e,
                                      activated, out);
  }
  tile<MR, NV>(channels, th, tw, in, plane, f0, h_off, w_off, w, w_stride, bias, e, activated, out);
}

// Input channels [0, channels) of xg (one group's first) into buf: band rows b (input row
// q0 - Ph + b) of `band_rows`, columns j (input column j - Pw) of Wq, zero outside the input.
inline void fill(const ConvParams& p, const float* xg, index_t channels, index_t q0, index_t band_rows, index_t plane,
                 float* buf) {
  const index_t wq = row_cols(p), pw = max_offset(axis_w(p)), ph = extra_rows(p);
  const index_t end = pw + p.in_w < wq ? pw + p.in_w : wq;  // buffer columns [pw, end) hold the input
  for (index_t c = 0; c < channels; ++c)
    for (index_t b = 0; b < band_rows; ++b) {
      float* dst = buf + c * plane + b * wq;
      const index_t ih = q0 - ph + b;
      if (ih < 0 || ih >= p.in_h) {
        for (index_t j = 0; j < wq; ++j) dst[j] = 0.0f;
        continue;
      }
      const float* src = xg + (c * p.in_h + ih) * p.in_w - pw;
      for (index_t j = 0; j < pw; ++j) dst[j] = 0.0f;
      for (index_t j = pw; j < end; ++j) dst[j] = src[j];
      for (index_t j = end; j < wq; ++j) dst[j] = 0.0f;
    }
}

// One band (phase rows [q0, q0 + rows)) of one group of one image: xg, wg, bg, yg the group's.
template <int NV>
inline void band(const ConvParams& p, const Plan& plan, const float* xg, const float* wg, const float* bg, float* yg,
                 index_t q0, index_t rows, const Epilogue& e) {
  constexpr index_t MR = band_detail::tile_rows(NV);
  const Axis ah = axis_h(p), aw = axis_w(p);
  const index_t wq = row_cols(p), ph = extra_rows(p), pw = max_offset(aw), plane = (plan.rows + ph) * wq;
  const index_t cg = p.in_channels / p.group, mg = p.out_channels / p.group, in_plane = p.in_h * p.in_w;
  const index_t out_plane = p.out_h * p.out_w, blocks = (cg + plan.channels - 1) / plan.channels;
  alignas(64) float buf[kBufferFloats];
  index_t kh_of[kMaxKernel], kw_of[kMaxKernel], off_h[kMaxKernel], off_w[kMaxKernel];
  index_t h_off[kMaxKernel], w_off[kMaxKernel];
  ONNXC_NO_UNROLL
  for (index_t c0 = 0; c0 < cg; c0 += plan.channels) {
    const index_t cc = cg - c0 < plan.channels ? cg - c0 : plan.channels;
    fill(p, xg + c0 * in_plane, cc, q0, plan.rows + ph, plane, buf);
    for (index_t i = cc * plane; i < cc * plane + slack_floats(p); ++i) buf[i] = 0.0f;
    const float* block = wg;
    ONNXC_NO_UNROLL
    for (index_t rh = 0; rh < p.stride_h; ++rh)
      ONNXC_NO_UNROLL
      for (index_t rw = 0; rw < p.stride_w; ++rw) {
        const index_t th = phase_tap_offsets(ah, rh, kh_of, off_h), tw = phase_tap_offsets(aw, rw, kw_of, off_w);
        const index_t k = cg * th * tw;
        const float* phase_block = block;
        block += mg * k;
        const index_t r_lo = first_q(ah, rh) - q0 > 0 ? first_q(ah, rh) - q0 : 0;
        const index_t r_hi = end_q(ah, rh) - q0 < rows ? end_q(ah, rh) - q0 : rows;
        if (r_hi <= r_lo || end_q(aw, rw) <= first_q(aw, rw)) continue;
        if (th * tw == 0 && c0 > 0) continue;  // the bias alone, stored with the first block
        for (index_t i = 0; i < th; ++i) h_off[i] = (ph - off_h[i]) * wq;
        for (index_t j = 0; j < tw; ++j) w_off[j] = pw - off_w[j];
        const PhaseOutput out0{yg, (q0 * p.stride_h + rh - p.pad_h) * p.out_w + rw - p.pad_w, p.stride_h * p.out_w,
                               p.stride_w, out_plane, wq, r_lo, r_hi, first_q(aw, rw), end_q(aw, rw), c0 > 0};
        ONNXC_NO_UNROLL
        for (index_t first = 0; first < mg; first += kDirectPanelChannels) {
          const index_t panel_rows = mg - first < kDirectPanelChannels ? mg - first : kDirectPanelChannels;
          const float* panel = phase_block + first * k + c0 * th * tw * panel_rows;
          ONNXC_NO_UNROLL
          for (index_t r0 = 0; r0 < panel_rows; r0 += MR) {
            const index_t mr = panel_rows - r0 < MR ? panel_rows - r0 : MR;
            PhaseOutput out = out0;
            out.y = yg + (first + r0) * out_plane;
            const float* bias = c0 == 0 && bg ? bg + first + r0 : nullptr;
            ONNXC_NO_UNROLL
            for (index_t f0 = r_lo * wq; f0 < r_hi * wq; f0 += NV * kFloatLanes)
              tile_of_rows<NV, MR>(mr, cc, th, tw, buf, plane, f0, h_off, w_off, panel + r0, panel_rows, bias, e,
                                   blocks == 1, out);
          }
        }
      }
  }
  if (blocks > 1 && e.activation != Activation::None) {  // the band's output rows, activated once complete
    index_t oh0 = q0 * p.stride_h - p.pad_h, oh1 = (q0 + rows) * p.stride_h - p.pad_h;
    oh0 = oh0 > 0 ? oh0 : 0;
    oh1 = oh1 < p.out_h ? oh1 : p.out_h;
    for (index_t m = 0; oh1 > oh0 && m < mg; ++m) activate_row(e, yg + m * out_plane + oh0 * p.out_w, (oh1 - oh0) * p.out_w);
  }
}

#endif  // ONNXC_SIMD

}  // namespace phases_simd_detail

// conv_transpose_phases_simd's estimated work, in FMAs of whole tiles (the plan's cost model), on
// vectors of `lanes` floats with `vector_registers` registers: comparable with
// conv_transpose_stacked_cost (conv_transpose_gemm.h).
constexpr index_t conv_transpose_phases_cost(const ConvParams& p, index_t lanes, index_t vector_registers) {
  return phases_simd_detail::plan_for(p, lanes, vector_registers >= 32 ? 24 : 12).cost * p.batch * p.group;
}

// Whether conv_transpose_phases_simd takes the ConvTranspose: conv_transpose_phases_apply and
// one channel's band row on the stack.
constexpr bool conv_transpose_phases_simd_apply(const ConvParams& p) {
  return conv_transpose_phases_apply(p) && phases_simd_detail::fits(p);
}

#if defined(ONNXC_SIMD)

// y = ConvTranspose(x, w) + bias, activated; w_packed: pack_conv_transpose_phase_weights' layout.
// Splits its (image, group, band) triples into up to kBandTasks tasks when given a parallel-for.
inline void conv_transpose_phases_simd(const ConvParams& p, const float* x, const float* w_packed, const float* bias,
                                       float* y, const Epilogue& e = kNoActivation, Parallel parallel = nullptr) {
  const phases_simd_detail::Plan plan = phases_simd_detail::plan(p);
  const index_t cg = p.in_channels / p.group, mg = p.out_channels / p.group, qh = phases_detail::max_end_q(phases_detail::axis_h(p));
  const index_t in_group = cg * p.in_h * p.in_w, out_group = mg * p.out_h * p.out_w, w_group = mg * cg * p.k_h * p.k_w;
  const index_t bands = (qh + plan.rows - 1) / plan.rows, count = p.batch * p.group * bands;
  auto one = [&](index_t at) {  // at = (image * group + g) * bands + band
    const index_t b = at / bands, g = b % p.group, q0 = at % bands * plan.rows;
    const index_t rows = qh - q0 < plan.rows ? qh - q0 : plan.rows;
    const float* xg = x + b * in_group;
    const float* wg = w_packed + g * w_group;
    const float* bg = bias ? bias + g * mg : nullptr;
    float* yg = y + b * out_group;
    switch (plan.vectors) {
      case 1: return phases_simd_detail::band<1>(p, plan, xg, wg, bg, yg, q0, rows, e);
      case 2: return phases_simd_detail::band<2>(p, plan, xg, wg, bg, yg, q0, rows, e);
      case 3: return phases_simd_detail::band<3>(p, plan, xg, wg, bg, yg, q0, rows, e);
      default: return phases_simd_detail::band<4>(p, plan, xg, wg, bg, yg, q0, rows, e);
    }
  };
  parallel_ranges(parallel, count, count < kBandTasks ? count : kBandTasks, 1, [&](Range r) {
    for (index_t at = r.begin; at < r.end; ++at) one(at);
  });
}

#else

// Without SIMD the compiler emits conv_transpose_phases; this keeps code generated for a SIMD
// target compiling when its headers were parsed without ONNXC_SIMD.
inline void conv_transpose_phases_simd(const ConvParams& p, const float* x, const float* w_packed, const float* bias,
                                       float* y, const Epilogue& e = kNoActivation, Parallel = nullptr) {
  conv_transpose_phases(p, x, w_packed, bias, y, e);
}

#endif  // ONNXC_SIMD

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_CONV_TRANSPOSE_PHASES_SIMD_H
