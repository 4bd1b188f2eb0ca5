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

#include <cstring>
#include <type_traits>

#include "onnxc/base.h"
#include "onnxc/parallel.h"
#include "onnxc/simd.h"

namespace onnxc {
namespace rt {

constexpr int kMaxResizeRank = 8;

// Nearest: one tap per output coordinate; y = x at the summed offsets. An output row whose
// source row is the previous output row's (upsampling along H or any outer axis) copies that
// output row; a last axis that maps every coordinate to itself copies the input row.
template <class T>
inline void resize_nearest(const T* x, T* y, int rank, const index_t* out_shape, const index_t* table_start,
                           const index_t* src, T extrapolation) {
  index_t idx[kMaxResizeRank] = {};
  const int last = rank - 1;
  const index_t row = out_shape[last];
  const index_t* row_src = src + table_start[last];
  bool row_outside = false, row_identity = true;
  for (index_t i = 0; i < row; ++i) {
    row_outside = row_outside || row_src[i] < 0;
    row_identity = row_identity && row_src[i] == i;
  }
  index_t rows = 1;
  for (int d = 0; d < last; ++d) rows *= out_shape[d];
  index_t previous = -1;  // source offset of the previous output row, -1: none or outside
  for (index_t r = 0; r < rows; ++r, y += row) {
    index_t offset = 0;
    bool inside = true;
    for (int d = 0; d < last; ++d) {
      const index_t s = src[table_start[d] + idx[d]];
      inside = inside && s >= 0;
      offset += s;
    }
    if (!inside) {
      for (index_t i = 0; i < row; ++i) y[i] = extrapolation;
      previous = -1;
    } else if (offset == previous) {
      std::memcpy(y, y - row, static_cast<std::size_t>(row) * sizeof(T));
    } else if (row_identity) {
      std::memcpy(y, x + offset, static_cast<std::size_t>(row) * sizeof(T));
      previous = offset;
    } else if (row_outside) {
      for (index_t i = 0; i < row; ++i) y[i] = row_src[i] >= 0 ? x[offset + row_src[i]] : extrapolation;
      previous = offset;
    } else {
      const T* x_row = x + offset;
      for (index_t i = 0; i < row; ++i) y[i] = x_row[row_src[i]];
      previous = offset;
    }
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

// ---- separable linear and cubic: resize_interpolate_rows ----
//
// Every output row (an index over every axis but the last) blends a few input rows, its
// vertical taps (the product of the taps of every axis but the last, zero weights skipped),
// each resampled along the last axis first (the width pass, into scratch). The resampled rows
// are kept by input row: the output rows that share an input row (upsampling: `scale` of them
// in turn) resample it once and only blend, a vectorised multiply-add of whole rows. The same
// taps as resize_interpolate, summed in another order (width first): the results agree to
// float rounding, not bit for bit.

template <class T>
using resize_acc_t = typename std::conditional<std::is_same<compute_t<T>, double>::value, double, float>::type;

// Vertical taps: how many input rows one output row blends at most.
inline index_t resize_vertical_taps(int rank, const index_t* taps) {
  index_t k = 1;
  for (int d = 0; d + 1 < rank; ++d) k *= taps[d];
  return k;
}

// The scratch of resize_interpolate_rows, carved from one block: per vertical tap a resampled
// row of out_w accumulators, the input row it holds (key), the output row that last used it
// (stamp), and the current output row's taps (offset, weight, resampled row).
template <class T>
struct ResizeRowsScratch {
  using Acc = resize_acc_t<T>;
  static constexpr index_t kAlign = 64;
  static index_t round_up(index_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }
  static index_t bytes(index_t k, index_t out_w) {
    return round_up(k * out_w * static_cast<index_t>(sizeof(Acc))) + 3 * round_up(k * static_cast<index_t>(sizeof(index_t))) +
           round_up(k * static_cast<index_t>(sizeof(Acc))) + round_up(k * static_cast<index_t>(sizeof(const Acc*)));
  }
  ResizeRowsScratch(void* scratch, index_t k, index_t out_w) {
    unsigned char* p = static_cast<unsigned char*>(scratch);
    rows = reinterpret_cast<Acc*>(p);
    p += round_up(k * out_w * static_cast<index_t>(sizeof(Acc)));
    key = reinterpret_cast<index_t*>(p);
    p += round_up(k * static_cast<index_t>(sizeof(index_t)));
    stamp = reinterpret_cast<index_t*>(p);
    p += round_up(k * static_cast<index_t>(sizeof(index_t)));
    offset = reinterpret_cast<index_t*>(p);
    p += round_up(k * static_cast<index_t>(sizeof(index_t)));
    weight = reinterpret_cast<Acc*>(p);
    p += round_up(k * static_cast<index_t>(sizeof(Acc)));
    row = reinterpret_cast<const Acc**>(p);
  }
  Acc* rows;
  index_t *key, *stamp, *offset;
  Acc* weight;
  const Acc** row;
};

// Bytes of scratch resize_interpolate_rows needs for an output of out_shape.
template <class T>
inline index_t resize_rows_scratch_bytes(int rank, const index_t* out_shape, const index_t* taps) {
  return ResizeRowsScratch<T>::bytes(resize_vertical_taps(rank, taps), out_shape[rank - 1]);
}

// The width pass: h[o] = sum over o's taps of weight * x_row[src]; columns outside the input
// (src -1, tf_crop_and_resize) are skipped when `outside` (the caller writes them).
template <class T, class Acc>
inline void resize_width_pass(const T* x_row, index_t out_w, index_t taps_w, const index_t* sw, const float* ww,
                              bool outside, Acc* h) {
  if (taps_w == 2 && !outside) {
    for (index_t o = 0; o < out_w; ++o, sw += 2, ww += 2)
      h[o] = static_cast<Acc>(ww[0]) * static_cast<Acc>(load(x_row[sw[0]])) +
             static_cast<Acc>(ww[1]) * static_cast<Acc>(load(x_row[sw[1]]));
    return;
  }
  for (index_t o = 0; o < out_w; ++o, sw += taps_w, ww += taps_w) {
    Acc sum = 0;
    if (!outside || sw[0] >= 0)
      for (index_t t = 0; t < taps_w; ++t) sum += static_cast<Acc>(ww[t]) * static_cast<Acc>(load(x_row[sw[t]]));
    h[o] = sum;
  }
}

// The blend, portable: y[i] = sum_j w[j] * rows[j][i] (0 when there are no rows).
template <class T, class Acc>
inline void resize_blend_rows(const Acc* const* rows, const Acc* w, index_t k, index_t n, T* y) {
  for (index_t i = 0; i < n; ++i) {
    Acc sum = 0;
    for (index_t j = 0; j < k; ++j) sum += w[j] * rows[j][i];
    y[i] = store<T>(static_cast<compute_t<T>>(sum));
  }
}

// An input row read as resampled when the last axis is copied as it is (float data only).
template <class T, class Acc>
inline const Acc* resize_row_as_is(const T*) { return nullptr; }
template <>
inline const float* resize_row_as_is<float, float>(const float* x) { return x; }

}  // namespace rt
}  // namespace onnxc

#if defined(ONNXC_SIMD)
#include "onnxc/resize_rows_simd.h"
#endif

namespace onnxc {
namespace rt {

// Float data on SIMD targets blends with resize_rows_simd.h.
template <class T, class Acc>
inline void resize_blend(const Acc* const* rows, const Acc* w, index_t k, index_t n, T* y) {
#if defined(ONNXC_SIMD)
  if (std::is_same<T, float>::value && std::is_same<Acc, float>::value) {
    resize_blend_rows_simd(reinterpret_cast<const float* const*>(rows), reinterpret_cast<const float*>(w), k, n,
                           reinterpret_cast<float*>(y));
    return;
  }
#endif
  resize_blend_rows(rows, w, k, n, y);
}

// Output rows [first, last) of resize_interpolate_rows, with one task's scratch.
template <class T>
inline void resize_interpolate_row_range(const T* x, T* y, int rank, const index_t* out_shape, const index_t* taps,
                                         const index_t* table_start, const index_t* src, const float* weight,
                                         T extrapolation, void* scratch, index_t first, index_t last) {
  using Acc = resize_acc_t<T>;
  const int w = rank - 1;
  const index_t out_w = out_shape[w], taps_w = taps[w];
  const index_t* src_w = src + table_start[w];
  const float* weight_w = weight + table_start[w];
  const index_t k_max = resize_vertical_taps(rank, taps);
  ResizeRowsScratch<T> s(scratch, k_max, out_w);
  bool outside_w = false;
  bool as_is = taps_w == 1 && resize_row_as_is<T, Acc>(x) != nullptr;
  for (index_t o = 0; o < out_w; ++o) {
    outside_w = outside_w || src_w[o * taps_w] < 0;
    as_is = as_is && src_w[o] == o && weight_w[o] == 1.0f;
  }
  for (index_t j = 0; j < k_max; ++j) s.key[j] = s.stamp[j] = -1;
  index_t idx[kMaxResizeRank] = {};
  index_t rest = first;
  for (int d = w - 1; d >= 0; --d) {
    idx[d] = rest % out_shape[d];
    rest /= out_shape[d];
  }
  y += first * out_w;
  for (index_t r = first; r < last; ++r, y += out_w) {
    bool inside = true;
    for (int d = 0; d < w; ++d) inside = inside && src[table_start[d] + idx[d] * taps[d]] >= 0;
    if (inside) {
      // This row's vertical taps: every combination of the taps of the axes before the last.
      index_t n = 0, tap[kMaxResizeRank] = {};
      for (;;) {
        index_t offset = 0;
        Acc wt = 1;
        for (int d = 0; d < w; ++d) {
          const index_t at = table_start[d] + idx[d] * taps[d] + tap[d];
          offset += src[at];
          wt *= static_cast<Acc>(weight[at]);
        }
        if (wt != 0) {
          s.offset[n] = offset;
          s.weight[n++] = wt;
        }
        int d = w - 1;
        while (d >= 0 && ++tap[d] == taps[d]) tap[d--] = 0;
        if (d < 0) break;
      }
      // Their resampled rows: kept ones first (stamped as in use), then the others resampled
      // into rows this output row does not use.
      for (index_t j = 0; j < n; ++j) {
        s.row[j] = nullptr;
        if (as_is) {
          s.row[j] = resize_row_as_is<T, Acc>(x + s.offset[j]);
          continue;
        }
        for (index_t slot = 0; slot < k_max; ++slot)
          if (s.key[slot] == s.offset[j]) {
            s.stamp[slot] = r;
            s.row[j] = s.rows + slot * out_w;
            break;
          }
      }
      for (index_t j = 0; j < n; ++j) {
        if (s.row[j]) continue;
        index_t slot = 0;
        while (s.key[slot] != s.offset[j] && s.stamp[slot] == r) ++slot;
        Acc* h = s.rows + slot * out_w;
        if (s.key[slot] != s.offset[j])
          resize_width_pass(x + s.offset[j], out_w, taps_w, src_w, weight_w, outside_w, h);
        s.key[slot] = s.offset[j];
        s.stamp[slot] = r;
        s.row[j] = h;
      }
      resize_blend(s.row, s.weight, n, out_w, y);
      if (outside_w)
        for (index_t o = 0; o < out_w; ++o)
          if (src_w[o * taps_w] < 0) y[o] = extrapolation;
    } else {
      for (index_t o = 0; o < out_w; ++o) y[o] = extrapolation;
    }
    for (int d = w - 1; d >= 0; --d) {
      if (++idx[d] < out_shape[d]) break;
      idx[d] = 0;
    }
  }
}

// Linear and cubic through per-row blends of resampled input rows (see above); `scratch` holds
// `tasks` slots of resize_rows_scratch_bytes<T>(...) bytes each (resize_rows_slot_bytes apart),
// aligned for index_t and pointers. The output rows are cut into `tasks` ranges, each with its
// own slot: tasks of the caller's parallel-for, or in turn on this thread without one. A range
// resamples its first rows anew; each output row's value does not depend on the cut.
template <class T>
inline index_t resize_rows_slot_bytes(int rank, const index_t* out_shape, const index_t* taps) {
  return ResizeRowsScratch<T>::round_up(resize_rows_scratch_bytes<T>(rank, out_shape, taps));
}
template <class T>
inline void resize_interpolate_rows(const T* x, T* y, int rank, const index_t* out_shape, const index_t* taps,
                                    const index_t* table_start, const index_t* src, const float* weight,
                                    T extrapolation, void* scratch, Parallel parallel = nullptr, index_t tasks = 1) {
  index_t rows = 1;
  for (int d = 0; d + 1 < rank; ++d) rows *= out_shape[d];
  const index_t slot = resize_rows_slot_bytes<T>(rank, out_shape, taps);
  parallel_for(parallel, tasks < 1 ? 1 : tasks, [&](index_t t) {
    const Range r = part_of(rows, tasks < 1 ? 1 : tasks, t);
    resize_interpolate_row_range(x, y, rank, out_shape, taps, table_start, src, weight, extrapolation,
                                 static_cast<unsigned char*>(scratch) + t * slot, r.begin, r.end);
  });
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_RESIZE_H
