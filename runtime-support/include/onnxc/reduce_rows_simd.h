// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// The row step of reduce.h's row form for float on SIMD targets (xsimd's vfloat): acc[j] =
// step(acc[j], row[j]) for j < w, whole vectors along the contiguous kept axis and the tail one
// lane at a time. Each lane takes the same operations in the same order as the scalar loop, so
// the results are those of the portable kernel bit for bit. Included by reduce.h on ONNXC_SIMD targets.
#ifndef ONNXC_REDUCE_ROWS_SIMD_H
#define ONNXC_REDUCE_ROWS_SIMD_H

namespace onnxc {
namespace rt {
namespace reduce_simd {

template <class Step>
inline void fold_row(float* acc, const float* row, index_t w, Step step) {
  index_t j = 0;
  for (; j + 2 * kFloatLanes <= w; j += 2 * kFloatLanes) {
    const vfloat a = step(vfloat::load_unaligned(acc + j), vfloat::load_unaligned(row + j));
    const vfloat b = step(vfloat::load_unaligned(acc + j + kFloatLanes), vfloat::load_unaligned(row + j + kFloatLanes));
    a.store_unaligned(acc + j);
    b.store_unaligned(acc + j + kFloatLanes);
  }
  for (; j + kFloatLanes <= w; j += kFloatLanes)
    step(vfloat::load_unaligned(acc + j), vfloat::load_unaligned(row + j)).store_unaligned(acc + j);
  for (; j < w; ++j) acc[j] = step(acc[j], row[j]);
}

// step folded over x[0..n) (ReduceMax and ReduceMin over contiguous elements): lanes start at
// `start` and fold whole vectors, the tail enters a vector padded with `start`, and the lanes are
// folded at the end. NaN wins wherever it is, as in the scalar walk; of equal values (+0 and -0)
// the one kept may differ from the walk's first.
template <class Step>
inline float fold_contiguous(const float* x, index_t n, float start, Step step) {
  vfloat acc(start);
  index_t i = 0;
  for (; i + kFloatLanes <= n; i += kFloatLanes) acc = step(acc, vfloat::load_unaligned(x + i));
  alignas(64) float lanes[kFloatLanes];
  if (i < n) {
    for (index_t l = 0; l < kFloatLanes; ++l) lanes[l] = i + l < n ? x[i + l] : start;
    acc = step(acc, vfloat::load_aligned(lanes));
  }
  acc.store_aligned(lanes);
  float r = start;
  for (index_t l = 0; l < kFloatLanes; ++l) r = step(r, lanes[l]);
  return r;
}

// ReduceMax and ReduceMin whose reduced elements per output are a short contiguous run (at most
// this many) or strided: the outputs go kFloatLanes at a time, one lane each, instead of one
// output at a time across the lanes.
constexpr index_t kShortRowMax = 4 * kFloatLanes;

// y[r] = step folded over the reduced elements from x + r * stride, for r < rows (step's start
// `start`; reduced(f) calls f(offset) for each of them in the general walk's order): a lane per
// output, a gathered vector per reduced element; the last, partial vector's spare lanes read its
// last output again and are not stored.
template <class Step, class Reduced>
inline void fold_lanes(const float* x, index_t rows, index_t stride, const Reduced& reduced, float start, Step step,
                       float* y) {
  using vint = xsimd::batch<int32_t>;
  alignas(64) int32_t lane_rows[kFloatLanes];
  for (index_t r = 0; r < rows; r += kFloatLanes) {
    const index_t lanes = rows - r < kFloatLanes ? rows - r : kFloatLanes;
    if (r == 0 || lanes < kFloatLanes)
      for (index_t l = 0; l < kFloatLanes; ++l) lane_rows[l] = static_cast<int32_t>((l < lanes ? l : lanes - 1) * stride);
    const vint index = vint::load_aligned(lane_rows);
    const float* base = x + r * stride;
    vfloat acc(start);
    reduced([&](index_t o) { acc = step(acc, vfloat::gather(base + o, index)); });
    if (lanes == kFloatLanes) acc.store_unaligned(y + r);
    else store_partial(acc, y + r, lanes);
  }
}

// ReduceLogSumExp in lanes as fold_lanes: y[r] = log(sum of exp(v - m)) + m, m the max of
// output r's elements (NaN winning; an infinite m is not subtracted, as the general walk does),
// the exponentials in vectors (math_simd.h's exp_vec, within 2 ulp).
template <class Reduced>
inline void log_sum_exp_lanes(const float* x, index_t rows, index_t stride, const Reduced& reduced, float* y) {
  using vint = xsimd::batch<int32_t>;
  alignas(64) int32_t lane_rows[kFloatLanes];
  alignas(64) float lanes_out[kFloatLanes];
  const vfloat lowest(-std::numeric_limits<float>::infinity());
  for (index_t r = 0; r < rows; r += kFloatLanes) {
    const index_t lanes = rows - r < kFloatLanes ? rows - r : kFloatLanes;
    for (index_t l = 0; l < kFloatLanes; ++l) lane_rows[l] = static_cast<int32_t>((l < lanes ? l : lanes - 1) * stride);
    const vint index = vint::load_aligned(lane_rows);
    const float* base = x + r * stride;
    vfloat top = lowest;
    reduced([&](index_t o) {
      const vfloat v = vfloat::gather(base + o, index);
      top = xsimd::select((v > top) | xsimd::isnan(v), v, top);
    });
    const vfloat shift = xsimd::select(xsimd::isfinite(top), top, vfloat(0.0f));
    vfloat sum(0.0f);
    reduced([&](index_t o) { sum += exp_vec(vfloat::gather(base + o, index) - shift); });
    (xsimd::log(sum) + shift).store_aligned(lanes_out);
    for (index_t l = 0; l < lanes; ++l) y[r + l] = lanes_out[l];
  }
}

}  // namespace reduce_simd
}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_REDUCE_ROWS_SIMD_H
