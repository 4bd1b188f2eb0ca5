// RoiAlign: pools each region of interest of a feature map into a fixed out_h x out_w grid,
// averaging (or taking the max of) bilinearly interpolated samples in every bin.
#ifndef ONNXC_ROI_ALIGN_H
#define ONNXC_ROI_ALIGN_H

#include <cmath>
#include <cstdint>

#include "onnxc/base.h"

namespace onnxc {
namespace rt {

struct RoiAlignParams {
  index_t batch, channels, height, width;
  index_t rois, out_h, out_w;
  index_t sampling_ratio;  // samples per bin along each dim; 0: ceil(bin size)
  float spatial_scale;     // feature-map pixels per roi coordinate unit
  bool half_pixel;         // shift roi corners by -0.5 (coordinate_transformation_mode half_pixel)
  bool max_mode;           // mode "max" instead of "avg"
};

namespace roi_align_detail {

// The four pixels around a sample and their bilinear weights; all weights are 0 for a sample
// more than one pixel outside the map.
template <class C> struct Bilinear {
  index_t at[4];
  C weight[4];
};

template <class C> inline Bilinear<C> bilinear(C y, C x, index_t height, index_t width) {
  Bilinear<C> b{{0, 0, 0, 0}, {C(0), C(0), C(0), C(0)}};
  if (y < C(-1) || y > C(height) || x < C(-1) || x > C(width)) return b;
  if (y < C(0)) y = C(0);
  if (x < C(0)) x = C(0);
  index_t y0 = static_cast<index_t>(y), x0 = static_cast<index_t>(x), y1 = y0 + 1, x1 = x0 + 1;
  // At the last row or column, both neighbours are that row or column.
  if (y0 >= height - 1) {
    y0 = y1 = height - 1;
    y = C(y0);
  }
  if (x0 >= width - 1) {
    x0 = x1 = width - 1;
    x = C(x0);
  }
  const C ly = y - C(y0), lx = x - C(x0), hy = C(1) - ly, hx = C(1) - lx;
  b.at[0] = y0 * width + x0;
  b.at[1] = y0 * width + x1;
  b.at[2] = y1 * width + x0;
  b.at[3] = y1 * width + x1;
  b.weight[0] = hy * hx;
  b.weight[1] = hy * lx;
  b.weight[2] = ly * hx;
  b.weight[3] = ly * lx;
  return b;
}

}  // namespace roi_align_detail

// x: [batch, channels, height, width]; rois: [rois, 4] as (x1, y1, x2, y2);
// batch_indices: [rois]; y: [rois, channels, out_h, out_w]. A roi whose batch index is out of
// range pools zeros.
template <class T>
inline void roi_align(const RoiAlignParams& p, const T* x, const T* rois, const std::int64_t* batch_indices, T* y) {
  using C = compute_t<T>;
  using roi_align_detail::Bilinear;
  const C offset = p.half_pixel ? C(0.5) : C(0);
  const C scale = static_cast<C>(p.spatial_scale);
  const index_t plane = p.height * p.width;
  for (index_t r = 0; r < p.rois; ++r) {
    const T* roi = rois + r * 4;
    const C start_w = load(roi[0]) * scale - offset, start_h = load(roi[1]) * scale - offset;
    C roi_w = load(roi[2]) * scale - offset - start_w, roi_h = load(roi[3]) * scale - offset - start_h;
    // Without half_pixel, regions are at least one pixel (the legacy behaviour).
    if (!p.half_pixel) {
      if (roi_w < C(1)) roi_w = C(1);
      if (roi_h < C(1)) roi_h = C(1);
    }
    const C bin_h = roi_h / C(p.out_h), bin_w = roi_w / C(p.out_w);
    const index_t grid_h = p.sampling_ratio > 0 ? p.sampling_ratio : static_cast<index_t>(std::ceil(roi_h / C(p.out_h)));
    const index_t grid_w = p.sampling_ratio > 0 ? p.sampling_ratio : static_cast<index_t>(std::ceil(roi_w / C(p.out_w)));
    const C count = C(grid_h * grid_w > 0 ? grid_h * grid_w : 1);
    const std::int64_t b = batch_indices[r];
    const bool valid = b >= 0 && b < static_cast<std::int64_t>(p.batch);
    for (index_t c = 0; c < p.channels; ++c) {
      const T* xp = x + (static_cast<index_t>(valid ? b : 0) * p.channels + c) * plane;
      T* yp = y + (r * p.channels + c) * p.out_h * p.out_w;
      if (!valid) {
        for (index_t i = 0; i < p.out_h * p.out_w; ++i) yp[i] = store<T>(C(0));
        continue;
      }
      for (index_t ph = 0; ph < p.out_h; ++ph) {
        for (index_t pw = 0; pw < p.out_w; ++pw) {
          C sum = C(0), best = C(0);
          bool first = true;
          for (index_t iy = 0; iy < grid_h; ++iy) {
            const C sy = start_h + C(ph) * bin_h + (C(iy) + C(0.5)) * bin_h / C(grid_h);
            for (index_t ix = 0; ix < grid_w; ++ix) {
              const C sx = start_w + C(pw) * bin_w + (C(ix) + C(0.5)) * bin_w / C(grid_w);
              const Bilinear<C> b = roi_align_detail::bilinear(sy, sx, p.height, p.width);
              if (!p.max_mode) {
                for (int k = 0; k < 4; ++k) sum += b.weight[k] * load(xp[b.at[k]]);
                continue;
              }
              // "max" takes the largest weighted corner of each sample, then of all samples.
              C v = b.weight[0] * load(xp[b.at[0]]);
              for (int k = 1; k < 4; ++k) {
                const C w = b.weight[k] * load(xp[b.at[k]]);
                if (w > v) v = w;
              }
              if (first || v > best) best = v;
              first = false;
            }
          }
          yp[ph * p.out_w + pw] = store<T>(p.max_mode ? best : sum / count);
        }
      }
    }
  }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_ROI_ALIGN_H
