// The one place that decides whether kernels use SIMD: ONNXC_SIMD, which the generated source
// defines for SIMD targets (onnxc --target, see compiler/backend/target.h). xsimd then picks the
// widest instruction set the compiler's flags enable (SSE, AVX2+FMA, AVX-512, NEON); the choice
// is made when the generated code is compiled, never at run time. Without ONNXC_SIMD nothing
// here includes xsimd, and the kernels are plain C++ for any compiler.
#ifndef ONNXC_SIMD_H
#define ONNXC_SIMD_H

#include "onnxc/base.h"

#if defined(ONNXC_SIMD)
// GCC 12 reports the AVX-512 intrinsics' deliberately undefined pass-through operands
// (_mm512_undefined_ps) as (maybe-)uninitialized once inlined; the warning points into the
// intrinsics headers, whose text this scope covers.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <xsimd/xsimd.hpp>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

namespace onnxc {
namespace rt {

#if defined(ONNXC_SIMD)
using vfloat = xsimd::batch<float>;
constexpr index_t kFloatLanes = static_cast<index_t>(vfloat::size);
// Registers: AVX-512 and AArch64 (NEON) have 32 vector registers, the others 16. The register
// tiles of packed_gemm.h (and conv_band, depthwise_rows, attention) are sized from this.
#if defined(__AVX512F__) || defined(__aarch64__)
constexpr int kVectorRegisters = 32;
#else
constexpr int kVectorRegisters = 16;
#endif

#if defined(__AVX2__) && !defined(__AVX512F__)
// AVX2's masks are vectors: lane j set when j < cols (cols <= 8).
inline __m256i lanes_below(index_t cols) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(cols)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
#endif

// The first `cols` (< kFloatLanes) floats at p, the other lanes zero, and the matching partial
// store: AVX-512 and AVX2 mask them (masked-off lanes are neither read nor written); elsewhere
// they pass through a zero-padded buffer on the stack (on AVX2 the buffer's scalar copies cost
// a quarter of a grouped stride-2 Conv's time on 7-wide rows).
inline vfloat load_partial(const float* p, index_t cols) {
#if defined(__AVX512F__)
  return _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << cols) - 1u), p);
#elif defined(__AVX2__)
  return _mm256_maskload_ps(p, lanes_below(cols));
#else
  alignas(64) float buf[kFloatLanes] = {};
  for (index_t j = 0; j < cols; ++j) buf[j] = p[j];
  return vfloat::load_aligned(buf);
#endif
}

inline void store_partial(vfloat v, float* p, index_t cols) {
#if defined(__AVX512F__)
  _mm512_mask_storeu_ps(p, static_cast<__mmask16>((1u << cols) - 1u), v);
#elif defined(__AVX2__)
  _mm256_maskstore_ps(p, lanes_below(cols), v);
#else
  alignas(64) float buf[kFloatLanes];
  v.store_aligned(buf);
  for (index_t j = 0; j < cols; ++j) p[j] = buf[j];
#endif
}

// p[0], p[s], p[2s], ... : the inputs of a vector of outputs of a sliding window with stride
// S (0: any stride, given at run time). A whole vector (cols == L) with S = 1 or 2 reads the
// L * S floats from p on (2: two vectors, the even lanes kept); otherwise exactly the `cols`
// lanes needed are read, the others are zero.
template <int S>
inline vfloat load_strided(const float* p, index_t stride, index_t cols) {
  if (S == 1) return cols == kFloatLanes ? vfloat::load_unaligned(p) : load_partial(p, cols);
#if defined(__AVX512F__)
  if (S == 2) {
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    if (cols == kFloatLanes) return _mm512_permutex2var_ps(_mm512_loadu_ps(p), even, _mm512_loadu_ps(p + 16));
    const index_t n = 2 * cols - 1;  // floats up to the last even lane
    const __m512 lo = _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << (n < 16 ? n : 16)) - 1u), p);
    const __m512 hi = _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << (n > 16 ? n - 16 : 0)) - 1u), p + 16);
    return _mm512_permutex2var_ps(lo, even, hi);
  }
#elif defined(__AVX2__)
  if (S == 2) {  // [a0 a2 b0 b2 | a4 a6 b4 b6], then the 64-bit lanes reordered
    __m256 lo, hi;
    if (cols == kFloatLanes) {
      lo = _mm256_loadu_ps(p);
      hi = _mm256_loadu_ps(p + 8);
    } else {
      const index_t n = 2 * cols - 1;  // floats up to the last even lane
      lo = _mm256_maskload_ps(p, lanes_below(n < 8 ? n : 8));
      hi = _mm256_maskload_ps(p + 8, lanes_below(n > 8 ? n - 8 : 0));
    }
    const __m256 evens = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(evens), _MM_SHUFFLE(3, 1, 2, 0)));
  }
#endif
  alignas(64) float buf[kFloatLanes] = {};
  for (index_t j = 0; j < cols; ++j) buf[j] = p[j * (S ? S : stride)];
  return vfloat::load_aligned(buf);
}
// x[0] + ... + x[n - 1] in vectors (two independent sums, so the adds do not wait on each
// other): a scalar loop is one chain of dependent adds, which the compiler may not reorder
// (squeezenet1_1's 1000 planes of 169: 61 us).
inline float sum_floats(const float* x, index_t n) {
  vfloat a(0.0f), b(0.0f);
  index_t i = 0;
  for (; i + 2 * kFloatLanes <= n; i += 2 * kFloatLanes) {
    a += vfloat::load_unaligned(x + i);
    b += vfloat::load_unaligned(x + i + kFloatLanes);
  }
  for (; i < n; i += kFloatLanes) a += load_partial(x + i, n - i < kFloatLanes ? n - i : kFloatLanes);
  return xsimd::hadd(a + b);
}

#else
constexpr index_t kFloatLanes = 1;
#endif

// dst[i] = src[i] for i < n: kernels copy short rows (5 to 112 floats), where a loop left to the
// compiler's vectoriser spends more in its prologue and epilogue than in the copy.
inline void copy_floats(const float* src, index_t n, float* dst) {
#if defined(ONNXC_SIMD)
  index_t i = 0;
  for (; i + kFloatLanes <= n; i += kFloatLanes) vfloat::load_unaligned(src + i).store_unaligned(dst + i);
  if (i < n) store_partial(load_partial(src + i, n - i), dst + i, n - i);
#else
  for (index_t i = 0; i < n; ++i) dst[i] = src[i];
#endif
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_SIMD_H
