// Matrix product with a constant right operand packed at compile time (Gemm and MatMul with
// weights):
//   y[M, N] = act(A[M, K] * B[K, N] + bias[N])
// B is the weight. The compiler stores it in column panels of kPackedBCols columns: panel p
// holds columns [16p, 16p + 16) as b[k * 16 + col], K rows one after the other, the last panel's
// missing columns zero. A kernel then reads B as one sequential stream per panel, on every ISA
// whole vectors (the zero columns are computed and not stored), and broadcasts A from its rows:
// A is any strided matrix, element (i, l) at a[i * a_row + l * a_col], so transA needs no copy.
//
// This header holds the layout and the portable kernel (targets without SIMD; also the
// reference of the kernel tests); gemm_packed_b_simd.h holds the xsimd kernel (AVX2, AVX-512).
#ifndef ONNXC_GEMM_PACKED_B_H
#define ONNXC_GEMM_PACKED_B_H

#include "onnxc/activation.h"
#include "onnxc/base.h"
#include "onnxc/gemm_dots.h"
#include "onnxc/parallel.h"

namespace onnxc {
namespace rt {

constexpr index_t kPackedBCols = 16;

constexpr index_t packed_b_panels(index_t n) { return (n + kPackedBCols - 1) / kPackedBCols; }

// Floats of the packed layout of a [K, N] matrix.
constexpr index_t packed_b_floats(index_t k, index_t n) { return packed_b_panels(n) * k * kPackedBCols; }

// Packs b (element (l, j) at b[l * b_row + j * b_col]: B or, transposed, B^T) into the panels
// above (the compiler calls this on weights).
inline void pack_b_panels(const float* b, index_t k, index_t n, index_t b_row, index_t b_col, float* packed) {
  for (index_t p = 0; p < packed_b_panels(n); ++p)
    for (index_t l = 0; l < k; ++l)
      for (index_t c = 0; c < kPackedBCols; ++c) {
        const index_t j = p * kPackedBCols + c;
        packed[(p * k + l) * kPackedBCols + c] = j < n ? b[l * b_row + j * b_col] : 0.0f;
      }
}

// A strided matrix operand: element (i, l) at a[i * row + l * col].
struct StridedRows {
  const float* a;
  index_t row, col;
};

// The right operand as the kernels read it: column j's element of row l at column(j)[l * step].
// PackedColumns: pack_b_panels' layout (whole vectors may be read past the last column: zeros).
// PlainRows: a row-major matrix, read in place (an activation: MatMul of two tensors).
struct PackedColumns {
  static constexpr bool kPadded = true;
  const float* packed;
  index_t k;
  const float* column(index_t j) const { return packed + (j / kPackedBCols) * k * kPackedBCols + j % kPackedBCols; }
  index_t step() const { return kPackedBCols; }
};
struct PlainRows {
  static constexpr bool kPadded = false;
  const float* b;
  index_t ldb;
  const float* column(index_t j) const { return b + j; }
  index_t step() const { return ldb; }
};

namespace packed_b_detail {

// The portable kernel: tiles of kScalarRows x kScalarCols outputs accumulate in registers over
// the whole K loop (16 accumulators and 8 operands fit the 32 single-precision registers of a
// Cortex-M4/M7 FPU), every loaded value feeding four multiply-adds. The rows left over (all of
// them for a batch-1 fully connected layer) take tiles of one row and a whole panel's columns:
// per step of K one load of A and sixteen of B feed sixteen multiply-adds (the float
// ad-autoencoder on a Cortex-M4: 2,165,640 instructions with 1 x 4 tiles not unrolled at -O2,
// 902,040 unrolled, 739,080 with 1 x 8, 657,200 with 1 x 16).
constexpr int kScalarRows = 4;
constexpr int kScalarCols = 4;
constexpr int kSingleRowCols = 16;
static_assert(kPackedBCols % kSingleRowCols == 0, "a single row's tile stays inside its panel");

template <int Rows, int Cols, class B>
inline void scalar_tile(index_t cols, index_t k, const StridedRows& a, index_t i0, const B& b, index_t j, float* y,
                        index_t ldy, const float* bias, const Epilogue& e) {
  // The tile's loops are unrolled by force: at -O2 and -Os (firmware builds) GCC unrolls none of
  // them and keeps acc in memory, a load and a store around every multiply-add.
  float acc[Rows][Cols];
  ONNXC_UNROLL for (int r = 0; r < Rows; ++r)
    ONNXC_UNROLL for (int c = 0; c < Cols; ++c) acc[r][c] = bias && c < cols ? bias[j + c] : 0.0f;
  const float* bj = b.column(j);
  const index_t step = b.step();
  for (index_t l = 0; l < k; ++l) {
    const float* bl = bj + l * step;
    float bv[Cols];
    ONNXC_UNROLL for (int c = 0; c < Cols; ++c) bv[c] = B::kPadded || c < cols ? bl[c] : 0.0f;
    ONNXC_UNROLL for (int r = 0; r < Rows; ++r) {
      const float av = a.a[(i0 + r) * a.row + l * a.col];
      ONNXC_UNROLL for (int c = 0; c < Cols; ++c) acc[r][c] += av * bv[c];
    }
  }
  for (int r = 0; r < Rows; ++r)
    for (index_t c = 0; c < cols; ++c) y[(i0 + r) * ldy + j + c] = activate(e, acc[r][c]);
}

}  // namespace packed_b_detail

// The portable product: y[m, n] (row stride ldy) = act(A * B + bias), bias[n] or nullptr.
template <class B>
inline void gemm_tiles_scalar(index_t m, index_t n, index_t k, const StridedRows& a, const B& b, const float* bias,
                              float* y, index_t ldy, const Epilogue& e) {
  using namespace packed_b_detail;
  // The single rows start at a bound computed from m, not where the tiles' loop left its index:
  // GCC -O3 loses that index's range and refuses the tail loop (-Werror=aggressive-loop-optimizations).
  const index_t whole = m - m % kScalarRows;
  for (index_t j = 0; j < n; j += kScalarCols) {
    const index_t cols = n - j < kScalarCols ? n - j : kScalarCols;
    for (index_t r = 0; r < whole; r += kScalarRows)
      scalar_tile<kScalarRows, kScalarCols>(cols, k, a, r, b, j, y, ldy, bias, e);
  }
  for (index_t j = 0; j < n; j += kSingleRowCols) {
    const index_t cols = n - j < kSingleRowCols ? n - j : kSingleRowCols;
    for (index_t r = whole; r < m; ++r) scalar_tile<1, kSingleRowCols>(cols, k, a, r, b, j, y, ldy, bias, e);
  }
}

}  // namespace rt
}  // namespace onnxc

#if defined(ONNXC_SIMD)
#include "onnxc/gemm_packed_b_simd.h"
#endif

namespace onnxc {
namespace rt {

// The product on this target's kernel, with a caller's parallel-for: tasks are ranges of
// columns (every task all rows: B, the larger operand, is split between the threads' caches).
template <class B>
inline void gemm_tiles(index_t m, index_t n, index_t k, const StridedRows& a, const B& b, const float* bias, float* y,
                       index_t ldy, const Epilogue& e, Parallel parallel = nullptr) {
#if defined(ONNXC_SIMD)
  gemm_tiles_simd(m, n, k, a, b, bias, y, ldy, e, parallel);
#else
  (void)parallel;
  gemm_tiles_scalar(m, n, k, a, b, bias, y, ldy, e);
#endif
}

// y = act(A * B + bias) for B packed by pack_b_panels (a weight).
inline void gemm_packed_b(index_t m, index_t n, index_t k, const StridedRows& a, const float* b_packed,
                          const float* bias, float* y, index_t ldy, const Epilogue& e, Parallel parallel = nullptr) {
  gemm_tiles(m, n, k, a, PackedColumns{b_packed, k}, bias, y, ldy, e, parallel);
}

// y = act(A * B + bias) for A's rows contiguous (lda apart) and B given transposed (bt: [n, k]
// row-major, ldb apart), read in place: on SIMD targets the tiles, a block of B^T packed at a
// time on the stack; without SIMD the dot-product kernel, which reads B^T's rows as they lie.
inline void gemm_transposed_b(index_t m, index_t n, index_t k, const float* a, index_t lda, const float* bt,
                              index_t ldb, const float* bias, float* y, index_t ldy, const Epilogue& e,
                              Parallel parallel = nullptr) {
#if defined(ONNXC_SIMD)
  gemm_transposed_b_simd(m, n, k, StridedRows{a, lda, 1}, bt, ldb, bias, y, ldy, e, parallel);
#else
  (void)parallel;
  gemm_dots_scalar(m, n, k, a, lda, DotColumns{bt, 1, ldb}, bias, y, ldy, e);
#endif
}

// Batched MatMul of two tensors (neither packed): batch i multiplies a + a_offsets[i] by
// b + b_offsets[i] (row-major [k, n], read in place; b_transposed: B^T [n, k], the Transpose a
// model spells before MatMul folded away) into y + i * m * n.
inline void matmul_tiles(index_t batches, const index_t* a_offsets, const index_t* b_offsets, index_t m, index_t n,
                         index_t k, const float* a, const float* b, bool b_transposed, float* y,
                         Parallel parallel = nullptr) {
  for (index_t i = 0; i < batches; ++i) {
    if (b_transposed)
      gemm_transposed_b(m, n, k, a + a_offsets[i], k, b + b_offsets[i], k, nullptr, y + i * m * n, n, kNoActivation,
                        parallel);
    else
      gemm_tiles(m, n, k, StridedRows{a + a_offsets[i], k, 1}, PlainRows{b + b_offsets[i], n}, nullptr,
                 y + i * m * n, n, kNoActivation, parallel);
  }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_GEMM_PACKED_B_H
