// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// LayerNormalization of float with float statistics on xsimd targets: normalization.h includes
// this header under ONNXC_SIMD (include that one).
//
// Each row as the reference does it (the mean, then the mean squared deviation, then
// y = (x - mean) * inv_std * scale + bias), a vector at a time with a masked tail. The sums run in
// vector accumulators over blocks of kSumBlock elements, as blocked_sum.
#ifndef ONNXC_LAYER_NORM_SIMD_H
#define ONNXC_LAYER_NORM_SIMD_H

#include <cmath>

#include "onnxc/numeric.h"
#include "onnxc/simd.h"

namespace onnxc {
namespace rt {
namespace layer_norm_detail {

// The sum of term(v) over the row's vectors (the tail's missing lanes zero before term: term(0)
// must be 0 for them, or `tail_mask` is applied).
template <class F>
inline float row_sum(const float* x, index_t n, F term) {
  vfloat total(0.0f);
  index_t j = 0;
  const index_t whole = n - n % kFloatLanes;
  while (j < whole) {
    const index_t end = whole - j > kSumBlock ? j + kSumBlock : whole;
    vfloat block(0.0f);
    for (; j < end; j += kFloatLanes) block += term(vfloat::load_unaligned(x + j));
    total += block;
  }
  if (j < n) {
    alignas(64) float index[kFloatLanes];
    for (index_t l = 0; l < kFloatLanes; ++l) index[l] = static_cast<float>(l);
    const auto valid = vfloat::load_aligned(index) < vfloat(static_cast<float>(n - j));
    total += xsimd::select(valid, term(load_partial(x + j, n - j)), vfloat(0.0f));
  }
  return xsimd::hadd(total);
}

}  // namespace layer_norm_detail

// x, y are [outer, n]; scale and bias (bias may be null) hold n values, or 1 to broadcast.
inline void layer_norm_simd(const float* x, const float* scale, const float* bias, float* y, float* mean_out,
                            float* inv_std_out, index_t outer, index_t n, index_t scale_n, index_t bias_n,
                            float epsilon) {
  using layer_norm_detail::row_sum;
  for (index_t o = 0; o < outer; ++o) {
    const float* xr = x + o * n;
    float* yr = y + o * n;
    const float mean = row_sum(xr, n, [](vfloat v) { return v; }) / static_cast<float>(n);
    const vfloat vmean(mean);
    const float sq = row_sum(xr, n, [vmean](vfloat v) {
      const vfloat d = v - vmean;
      return d * d;
    });
    const float inv = 1.0f / std::sqrt(sq / static_cast<float>(n) + epsilon);
    if (mean_out) mean_out[o] = mean;
    if (inv_std_out) inv_std_out[o] = inv;
    const vfloat vinv(inv);
    auto at = [](const float* p, index_t count, index_t j, index_t cols) {
      if (count == 1) return vfloat(p[0]);
      return cols == kFloatLanes ? vfloat::load_unaligned(p + j) : load_partial(p + j, cols);
    };
    for (index_t j = 0; j < n; j += kFloatLanes) {
      const index_t cols = n - j < kFloatLanes ? n - j : kFloatLanes;
      const vfloat v = cols == kFloatLanes ? vfloat::load_unaligned(xr + j) : load_partial(xr + j, cols);
      vfloat r = ((v - vmean) * vinv) * at(scale, scale_n, j, cols);
      if (bias) r += at(bias, bias_n, j, cols);
      if (cols == kFloatLanes) r.store_unaligned(yr + j);
      else store_partial(r, yr + j, cols);
    }
  }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_LAYER_NORM_SIMD_H
