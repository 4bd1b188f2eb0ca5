// Float ConvTranspose over 1 or 2 spatial dims as a matrix product plus col2im (conv_transpose.h
// holds the reference loops, which every other case keeps):
//   cols[M/g * kH * kW, rows * W] = W_g^T[M/g * kH * kW, C/g] * X_g[C/g, rows * W]
// for a block of `rows` input rows of one image and group, through packed_gemm.h's product with
// W_g^T packed at compile time (pack_conv_transpose_weights); then every row of cols, one output
// channel and tap, is added into the output plane at its stride, pads and dilation (col2im).
// A 1x1 ConvTranspose with stride 1 and no pads is the product alone, written straight into Y.
#ifndef ONNXC_CONV_TRANSPOSE_GEMM_H
#define ONNXC_CONV_TRANSPOSE_GEMM_H

#include "onnxc/activation.h"
#include "onnxc/base.h"
#include "onnxc/conv.h"
#include "onnxc/packed_gemm.h"
#include "onnxc/parallel.h"

namespace onnxc {
namespace rt {

// Rows of the product: one group's output channels times the kernel's taps.
constexpr index_t conv_transpose_gemm_rows(const ConvParams& p) { return p.out_channels / p.group * p.k_h * p.k_w; }

// Whether Y is the product alone: 1x1 taps, stride 1, no pads, Y the size of X.
constexpr bool conv_transpose_is_product(const ConvParams& p) {
  return p.k_h == 1 && p.k_w == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_h == 0 && p.pad_w == 0 &&
         p.out_h == p.in_h && p.out_w == p.in_w;
}

// Floats of the columns of a block of `rows` input rows (none for a product alone).
constexpr index_t conv_transpose_gemm_scratch_floats(const ConvParams& p, index_t rows) {
  return conv_transpose_is_product(p) ? 0 : conv_transpose_gemm_rows(p) * rows * p.in_w;
}

// Packs w ([C, M/g, kH, kW], ONNX's layout) group by group as W_g^T in packed_gemm.h's panels
// (the compiler calls this on weights); `t` is scratch of conv_transpose_gemm_rows(p) * C/g floats.
inline void pack_conv_transpose_weights(const ConvParams& p, const float* w, float* t, float* packed) {
  const index_t icg = p.in_channels / p.group, m = conv_transpose_gemm_rows(p);
  for (index_t g = 0; g < p.group; ++g) {
    const float* wg = w + g * icg * m;
    for (index_t r = 0; r < m; ++r)
      for (index_t c = 0; c < icg; ++c) t[r * icg + c] = wg[c * m + r];
    pack_weights(t, m, icg, packed + g * icg * m);
  }
}

namespace conv_transpose_gemm_detail {

// The first input column whose output column o = i * stride + offset is at or after 0, and the
// end of those whose o is below size.
inline index_t first_inside(index_t offset, index_t stride) { return offset >= 0 ? 0 : (-offset + stride - 1) / stride; }
inline index_t end_inside(index_t offset, index_t stride, index_t size, index_t in) {
  if (size - offset <= 0) return 0;
  const index_t end = (size - offset + stride - 1) / stride;
  return end < in ? end : in;
}

// Adds cols (product rows [first, first + count) of W_g^T, each of `rows * in_w` columns, input
// rows [row0, row0 + rows)) into one group's output planes y.
inline void col2im(const ConvParams& p, const float* cols, index_t row0, index_t rows, index_t first, index_t count,
                   float* y) {
  const index_t n = rows * p.in_w, out_plane = p.out_h * p.out_w;
  for (index_t t = first; t < first + count; ++t) {
    const index_t oc = t / (p.k_h * p.k_w), kh = t / p.k_w % p.k_h, kw = t % p.k_w;
    const float* c = cols + (t - first) * n;
    const index_t offset = kw * p.dilation_w - p.pad_w;
    const index_t lo = first_inside(offset, p.stride_w), hi = end_inside(offset, p.stride_w, p.out_w, p.in_w);
    for (index_t r = 0; r < rows; ++r) {
      const index_t oh = (row0 + r) * p.stride_h - p.pad_h + kh * p.dilation_h;
      if (oh < 0 || oh >= p.out_h) continue;
      float* yr = y + oc * out_plane + oh * p.out_w;
      const float* cr = c + r * p.in_w;
      if (p.stride_w == 1) {
        for (index_t iw = lo; iw < hi; ++iw) yr[iw + offset] += cr[iw];
      } else {
        for (index_t iw = lo; iw < hi; ++iw) yr[iw * p.stride_w + offset] += cr[iw];
      }
    }
  }
}

// One group's output planes set to its bias (or 0).
inline void fill_bias(const ConvParams& p, const float* bg, float* yg) {
  const index_t ocg = p.out_channels / p.group, out_plane = p.out_h * p.out_w;
  for (index_t oc = 0; oc < ocg; ++oc) {
    const float b = bg ? bg[oc] : 0.0f;
    for (index_t i = 0; i < out_plane; ++i) yg[oc * out_plane + i] = b;
  }
}

}  // namespace conv_transpose_gemm_detail

// x: [batch, C, H, W]; w_packed: pack_conv_transpose_weights' layout; bias: [M] or nullptr;
// y: [batch, M, outH, outW]; cols: conv_transpose_gemm_scratch_floats(p, block_rows) floats
// (block_rows >= 1; unused for a product alone). The activation runs over the finished output.
inline void conv_transpose_gemm(const ConvParams& p, const float* x, const float* w_packed, const float* bias, float* y,
                                float* cols, index_t block_rows, const Epilogue& e, Parallel parallel = nullptr) {
  const index_t icg = p.in_channels / p.group, ocg = p.out_channels / p.group, m = conv_transpose_gemm_rows(p);
  const index_t in_plane = p.in_h * p.in_w, out_plane = p.out_h * p.out_w;
  for (index_t n = 0; n < p.batch; ++n)
    for (index_t g = 0; g < p.group; ++g) {
      const float* xg = x + (n * p.in_channels + g * icg) * in_plane;
      const float* wg = w_packed + g * icg * m;
      const float* bg = bias ? bias + g * ocg : nullptr;
      float* yg = y + (n * p.out_channels + g * ocg) * out_plane;
      if (conv_transpose_is_product(p)) {
        packed_gemm(ocg, in_plane, icg, wg, xg, in_plane, yg, out_plane, bg, e, parallel);
        continue;
      }
      conv_transpose_gemm_detail::fill_bias(p, bg, yg);
      for (index_t row0 = 0; row0 < p.in_h; row0 += block_rows) {
        const index_t rows = p.in_h - row0 < block_rows ? p.in_h - row0 : block_rows;
        packed_gemm(m, rows * p.in_w, icg, wg, xg + row0 * p.in_w, in_plane, cols, rows * p.in_w, nullptr,
                    kNoActivation, parallel);
        conv_transpose_gemm_detail::col2im(p, cols, row0, rows, 0, m, yg);
      }
      activate_row(e, yg, ocg * out_plane);
    }
}

// ---- the columns on the stack ----
// Where the arena has no room for the columns (fit-scratch, --scratch fit), they can still be
// computed a block at a time on the stack: a block of product rows (whole panels of W_g^T, each
// panel contiguous in the packed weights) by a block of input rows, at most kStackColumnFloats
// (48 KB, about L1). The input rows' block of X stays in L2 while every block of product rows
// passes over it, as in packed_gemm's own blocking; the cost over the columns in scratch is a
// product call per block and its narrower tiles where few rows fit.
constexpr index_t kStackColumnFloats = 12 * 1024;

// Product rows and input rows of a block of columns on the stack; {0, 0} where not even a panel
// of product rows by one input row fits.
struct StackColumns {
  index_t product_rows, in_rows;
};

constexpr StackColumns conv_transpose_stack_columns(const ConvParams& p) {
  const index_t m = conv_transpose_gemm_rows(p);
  // Enough input rows for a block of packed_gemm's columns (or the whole image)...
  index_t rows = (kBlockColsQuantum + p.in_w - 1) / p.in_w;
  rows = rows < p.in_h ? rows : p.in_h;
  if (m * rows * p.in_w <= kStackColumnFloats) {  // ... with every product row, over as many rows as fit
    const index_t most = kStackColumnFloats / (m * p.in_w);
    return StackColumns{m, most < p.in_h ? most : p.in_h};
  }
  // ... else as many panels of product rows as fit beside them (fewer rows where not one does).
  while (rows > 1 && kStackColumnFloats / (rows * p.in_w) < kPanelRows) --rows;
  const index_t panels = kStackColumnFloats / (rows * p.in_w) / kPanelRows;
  return panels > 0 ? StackColumns{panels * kPanelRows, rows} : StackColumns{0, 0};
}

// Whether conv_transpose_gemm_stacked takes the ConvTranspose: not a product alone (which needs
// no columns) and a block of one panel by one input row fits.
constexpr bool conv_transpose_stack_applies(const ConvParams& p) {
  return !conv_transpose_is_product(p) && p.in_d == 1 && p.k_d == 1 && conv_transpose_stack_columns(p).product_rows > 0;
}

// conv_transpose_gemm_stacked's estimated work, in FMAs of whole register tiles as
// conv_transpose_phases_cost counts them (conv_transpose_phases_simd.h), on vectors of `lanes`
// floats with `vector_registers` registers: per block, packed_gemm's tiles (kPanelRows rows, or
// 4 with 16 registers, by up to 3 vectors) over the group's input channels, kStackTileOverhead
// per tile and step; the product's store and col2im's load, add and store of every column,
// kCol2imCost each (rows of in_w floats, short on the planes ConvTranspose upsamples: fitted to
// bench/conv_transpose_bench.cpp, where 4 x 32 -> 128 channels on 7 x 7, k3 s1, K = 32, ran
// the phases 1.4x faster); Y's bias fill.
constexpr index_t kStackTileOverhead = 2;
constexpr index_t kCol2imCost = 4;
constexpr index_t conv_transpose_stacked_cost(const ConvParams& p, index_t lanes, index_t vector_registers) {
  const StackColumns block = conv_transpose_stack_columns(p);
  if (block.product_rows == 0) return -1;
  const index_t icg = p.in_channels / p.group, m = conv_transpose_gemm_rows(p);
  const index_t tile_rows = vector_registers >= 32 ? kPanelRows : kPanelRows / 2;
  auto product = [&](index_t rows, index_t cols) {
    const index_t vectors = (cols + lanes - 1) / lanes, tiles = (vectors + kTileVectorsMax - 1) / kTileVectorsMax;
    index_t per_step = 0;
    for (index_t r0 = 0; r0 < rows; r0 += tile_rows) {
      const index_t r = rows - r0 < tile_rows ? rows - r0 : tile_rows;
      per_step += r * vectors + tiles * kStackTileOverhead;
    }
    return per_step * icg + rows * cols * kCol2imCost;
  };
  index_t cost = 0;
  for (index_t row0 = 0; row0 < p.in_h; row0 += block.in_rows) {
    const index_t rows = p.in_h - row0 < block.in_rows ? p.in_h - row0 : block.in_rows;
    for (index_t first = 0; first < m; first += block.product_rows)
      cost += product(m - first < block.product_rows ? m - first : block.product_rows, rows * p.in_w);
  }
  const index_t fill = p.out_channels / p.group * ((p.out_h * p.out_w + lanes - 1) / lanes);
  return (cost + fill) * p.batch * p.group;
}

// conv_transpose_gemm with its columns on the stack (no scratch), blocks of
// conv_transpose_stack_columns(p).
inline void conv_transpose_gemm_stacked(const ConvParams& p, const float* x, const float* w_packed, const float* bias,
                                        float* y, const Epilogue& e, Parallel parallel = nullptr) {
  const StackColumns block = conv_transpose_stack_columns(p);
  const index_t icg = p.in_channels / p.group, ocg = p.out_channels / p.group, m = conv_transpose_gemm_rows(p);
  const index_t in_plane = p.in_h * p.in_w, out_plane = p.out_h * p.out_w;
  alignas(64) float cols[kStackColumnFloats];
  for (index_t n = 0; n < p.batch; ++n)
    for (index_t g = 0; g < p.group; ++g) {
      const float* xg = x + (n * p.in_channels + g * icg) * in_plane;
      const float* wg = w_packed + g * icg * m;
      float* yg = y + (n * p.out_channels + g * ocg) * out_plane;
      conv_transpose_gemm_detail::fill_bias(p, bias ? bias + g * ocg : nullptr, yg);
      for (index_t row0 = 0; row0 < p.in_h; row0 += block.in_rows) {
        const index_t rows = p.in_h - row0 < block.in_rows ? p.in_h - row0 : block.in_rows;
        for (index_t first = 0; first < m; first += block.product_rows) {
          const index_t count = m - first < block.product_rows ? m - first : block.product_rows;
          packed_gemm(count, rows * p.in_w, icg, wg + first * icg, xg + row0 * p.in_w, in_plane, cols, rows * p.in_w,
                      nullptr, kNoActivation, parallel);
          conv_transpose_gemm_detail::col2im(p, cols, row0, rows, first, count, yg);
        }
      }
      activate_row(e, yg, ocg * out_plane);
    }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_CONV_TRANSPOSE_GEMM_H
