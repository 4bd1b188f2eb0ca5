// Convolution (ONNX Conv) over 1, 2 or 3 spatial dims, NCHW layout.
//
// Every case is normalised to three spatial dims (depth, height, width); unused leading dims
// have size 1. The compiler picks one algorithm per layer from its shape (ops/conv.cpp):
// - conv_gemm (float, one group): a matrix product of the weights, packed at compile time,
//   with the input (1x1 stride-1 convolutions read it in place) or with its im2col, built block
//   by block in the node's scratch memory;
// - conv_depthwise (float, one input and one output channel per group): a direct kernel
//   whose inner loop runs along the output row;
// - conv: the direct reference for every other case and type.
// The float kernels apply bias and a fused activation (activation.h) in their epilogue.
#ifndef ONNXC_CONV_H
#define ONNXC_CONV_H

#include "onnxc/activation.h"
#include "onnxc/base.h"
#include "onnxc/packed_gemm.h"
#include "onnxc/window.h"

namespace onnxc {
namespace rt {

struct ConvParams {
  index_t batch, in_channels, out_channels, group;
  index_t in_d, in_h, in_w;
  index_t out_d, out_h, out_w;
  index_t k_d, k_h, k_w;
  index_t stride_d, stride_h, stride_w;
  index_t dilation_d, dilation_h, dilation_w;
  index_t pad_d, pad_h, pad_w;  // padding before the first element of each dim
};

// x: [batch, in_channels, in_d, in_h, in_w]; w: [out_channels, in_channels/group, k_d, k_h, k_w];
// bias: [out_channels] or nullptr; y: [batch, out_channels, out_d, out_h, out_w].
template <class T>
inline void conv(const ConvParams& p, const T* x, const T* w, const T* bias, T* y) {
  using C = compute_t<T>;
  const index_t icg = p.in_channels / p.group, ocg = p.out_channels / p.group;
  const index_t in_plane = p.in_d * p.in_h * p.in_w, out_plane = p.out_d * p.out_h * p.out_w;
  const index_t ksize = p.k_d * p.k_h * p.k_w;
  for (index_t n = 0; n < p.batch; ++n) {
    for (index_t g = 0; g < p.group; ++g) {
      for (index_t oc = 0; oc < ocg; ++oc) {
        const index_t m = g * ocg + oc;
        T* yp = y + (n * p.out_channels + m) * out_plane;
        const C b = bias ? load(bias[m]) : C(0);
        // Accumulate in the compute type; 16-bit storage gets a compute-type pass below.
        for (index_t od = 0; od < p.out_d; ++od) {
          for (index_t oh = 0; oh < p.out_h; ++oh) {
            for (index_t ow = 0; ow < p.out_w; ++ow) {
              C acc = b;
              for (index_t ic = 0; ic < icg; ++ic) {
                const T* xp = x + (n * p.in_channels + g * icg + ic) * in_plane;
                const T* wp = w + (m * icg + ic) * ksize;
                for (index_t kd = 0; kd < p.k_d; ++kd) {
                  const index_t id = od * p.stride_d - p.pad_d + kd * p.dilation_d;
                  if (id < 0 || id >= p.in_d) continue;
                  for (index_t kh = 0; kh < p.k_h; ++kh) {
                    const index_t ih = oh * p.stride_h - p.pad_h + kh * p.dilation_h;
                    if (ih < 0 || ih >= p.in_h) continue;
                    const T* xrow = xp + (id * p.in_h + ih) * p.in_w;
                    const T* wrow = wp + (kd * p.k_h + kh) * p.k_w;
                    for (index_t kw = 0; kw < p.k_w; ++kw) {
                      const index_t iw = ow * p.stride_w - p.pad_w + kw * p.dilation_w;
                      if (iw < 0 || iw >= p.in_w) continue;
                      acc += load(xrow[iw]) * load(wrow[kw]);
                    }
                  }
                }
              }
              yp[(od * p.out_h + oh) * p.out_w + ow] = store<T>(acc);
            }
          }
        }
      }
    }
  }
}

// ---- float kernels ----

// The matrix product view of a convolution with one group: y[M, N] = W[M, K] * col[K, N] with
// M output channels, K = input channels * kernel taps, N output positions.
inline index_t conv_gemm_k(const ConvParams& p) { return p.in_channels * p.k_d * p.k_h * p.k_w; }
inline index_t conv_gemm_n(const ConvParams& p) { return p.out_d * p.out_h * p.out_w; }

// A 1x1 kernel with stride 1 and no padding reads its input as the matrix itself.
inline bool conv_reads_input_as_matrix(const ConvParams& p) {
  return p.k_d * p.k_h * p.k_w == 1 && p.stride_d == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_d == 0 &&
         p.pad_h == 0 && p.pad_w == 0;
}

// Floats of scratch conv_gemm needs: one im2col block (K x block columns), or none.
inline index_t conv_gemm_scratch_floats(const ConvParams& p) {
  if (conv_reads_input_as_matrix(p)) return 0;
  const index_t k = conv_gemm_k(p), n = conv_gemm_n(p), block = packed_gemm_block_cols(k);
  return k * (n < block ? n : block);
}

// One row of im2col: the input under tap (kd, kh, kw) of channel plane xc for output positions
// [first, first + cols), zero where the tap falls in the padding. Output rows are copied as
// segments: zeros, a strided run of the input row, zeros.
inline void im2col_row(const ConvParams& p, const float* xc, index_t kd, index_t kh, index_t kw, index_t first,
                       index_t cols, float* col) {
  const index_t offset = kw * p.dilation_w - p.pad_w;  // input column of output column 0
  const ColumnRange inside = columns_inside(offset, p.stride_w, p.in_w, p.out_w);
  for (index_t j = 0, at = first; j < cols;) {
    const index_t od = at / (p.out_h * p.out_w), oh = (at / p.out_w) % p.out_h, ow0 = at % p.out_w;
    const index_t seg = p.out_w - ow0 < cols - j ? p.out_w - ow0 : cols - j;
    const index_t id = od * p.stride_d - p.pad_d + kd * p.dilation_d;
    const index_t ih = oh * p.stride_h - p.pad_h + kh * p.dilation_h;
    float* out = col + j;  // out[ow - ow0] for ow in [ow0, ow0 + seg)
    index_t lo = inside.lo < ow0 ? ow0 : inside.lo, hi = inside.hi > ow0 + seg ? ow0 + seg : inside.hi;
    if (id < 0 || id >= p.in_d || ih < 0 || ih >= p.in_h) lo = hi = ow0;
    if (hi < lo) hi = lo;
    const index_t row = (id * p.in_h + ih) * p.in_w + offset;  // x index of output column 0 (valid for [lo, hi))
    for (index_t ow = ow0; ow < lo; ++ow) out[ow - ow0] = 0.0f;
    if (p.stride_w == 1) {
      for (index_t ow = lo; ow < hi; ++ow) out[ow - ow0] = xc[row + ow];
    } else {
      for (index_t ow = lo; ow < hi; ++ow) out[ow - ow0] = xc[row + ow * p.stride_w];
    }
    for (index_t ow = hi; ow < ow0 + seg; ++ow) out[ow - ow0] = 0.0f;
    j += seg;
    at += seg;
  }
}

// col[K, cols] = the input under every kernel tap for output positions [first, first + cols)
// of one image (K = channels x taps, in the weight's order).
inline void im2col_block(const ConvParams& p, const float* x, index_t first, index_t cols, float* col) {
  for (index_t ic = 0; ic < p.in_channels; ++ic) {
    const float* xc = x + ic * p.in_d * p.in_h * p.in_w;
    for (index_t kd = 0; kd < p.k_d; ++kd)
      for (index_t kh = 0; kh < p.k_h; ++kh)
        for (index_t kw = 0; kw < p.k_w; ++kw) {
          im2col_row(p, xc, kd, kh, kw, first, cols, col);
          col += cols;
        }
  }
}

// One-group convolution as a matrix product; w_packed is the weight laid out by pack_weights
// (M x K), scratch holds conv_gemm_scratch_floats(p) floats.
inline void conv_gemm(const ConvParams& p, const float* x, const float* w_packed, const float* bias, float* y,
                      float* scratch, const Epilogue& e) {
  const index_t m = p.out_channels, k = conv_gemm_k(p), n = conv_gemm_n(p);
  const index_t in_image = p.in_channels * p.in_d * p.in_h * p.in_w;
  for (index_t b = 0; b < p.batch; ++b) {
    const float* xb = x + b * in_image;
    float* yb = y + b * m * n;
    if (conv_reads_input_as_matrix(p)) {
      packed_gemm(m, n, k, w_packed, xb, n, yb, n, bias, e);
      continue;
    }
    const index_t block = packed_gemm_block_cols(k);
    for (index_t j = 0; j < n; j += block) {
      const index_t cols = n - j < block ? n - j : block;
      im2col_block(p, xb, j, cols, scratch);
      packed_gemm_block(m, cols, k, w_packed, scratch, cols, yb + j, n, bias, e);
    }
  }
}

// One output row of a depthwise convolution: y[ow] += sum over kw of w[kw] * x[ow*s + kw*d - pad],
// over the columns whose taps fall inside the input row (the others see zero padding).
inline void depthwise_row(const ConvParams& p, const float* xrow, const float* wrow, float* yrow) {
  for (index_t kw = 0; kw < p.k_w; ++kw) {
    const index_t offset = kw * p.dilation_w - p.pad_w;  // input column of output column 0
    const ColumnRange r = columns_inside(offset, p.stride_w, p.in_w, p.out_w);
    const index_t lo = r.lo, hi = r.hi;
    const float wv = wrow[kw];
    if (p.stride_w == 1) {  // contiguous: compilers vectorise this loop
      for (index_t ow = lo; ow < hi; ++ow) yrow[ow] += wv * xrow[ow + offset];
    } else {
      for (index_t ow = lo; ow < hi; ++ow) yrow[ow] += wv * xrow[ow * p.stride_w + offset];
    }
  }
}

// Depthwise convolution (group == in_channels == out_channels), 2-d (in_d == k_d == 1).
inline void conv_depthwise(const ConvParams& p, const float* x, const float* w, const float* bias, float* y,
                           const Epilogue& e) {
  const index_t in_plane = p.in_h * p.in_w, out_plane = p.out_h * p.out_w, taps = p.k_h * p.k_w;
  for (index_t b = 0; b < p.batch; ++b)
    for (index_t c = 0; c < p.out_channels; ++c) {
      const float* xc = x + (b * p.in_channels + c) * in_plane;
      const float* wc = w + c * taps;
      float* yc = y + (b * p.out_channels + c) * out_plane;
      const float bv = bias ? bias[c] : 0.0f;
      for (index_t oh = 0; oh < p.out_h; ++oh) {
        float* yrow = yc + oh * p.out_w;
        for (index_t ow = 0; ow < p.out_w; ++ow) yrow[ow] = bv;
        for (index_t kh = 0; kh < p.k_h; ++kh) {
          const index_t ih = oh * p.stride_h - p.pad_h + kh * p.dilation_h;
          if (ih >= 0 && ih < p.in_h) depthwise_row(p, xc + ih * p.in_w, wc + kh * p.k_w, yrow);
        }
      }
      activate_row(e, yc, out_plane);  // per plane: small rows would pay the call for few elements
    }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_CONV_H
