// DeformConv's sampling (ONNX DeformConv-19/22, 2-D): the columns a convolution multiplies by
// its weights, each kernel tap read at its learned offset by bilinear interpolation and scaled
// by its mask. The compiler lowers DeformConv into this step and a MatMul, so the product runs
// on the GEMM kernels; this loop is the portable reference and the only variant.
#ifndef ONNXC_DEFORM_CONV_H
#define ONNXC_DEFORM_CONV_H

#include "onnxc/base.h"

namespace onnxc {
namespace rt {

struct DeformIm2ColParams {
  index_t batch, channels, height, width;
  index_t kernel_h, kernel_w, stride_h, stride_w, pad_top, pad_left, dilation_h, dilation_w;
  index_t out_h, out_w, offset_groups;
};

// x's plane of height x width sampled at (h, w): the four neighbours weighted by distance,
// those outside the plane counting as zero; nothing at all at or beyond one pixel outside.
template <class T>
inline float bilinear_zero_padded(const T* plane, index_t height, index_t width, float h, float w) {
  if (!(h > -1.0f && h < static_cast<float>(height) && w > -1.0f && w < static_cast<float>(width))) return 0.0f;
  const float hf = h < 0.0f ? -1.0f : static_cast<float>(static_cast<index_t>(h));
  const float wf = w < 0.0f ? -1.0f : static_cast<float>(static_cast<index_t>(w));
  const index_t h0 = static_cast<index_t>(hf), w0 = static_cast<index_t>(wf);
  const float dh = h - hf, dw = w - wf;
  auto at = [&](index_t r, index_t c) -> float {
    return r >= 0 && r < height && c >= 0 && c < width ? static_cast<float>(load(plane[r * width + c])) : 0.0f;
  };
  return (1.0f - dh) * ((1.0f - dw) * at(h0, w0) + dw * at(h0, w0 + 1)) +
         dh * ((1.0f - dw) * at(h0 + 1, w0) + dw * at(h0 + 1, w0 + 1));
}

// cols[n, c * kernel + tap, oh * out_w + ow] = x[n, c] sampled at the tap's place plus its
// offset, times its mask (1 without one). offset is [batch, offset_groups * 2 * kernel, out_h,
// out_w] (a tap's row offset, then its column offset), mask [batch, offset_groups * kernel,
// out_h, out_w]; channel c uses offset group c / (channels / offset_groups).
template <class T>
inline void deform_im2col(const T* x, const T* offset, const T* mask, T* cols, const DeformIm2ColParams& p) {
  const index_t kernel = p.kernel_h * p.kernel_w, positions = p.out_h * p.out_w;
  const index_t group_channels = p.channels / p.offset_groups;
  for (index_t n = 0; n < p.batch; ++n)
    for (index_t c = 0; c < p.channels; ++c) {
      const T* plane = x + (n * p.channels + c) * p.height * p.width;
      const index_t g = c / group_channels;
      for (index_t tap = 0; tap < kernel; ++tap) {
        const index_t ki = tap / p.kernel_w, kj = tap % p.kernel_w;
        const T* off_h = offset + ((n * p.offset_groups + g) * 2 * kernel + 2 * tap) * positions;
        const T* off_w = off_h + positions;
        const T* scale = mask ? mask + ((n * p.offset_groups + g) * kernel + tap) * positions : nullptr;
        T* row = cols + ((n * p.channels + c) * kernel + tap) * positions;
        for (index_t oh = 0; oh < p.out_h; ++oh)
          for (index_t ow = 0; ow < p.out_w; ++ow) {
            const index_t at = oh * p.out_w + ow;
            const float h = static_cast<float>(oh * p.stride_h - p.pad_top + ki * p.dilation_h) +
                            static_cast<float>(load(off_h[at]));
            const float w = static_cast<float>(ow * p.stride_w - p.pad_left + kj * p.dilation_w) +
                            static_cast<float>(load(off_w[at]));
            float v = bilinear_zero_padded(plane, p.height, p.width, h, w);
            if (scale) v *= static_cast<float>(load(scale[at]));
            row[at] = store<T>(v);
          }
      }
    }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_DEFORM_CONV_H
