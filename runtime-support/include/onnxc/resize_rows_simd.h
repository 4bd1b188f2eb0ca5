// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// The blend of resize_interpolate_rows on SIMD targets (xsimd's vfloat: AVX-512, AVX2, NEON):
// y = sum_j w[j] * rows[j], a vector of outputs at a time, one FMA per row and vector, the
// tail through a partial load and store. Included by resize.h on ONNXC_SIMD targets.
#ifndef ONNXC_RESIZE_ROWS_SIMD_H
#define ONNXC_RESIZE_ROWS_SIMD_H

namespace onnxc {
namespace rt {

inline void resize_blend_rows_simd(const float* const* rows, const float* w, index_t k, index_t n, float* y) {
  if (k == 0) {
    for (index_t i = 0; i < n; ++i) y[i] = 0;
    return;
  }
  const float* r0 = rows[0];
  const vfloat w0(w[0]);
  if (k == 1) {
    index_t i = 0;
    for (; i + kFloatLanes <= n; i += kFloatLanes) (w0 * vfloat::load_unaligned(r0 + i)).store_unaligned(y + i);
    if (i < n) store_partial(w0 * load_partial(r0 + i, n - i), y + i, n - i);
    return;
  }
  if (k == 2) {  // linear along one axis: the usual case, without the loop over rows
    const float* r1 = rows[1];
    const vfloat w1(w[1]);
    index_t i = 0;
    for (; i + kFloatLanes <= n; i += kFloatLanes)
      xsimd::fma(w1, vfloat::load_unaligned(r1 + i), w0 * vfloat::load_unaligned(r0 + i)).store_unaligned(y + i);
    if (i < n)
      store_partial(xsimd::fma(w1, load_partial(r1 + i, n - i), w0 * load_partial(r0 + i, n - i)), y + i, n - i);
    return;
  }
  index_t i = 0;
  for (; i + kFloatLanes <= n; i += kFloatLanes) {
    vfloat acc = w0 * vfloat::load_unaligned(r0 + i);
    for (index_t j = 1; j < k; ++j) acc = xsimd::fma(vfloat(w[j]), vfloat::load_unaligned(rows[j] + i), acc);
    acc.store_unaligned(y + i);
  }
  if (i < n) {
    const index_t m = n - i;
    vfloat acc = w0 * load_partial(r0 + i, m);
    for (index_t j = 1; j < k; ++j) acc = xsimd::fma(vfloat(w[j]), load_partial(rows[j] + i, m), acc);
    store_partial(acc, y + i, m);
  }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_RESIZE_ROWS_SIMD_H
