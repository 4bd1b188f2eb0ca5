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

// Where one tap at one position reads: the four neighbours of (h, w) as offsets into a plane
// and their bilinear weights times the mask; a neighbour outside the plane (or any, at or beyond
// one pixel outside) has weight 0 and offset 0.
struct BilinearTap {
  index_t at[4];
  float weight[4];
};

inline BilinearTap bilinear_tap(index_t height, index_t width, float h, float w, float scale) {
  BilinearTap t = {{0, 0, 0, 0}, {0.0f, 0.0f, 0.0f, 0.0f}};
  if (!(h > -1.0f && h < static_cast<float>(height) && w > -1.0f && w < static_cast<float>(width))) return t;
  const float hf = h < 0.0f ? -1.0f : static_cast<float>(static_cast<index_t>(h));
  const float wf = w < 0.0f ? -1.0f : static_cast<float>(static_cast<index_t>(w));
  const index_t h0 = static_cast<index_t>(hf), w0 = static_cast<index_t>(wf);
  const float dh = h - hf, dw = w - wf;
  const float weights[4] = {(1.0f - dh) * (1.0f - dw), (1.0f - dh) * dw, dh * (1.0f - dw), dh * dw};
  for (int k = 0; k < 4; ++k) {
    const index_t r = h0 + k / 2, c = w0 + k % 2;
    if (r >= 0 && r < height && c >= 0 && c < width) {
      t.at[k] = r * width + c;
      t.weight[k] = weights[k] * scale;
    }
  }
  return t;
}

// cols[n, c * kernel + tap, oh * out_w + ow] = x[n, c] sampled at the tap's place plus its
// offset, times its mask (1 without one). offset is [batch, offset_groups * 2 * kernel, out_h,
// out_w] (a tap's row offset, then its column offset), mask [batch, offset_groups * kernel,
// out_h, out_w]; channel c uses offset group c / (channels / offset_groups). The channels of an
// offset group read the same places: each block of positions works them out once (on the
// stack) and then fills every channel's row of that block.
template <class T>
inline void deform_im2col(const T* x, const T* offset, const T* mask, T* cols, const DeformIm2ColParams& p) {
  constexpr index_t kBlock = 64;
  const index_t kernel = p.kernel_h * p.kernel_w, positions = p.out_h * p.out_w;
  const index_t group_channels = p.channels / p.offset_groups;
  BilinearTap taps[kBlock];
  for (index_t n = 0; n < p.batch; ++n)
    for (index_t g = 0; g < p.offset_groups; ++g)
      for (index_t tap = 0; tap < kernel; ++tap) {
        const index_t ki = tap / p.kernel_w, kj = tap % p.kernel_w;
        const T* off_h = offset + ((n * p.offset_groups + g) * 2 * kernel + 2 * tap) * positions;
        const T* off_w = off_h + positions;
        const T* scale = mask ? mask + ((n * p.offset_groups + g) * kernel + tap) * positions : nullptr;
        for (index_t first = 0; first < positions; first += kBlock) {
          const index_t count = positions - first < kBlock ? positions - first : kBlock;
          for (index_t i = 0; i < count; ++i) {
            const index_t at = first + i, oh = at / p.out_w, ow = at % p.out_w;
            const float h = static_cast<float>(oh * p.stride_h - p.pad_top + ki * p.dilation_h) +
                            static_cast<float>(load(off_h[at]));
            const float w = static_cast<float>(ow * p.stride_w - p.pad_left + kj * p.dilation_w) +
                            static_cast<float>(load(off_w[at]));
            taps[i] = bilinear_tap(p.height, p.width, h, w, scale ? static_cast<float>(load(scale[at])) : 1.0f);
          }
          for (index_t c = g * group_channels; c < (g + 1) * group_channels; ++c) {
            const T* plane = x + (n * p.channels + c) * p.height * p.width;
            T* row = cols + ((n * p.channels + c) * kernel + tap) * positions + first;
            for (index_t i = 0; i < count; ++i) {
              const BilinearTap& t = taps[i];
              const float v = t.weight[0] * static_cast<float>(load(plane[t.at[0]])) +
                              t.weight[1] * static_cast<float>(load(plane[t.at[1]])) +
                              t.weight[2] * static_cast<float>(load(plane[t.at[2]])) +
                              t.weight[3] * static_cast<float>(load(plane[t.at[3]]));
              row[i] = store<T>(v);
            }
          }
        }
      }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_DEFORM_CONV_H
