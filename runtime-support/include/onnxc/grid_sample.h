// GridSample: samples X at the normalized positions a grid gives, 2 or 3 spatial dims
// (normalised to three: depth, height, width; 2-D has depth 1 and no depth coordinate).
//
// Every interpolation mode is separable: along each dim a position becomes up to four
// (pixel, weight) taps, and the output is the sum over all combinations of a tap per dim of the
// weights' product times the pixel, with pixels outside X resolved by the padding mode.
#ifndef ONNXC_GRID_SAMPLE_H
#define ONNXC_GRID_SAMPLE_H

#include <cmath>

#include "onnxc/base.h"

namespace onnxc {
namespace rt {

enum class GridSampleMode : int { Linear, Nearest, Cubic };
enum class GridSamplePadding : int { Zeros, Border, Reflection };

struct GridSampleParams {
  index_t batch, channels;
  index_t in_d, in_h, in_w;
  index_t out_d, out_h, out_w;
  index_t coords;  // grid's last dim: 2 (x, y) or 3 (x, y, z)
  GridSampleMode mode;
  GridSamplePadding padding;
  bool align_corners;  // -1 and 1 are the centres of the corner pixels, not their outer edges
};

namespace grid_sample_detail {

template <class C> struct Taps {
  index_t at[4];
  C weight[4];
  int count;
};

// Pixel position of a normalized coordinate in [-1, 1] along a dim of `size` pixels.
template <class C> inline C denormalize(C n, index_t size, bool align_corners) {
  const C s = static_cast<C>(size);
  return align_corners ? (n + C(1)) / C(2) * (s - C(1)) : ((n + C(1)) * s - C(1)) / C(2);
}

// Cubic convolution weights (Keys, a = -0.75) of the taps at floor(x) - 1 .. floor(x) + 2,
// t being x - floor(x).
template <class C> inline void cubic_weights(C t, C* w) {
  const C a = C(-0.75);
  auto near = [a](C d) { return ((a + C(2)) * d - (a + C(3))) * d * d + C(1); };          // |d| <= 1
  auto far = [a](C d) { return ((a * d - C(5) * a) * d + C(8) * a) * d - C(4) * a; };     // 1 < |d| < 2
  w[0] = far(t + C(1));
  w[1] = near(t);
  w[2] = near(C(1) - t);
  w[3] = far(C(2) - t);
}

template <class C> inline Taps<C> taps(C x, GridSampleMode mode) {
  Taps<C> t{};
  const C lo = std::floor(x);
  const index_t base = static_cast<index_t>(lo);
  switch (mode) {
    case GridSampleMode::Nearest:
      t.count = 1;
      t.at[0] = static_cast<index_t>(std::nearbyint(x));  // ties to even
      t.weight[0] = C(1);
      break;
    case GridSampleMode::Linear:
      t.count = 2;
      t.at[0] = base;
      t.at[1] = base + 1;
      t.weight[0] = C(1) - (x - lo);
      t.weight[1] = x - lo;
      break;
    case GridSampleMode::Cubic:
      t.count = 4;
      for (int i = 0; i < 4; ++i) t.at[i] = base - 1 + i;
      cubic_weights(x - lo, t.weight);
      break;
  }
  return t;
}

// Folds position `at` into [lo, hi] by reflecting at the borders (as often as needed).
template <class C> inline C reflect(C at, C lo, C hi) {
  const C range = hi - lo;
  if (range <= C(0)) return lo;
  if (at < lo || at > hi) {
    const C past = at < lo ? lo - at : at - hi;
    const index_t flips = static_cast<index_t>(past / range);
    const C rest = past - static_cast<C>(flips) * range;
    // An even number of whole flips leaves the position mirrored about the border it crossed.
    const bool measured_from_lo = (at < lo) == (flips % 2 == 0);
    return measured_from_lo ? lo + rest : hi - rest;
  }
  return at;
}

// Resolves pixel `at` of a dim of `size` under the padding mode; -1 means "reads zero".
template <class C> inline index_t resolve(index_t at, index_t size, const GridSampleParams& p) {
  if (at >= 0 && at < size) return at;
  switch (p.padding) {
    case GridSamplePadding::Zeros: return -1;
    case GridSamplePadding::Border: return at < 0 ? 0 : size - 1;
    case GridSamplePadding::Reflection: {
      // Reflect about the borders of the sampling range: the outer pixel edges, or with
      // align_corners the corner pixels' centres.
      const C lo = p.align_corners ? C(0) : C(-0.5), hi = p.align_corners ? C(size - 1) : C(size) - C(0.5);
      const index_t r = static_cast<index_t>(reflect(static_cast<C>(at), lo, hi));
      return r < 0 ? 0 : (r >= size ? size - 1 : r);
    }
  }
  return -1;
}

}  // namespace grid_sample_detail

// x: [batch, channels, in_d, in_h, in_w]; grid: [batch, out_d, out_h, out_w, coords];
// y: [batch, channels, out_d, out_h, out_w].
template <class T>
inline void grid_sample(const GridSampleParams& p, const T* x, const T* grid, T* y) {
  using C = compute_t<T>;
  using namespace grid_sample_detail;
  const index_t in_plane = p.in_d * p.in_h * p.in_w, out_plane = p.out_d * p.out_h * p.out_w;
  for (index_t n = 0; n < p.batch; ++n) {
    for (index_t o = 0; o < out_plane; ++o) {
      const T* g = grid + (n * out_plane + o) * p.coords;
      const Taps<C> tw = taps(denormalize(load(g[0]), p.in_w, p.align_corners), p.mode);
      const Taps<C> th = taps(denormalize(load(g[1]), p.in_h, p.align_corners), p.mode);
      Taps<C> td{{0, 0, 0, 0}, {C(1), C(0), C(0), C(0)}, 1};
      if (p.coords == 3) td = taps(denormalize(load(g[2]), p.in_d, p.align_corners), p.mode);
      for (index_t c = 0; c < p.channels; ++c) {
        const T* xp = x + (n * p.channels + c) * in_plane;
        C acc = C(0);
        for (int i = 0; i < td.count; ++i) {
          const index_t id = resolve<C>(td.at[i], p.in_d, p);
          for (int j = 0; j < th.count; ++j) {
            const index_t ih = resolve<C>(th.at[j], p.in_h, p);
            for (int k = 0; k < tw.count; ++k) {
              const index_t iw = resolve<C>(tw.at[k], p.in_w, p);
              if (id < 0 || ih < 0 || iw < 0) continue;
              acc += td.weight[i] * th.weight[j] * tw.weight[k] * load(xp[(id * p.in_h + ih) * p.in_w + iw]);
            }
          }
        }
        y[(n * p.channels + c) * out_plane + o] = store<T>(acc);
      }
    }
  }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_GRID_SAMPLE_H
