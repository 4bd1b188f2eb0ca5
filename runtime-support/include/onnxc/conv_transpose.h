// Transposed convolution (ONNX ConvTranspose) over 1, 2 or 3 spatial dims, NCHW layout, with
// the geometry of conv.h's ConvParams read the other way round: in_* are X's (the small side)
// dims, out_* are Y's, and pad_* is the padding removed from the start of each output dim.
//
// Output element y[n, m, o] gathers every x[n, c, i] and tap k with o = i * stride - pad + k * dilation.
#ifndef ONNXC_CONV_TRANSPOSE_H
#define ONNXC_CONV_TRANSPOSE_H

#include "onnxc/base.h"
#include "onnxc/conv.h"

namespace onnxc {
namespace rt {

namespace conv_transpose_detail {

// The input position i with i * stride == o + pad - k * dilation, or -1 when there is none
// inside [0, size).
inline index_t source(index_t o, index_t k, index_t stride, index_t dilation, index_t pad, index_t size) {
  const index_t at = o + pad - k * dilation;
  if (at < 0 || at % stride != 0) return -1;
  const index_t i = at / stride;
  return i < size ? i : -1;
}

}  // namespace conv_transpose_detail

// x: [batch, in_channels, in_d, in_h, in_w]; w: [in_channels, out_channels/group, k_d, k_h, k_w];
// bias: [out_channels] or nullptr; y: [batch, out_channels, out_d, out_h, out_w].
template <class T>
inline void conv_transpose(const ConvParams& p, const T* x, const T* w, const T* bias, T* y) {
  using C = compute_t<T>;
  using conv_transpose_detail::source;
  const index_t icg = p.in_channels / p.group, ocg = p.out_channels / p.group;
  const index_t in_plane = p.in_d * p.in_h * p.in_w, out_plane = p.out_d * p.out_h * p.out_w;
  const index_t ksize = p.k_d * p.k_h * p.k_w;
  for (index_t n = 0; n < p.batch; ++n) {
    for (index_t m = 0; m < p.out_channels; ++m) {
      const index_t g = m / ocg, oc = m % ocg;
      const C b = bias ? load(bias[m]) : C(0);
      T* yp = y + (n * p.out_channels + m) * out_plane;
      for (index_t od = 0; od < p.out_d; ++od) {
        for (index_t oh = 0; oh < p.out_h; ++oh) {
          for (index_t ow = 0; ow < p.out_w; ++ow) {
            C acc = b;
            for (index_t kd = 0; kd < p.k_d; ++kd) {
              const index_t id = source(od, kd, p.stride_d, p.dilation_d, p.pad_d, p.in_d);
              if (id < 0) continue;
              for (index_t kh = 0; kh < p.k_h; ++kh) {
                const index_t ih = source(oh, kh, p.stride_h, p.dilation_h, p.pad_h, p.in_h);
                if (ih < 0) continue;
                for (index_t kw = 0; kw < p.k_w; ++kw) {
                  const index_t iw = source(ow, kw, p.stride_w, p.dilation_w, p.pad_w, p.in_w);
                  if (iw < 0) continue;
                  const index_t x_at = (id * p.in_h + ih) * p.in_w + iw;
                  const index_t w_at = (kd * p.k_h + kh) * p.k_w + kw;
                  for (index_t ic = 0; ic < icg; ++ic) {
                    const index_t c = g * icg + ic;
                    acc += load(x[(n * p.in_channels + c) * in_plane + x_at]) * load(w[(c * ocg + oc) * ksize + w_at]);
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

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_CONV_TRANSPOSE_H
