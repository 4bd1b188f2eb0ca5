// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// gemm_dots on xsimd targets (AVX2, AVX-512): gemm_dots.h includes this header under
// ONNXC_SIMD (include that one).
//
// A tile of Rows rows by Cols (<= kDotsCols) columns keeps Rows x Cols vector accumulators over
// a depth range of kDotsDepth steps: each step loads one vector of K from each of the Rows rows
// of A and of the Cols columns of B (AVX-512: 4 x 4 = 16 accumulators and 8 operands of 32
// registers; AVX2: 2 x 4 = 8 and 6 of 16), then sums each accumulator's lanes into y. Depth
// ranges go through y (the partial sums read back: one float per output), so a copied block of
// strided B serves all rows.
#ifndef ONNXC_GEMM_DOTS_SIMD_H
#define ONNXC_GEMM_DOTS_SIMD_H

#include "onnxc/simd.h"

namespace onnxc {
namespace rt {
namespace dots_detail {

#if defined(__AVX512F__)
constexpr index_t kDotsRows = 4;
#else
constexpr index_t kDotsRows = 2;
#endif
constexpr index_t kDotsTasks = 16;
static_assert(kDotsRows * kDotsCols + kDotsRows + kDotsCols <= kVectorRegisters, "the tile must fit the registers");

// One depth range [l0, l0 + len) of the tile at rows i0.. and columns j..: bcol[c] points at
// column c's element l0 (contiguous along K); first: start from the bias (or zero), else from y;
// last: apply the activation.
template <int Rows, int Cols>
ONNXC_INLINE void dots_tile(index_t len, const float* a, index_t lda, index_t i0, index_t l0, const float* const* bcol,
                            index_t j, float* y, index_t ldy, const float* bias, bool first, bool last,
                            const Epilogue& e) {
  constexpr index_t L = kFloatLanes;
  const float* ar[Rows];
  ONNXC_UNROLL for (int r = 0; r < Rows; ++r) ar[r] = a + (i0 + r) * lda + l0;
  vfloat acc[Rows][Cols];
  ONNXC_UNROLL for (int r = 0; r < Rows; ++r) {
    ONNXC_UNROLL for (int c = 0; c < Cols; ++c) acc[r][c] = vfloat(0.0f);
  }
  auto step = [&](index_t l, auto load) {
    vfloat bv[Cols];
    ONNXC_UNROLL for (int c = 0; c < Cols; ++c) bv[c] = load(bcol[c] + l);
    ONNXC_UNROLL for (int r = 0; r < Rows; ++r) {
      const vfloat av = load(ar[r] + l);
      ONNXC_UNROLL for (int c = 0; c < Cols; ++c) acc[r][c] = xsimd::fma(av, bv[c], acc[r][c]);
    }
  };
  index_t l = 0;
  for (; l + L <= len; l += L) step(l, [](const float* p) { return vfloat::load_unaligned(p); });
  if (l < len) step(l, [tail = len - l](const float* p) { return load_partial(p, tail); });
  ONNXC_UNROLL for (int r = 0; r < Rows; ++r) {
    float* yr = y + (i0 + r) * ldy + j;
    ONNXC_UNROLL for (int c = 0; c < Cols; ++c) {
      const float start = first ? (bias ? bias[j + c] : 0.0f) : yr[c];
      const float s = start + xsimd::hadd(acc[r][c]);
      yr[c] = last ? activate(e, s) : s;
    }
  }
}

template <int Cols>
inline void dots_rows(index_t i0, index_t i1, index_t len, const float* a, index_t lda, index_t l0,
                      const float* const* bcol, index_t j, float* y, index_t ldy, const float* bias, bool first,
                      bool last, const Epilogue& e) {
  // The single rows start at a bound computed from the range (as in gemm_tiles_scalar: GCC -O3
  // loses the range of an index a previous loop left and refuses the tail loop).
  const index_t whole = i0 + (i1 - i0) / kDotsRows * kDotsRows;
  for (index_t i = i0; i < whole; i += kDotsRows)
    dots_tile<kDotsRows, Cols>(len, a, lda, i, l0, bcol, j, y, ldy, bias, first, last, e);
  for (index_t i = whole; i < i1; ++i) dots_tile<1, Cols>(len, a, lda, i, l0, bcol, j, y, ldy, bias, first, last, e);
}

// ---- a short depth: vectors along N ----
// With K under half a vector the dot products leave most lanes empty and spend more on summing
// each accumulator's lanes than on products (a Gemm [7, 3] x [3072, 3]^T: 2.2x ORT). Then a
// vector of columns at a time instead: their K rows of B gathered once into registers (column c's
// element l at b[l * row + c * col]), reused by every row of A, whose K elements are broadcast.
constexpr index_t kShortDepth = kFloatLanes / 2;

inline bool takes_short_depth(index_t n, index_t k) { return k <= kShortDepth && n > kDotsCols; }

inline void short_depth_columns(index_t m, index_t n, index_t k, const float* a, index_t lda, const DotColumns& b,
                                const float* bias, float* y, index_t ldy, const Epilogue& e, Range chunks) {
  using vint = xsimd::batch<int32_t>;
  alignas(64) int32_t lane_cols[kFloatLanes];
  for (index_t t = chunks.begin; t < chunks.end; ++t) {
    const index_t j = t * kFloatLanes, cols = n - j < kFloatLanes ? n - j : kFloatLanes;
    // the spare lanes of the last chunk read its last column again and are not stored
    for (index_t c = 0; c < kFloatLanes; ++c) lane_cols[c] = static_cast<int32_t>((c < cols ? c : cols - 1) * b.col);
    const vint index = vint::load_aligned(lane_cols);
    vfloat bv[kShortDepth];
    ONNXC_UNROLL for (index_t l = 0; l < kShortDepth; ++l) {
      if (l < k) bv[l] = vfloat::gather(b.b + l * b.row + j * b.col, index);
    }
    const vfloat start = bias ? (cols == kFloatLanes ? vfloat::load_unaligned(bias + j) : load_partial(bias + j, cols))
                              : vfloat(0.0f);
    for (index_t i = 0; i < m; ++i) {
      const float* ar = a + i * lda;
      vfloat acc = start;
      ONNXC_UNROLL for (index_t l = 0; l < kShortDepth; ++l) {
        if (l < k) acc = xsimd::fma(vfloat(ar[l]), bv[l], acc);
      }
      acc = activate(e, acc);
      if (cols == kFloatLanes) acc.store_unaligned(y + i * ldy + j);
      else store_partial(acc, y + i * ldy + j, cols);
    }
  }
}

}  // namespace dots_detail

inline void gemm_dots_simd(index_t m, index_t n, index_t k, const float* a, index_t lda, const DotColumns& b,
                           const float* bias, float* y, index_t ldy, const Epilogue& e, Parallel parallel = nullptr) {
  using namespace dots_detail;
  if (k == 0) {  // no products: the bias (or zero), activated
    for (index_t i = 0; i < m; ++i)
      for (index_t j = 0; j < n; ++j) y[i * ldy + j] = activate(e, bias ? bias[j] : 0.0f);
    return;
  }
  if (takes_short_depth(n, k)) {  // tasks: ranges of vectors of columns
    const index_t chunks = (n + kFloatLanes - 1) / kFloatLanes;
    const index_t tasks = parallel ? (chunks < kDotsTasks ? chunks : kDotsTasks) : 1;
    parallel_for(parallel, tasks, [&](index_t t) {
      short_depth_columns(m, n, k, a, lda, b, bias, y, ldy, e, part_of(chunks, tasks, t));
    });
    return;
  }
  const index_t groups = (m + kDotsRows - 1) / kDotsRows;
  const index_t tasks = parallel ? (groups < kDotsTasks ? groups : kDotsTasks) : 1;
  parallel_for(parallel, tasks, [&](index_t t) {
    const Range q = part_of(groups, tasks, t);
    const index_t i0 = q.begin * kDotsRows, i1 = q.end * kDotsRows < m ? q.end * kDotsRows : m;
    alignas(64) float block[kDotsCols][kDotsDepth];
    for (index_t l0 = 0; l0 < k; l0 += kDotsDepth) {
      const index_t len = k - l0 < kDotsDepth ? k - l0 : kDotsDepth;
      const bool first = l0 == 0, last = l0 + len == k;
      for (index_t j = 0; j < n; j += kDotsCols) {
        const index_t cols = n - j < kDotsCols ? n - j : kDotsCols;
        const float* bcol[kDotsCols];
        for (index_t c = 0; c < cols; ++c) {
          const float* src = b.b + l0 * b.row + (j + c) * b.col;
          if (b.row == 1) {
            bcol[c] = src;
          } else {
            for (index_t l = 0; l < len; ++l) block[c][l] = src[l * b.row];
            bcol[c] = block[c];
          }
        }
        switch (cols) {
          case 1: dots_rows<1>(i0, i1, len, a, lda, l0, bcol, j, y, ldy, bias, first, last, e); break;
          case 2: dots_rows<2>(i0, i1, len, a, lda, l0, bcol, j, y, ldy, bias, first, last, e); break;
          case 3: dots_rows<3>(i0, i1, len, a, lda, l0, bcol, j, y, ldy, bias, first, last, e); break;
          default: dots_rows<4>(i0, i1, len, a, lda, l0, bcol, j, y, ldy, bias, first, last, e); break;
        }
      }
    }
  });
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_GEMM_DOTS_SIMD_H
