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

// Adds cols (rows of `rows * in_w` columns, input rows [row0, row0 + rows)) into one group's
// output planes y.
inline void col2im(const ConvParams& p, const float* cols, index_t row0, index_t rows, float* y) {
  const index_t ocg = p.out_channels / p.group, n = rows * p.in_w, out_plane = p.out_h * p.out_w;
  for (index_t oc = 0; oc < ocg; ++oc)
    for (index_t kh = 0; kh < p.k_h; ++kh)
      for (index_t kw = 0; kw < p.k_w; ++kw) {
        const float* c = cols + ((oc * p.k_h + kh) * p.k_w + kw) * n;
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
      for (index_t oc = 0; oc < ocg; ++oc) {
        const float b = bg ? bg[oc] : 0.0f;
        for (index_t i = 0; i < out_plane; ++i) yg[oc * out_plane + i] = b;
      }
      for (index_t row0 = 0; row0 < p.in_h; row0 += block_rows) {
        const index_t rows = p.in_h - row0 < block_rows ? p.in_h - row0 : block_rows;
        packed_gemm(m, rows * p.in_w, icg, wg, xg + row0 * p.in_w, in_plane, cols, rows * p.in_w, nullptr,
                    kNoActivation, parallel);
        conv_transpose_gemm_detail::col2im(p, cols, row0, rows, yg);
      }
      activate_row(e, yg, ocg * out_plane);
    }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_CONV_TRANSPOSE_GEMM_H
