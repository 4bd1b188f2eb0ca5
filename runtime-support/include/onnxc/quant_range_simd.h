// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// DynamicQuantizeLinear's range on SIMD targets (xsimd's vfloat): the running minimum and maximum
// of x, starting at 0, kept per lane with the scalar loop's comparisons (x < lo, x > hi: a NaN
// never enters), then folded across the lanes the same way. The minimum and maximum of a set do
// not depend on the order they are taken in (of +0 and -0, neither replaces the other, and every
// lane starts at +0), so the result is the scalar loop's bit for bit. Included by quant.h on
// ONNXC_SIMD targets.
#ifndef ONNXC_QUANT_RANGE_SIMD_H
#define ONNXC_QUANT_RANGE_SIMD_H

namespace onnxc {
namespace rt {
namespace detail {

inline void dynamic_range(index_t n, const float* x, float* lo_out, float* hi_out) {
  vfloat lo(0.0f), hi(0.0f);
  // The scalar tail starts at `whole`, not at an index carried out of the vector loop: with the
  // carried one GCC's -O3 could not bound the tail's count and warned (aggressive-loop-optimizations).
  const index_t whole = n - n % kFloatLanes;
  for (index_t i = 0; i < whole; i += kFloatLanes) {
    const vfloat v = vfloat::load_unaligned(x + i);
    lo = xsimd::select(v < lo, v, lo);
    hi = xsimd::select(v > hi, v, hi);
  }
  alignas(64) float lanes_lo[kFloatLanes];
  alignas(64) float lanes_hi[kFloatLanes];
  lo.store_aligned(lanes_lo);
  hi.store_aligned(lanes_hi);
  float l = 0.0f, h = 0.0f;
  for (index_t j = 0; j < kFloatLanes; ++j) {
    l = lanes_lo[j] < l ? lanes_lo[j] : l;
    h = lanes_hi[j] > h ? lanes_hi[j] : h;
  }
  for (index_t i = whole; i < n; ++i) {
    l = x[i] < l ? x[i] : l;
    h = x[i] > h ? x[i] : h;
  }
  *lo_out = l;
  *hi_out = h;
}

}  // namespace detail
}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_QUANT_RANGE_SIMD_H
