// Convolution (ONNX Conv) over 1, 2 or 3 spatial dims, NCHW layout.
//
// Every case is normalised to three spatial dims (depth, height, width); unused leading dims
// have size 1. Direct convolution: for each output plane, accumulate one input plane per
// kernel tap, with the innermost loop running along the output row.
#ifndef ONNXC_CONV_H
#define ONNXC_CONV_H

#include "onnxc/base.h"

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

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_CONV_H
