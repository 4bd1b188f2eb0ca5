// Resize and Upsample. The compiler precomputes, for every resized axis and output
// coordinate, which input positions ("taps") contribute and with what weight, so these
// kernels only gather and blend: no coordinate arithmetic and no rounding modes at run time.
//
// Tables, flat over the axes: axis d's entries start at table_start[d] and hold taps[d]
// entries per output coordinate. src[] is the element offset (input index times the input's
// stride along d) of each tap, or -1 when the coordinate falls outside the input
// (tf_crop_and_resize), where the output takes the extrapolation value.
#ifndef ONNXC_RESIZE_H
#define ONNXC_RESIZE_H

#include <type_traits>

#include "onnxc/base.h"

namespace onnxc {
namespace rt {

constexpr int kMaxResizeRank = 8;

// Nearest: one tap per output coordinate; y = x at the summed offsets.
template <class T>
inline void resize_nearest(const T* x, T* y, int rank, const index_t* out_shape, const index_t* table_start,
                           const index_t* src, T extrapolation) {
  index_t idx[kMaxResizeRank] = {};
  const int last = rank - 1;
  const index_t row = out_shape[last];
  const index_t* row_src = src + table_start[last];
  index_t rows = 1;
  for (int d = 0; d < last; ++d) rows *= out_shape[d];
  for (index_t r = 0; r < rows; ++r, y += row) {
    index_t offset = 0;
    bool inside = true;
    for (int d = 0; d < last; ++d) {
      const index_t s = src[table_start[d] + idx[d]];
      inside = inside && s >= 0;
      offset += s;
    }
    for (index_t i = 0; i < row; ++i) y[i] = inside && row_src[i] >= 0 ? x[offset + row_src[i]] : extrapolation;
    for (int d = last - 1; d >= 0; --d) {
      if (++idx[d] < out_shape[d]) break;
      idx[d] = 0;
    }
  }
}

// Linear and cubic (with or without antialiasing): every output element blends the
// product of its axes' taps. Blending happens in float (double for double data); integer
// results truncate, as a cast does.
//
// resize_interpolate_any_axes takes any axes with several taps; resize_interpolate takes the
// usual case, only the last two axes with several taps (an image's height and width), plane by
// plane and row by row with the same products and sums in the same order (the same bits)
// without the per-element walk over every axis (lraspp_mobilenet_v3's 28 x 28 -> 224 x 224
// bilinear head: 44 ns per output element that way).
template <class T>
inline void resize_interpolate_any_axes(const T* x, T* y, int rank, const index_t* out_shape, const index_t* taps,
                               const index_t* table_start, const index_t* src, const float* weight, T extrapolation) {
  using Acc = typename std::conditional<std::is_same<compute_t<T>, double>::value, double, float>::type;
  index_t idx[kMaxResizeRank] = {};
  index_t base[kMaxResizeRank] = {};  // first table entry of each axis for the current output element
  index_t total = 1;
  for (int d = 0; d < rank; ++d) total *= out_shape[d];
  for (index_t e = 0; e < total; ++e) {
    bool inside = true;
    for (int d = 0; d < rank; ++d) {
      base[d] = table_start[d] + idx[d] * taps[d];
      inside = inside && src[base[d]] >= 0;
    }
    if (!inside) {
      y[e] = extrapolation;
    } else {
      Acc sum = 0;
      index_t tap[kMaxResizeRank] = {};
      for (;;) {
        index_t offset = 0;
        Acc w = 1;
        for (int d = 0; d < rank; ++d) {
          offset += src[base[d] + tap[d]];
          w *= static_cast<Acc>(weight[base[d] + tap[d]]);
        }
        sum += w * static_cast<Acc>(load(x[offset]));
        int d = rank - 1;
        while (d >= 0 && ++tap[d] == taps[d]) tap[d--] = 0;
        if (d < 0) break;
      }
      y[e] = store<T>(static_cast<compute_t<T>>(sum));
    }
    for (int d = rank - 1; d >= 0; --d) {
      if (++idx[d] < out_shape[d]) break;
      idx[d] = 0;
    }
  }
}

template <class T>
inline void resize_interpolate(const T* x, T* y, int rank, const index_t* out_shape, const index_t* taps,
                               const index_t* table_start, const index_t* src, const float* weight, T extrapolation) {
  using Acc = typename std::conditional<std::is_same<compute_t<T>, double>::value, double, float>::type;
  const int h = rank - 2, w = rank - 1;
  bool outer_single_tap = rank >= 2;
  for (int d = 0; d < h && outer_single_tap; ++d) outer_single_tap = taps[d] == 1;
  if (!outer_single_tap)
    return resize_interpolate_any_axes(x, y, rank, out_shape, taps, table_start, src, weight, extrapolation);
  const index_t out_h = out_shape[h], out_w = out_shape[w], taps_h = taps[h], taps_w = taps[w];
  const index_t *src_h = src + table_start[h], *src_w = src + table_start[w];
  const float *weight_h = weight + table_start[h], *weight_w = weight + table_start[w];
  index_t planes = 1;
  for (int d = 0; d < h; ++d) planes *= out_shape[d];
  index_t idx[kMaxResizeRank] = {};
  for (index_t plane = 0; plane < planes; ++plane) {
    index_t offset = 0;
    Acc w_outer = 1;
    bool inside = true;
    for (int d = 0; d < h; ++d) {
      const index_t at = table_start[d] + idx[d];
      inside = inside && src[at] >= 0;
      offset += src[at];
      w_outer *= static_cast<Acc>(weight[at]);
    }
    for (index_t oh = 0; oh < out_h; ++oh, y += out_w) {
      const index_t* sh = src_h + oh * taps_h;
      const float* wh = weight_h + oh * taps_h;
      if (!inside || sh[0] < 0) {
        for (index_t ow = 0; ow < out_w; ++ow) y[ow] = extrapolation;
        continue;
      }
      for (index_t ow = 0; ow < out_w; ++ow) {
        const index_t* sw = src_w + ow * taps_w;
        const float* ww = weight_w + ow * taps_w;
        if (sw[0] < 0) {
          y[ow] = extrapolation;
          continue;
        }
        Acc sum = 0;
        for (index_t th = 0; th < taps_h; ++th) {
          const Acc w_row = w_outer * static_cast<Acc>(wh[th]);
          const T* x_row = x + offset + sh[th];
          for (index_t tw = 0; tw < taps_w; ++tw) {
            const Acc weight_tap = w_row * static_cast<Acc>(ww[tw]);
            sum += weight_tap * static_cast<Acc>(load(x_row[sw[tw]]));
          }
        }
        y[ow] = store<T>(static_cast<compute_t<T>>(sum));
      }
    }
    for (int d = h - 1; d >= 0; --d) {
      if (++idx[d] < out_shape[d]) break;
      idx[d] = 0;
    }
  }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_RESIZE_H
