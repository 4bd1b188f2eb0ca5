// Matrix product as dot products along K, for products with few output columns (MatMul
// [128, 2048] x [2048, 3]) and for B given transposed (Gemm transB=1 by a runtime B):
//   y[M, N] = act(A[M, K] * B[K, N] + bias[N])
// A's rows are contiguous along K (a + i * lda); B's element (l, j) is at b[l * row + j * col]:
// col = K, row = 1 for B^T (its rows contiguous along K, read in place) or row = N, col = 1 for
// a row-major B (its columns strided: the kernels copy kDotsDepth steps of a few columns onto
// the stack). A panel kernel (gemm_packed_b.h) computes whole vectors of columns and wastes
// most of them when N is 1 to 4; here every vector runs along K, each load of A feeds up to
// kDotsCols dot products, each load of B up to a tile's rows.
//
// This header holds the portable kernel (targets without SIMD; the reference of the kernel
// tests); gemm_dots_simd.h holds the xsimd kernel (AVX2, AVX-512).
#ifndef ONNXC_GEMM_DOTS_H
#define ONNXC_GEMM_DOTS_H

#include "onnxc/activation.h"
#include "onnxc/base.h"
#include "onnxc/parallel.h"

namespace onnxc {
namespace rt {

// Columns of one tile (the compiler picks this kernel for Gemm and MatMul with N <= kDotsCols).
constexpr index_t kDotsCols = 4;
// Steps of K per pass: a copied block of strided B is kDotsCols x kDotsDepth floats (4 KB).
constexpr index_t kDotsDepth = 256;

// B as the dot-product kernels read it: element (l, j) at b[l * row + j * col].
struct DotColumns {
  const float* b;
  index_t row, col;
};

// The portable product: y[m, n] (row stride ldy) = act(A * B + bias), bias[n] or nullptr.
inline void gemm_dots_scalar(index_t m, index_t n, index_t k, const float* a, index_t lda, const DotColumns& b,
                             const float* bias, float* y, index_t ldy, const Epilogue& e) {
  constexpr index_t kRows = 4;
  for (index_t i0 = 0; i0 < m; i0 += kRows) {
    const index_t rows = m - i0 < kRows ? m - i0 : kRows;
    for (index_t j0 = 0; j0 < n; j0 += kDotsCols) {
      const index_t cols = n - j0 < kDotsCols ? n - j0 : kDotsCols;
      float acc[kRows][kDotsCols] = {};
      for (index_t l = 0; l < k; ++l) {
        float bv[kDotsCols];
        for (index_t c = 0; c < cols; ++c) bv[c] = b.b[l * b.row + (j0 + c) * b.col];
        for (index_t r = 0; r < rows; ++r) {
          const float av = a[(i0 + r) * lda + l];
          for (index_t c = 0; c < cols; ++c) acc[r][c] += av * bv[c];
        }
      }
      for (index_t r = 0; r < rows; ++r)
        for (index_t c = 0; c < cols; ++c)
          y[(i0 + r) * ldy + j0 + c] = activate(e, acc[r][c] + (bias ? bias[j0 + c] : 0.0f));
    }
  }
}

}  // namespace rt
}  // namespace onnxc

#if defined(ONNXC_SIMD)
#include "onnxc/gemm_dots_simd.h"
#endif

namespace onnxc {
namespace rt {

// The product on this target's kernel, with a caller's parallel-for (tasks: ranges of rows).
inline void gemm_dots(index_t m, index_t n, index_t k, const float* a, index_t lda, const DotColumns& b,
                      const float* bias, float* y, index_t ldy, const Epilogue& e, Parallel parallel = nullptr) {
#if defined(ONNXC_SIMD)
  gemm_dots_simd(m, n, k, a, lda, b, bias, y, ldy, e, parallel);
#else
  (void)parallel;
  gemm_dots_scalar(m, n, k, a, lda, b, bias, y, ldy, e);
#endif
}

// Batched MatMul of two tensors with few columns, or by B given transposed: batch i multiplies
// a + a_offsets[i] ([m, k]) by b + b_offsets[i] ([k, n] row-major; b_transposed: [n, k], B^T
// read in place, the Transpose a model spells before MatMul folded away) into y + i * m * n.
inline void matmul_dots(index_t batches, const index_t* a_offsets, const index_t* b_offsets, index_t m, index_t n,
                        index_t k, const float* a, const float* b, bool b_transposed, float* y,
                        Parallel parallel = nullptr) {
  const index_t row = b_transposed ? 1 : n, col = b_transposed ? k : 1;
  for (index_t i = 0; i < batches; ++i)
    gemm_dots(m, n, k, a + a_offsets[i], k, DotColumns{b + b_offsets[i], row, col}, nullptr, y + i * m * n, n,
              kNoActivation, parallel);
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_GEMM_DOTS_H
