// Matrix products: ONNX Gemm and MatMul.
#ifndef ONNXC_GEMM_H
#define ONNXC_GEMM_H

#include <type_traits>

#include "onnxc/base.h"
#include "onnxc/numeric.h"
#include "onnxc/parallel.h"
#include "onnxc/simd.h"

namespace onnxc {
namespace rt {

struct GemmParams {
  index_t m, n, k;
  bool trans_a, trans_b;
  float alpha, beta;
  // C (bias) is read as c[i * c_row_stride + j * c_col_stride]; strides are 0 along dims
  // C broadcasts over. Unused when c is nullptr.
  index_t c_row_stride, c_col_stride;
};

// One row of a float product: y[0, n) = sum over l of a[l * a_step] * b[l * ldb + j], every
// element summing its products in the order l = 0, 1, ... Without SIMD (Cortex-M, generic) the
// columns go eight at a time, their sums kept in registers across the whole k loop rather than
// read and written back for every l, then the last ones one l at a time; with SIMD, vectors of
// columns likewise (below).
inline void row_times_matrix(index_t n, index_t k, const float* a, index_t a_step, const float* b, index_t ldb,
                             float* y) {
#if !defined(ONNXC_SIMD)
  constexpr int kColumns = 8;
  for (; n >= kColumns; n -= kColumns, b += kColumns, y += kColumns) {
    float acc[kColumns] = {};
    for (index_t l = 0; l < k; ++l) {
      const float al = a[l * a_step];
      const float* bl = b + l * ldb;
      ONNXC_UNROLL for (int c = 0; c < kColumns; ++c) acc[c] += al * bl[c];
    }
    ONNXC_UNROLL for (int c = 0; c < kColumns; ++c) y[c] = acc[c];
  }
  for (index_t j = 0; j < n; ++j) y[j] = 0.0f;
  for (index_t l = 0; l < k; ++l) {
    const float al = a[l * a_step];
    const float* bl = b + l * ldb;
    for (index_t j = 0; j < n; ++j) y[j] += al * bl[j];
  }
#else
  // Four vectors of y accumulate in registers over the whole k loop, then one, then the partial
  // last one: a loop along n per l loaded and stored y for every multiply-add (transformer-tiny's
  // 16 x 64 x 128 Gemm 5.5 us).
  constexpr index_t L = kFloatLanes;
  index_t j = 0;
  for (; j + 4 * L <= n; j += 4 * L) {
    vfloat acc[4] = {vfloat(0.0f), vfloat(0.0f), vfloat(0.0f), vfloat(0.0f)};
    for (index_t l = 0; l < k; ++l) {
      const vfloat al(a[l * a_step]);
      const float* bl = b + l * ldb + j;
      ONNXC_UNROLL for (int v = 0; v < 4; ++v) acc[v] = xsimd::fma(al, vfloat::load_unaligned(bl + v * L), acc[v]);
    }
    ONNXC_UNROLL for (int v = 0; v < 4; ++v) acc[v].store_unaligned(y + j + v * L);
  }
  for (; j < n; j += L) {
    const index_t cols = n - j < L ? n - j : L;
    vfloat acc(0.0f);
    for (index_t l = 0; l < k; ++l) {
      const float* bl = b + l * ldb + j;
      acc = xsimd::fma(vfloat(a[l * a_step]), cols == L ? vfloat::load_unaligned(bl) : load_partial(bl, cols), acc);
    }
    if (cols == L) acc.store_unaligned(y + j);
    else store_partial(acc, y + j, cols);
  }
#endif
}

// Tasks a float product with a parallel-for splits into: ranges of columns (whole vectors),
// every task all rows of its columns. The products that take this path have few rows (a
// classifier's batch of 1: mobilenet_v2's 1280 x 1000 weight) and stream B once, so the split is
// along n; two threads read B from their two caches at twice the bandwidth of one.
constexpr index_t kGemmColumnTasks = 8;
constexpr index_t kGemmColumnQuantum = 64;

// Row-major float product y[m,n] = alpha * a[m,k] * b[k,n] (+ beta * c, strides as GemmParams'),
// row by row of y, in column ranges on the caller's threads.
inline void matmul_rows(index_t m, index_t n, index_t k, const float* a, const float* b, float* y,
                        Parallel parallel = nullptr, float alpha = 1.0f, const float* c = nullptr, float beta = 0.0f,
                        index_t c_row_stride = 0, index_t c_col_stride = 0) {
  const index_t quanta = (n + kGemmColumnQuantum - 1) / kGemmColumnQuantum;
  const index_t tasks = parallel ? (quanta < kGemmColumnTasks ? quanta : kGemmColumnTasks) : 1;
  parallel_for(parallel, tasks, [&](index_t t) {
    const Range q = part_of(quanta, tasks, t);
    const index_t j0 = q.begin * kGemmColumnQuantum, j1 = q.end * kGemmColumnQuantum < n ? q.end * kGemmColumnQuantum : n;
    for (index_t i = 0; i < m; ++i) {
      float* yi = y + i * n;
      row_times_matrix(j1 - j0, k, a + i * k, 1, b + j0, n, yi + j0);
      if (alpha == 1.0f && !c) continue;
      for (index_t j = j0; j < j1; ++j) {
        yi[j] *= alpha;
        if (c) yi[j] += beta * c[i * c_row_stride + j * c_col_stride];
      }
    }
  });
}

// y[m,n] = alpha * op(a)[m,k] * op(b)[k,n] + beta * c. The products accumulate in the compute
// type (wrapping for integers); the float alpha and beta apply in real_t, so integer Gemm with
// alpha = 0.5 halves instead of multiplying by 0. (The compiler stores constant B
// untransposed, so float Gemm with weights takes the fast row-by-row path, which alone takes the
// caller's parallel-for.)
template <class T>
inline void gemm(const GemmParams& p, const T* a, const T* b, const T* c, T* y, Parallel parallel = nullptr) {
  if constexpr (std::is_same<T, float>::value) {
    if (!p.trans_a && !p.trans_b)
      return matmul_rows(p.m, p.n, p.k, a, b, y, parallel, p.alpha, c, p.beta, p.c_row_stride, p.c_col_stride);
  }
  (void)parallel;
  using C = compute_t<T>;
  using R = real_t<T>;
  const index_t lda = p.trans_a ? p.m : p.k;
  const index_t ldb = p.trans_b ? p.k : p.n;
  for (index_t i = 0; i < p.m; ++i) {
    for (index_t j = 0; j < p.n; ++j) {
      C acc = C(0);
      for (index_t l = 0; l < p.k; ++l) {
        const C av = load(p.trans_a ? a[l * lda + i] : a[i * lda + l]);
        const C bv = load(p.trans_b ? b[j * ldb + l] : b[l * ldb + j]);
        acc = static_cast<C>(acc + av * bv);
      }
      R r = static_cast<R>(p.alpha) * static_cast<R>(acc);
      if (c) r += static_cast<R>(p.beta) * static_cast<R>(load(c[i * p.c_row_stride + j * p.c_col_stride]));
      y[i * p.n + j] = store<T>(from_real<T>(r));
    }
  }
}

// One [m,k] x [k,n] product, row-major, accumulating in the compute type.
template <class T>
inline void matmul_2d(index_t m, index_t n, index_t k, const T* a, const T* b, T* y) {
  if constexpr (std::is_same<T, float>::value) return matmul_rows(m, n, k, a, b, y);
  using C = compute_t<T>;
  for (index_t i = 0; i < m; ++i) {
    for (index_t j = 0; j < n; ++j) {
      C acc = C(0);
      for (index_t l = 0; l < k; ++l) acc = static_cast<C>(acc + load(a[i * k + l]) * load(b[l * n + j]));
      y[i * n + j] = store<T>(acc);
    }
  }
}

// Batched MatMul: batch b multiplies a + a_offsets[b] by b + b_offsets[b] into y + b*m*n.
template <class T>
inline void matmul(index_t batches, const index_t* a_offsets, const index_t* b_offsets, index_t m, index_t n,
                   index_t k, const T* a, const T* b, T* y) {
  for (index_t i = 0; i < batches; ++i) matmul_2d(m, n, k, a + a_offsets[i], b + b_offsets[i], y + i * m * n);
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_GEMM_H
