// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// conv_depthwise's output rows and flat-plane taps on RISC-V vectors (RVV 1.0), vector-length
// agnostic (included by conv.h where the compiler targets the vector extension, in place of the
// portable four-column blocks; conv.h defines ConvParams and KernelRows). Output columns are in
// the lanes of one group of 4 vector registers (LMUL 4: 16 floats at VLEN 128, 32 at 256), vsetvl
// giving the last strip of a row its shorter length, so nothing is read past the row's columns
// the strip needs; each tap is one scalar weight, one load (vle32, or vlse32 with the stride for
// stride-2 layers) and one multiply-add (vfmacc.vf). Relu and Clip clamp in registers, the other
// activations run over the stored row. conv_depthwise_in_place's interior columns likewise
// (in_place_columns_rvv). Tested through rt::conv_depthwise and rt::conv_depthwise_in_place against
// rt::conv (tests/unit/depthwise_phases_test.cpp, simd_kernels_test.cpp, cross-built: unit.rvv).
#ifndef ONNXC_DEPTHWISE_ROWS_RVV_H
#define ONNXC_DEPTHWISE_ROWS_RVV_H

#include <limits>

#include "onnxc/rvv.h"

namespace onnxc {
namespace rt {
namespace depthwise_detail {

inline bool computes_row_pairs(const ConvParams&) { return false; }
// The in-place kernel (conv_depthwise_in_place) keeps its portable blocks of this many columns.
constexpr int kDepthwiseColumns = 4;

// acc clamped when e is Relu or Clip (the others: unchanged, applied after the store).
inline vfloat32m4_t clamp_rvv(const Epilogue& e, vfloat32m4_t acc, std::size_t vl) {
  if (e.activation == Activation::Relu) return ONNXC_RVV(vfmax_vf_f32m4)(acc, 0.0f, vl);
  if (e.activation == Activation::Clip)
    return ONNXC_RVV(vfmin_vf_f32m4)(ONNXC_RVV(vfmax_vf_f32m4)(acc, e.alpha, vl), e.beta, vl);
  return acc;
}

// One output row: rows[kh] is the padded input row under kernel row kh.
template <int S, int K>
inline void output_row(const ConvParams& p, const KernelRows& rows, const float* wc, float bias, float* yrow,
                       const Epilogue& e) {
  const index_t k_h = K ? K : p.k_h, k_w = K ? K : p.k_w;
  const index_t stride = S ? S : p.stride_w;
  const std::ptrdiff_t stride_bytes = static_cast<std::ptrdiff_t>(stride * sizeof(float));
  for (index_t ow = 0; ow < p.out_w;) {
    const std::size_t vl = ONNXC_RVV(vsetvl_e32m4)(static_cast<std::size_t>(p.out_w - ow));
    vfloat32m4_t acc = ONNXC_RVV(vfmv_v_f_f32m4)(bias, vl);
    for (index_t kh = 0; kh < k_h; ++kh) {
      const float* first = rows[kh] + ow * stride;
      for (index_t kw = 0; kw < k_w; ++kw) {
        const float* at = first + kw * p.dilation_w;
        const vfloat32m4_t x = stride == 1 ? ONNXC_RVV(vle32_v_f32m4)(at, vl)
                                           : ONNXC_RVV(vlse32_v_f32m4)(at, stride_bytes, vl);
        acc = ONNXC_RVV(vfmacc_vf_f32m4)(acc, wc[kh * k_w + kw], x, vl);
      }
    }
    ONNXC_RVV(vse32_v_f32m4)(yrow + ow, clamp_rvv(e, acc, vl), vl);
    ow += static_cast<index_t>(vl);
  }
  if (e.activation != Activation::Relu && e.activation != Activation::Clip) activate_row(e, yrow, p.out_w);
}

template <int S, int K, int R>
inline void output_rows(const ConvParams& p, const KernelRows* rows, const float* wc, float bias, float* y,
                        const Epilogue& e) {
  for (int r = 0; r < R; ++r) output_row<S, K>(p, rows[r], wc, bias, y + r * p.out_w, e);
}

// conv_depthwise_in_place's columns [from, to) of one output row (yrow), no activation: rows[kh]
// + ow * stride - pad_w is the input under kernel row kh of output column ow (every tap inside the
// row, or in the zero-padded ring), for the kernel rows [kh_lo, kh_hi).
template <int S, int K>
inline void in_place_columns_rvv(const ConvParams& p, const float* const* rows, index_t kh_lo, index_t kh_hi,
                                 const float* wc, float bias, index_t from, index_t to, float* yrow) {
  const index_t k_w = K ? K : p.k_w;
  const index_t stride = S ? S : p.stride_w;
  const index_t dilation = K ? 1 : p.dilation_w;  // plane<S, K> fixes K for dense kernels only
  const std::ptrdiff_t stride_bytes = static_cast<std::ptrdiff_t>(stride * sizeof(float));
  for (index_t ow = from; ow < to;) {
    const std::size_t vl = ONNXC_RVV(vsetvl_e32m4)(static_cast<std::size_t>(to - ow));
    vfloat32m4_t acc = ONNXC_RVV(vfmv_v_f_f32m4)(bias, vl);
    for (index_t kh = kh_lo; kh < kh_hi; ++kh) {
      const float* first = rows[kh] + ow * stride - p.pad_w;
      for (index_t kw = 0; kw < k_w; ++kw) {
        const float* at = first + kw * dilation;
        const vfloat32m4_t x = stride == 1 ? ONNXC_RVV(vle32_v_f32m4)(at, vl)
                                           : ONNXC_RVV(vlse32_v_f32m4)(at, stride_bytes, vl);
        acc = ONNXC_RVV(vfmacc_vf_f32m4)(acc, wc[kh * k_w + kw], x, vl);
      }
    }
    ONNXC_RVV(vse32_v_f32m4)(yrow + ow, acc, vl);
    ow += static_cast<index_t>(vl);
  }
}

// wide[i] = bias + sum over taps of w * padded[i + tap offset] for i < count.
inline void flat_taps_rvv(const ConvParams& p, index_t width, const float* padded, const float* wc, float bias,
                          index_t count, float* wide) {
  for (index_t i = 0; i < count;) {
    const std::size_t vl = ONNXC_RVV(vsetvl_e32m4)(static_cast<std::size_t>(count - i));
    vfloat32m4_t acc = ONNXC_RVV(vfmv_v_f_f32m4)(bias, vl);
    for (index_t kh = 0; kh < p.k_h; ++kh) {
      const float* row = padded + i + kh * p.dilation_h * width;
      for (index_t kw = 0; kw < p.k_w; ++kw)
        acc = ONNXC_RVV(vfmacc_vf_f32m4)(acc, wc[kh * p.k_w + kw], ONNXC_RVV(vle32_v_f32m4)(row + kw * p.dilation_w, vl), vl);
    }
    ONNXC_RVV(vse32_v_f32m4)(wide + i, acc, vl);
    i += static_cast<index_t>(vl);
  }
}

}  // namespace depthwise_detail
}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_DEPTHWISE_ROWS_RVV_H
