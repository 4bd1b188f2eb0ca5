// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// conv_direct's interior columns on RISC-V vectors (RVV 1.0), vector-length agnostic (included
// by conv.h where the compiler targets the vector extension, in place of the portable blocks of
// kDirectColumns columns; conv.h defines ConvParams). Output columns are in the lanes of one group
// of 4 vector registers (LMUL 4: 16 floats at VLEN 128, 32 at 256) for each of up to 4 output
// channels, vsetvl giving a row's last strip its shorter length; each tap of each input channel is
// one load of the strip's inputs (vle32, or vlse32 with the stride) and one scalar weight and
// multiply-add (vfmacc.vf) per output channel: 4 x vl products for 5 loads and 4 multiply-adds.
// The border columns, whose windows overhang the padding, stay with the portable kernel. Tested
// through rt::conv_direct against rt::conv (tests/unit/conv_grouped_test.cpp, cross-built: unit.rvv).
#ifndef ONNXC_CONV_DIRECT_RVV_H
#define ONNXC_CONV_DIRECT_RVV_H

#include "onnxc/rvv.h"

namespace onnxc {
namespace rt {
namespace direct_detail {

// Output columns [ow, hi) of row oh (inside the interior: no window overhangs the row) for MB
// output channels (wm: the first one's weights, ym: its output plane).
template <int MB>
inline void interior_columns_rvv(const ConvParams& p, const float* xg, const float* wm, const float* bias, index_t icg,
                                 index_t oh, index_t kh_lo, index_t kh_hi, index_t ow, index_t hi, float* ym) {
  const index_t in_plane = p.in_h * p.in_w, taps = p.k_h * p.k_w, channel_stride = icg * taps;
  const index_t out_plane = p.out_h * p.out_w, ih0 = oh * p.stride_h - p.pad_h;
  const std::ptrdiff_t stride_bytes = static_cast<std::ptrdiff_t>(p.stride_w * sizeof(float));
  while (ow < hi) {
    const std::size_t vl = ONNXC_RVV(vsetvl_e32m4)(static_cast<std::size_t>(hi - ow));
    vfloat32m4_t acc0 = ONNXC_RVV(vfmv_v_f_f32m4)(bias ? bias[0] : 0.0f, vl);
    vfloat32m4_t acc1 = ONNXC_RVV(vfmv_v_f_f32m4)(MB > 1 && bias ? bias[MB > 1 ? 1 : 0] : 0.0f, vl);
    vfloat32m4_t acc2 = ONNXC_RVV(vfmv_v_f_f32m4)(MB > 2 && bias ? bias[MB > 2 ? 2 : 0] : 0.0f, vl);
    vfloat32m4_t acc3 = ONNXC_RVV(vfmv_v_f_f32m4)(MB > 3 && bias ? bias[MB > 3 ? 3 : 0] : 0.0f, vl);
    const index_t iw0 = ow * p.stride_w - p.pad_w;
    for (index_t ic = 0; ic < icg; ++ic) {
      const float* xc = xg + ic * in_plane;
      const float* wc = wm + ic * taps;
      for (index_t kh = kh_lo; kh < kh_hi; ++kh) {
        const float* xrow = xc + (ih0 + kh * p.dilation_h) * p.in_w + iw0;
        const float* wrow = wc + kh * p.k_w;
        for (index_t kw = 0; kw < p.k_w; ++kw) {
          const float* at = xrow + kw * p.dilation_w;
          const vfloat32m4_t x = p.stride_w == 1 ? ONNXC_RVV(vle32_v_f32m4)(at, vl)
                                                 : ONNXC_RVV(vlse32_v_f32m4)(at, stride_bytes, vl);
          acc0 = ONNXC_RVV(vfmacc_vf_f32m4)(acc0, wrow[kw], x, vl);
          if (MB > 1) acc1 = ONNXC_RVV(vfmacc_vf_f32m4)(acc1, wrow[(MB > 1 ? 1 : 0) * channel_stride + kw], x, vl);
          if (MB > 2) acc2 = ONNXC_RVV(vfmacc_vf_f32m4)(acc2, wrow[(MB > 2 ? 2 : 0) * channel_stride + kw], x, vl);
          if (MB > 3) acc3 = ONNXC_RVV(vfmacc_vf_f32m4)(acc3, wrow[(MB > 3 ? 3 : 0) * channel_stride + kw], x, vl);
        }
      }
    }
    float* y = ym + oh * p.out_w + ow;
    ONNXC_RVV(vse32_v_f32m4)(y, acc0, vl);
    if (MB > 1) ONNXC_RVV(vse32_v_f32m4)(y + out_plane, acc1, vl);
    if (MB > 2) ONNXC_RVV(vse32_v_f32m4)(y + 2 * out_plane, acc2, vl);
    if (MB > 3) ONNXC_RVV(vse32_v_f32m4)(y + 3 * out_plane, acc3, vl);
    ow += static_cast<index_t>(vl);
  }
}

}  // namespace direct_detail
}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_CONV_DIRECT_RVV_H
