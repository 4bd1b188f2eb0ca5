// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// Softmax and LogSoftmax of float on xsimd targets: normalization.h includes this header under
// ONNXC_SIMD (include that one).
//
// The exponentials are math_simd.h's exp_vec (within 2 ulp of float64's).
//
// The lanes of a Softmax are either rows (inner == 1: vectors along the row, the tail masked) or
// columns of `inner` contiguous lanes (vectors across the lanes, one row of vectors at a time).
// Sums run in vector accumulators over blocks of kSumBlock elements per lane, as blocked_sum.
#ifndef ONNXC_SOFTMAX_SIMD_H
#define ONNXC_SOFTMAX_SIMD_H

#include <limits>

#include "onnxc/math_simd.h"
#include "onnxc/numeric.h"
#include "onnxc/simd.h"

namespace onnxc {
namespace rt {
namespace softmax_detail {

// Lane j < cols is true.
inline xsimd::batch_bool<float> first_lanes(index_t cols) {
  alignas(64) float index[kFloatLanes];
  for (index_t j = 0; j < kFloatLanes; ++j) index[j] = static_cast<float>(j);
  return vfloat::load_aligned(index) < vfloat(static_cast<float>(cols));
}

inline float row_max(const float* x, index_t n) {
  const vfloat lowest(-std::numeric_limits<float>::infinity());
  vfloat mx = lowest;
  index_t j = 0;
  for (; j + kFloatLanes <= n; j += kFloatLanes) mx = xsimd::max(mx, vfloat::load_unaligned(x + j));
  if (j < n) mx = xsimd::max(mx, xsimd::select(first_lanes(n - j), load_partial(x + j, n - j), lowest));
  // A NaN the max skips still makes the row NaN, through the sum.
  alignas(64) float lanes[kFloatLanes];
  mx.store_aligned(lanes);
  float m = lanes[0];
  for (index_t l = 1; l < kFloatLanes; ++l) m = lanes[l] > m ? lanes[l] : m;
  return m;
}

// Sum of exp(x[j] - mx) over the row, each exponential also stored to y when store is true.
template <bool Store>
inline float row_exp_sum(const float* x, float* y, index_t n, float mx) {
  const vfloat vm(mx);
  vfloat total(0.0f);
  index_t j = 0;
  const index_t whole = n - n % kFloatLanes;
  while (j < whole) {
    const index_t end = whole - j > kSumBlock ? j + kSumBlock : whole;
    vfloat block(0.0f);
    for (; j < end; j += kFloatLanes) {
      const vfloat e = exp_vec(vfloat::load_unaligned(x + j) - vm);
      if (Store) e.store_unaligned(y + j);
      block += e;
    }
    total += block;
  }
  if (j < n) {
    const vfloat e = xsimd::select(first_lanes(n - j), exp_vec(load_partial(x + j, n - j) - vm), vfloat(0.0f));
    if (Store) store_partial(e, y + j, n - j);
    total += e;
  }
  return xsimd::hadd(total);
}

inline void scale_row(float* y, index_t n, float s) {
  const vfloat vs(s);
  index_t j = 0;
  for (; j + kFloatLanes <= n; j += kFloatLanes) (vfloat::load_unaligned(y + j) * vs).store_unaligned(y + j);
  if (j < n) store_partial(load_partial(y + j, n - j) * vs, y + j, n - j);
}

inline void shift_row(const float* x, float* y, index_t n, float s) {
  const vfloat vs(s);
  index_t j = 0;
  for (; j + kFloatLanes <= n; j += kFloatLanes) (vfloat::load_unaligned(x + j) - vs).store_unaligned(y + j);
  if (j < n) store_partial(load_partial(x + j, n - j) - vs, y + j, n - j);
}

// Softmax (Log: LogSoftmax) over n rows `inner` apart of `cols` (<= kFloatLanes) contiguous lanes.
template <bool Log>
inline void softmax_columns(const float* x, float* y, index_t n, index_t inner, index_t cols) {
  auto ld = [=](const float* p) { return cols == kFloatLanes ? vfloat::load_unaligned(p) : load_partial(p, cols); };
  auto st = [=](vfloat v, float* p) {
    if (cols == kFloatLanes) v.store_unaligned(p);
    else store_partial(v, p, cols);
  };
  vfloat mx = ld(x);
  for (index_t j = 1; j < n; ++j) mx = xsimd::max(mx, ld(x + j * inner));
  vfloat total(0.0f);
  for (index_t b = 0; b < n; b += kSumBlock) {
    const index_t end = n - b > kSumBlock ? b + kSumBlock : n;
    vfloat block(0.0f);
    for (index_t j = b; j < end; ++j) {
      const vfloat e = exp_vec(ld(x + j * inner) - mx);
      if (!Log) st(e, y + j * inner);
      block += e;
    }
    total += block;
  }
  if (Log) {
    const vfloat offset = mx + xsimd::log(total);
    for (index_t j = 0; j < n; ++j) st(ld(x + j * inner) - offset, y + j * inner);
  } else {
    const vfloat inv = vfloat(1.0f) / total;
    for (index_t j = 0; j < n; ++j) st(ld(y + j * inner) * inv, y + j * inner);
  }
}

}  // namespace softmax_detail

// x is [outer, n, inner], normalised along n; y may alias x.
template <bool Log>
inline void softmax_simd(const float* x, float* y, index_t outer, index_t n, index_t inner) {
  using namespace softmax_detail;
  if (n == 0) return;
  for (index_t o = 0; o < outer; ++o) {
    const float* xo = x + o * n * inner;
    float* yo = y + o * n * inner;
    if (inner == 1) {
      const float mx = row_max(xo, n);
      if (Log) {
        const float sum = row_exp_sum<false>(xo, yo, n, mx);
        shift_row(xo, yo, n, mx + std::log(sum));
      } else {
        const float sum = row_exp_sum<true>(xo, yo, n, mx);
        scale_row(yo, n, 1.0f / sum);
      }
      continue;
    }
    for (index_t i = 0; i < inner; i += kFloatLanes)
      softmax_columns<Log>(xo + i, yo + i, n, inner, inner - i < kFloatLanes ? inner - i : kFloatLanes);
  }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_SOFTMAX_SIMD_H
