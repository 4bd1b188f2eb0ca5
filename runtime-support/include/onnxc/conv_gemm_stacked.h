// One-group float convolution as conv_gemm's matrix product (y[M, N] = W[M, K] * col[K, N] over
// im2col, W packed by pack_weights), with its im2col blocks on the stack instead of the arena:
// where a step leaves no room for even a row of im2col tiles (--scratch fit; a deep Conv whose
// one column is K floats), the block is cut along K as well as N, at most kStackIm2colFloats
// (48 KB: about L1) of depth x columns. The first block of depth writes y (with the bias), the
// others go through a panel's partial product on the stack and are added into y; the activation
// rides the last. The weights are not repacked: a block of depth [k0, k0 + depth) of a panel is
// contiguous in pack_weights' layout (row l of panel p at p * K + l * rows), so each panel's
// product runs over it in place.
#ifndef ONNXC_CONV_GEMM_STACKED_H
#define ONNXC_CONV_GEMM_STACKED_H

#include "onnxc/activation.h"
#include "onnxc/base.h"
#include "onnxc/conv.h"
#include "onnxc/packed_gemm.h"
#include "onnxc/parallel.h"
#include "onnxc/simd.h"

namespace onnxc {
namespace rt {

constexpr index_t kStackIm2colFloats = 12 * 1024;
// Columns per block at most: the N of a deep product's tiles (8 AVX-512 vectors) with room for a
// depth of 96 rows; wider outputs are cut into equal blocks of whole vectors.
constexpr index_t kStackIm2colMaxCols = 128;
constexpr index_t kStackIm2colWholeCols = 16;

struct StackIm2col {
  index_t cols, depth;  // output positions and rows of K per block
};

// The block: all of a narrow output's columns (else equal blocks of whole vectors), and the K
// rows that fit beside them in equal blocks.
inline StackIm2col conv_stack_im2col(const ConvParams& p) {
  const index_t n = conv_gemm_n(p), k = conv_gemm_k(p);
  const index_t col_blocks = (n + kStackIm2colMaxCols - 1) / kStackIm2colMaxCols;
  index_t cols = (n + col_blocks - 1) / col_blocks;
  if (col_blocks > 1) cols = (cols + kStackIm2colWholeCols - 1) / kStackIm2colWholeCols * kStackIm2colWholeCols;
  const index_t most = kStackIm2colFloats / cols, depth_blocks = (k + most - 1) / most;
  return StackIm2col{cols, (k + depth_blocks - 1) / depth_blocks};
}

// Whether conv_gemm_stacked computes the Conv: 1-d or 2-d (im2col_row's rows of one depth slice).
inline bool conv_stack_im2col_applies(const ConvParams& p) { return p.in_d == 1 && p.k_d == 1 && p.group == 1; }

// conv_gemm_stacked's estimated work, in halves of a vector FMA (lanes floats a vector, tile rows
// from the registers as packed_gemm's, its tiles of 3, 2 and 1 vectors as panel_rows cuts a row),
// per image: every tile's FMAs over K, and its loads (a broadcast per row, a vector of the block
// per column vector) at half an FMA each; im2col's copy of each row of K, kStackIm2colRowCost per
// call, kStackIm2colSegmentCost per output row it copies a run of, kStackIm2colVectorCost per
// vector; and where K takes several blocks, the partial products' add into y, kStackAddCost per
// vector of y per block. The weights were fitted on bench/conv_gemm_stacked_bench.cpp (AVX2, the
// sweep's dense shapes; docs/performance.md 'Convolution kernels (ninth round)').
constexpr index_t kStackIm2colRowCost = 10;
constexpr index_t kStackIm2colSegmentCost = 20;
constexpr index_t kStackIm2colVectorCost = 2;
constexpr index_t kStackAddCost = 3;
inline index_t conv_gemm_stacked_cost(const ConvParams& p, index_t lanes, index_t vector_registers) {
  const StackIm2col block = conv_stack_im2col(p);
  const index_t m = p.out_channels, k = conv_gemm_k(p), n = conv_gemm_n(p);
  const index_t tile_rows = vector_registers >= 32 ? kPanelRows : kPanelRows / 2;
  const index_t depth_blocks = (k + block.depth - 1) / block.depth;
  index_t halves = 0;
  for (index_t j = 0; j < n; j += block.cols) {
    const index_t cols = n - j < block.cols ? n - j : block.cols;
    const index_t vectors = (cols + lanes - 1) / lanes;
    index_t wide = vectors / 3, rest = vectors % 3;  // panel_rows' tiles: 3 vectors, then 2s and a 1
    if (rest == 1 && wide > 0) --wide, rest = 4;
    const index_t tiles = wide + rest / 2 + rest % 2;
    index_t per_step = 0;  // halves of an FMA per k step, every panel
    for (index_t r0 = 0; r0 < m; r0 += tile_rows) {
      const index_t r = m - r0 < tile_rows ? m - r0 : tile_rows;
      per_step += 2 * r * vectors + r * tiles + vectors;
    }
    const index_t segments = (cols + p.out_w - 1) / p.out_w + 1;
    halves += per_step * k +
              2 * k * (kStackIm2colRowCost + segments * kStackIm2colSegmentCost + vectors * kStackIm2colVectorCost) +
              2 * (depth_blocks - 1) * m * vectors * kStackAddCost;
  }
  return halves * p.batch;
}

// rt::conv_direct_packed's estimated work in the same units, from its own plan
// (direct_packed_detail::image_rows_for_width): the block of NB output columns it takes for the
// row width and output channels, MP panels of kDirectPanelChannels output channels (PV vectors
// each) at a time; every tap of a block loads MP x PV weight vectors and broadcasts NB inputs for
// MP x PV x NB FMAs, each load counted as a whole FMA (fitted as the weights above: the kernel's
// broadcasts are scalar loads it is bound by); columns past the row's end in its last block count
// as computed.
inline index_t conv_direct_packed_cost(const ConvParams& p, index_t lanes, index_t vector_registers) {
  const index_t pv = kDirectPanelChannels / lanes > 0 ? kDirectPanelChannels / lanes : 1;
  const index_t widest = vector_registers / 2 / pv, most_panels = 4 / pv > 0 ? 4 / pv : 1;
  auto panels_per = [&](index_t nb) {
    const index_t by_registers = widest / nb;
    const index_t panels = by_registers < most_panels ? by_registers : most_panels;
    return panels > 1 ? panels : 1;
  };
  // Loads per FMA, times 1024, of blocks of nb columns over `panels` panels.
  auto loads_1024 = [&](index_t nb, index_t panels) { return (panels * pv + nb) * 1024 / (panels * pv * nb); };
  index_t nb = widest;
  while (nb > 1) {
    const index_t narrower = nb / 2;
    const bool fills = p.out_channels >= panels_per(narrower) * kDirectPanelChannels;
    if (!(2 * p.out_w <= nb || (fills && loads_1024(narrower, panels_per(narrower)) < loads_1024(nb, panels_per(nb)))))
      break;
    nb = narrower;
  }
  const index_t mp = panels_per(nb), panels = (p.out_channels + kDirectPanelChannels - 1) / kDirectPanelChannels;
  const index_t grouped = panels / mp * mp, alone = panels - grouped;
  const index_t per_panel = pv * p.out_h * ((p.out_w + nb - 1) / nb) * nb * conv_gemm_k(p);  // its FMAs
  const index_t fmas = panels * per_panel;
  const index_t loads = (grouped * per_panel * loads_1024(nb, mp) + alone * per_panel * loads_1024(nb, 1)) / 1024;
  return 2 * (fmas + loads) * p.batch;
}

// Whether conv_gemm_stacked is worth taking over conv_direct_packed: its estimate under
// kStackPreferPercent of the direct kernel's (a margin for the estimates' error: on the fitted
// shapes, 85 kept the direct kernel on 1024 -> 32 channels 7x1 on 32 x 32, which ran 2x faster
// stacked, and 100 took the stacked kernel on shapes up to 1.32x slower).
constexpr index_t kStackPreferPercent = 95;
inline bool conv_gemm_stacked_preferred(const ConvParams& p, index_t lanes, index_t vector_registers) {
  return conv_stack_im2col_applies(p) &&
         conv_gemm_stacked_cost(p, lanes, vector_registers) * 100 <
             conv_direct_packed_cost(p, lanes, vector_registers) * kStackPreferPercent;
}

namespace gemm_stacked_detail {

// Rows [k0, k0 + depth) of one image's im2col for output positions [first, first + cols) (2-d or
// 1-d), each of `cols` floats.
inline void im2col_rows(const ConvParams& p, const float* x, index_t first, index_t cols, index_t k0, index_t depth,
                        float* col) {
  const OutputPosition from = output_position(p, first);
  const index_t taps = p.k_h * p.k_w, plane = p.in_h * p.in_w;
  for (index_t r = k0; r < k0 + depth; ++r) {
    const index_t ic = r / taps, t = r % taps;
    im2col_row(p, x + ic * plane, 0, t / p.k_w, t % p.k_w, from, cols, col + (r - k0) * cols);
  }
}

// y[i] += part[i] for i < n.
inline void add_row(const float* part, index_t n, float* y) {
  index_t i = 0;
#if defined(ONNXC_SIMD)
  for (; i + kFloatLanes <= n; i += kFloatLanes)
    (vfloat::load_unaligned(y + i) + vfloat::load_unaligned(part + i)).store_unaligned(y + i);
#endif
  for (; i < n; ++i) y[i] += part[i];
}

}  // namespace gemm_stacked_detail

// y = act(conv(x, w) + bias) for a one-group 1-d or 2-d Conv (conv_stack_im2col_applies), w_packed
// laid out by pack_weights (M x K), no scratch. With a parallel-for, each block's panels of output
// channels are the tasks (the block, built once, shared read-only).
inline void conv_gemm_stacked(const ConvParams& p, const float* x, const float* w_packed, const float* bias, float* y,
                              const Epilogue& e, Parallel parallel = nullptr) {
  using packed_gemm_detail::MatrixRows;
  const StackIm2col block = conv_stack_im2col(p);
  const index_t m = p.out_channels, k = conv_gemm_k(p), n = conv_gemm_n(p), panels = packed_gemm_panels(m);
  const index_t in_image = p.in_channels * p.in_h * p.in_w;
  alignas(64) float col[kStackIm2colFloats];
  for (index_t b = 0; b < p.batch; ++b) {
    const float* xb = x + b * in_image;
    float* yb = y + b * m * n;
    for (index_t j = 0; j < n; j += block.cols) {
      const index_t cols = n - j < block.cols ? n - j : block.cols;
      for (index_t k0 = 0; k0 < k; k0 += block.depth) {
        const index_t depth = k - k0 < block.depth ? k - k0 : block.depth;
        const bool first = k0 == 0, last = k0 + depth == k;
        gemm_stacked_detail::im2col_rows(p, xb, j, cols, k0, depth, col);
        parallel_for(parallel, panels, [&](index_t panel) {
          const index_t p0 = panel * kPanelRows, rows = m - p0 < kPanelRows ? m - p0 : kPanelRows;
          const float* a = w_packed + p0 * k + k0 * rows;  // rows [k0, k0 + depth) of the panel
          float* yp = yb + p0 * n + j;
          if (first) {
            packed_gemm_detail::panel(rows, cols, depth, a, MatrixRows{col, cols}, yp, n, bias ? bias + p0 : nullptr,
                                      last ? e : kNoActivation);
            return;
          }
          alignas(64) float part[kPanelRows * kStackIm2colMaxCols];
          packed_gemm_detail::panel(rows, cols, depth, a, MatrixRows{col, cols}, part, cols, nullptr, kNoActivation);
          for (index_t r = 0; r < rows; ++r) {
            gemm_stacked_detail::add_row(part + r * cols, cols, yp + r * n);
            if (last) activate_row(e, yp + r * n, cols);
          }
        });
      }
    }
  }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_CONV_GEMM_STACKED_H
