// Linear and cubic Resize of 8-bit data (onnxc.QLinearResize, what lower-qdq makes of
// DequantizeLinear -> Resize -> QuantizeLinear): the tap tables of onnxc/resize.h, with the
// weights in fixed point. Each axis's weights of one output coordinate are integers summing to
// 2^bits (the compiler rounds them so), and only the last two axes blend several taps, so every
// output inside the input is
//   acc = sum over its taps of W_h W_w x = sum W_h W_w (x - x_zero_point) + x_zero_point 2^shift
// (int32, scale 2^shift) requantized once: round_half_even((acc - x_zero_point 2^shift) / 2^shift)
// + y_zero_point in integers when the input's and output's scales are equal (multiplier 0), else
// quantize_value((acc - x_zero_point 2^shift) * multiplier), the multiplier x_scale / y_scale /
// 2^shift. (The compiler checks that neither sum leaves int32.) Rows are blended as in resize_interpolate_rows: each
// input row a vertical tap needs is resampled along the last axis once into an int32 row of
// scratch and kept while the next output rows use it.
#ifndef ONNXC_QUANT_RESIZE_H
#define ONNXC_QUANT_RESIZE_H

#include <cstdint>
#include <limits>

#include "onnxc/base.h"
#include "onnxc/quant.h"

namespace onnxc {
namespace rt {

constexpr int kMaxQuantResizeRank = 8;
// Vertical taps up to which an output row keeps its resampled input rows (bilinear 2, bicubic 4,
// antialiased shrinking by up to 1/16 about 32); past it they are summed one at a time.
constexpr index_t kQuantResizeKeptRows = 64;

// Bytes of qresize_interpolate's scratch: per vertical tap an int32 row of the output's width
// and the input row it holds.
// (Past kQuantResizeKeptRows taps the rows hold one resampled row and the sums.)
inline index_t qresize_scratch_bytes(index_t taps_h, index_t out_w) {
  return taps_h * static_cast<index_t>(sizeof(index_t)) +
         (taps_h < 2 ? 2 : taps_h) * out_w * static_cast<index_t>(sizeof(std::int32_t));
}

namespace detail {

// h[o] = sum over o's taps of w * x_row[src].
template <class Q>
inline void qresize_width_pass(const Q* x_row, index_t out_w, index_t taps_w, const index_t* sw,
                               const std::int32_t* ww, std::int32_t* h) {
  if (taps_w == 2) {
    for (index_t o = 0; o < out_w; ++o)
      h[o] = ww[2 * o] * static_cast<std::int32_t>(x_row[sw[2 * o]]) +
             ww[2 * o + 1] * static_cast<std::int32_t>(x_row[sw[2 * o + 1]]);
    return;
  }
  for (index_t o = 0; o < out_w; ++o, sw += taps_w, ww += taps_w) {
    std::int32_t sum = 0;
    if (sw[0] >= 0)
      for (index_t t = 0; t < taps_w; ++t) sum += ww[t] * static_cast<std::int32_t>(x_row[sw[t]]);
    h[o] = sum;
  }
}

// round_half_even(acc / 2^shift) + offset, saturated to Q.
template <class Q>
inline Q qresize_round_shift(std::int32_t acc, int shift, std::int32_t offset) {
  std::int32_t q = acc;
  if (shift > 0) {
    const std::int32_t half = std::int32_t{1} << (shift - 1);
    q = (acc + (half - 1) + ((acc >> shift) & 1)) >> shift;  // >> floors: ties go to the even quotient
  }
  q += offset;
  const std::int32_t lo = std::numeric_limits<Q>::lowest(), hi = std::numeric_limits<Q>::max();
  return static_cast<Q>(q < lo ? lo : (q > hi ? hi : q));
}

// One output row: y[o] = requantized sum over the k rows of w[t] * rows[t][o].
template <class Q>
inline void qresize_blend_row(std::int32_t* const* rows, const std::int32_t* w, index_t k, index_t n, int shift,
                              std::int32_t x_zero_point, float multiplier, std::int32_t y_zero_point, Q* y) {
  // x_zero_point 2^shift comes off before the rounding: ties go to the even value of q - zx.
  const std::int32_t x_offset = x_zero_point * (std::int32_t{1} << shift);
  if (k == 2) {  // bilinear
    const std::int32_t w0 = w[0], w1 = w[1];
    const std::int32_t *r0 = rows[0], *r1 = rows[1];
    if (multiplier == 0.0f) {
      for (index_t o = 0; o < n; ++o) y[o] = qresize_round_shift<Q>(w0 * r0[o] + w1 * r1[o] - x_offset, shift, y_zero_point);
    } else {
      for (index_t o = 0; o < n; ++o)
        y[o] = quantize_value<Q>(static_cast<float>(w0 * r0[o] + w1 * r1[o] - x_offset) * multiplier, y_zero_point);
    }
    return;
  }
  for (index_t o = 0; o < n; ++o) {
    std::int32_t acc = 0;
    for (index_t t = 0; t < k; ++t) acc += w[t] * rows[t][o];
    y[o] = multiplier == 0.0f ? qresize_round_shift<Q>(acc - x_offset, shift, y_zero_point)
                              : quantize_value<Q>(static_cast<float>(acc - x_offset) * multiplier, y_zero_point);
  }
}

}  // namespace detail

// y (8-bit, out_shape) from x: tables as resize_interpolate's (src per axis, -1 outside the
// input), weights in fixed point; every axis before the last two has one tap per coordinate.
// scratch: qresize_scratch_bytes(taps of the second-to-last axis, out_shape[rank - 1]) bytes,
// aligned for index_t.
template <class Q>
inline void qresize_interpolate(const Q* x, Q* y, int rank, const index_t* out_shape, const index_t* taps,
                                const index_t* table_start, const index_t* src, const std::int32_t* weight, int shift,
                                std::int32_t x_zero_point, float multiplier, std::int32_t y_zero_point, Q extrapolation,
                                void* scratch) {
  const int w = rank - 1, h = rank - 2;
  const index_t out_w = out_shape[w], taps_w = taps[w];
  const index_t* src_w = src + table_start[w];
  const std::int32_t* weight_w = weight + table_start[w];
  // A rank-1 input is one row: one vertical tap of weight 1 (2^0) at offset 0.
  const index_t one_src = 0;
  const std::int32_t one_weight = 1;
  const index_t out_h = h >= 0 ? out_shape[h] : 1, taps_h = h >= 0 ? taps[h] : 1;
  const index_t* src_h = h >= 0 ? src + table_start[h] : &one_src;
  const std::int32_t* weight_h = h >= 0 ? weight + table_start[h] : &one_weight;
  index_t* key = static_cast<index_t*>(scratch);
  std::int32_t* rows = reinterpret_cast<std::int32_t*>(key + taps_h);
  for (index_t j = 0; j < taps_h; ++j) key[j] = -1;
  bool outside_w = false;
  for (index_t o = 0; o < out_w; ++o) outside_w = outside_w || src_w[o * taps_w] < 0;
  index_t planes = 1;
  for (int d = 0; d < h; ++d) planes *= out_shape[d];
  index_t idx[kMaxQuantResizeRank] = {};
  std::int32_t* row[kQuantResizeKeptRows];  // this output row's resampled rows, when taps_h is small
  std::int32_t** row_of = taps_h <= kQuantResizeKeptRows ? row : nullptr;
  for (index_t plane = 0; plane < planes; ++plane) {
    index_t offset = 0;
    bool inside = true;
    for (int d = 0; d < h; ++d) {
      const index_t s = src[table_start[d] + idx[d]];
      inside = inside && s >= 0;
      offset += s;
    }
    for (index_t oh = 0; oh < out_h; ++oh, y += out_w) {
      const index_t* sh = src_h + oh * taps_h;
      const std::int32_t* wh = weight_h + oh * taps_h;
      if (!inside || sh[0] < 0) {
        for (index_t o = 0; o < out_w; ++o) y[o] = extrapolation;
        continue;
      }
      // Slot j of the scratch holds the resampled input row key[j]. Rows this output row needs
      // that a slot holds stay; the others are resampled into the slots no tap of this row keeps.
      // (Taps of one coordinate read distinct rows, except the weight-0 copies padding a short
      // coordinate, which may share a slot.)
      if (row_of) {
        bool kept[kQuantResizeKeptRows] = {};
        for (index_t t = 0; t < taps_h; ++t) {
          row_of[t] = nullptr;
          for (index_t j = 0; j < taps_h && !row_of[t]; ++j)
            if (key[j] == offset + sh[t]) {
              row_of[t] = rows + j * out_w;
              kept[j] = true;
            }
        }
        index_t free_slot = 0;
        for (index_t t = 0; t < taps_h; ++t) {
          if (row_of[t]) continue;
          while (kept[free_slot]) ++free_slot;
          key[free_slot] = offset + sh[t];
          kept[free_slot] = true;
          row_of[t] = rows + free_slot * out_w;
          detail::qresize_width_pass(x + offset + sh[t], out_w, taps_w, src_w, weight_w, row_of[t]);
          for (index_t u = t + 1; u < taps_h; ++u)
            if (!row_of[u] && sh[u] == sh[t]) row_of[u] = row_of[t];
        }
        detail::qresize_blend_row(row_of, wh, taps_h, out_w, shift, x_zero_point, multiplier, y_zero_point, y);
      } else {  // many vertical taps (antialiased shrinking): one resampled row at a time
        std::int32_t* h_row = rows;
        std::int32_t* acc = rows + out_w;
        for (index_t o = 0; o < out_w; ++o) acc[o] = 0;
        for (index_t t = 0; t < taps_h; ++t) {
          detail::qresize_width_pass(x + offset + sh[t], out_w, taps_w, src_w, weight_w, h_row);
          for (index_t o = 0; o < out_w; ++o) acc[o] += wh[t] * h_row[o];
        }
        const std::int32_t one = 1;
        std::int32_t* sums[1] = {acc};
        detail::qresize_blend_row(sums, &one, 1, out_w, shift, x_zero_point, multiplier, y_zero_point, y);
        for (index_t j = 0; j < taps_h; ++j) key[j] = -1;
      }
      if (outside_w)
        for (index_t o = 0; o < out_w; ++o)
          if (src_w[o * taps_w] < 0) y[o] = extrapolation;
    }
    for (int d = h - 1; d >= 0; --d) {
      if (++idx[d] < out_shape[d]) break;
      idx[d] = 0;
    }
  }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_QUANT_RESIZE_H
