// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// gemm_packed_b on xsimd targets (AVX2, AVX-512): the layout and the portable kernel are in
// gemm_packed_b.h, which includes this header under ONNXC_SIMD (include that one).
//
// A register tile of up to kPackedBRows rows by kPackedBVectors vectors of y accumulates over
// the whole K loop: every k step loads kPackedBVectors vectors of B (sequential in their panels)
// and broadcasts kPackedBRows elements of A (AVX-512: 12 x 2 = 24 accumulators of 32 registers,
// AVX2: 6 x 2 = 12 of 16). The rows of a product are cut into tiles of equal height (37 rows:
// 10, 9, 9, 9 rather than 12, 12, 12, 1), so no tile runs with a row or two that cannot hide the
// loads. Tiles of one row group sweep all columns of a task, so that group's rows of A stay in
// L1 while B streams from L2.
#ifndef ONNXC_GEMM_PACKED_B_SIMD_H
#define ONNXC_GEMM_PACKED_B_SIMD_H

#include "onnxc/packed_gemm.h"
#include "onnxc/simd.h"
#if defined(__AVX2__)
#include "onnxc/transpose_avx2.h"
#endif

namespace onnxc {
namespace rt {
namespace packed_b_detail {

constexpr int kPackedBVectors = 2;
#if defined(__AVX512F__)
constexpr int kPackedBRows = 12;
#else
constexpr int kPackedBRows = 6;
#endif
static_assert(kPackedBRows * kPackedBVectors + kPackedBVectors + 1 <= kVectorRegisters,
              "the tile must fit the registers");
static_assert(kPackedBCols % kFloatLanes == 0, "a panel is whole vectors");

// A tile's range of K: the first starts from the bias (or zero), the others from the partial
// sums in y; the last applies the activation.
struct DepthRange {
  index_t l0, l1;
  bool first, last;
};

// y[Rows, Vecs vectors from column j] for rows from i0 over the depth range d; `cols` (in
// ((Vecs - 1) * lanes, Vecs * lanes]) of them stored. B's vectors are whole when B is padded
// (packed) or inside its columns; the last one of a plain B is a partial load (a whole one would
// read past the matrix).
template <int Rows, int Vecs, class B>
ONNXC_INLINE void simd_tile(index_t cols, const DepthRange& d, const StridedRows& a, index_t i0, const B& b, index_t j,
                            float* y, index_t ldy, const float* bias, const Epilogue& e) {
  constexpr index_t L = kFloatLanes;
  const index_t tail = cols - (Vecs - 1) * L;  // columns of the last vector
  const bool whole = tail == L;
  const float* bp[Vecs];
  ONNXC_UNROLL for (int v = 0; v < Vecs; ++v) bp[v] = b.column(j + v * L);
  const index_t step = b.step();
  const float* ar[Rows];
  ONNXC_UNROLL for (int r = 0; r < Rows; ++r) ar[r] = a.a + (i0 + r) * a.row;
  const index_t ac = a.col;
  auto load_cols = [&](const float* p, int v) {
    return v + 1 < Vecs || whole ? vfloat::load_unaligned(p) : load_partial(p, tail);
  };
  vfloat acc[Rows][Vecs];
  if (d.first) {
    ONNXC_UNROLL for (int v = 0; v < Vecs; ++v) {
      const vfloat start = bias ? load_cols(bias + j + v * L, v) : vfloat(0.0f);
      ONNXC_UNROLL for (int r = 0; r < Rows; ++r) acc[r][v] = start;
    }
  } else {
    ONNXC_UNROLL for (int r = 0; r < Rows; ++r) {
      ONNXC_UNROLL for (int v = 0; v < Vecs; ++v) acc[r][v] = load_cols(y + (i0 + r) * ldy + j + v * L, v);
    }
  }
  if (B::kPadded || whole) {
    for (index_t l = d.l0; l < d.l1; ++l) {
      vfloat bv[Vecs];
      ONNXC_UNROLL for (int v = 0; v < Vecs; ++v) bv[v] = vfloat::load_unaligned(bp[v] + l * step);
      ONNXC_UNROLL for (int r = 0; r < Rows; ++r) {
        const vfloat av(ar[r][l * ac]);
        ONNXC_UNROLL for (int v = 0; v < Vecs; ++v) acc[r][v] = xsimd::fma(av, bv[v], acc[r][v]);
      }
    }
  } else {
    for (index_t l = d.l0; l < d.l1; ++l) {
      vfloat bv[Vecs];
      ONNXC_UNROLL for (int v = 0; v < Vecs; ++v) bv[v] = load_cols(bp[v] + l * step, v);
      ONNXC_UNROLL for (int r = 0; r < Rows; ++r) {
        const vfloat av(ar[r][l * ac]);
        ONNXC_UNROLL for (int v = 0; v < Vecs; ++v) acc[r][v] = xsimd::fma(av, bv[v], acc[r][v]);
      }
    }
  }
  auto store = [&](int i, vfloat out) {
    float* to = y + (i0 + i / Vecs) * ldy + j + i % Vecs * L;
    if (i % Vecs + 1 < Vecs || whole) out.store_unaligned(to);
    else store_partial(out, to, tail);
  };
  packed_gemm_detail::store_activated<Rows * Vecs>(&acc[0][0], d.last ? e : kNoActivation, store);
}

// Rows [i0, i0 + Rows) times columns [j0, j1): tiles of kPackedBVectors vectors, the last narrower.
template <int Rows, class B>
inline void simd_rows(index_t i0, index_t j0, index_t j1, const DepthRange& d, const StridedRows& a, const B& b,
                      float* y, index_t ldy, const float* bias, const Epilogue& e) {
  static_assert(kPackedBVectors == 2, "the tail below is one or two vectors");
  constexpr index_t width = kPackedBVectors * kFloatLanes;
  index_t j = j0;
  for (; j + width <= j1; j += width) simd_tile<Rows, kPackedBVectors>(width, d, a, i0, b, j, y, ldy, bias, e);
  if (j1 - j > kFloatLanes) simd_tile<Rows, 2>(j1 - j, d, a, i0, b, j, y, ldy, bias, e);
  else if (j < j1) simd_tile<Rows, 1>(j1 - j, d, a, i0, b, j, y, ldy, bias, e);
}

template <int Rows = kPackedBRows, class B>
inline void simd_rows_of(index_t rows, index_t i0, index_t j0, index_t j1, const DepthRange& d, const StridedRows& a,
                         const B& b, float* y, index_t ldy, const float* bias, const Epilogue& e) {
  if constexpr (Rows > 1) {
    if (rows < Rows) return simd_rows_of<Rows - 1>(rows, i0, j0, j1, d, a, b, y, ldy, bias, e);
  }
  simd_rows<Rows>(i0, j0, j1, d, a, b, y, ldy, bias, e);
}

// ---- B given transposed (B^T [N, K] row-major, read in place) ----
// A block of kTransposedBlockCols columns by a depth range is packed into panels on the stack
// (32 columns x 256 steps: 32 KB, in L1 beside a tile's rows of A) and every row group sweeps it,
// so B^T is read once, from where it lies, and no transposed copy of it goes through memory.
constexpr index_t kTransposedBlockCols = 2 * kPackedBCols;

// The packed block as simd_tile reads it: columns from j0, depth from 0.
struct PackedBlock {
  static constexpr bool kPadded = true;
  const float* packed;
  index_t j0, depth;
  const float* column(index_t j) const {
    return packed + ((j - j0) / kPackedBCols) * depth * kPackedBCols + (j - j0) % kPackedBCols;
  }
  index_t step() const { return kPackedBCols; }
};

// block[p][l][c] = B^T[j0 + 16p + c][l0 + l] for the panels holding the block's cols columns
// (a panel's columns past them zero: its vectors are computed whole) and len steps. 8 x 8
// transposes in registers where AVX2 is there, elements one by one at the edges.
inline void pack_transposed_block(const float* bt, index_t ldb, index_t j0, index_t cols, index_t l0, index_t len,
                                  float* block) {
  for (index_t c0 = 0; c0 < cols; c0 += kPackedBCols) {
    float* panel = block + c0 / kPackedBCols * len * kPackedBCols;
    const float* src = bt + (j0 + c0) * ldb + l0;
    const index_t width = cols - c0 < kPackedBCols ? cols - c0 : kPackedBCols;
    index_t fast_cols = 0, fast_len = 0;
#if defined(__AVX2__)
    fast_cols = width / 8 * 8;
    fast_len = len / 8 * 8;
    for (index_t l = 0; l < fast_len; l += 8)
      for (index_t c = 0; c < fast_cols; c += 8)
        transpose_avx2::block8x8(src + c * ldb + l, ldb, panel + l * kPackedBCols + c, kPackedBCols);
#endif
    for (index_t l = 0; l < len; ++l)
      for (index_t c = l < fast_len ? fast_cols : 0; c < kPackedBCols; ++c)
        panel[l * kPackedBCols + c] = c < width ? src[c * ldb + l] : 0.0f;
  }
}

}  // namespace packed_b_detail

// Column tasks of whole panels, at most this many.
constexpr index_t kPackedBTasks = 8;
// Blocking, from the registers out: a tile's rows of A over kPackedBDepth steps of K (12 rows x
// 256 = 12 KB) stay in L1 while the tile sweeps a block of B, kPackedBDepth rows by as many
// columns as fit kPackedBBlockFloats (256 KB: L2); every row group passes over that block before
// the next. Deeper products go through y in depth ranges (the partial sums read back: two vectors
// per row and 256 steps). Without the blocks, a product whose B is larger than L2 read all of B
// from memory once per row group (64 x 4096 x 4096: 5 GMAC/s).
constexpr index_t kPackedBDepth = 256;
constexpr index_t kPackedBBlockFloats = 64 * 1024;

template <class B>
inline void gemm_tiles_simd(index_t m, index_t n, index_t k, const StridedRows& a, const B& b, const float* bias,
                            float* y, index_t ldy, const Epilogue& e, Parallel parallel = nullptr) {
  using packed_b_detail::kPackedBRows;
  if (k == 0) {  // no products: the bias (or zero), activated
    for (index_t i = 0; i < m; ++i)
      for (index_t j = 0; j < n; ++j) y[i * ldy + j] = activate(e, bias ? bias[j] : 0.0f);
    return;
  }
  const index_t panels = packed_b_panels(n);
  const index_t tasks = parallel ? (panels < kPackedBTasks ? panels : kPackedBTasks) : 1;
  const index_t groups = (m + kPackedBRows - 1) / kPackedBRows;
  const index_t depths = (k + kPackedBDepth - 1) / kPackedBDepth, depth = (k + depths - 1) / depths;
  constexpr index_t quantum = packed_b_detail::kPackedBVectors * kFloatLanes;
  const index_t fit = kPackedBBlockFloats / depth / quantum * quantum;
  const index_t width = fit > quantum ? fit : quantum;
  parallel_for(parallel, tasks, [&](index_t t) {
    const Range q = part_of(panels, tasks, t);
    const index_t j0 = q.begin * kPackedBCols, j1 = q.end * kPackedBCols < n ? q.end * kPackedBCols : n;
    for (index_t jc = j0; jc < j1; jc += width) {
      const index_t jend = j1 - jc < width ? j1 : jc + width;
      for (index_t l0 = 0; l0 < k; l0 += depth) {
        const packed_b_detail::DepthRange d{l0, k - l0 < depth ? k : l0 + depth, l0 == 0, l0 + depth >= k};
        for (index_t g = 0, i0 = 0; g < groups; ++g) {
          const index_t rows = m / groups + (g < m % groups ? 1 : 0);
          packed_b_detail::simd_rows_of(rows, i0, jc, jend, d, a, b, y, ldy, bias, e);
          i0 += rows;
        }
      }
    }
  });
}

// y = act(A * B + bias) for B given transposed (bt: [n, k], rows ldb apart), packed a block at a
// time (pack_transposed_block); tasks are ranges of blocks of columns.
inline void gemm_transposed_b_simd(index_t m, index_t n, index_t k, const StridedRows& a, const float* bt, index_t ldb,
                                   const float* bias, float* y, index_t ldy, const Epilogue& e,
                                   Parallel parallel = nullptr) {
  using namespace packed_b_detail;
  if (k == 0) return gemm_tiles_simd(m, n, k, a, PlainRows{bt, n}, bias, y, ldy, e);  // the bias alone
  const index_t blocks = (n + kTransposedBlockCols - 1) / kTransposedBlockCols;
  const index_t tasks = parallel ? (blocks < kPackedBTasks ? blocks : kPackedBTasks) : 1;
  const index_t groups = (m + kPackedBRows - 1) / kPackedBRows;
  const index_t depths = (k + kPackedBDepth - 1) / kPackedBDepth, depth = (k + depths - 1) / depths;
  parallel_for(parallel, tasks, [&](index_t t) {
    const Range q = part_of(blocks, tasks, t);
    alignas(64) float block[kTransposedBlockCols * kPackedBDepth];
    for (index_t b = q.begin; b < q.end; ++b) {
      const index_t j0 = b * kTransposedBlockCols, j1 = n - j0 < kTransposedBlockCols ? n : j0 + kTransposedBlockCols;
      for (index_t l0 = 0; l0 < k; l0 += depth) {
        const index_t len = k - l0 < depth ? k - l0 : depth;
        pack_transposed_block(bt, ldb, j0, j1 - j0, l0, len, block);
        const DepthRange d{0, len, l0 == 0, l0 + len == k};
        const StridedRows al{a.a + l0 * a.col, a.row, a.col};
        for (index_t g = 0, i0 = 0; g < groups; ++g) {
          const index_t rows = m / groups + (g < m % groups ? 1 : 0);
          simd_rows_of(rows, i0, j0, j1, d, al, PackedBlock{block, j0, len}, y, ldy, bias, e);
          i0 += rows;
        }
      }
    }
  });
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_GEMM_PACKED_B_SIMD_H
