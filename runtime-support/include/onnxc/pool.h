// Pooling (MaxPool, AveragePool, global pools) over 1, 2 or 3 spatial dims, NCHW layout,
// normalised to three spatial dims like conv.h.
#ifndef ONNXC_POOL_H
#define ONNXC_POOL_H

#include <limits>

#include "onnxc/base.h"

namespace onnxc {
namespace rt {

struct PoolParams {
  index_t planes;  // batch * channels
  index_t in_d, in_h, in_w;
  index_t out_d, out_h, out_w;
  index_t k_d, k_h, k_w;
  index_t stride_d, stride_h, stride_w;
  index_t dilation_d, dilation_h, dilation_w;
  index_t pad_d, pad_h, pad_w;           // padding before each dim
  index_t pad_d_end, pad_h_end, pad_w_end;  // explicit padding after each dim
  bool count_include_pad;                // AveragePool: divide by the padded window size
};

// y = max over each window; indices (optional, may be nullptr) gets the flat index of the max
// in the input, in row-major (storage_order 0) or column-major (1) order of the spatial dims.
template <class T>
inline void max_pool(const PoolParams& p, const T* x, T* y, std::int64_t* indices, int storage_order) {
  using C = compute_t<T>;
  const index_t in_plane = p.in_d * p.in_h * p.in_w, out_plane = p.out_d * p.out_h * p.out_w;
  for (index_t c = 0; c < p.planes; ++c) {
    const T* xp = x + c * in_plane;
    for (index_t od = 0; od < p.out_d; ++od)
      for (index_t oh = 0; oh < p.out_h; ++oh)
        for (index_t ow = 0; ow < p.out_w; ++ow) {
          C best = -std::numeric_limits<C>::infinity();
          index_t best_at = -1;
          for (index_t kd = 0; kd < p.k_d; ++kd) {
            const index_t id = od * p.stride_d - p.pad_d + kd * p.dilation_d;
            if (id < 0 || id >= p.in_d) continue;
            for (index_t kh = 0; kh < p.k_h; ++kh) {
              const index_t ih = oh * p.stride_h - p.pad_h + kh * p.dilation_h;
              if (ih < 0 || ih >= p.in_h) continue;
              for (index_t kw = 0; kw < p.k_w; ++kw) {
                const index_t iw = ow * p.stride_w - p.pad_w + kw * p.dilation_w;
                if (iw < 0 || iw >= p.in_w) continue;
                const index_t at = (id * p.in_h + ih) * p.in_w + iw;
                const C v = load(xp[at]);
                if (best_at < 0 || v > best) {
                  best = v;
                  best_at = storage_order == 0 ? at : (iw * p.in_h + ih) * p.in_d + id;
                }
              }
            }
          }
          const index_t o = c * out_plane + (od * p.out_h + oh) * p.out_w + ow;
          y[o] = store<T>(best);
          if (indices) indices[o] = static_cast<std::int64_t>(c * in_plane + best_at);
        }
  }
}

template <class T>
inline void average_pool(const PoolParams& p, const T* x, T* y) {
  using C = compute_t<T>;
  const index_t in_plane = p.in_d * p.in_h * p.in_w, out_plane = p.out_d * p.out_h * p.out_w;
  for (index_t c = 0; c < p.planes; ++c) {
    const T* xp = x + c * in_plane;
    for (index_t od = 0; od < p.out_d; ++od)
      for (index_t oh = 0; oh < p.out_h; ++oh)
        for (index_t ow = 0; ow < p.out_w; ++ow) {
          C sum = C(0);
          index_t count = 0, padded = 0;
          for (index_t kd = 0; kd < p.k_d; ++kd) {
            const index_t id = od * p.stride_d - p.pad_d + kd * p.dilation_d;
            const bool d_in_pad = id >= -p.pad_d && id < p.in_d + p.pad_d_end;
            for (index_t kh = 0; kh < p.k_h; ++kh) {
              const index_t ih = oh * p.stride_h - p.pad_h + kh * p.dilation_h;
              const bool h_in_pad = ih >= -p.pad_h && ih < p.in_h + p.pad_h_end;
              for (index_t kw = 0; kw < p.k_w; ++kw) {
                const index_t iw = ow * p.stride_w - p.pad_w + kw * p.dilation_w;
                const bool w_in_pad = iw >= -p.pad_w && iw < p.in_w + p.pad_w_end;
                if (d_in_pad && h_in_pad && w_in_pad) ++padded;
                if (id < 0 || id >= p.in_d || ih < 0 || ih >= p.in_h || iw < 0 || iw >= p.in_w) continue;
                sum += load(xp[(id * p.in_h + ih) * p.in_w + iw]);
                ++count;
              }
            }
          }
          const index_t div = p.count_include_pad ? padded : count;
          y[c * out_plane + (od * p.out_h + oh) * p.out_w + ow] =
              store<T>(div > 0 ? sum / static_cast<C>(div) : C(0));
        }
  }
}

// y[c] = mean of x's plane c (GlobalAveragePool).
template <class T>
inline void global_average_pool(index_t planes, index_t plane_size, const T* x, T* y) {
  using C = compute_t<T>;
  for (index_t c = 0; c < planes; ++c) {
    C sum = C(0);
    for (index_t i = 0; i < plane_size; ++i) sum += load(x[c * plane_size + i]);
    y[c] = store<T>(sum / static_cast<C>(plane_size));
  }
}

// y[c] = max of x's plane c (GlobalMaxPool).
template <class T>
inline void global_max_pool(index_t planes, index_t plane_size, const T* x, T* y) {
  using C = compute_t<T>;
  for (index_t c = 0; c < planes; ++c) {
    C best = load(x[c * plane_size]);
    for (index_t i = 1; i < plane_size; ++i) {
      const C v = load(x[c * plane_size + i]);
      if (v > best) best = v;
    }
    y[c] = store<T>(best);
  }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_POOL_H
