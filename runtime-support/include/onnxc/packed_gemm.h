// Matrix product with a constant left operand packed at compile time, for Conv (and Gemm):
//   y[M, N] = act(A[M, K] * B[K, N] + bias[M])
// A is the weight. The compiler stores it packed in panels of kPanelRows rows, so the inner
// loop reads it sequentially: panel p holds rows [8p, 8p + r) (r = 8, or M % 8 for the last
// panel) as a[k * r + row]. B (an activation or its im2col) and y are row-major with leading
// dimensions ldb and ldy, so NCHW planes are used as they are, with no copy.
//
// Blocking, from the registers out:
// - a register tile of kTileRows rows by up to kTileVectors vectors of y stays in registers for
//   the whole K loop (32-register ISAs, AVX-512 and AArch64: 8 x 3 vectors = 24 registers;
//   16-register ISAs: 4 x 3 = 12), so each k step does kTileRows broadcasts of A (AArch64:
//   kTileRows / 4 loads, FMLA by element, packed_gemm_neon.h), kTileVectors loads of B and
//   kTileRows * kTileVectors FMAs; a row's columns are cut into tiles of 3 and 2 vectors (13
//   vectors: 3 3 3 2 2, not 3 3 3 3 1: a one-vector tile has too few accumulators to hide the
//   FMA latency), on AVX-512 the partial last vector counted as one (masked loads);
// - one A panel (K x 8 floats, 30 KB at K = 960) stays in L1 while the tiles sweep a block of
//   N columns;
// - that block of B (K x block_cols floats, at most kBlockFloats = 256 KB) stays in L2 while
//   every panel of A passes over it.
#ifndef ONNXC_PACKED_GEMM_H
#define ONNXC_PACKED_GEMM_H

#include <limits>
#include <type_traits>

#include "onnxc/activation.h"
#include "onnxc/base.h"
#include "onnxc/gemm.h"
#include "onnxc/parallel.h"
#include "onnxc/simd.h"
#if defined(ONNXC_SIMD) && defined(__aarch64__)
#include "onnxc/packed_gemm_neon.h"
#endif
#if !defined(ONNXC_SIMD) && defined(__riscv_vector)
#include "onnxc/packed_gemm_rvv.h"  // packed_gemm_detail::panel
#endif

namespace onnxc {
namespace rt {

constexpr index_t kPanelRows = 8;
// The widest register tile, in vectors (packed_gemm_detail::kTileVectors on SIMD targets).
constexpr index_t kTileVectorsMax = 3;
constexpr index_t kBlockFloats = 64 * 1024;
// Column blocks are multiples of 96: a whole number of tiles on every ISA (32, 24, 12 wide).
constexpr index_t kBlockColsQuantum = 96;

// Columns of B per block for a K-deep product (the same on every target: im2col's scratch
// size depends on it and is computed by the compiler).
constexpr index_t packed_gemm_block_cols(index_t k) {
  return k * kBlockColsQuantum >= kBlockFloats ? kBlockColsQuantum
                                               : (kBlockFloats / k) / kBlockColsQuantum * kBlockColsQuantum;
}

// Packs row-major a[m, k] into the panel layout above (the compiler calls this on weights).
inline void pack_weights(const float* a, index_t m, index_t k, float* packed) {
  for (index_t p = 0; p < m; p += kPanelRows) {
    const index_t rows = m - p < kPanelRows ? m - p : kPanelRows;
    for (index_t l = 0; l < k; ++l)
      for (index_t r = 0; r < rows; ++r) packed[p * k + l * rows + r] = a[(p + r) * k + l];
  }
}

namespace packed_gemm_detail {

// Row l of B: b + l * ldb, a row-major matrix. (conv.h's padded-input product reads B's rows
// at offsets into a padded copy of the input instead: the kernels take any type with these two.)
struct MatrixRows {
  const float* b;
  index_t ldb;
  const float* row(index_t l) const { return b + l * ldb; }
  MatrixRows shifted(index_t cols) const { return {b + cols, ldb}; }
};

// The portable kernel (targets without SIMD: Cortex-M4/M7, generic): a register tile of up to
// kScalarTileRows x kScalarTileCols outputs accumulates over the whole K loop, so every value of
// A and B loaded feeds four multiply-adds (16 accumulators + 4 + 4 operands fit the 32
// single-precision registers of a Cortex-M4/M7 FPU). The panel stores A's rows side by side,
// so a tile's four weights of one k are adjacent.
constexpr int kScalarTileRows = 4;
constexpr int kScalarTileCols = 4;

template <int Rows, int Cols, class B>
inline void scalar_tile(index_t k, const float* a, index_t a_step, const B& b, float* y, index_t ldy,
                        const float* bias, const Epilogue& e) {
  float acc[Rows][Cols];
  ONNXC_UNROLL for (int r = 0; r < Rows; ++r) {
    ONNXC_UNROLL for (int c = 0; c < Cols; ++c) acc[r][c] = bias ? bias[r] : 0.0f;
  }
  for (index_t l = 0; l < k; ++l) {
    float bv[Cols];
    ONNXC_UNROLL for (int c = 0; c < Cols; ++c) bv[c] = b.row(l)[c];
    ONNXC_UNROLL for (int r = 0; r < Rows; ++r) {
      const float av = a[l * a_step + r];
      ONNXC_UNROLL for (int c = 0; c < Cols; ++c) acc[r][c] += av * bv[c];
    }
  }
  ONNXC_UNROLL for (int r = 0; r < Rows; ++r) {
    ONNXC_UNROLL for (int c = 0; c < Cols; ++c) y[r * ldy + c] = acc[r][c];
  }
  // The activation in a loop of its own: unrolled per accumulator, its switch would be copied
  // sixteen times into firmware.
  if (e.activation != Activation::None)
    for (int r = 0; r < Rows; ++r) activate_row(e, y + r * ldy, Cols);
}

// Rows (kScalarTileRows, or 1 for the panel's last rows) of the panel times columns [0, n).
template <int Rows, class B>
inline void scalar_rows(index_t n, index_t k, const float* a, index_t a_step, const B& b, float* y,
                        index_t ldy, const float* bias, const Epilogue& e) {
  index_t j = 0;
  for (; j + kScalarTileCols <= n; j += kScalarTileCols)
    scalar_tile<Rows, kScalarTileCols>(k, a, a_step, b.shifted(j), y + j, ldy, bias, e);
  for (; j < n; ++j) scalar_tile<Rows, 1>(k, a, a_step, b.shifted(j), y + j, ldy, bias, e);
}

template <class B>
inline void panel_scalar(index_t rows, index_t n, index_t k, const float* a, const B& b, float* y,
                         index_t ldy, const float* bias, const Epilogue& e) {
  index_t r = 0;
  for (; r + kScalarTileRows <= rows; r += kScalarTileRows)
    scalar_rows<kScalarTileRows>(n, k, a + r, rows, b, y + r * ldy, ldy, bias ? bias + r : nullptr, e);
  for (; r < rows; ++r) scalar_rows<1>(n, k, a + r, rows, b, y + r * ldy, ldy, bias ? bias + r : nullptr, e);
}

#if defined(ONNXC_SIMD)

// The switches below instantiate every tile height; when inlining makes a product's row count
// a constant (a 1-channel Conv), GCC's -Warray-bounds looks into the heights that can never
// run with it and reports reads past its bias. The ranges are checked at run time by the
// callers (rows <= the panel's rows).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif

using rt::activate;  // activation.h: the vector activation

// The activations that are a clamp to [lo, hi] (Relu, Clip), applied in registers by kernels
// whose inner loops cannot afford activate's switch (a call that spills the accumulators);
// None is no clamp, and the other activations run over the stored output (activate_row).
struct Clamp {
  bool clamps;
  vfloat lo, hi;
};

inline Clamp clamp_of(const Epilogue& e) {
  const float inf = std::numeric_limits<float>::infinity();
  if (e.activation == Activation::Relu) return {true, vfloat(0.0f), vfloat(inf)};
  if (e.activation == Activation::Clip) return {true, vfloat(e.alpha), vfloat(e.beta)};
  return {false, vfloat(-inf), vfloat(inf)};
}

inline bool is_clamp(const Epilogue& e) {
  return e.activation == Activation::None || e.activation == Activation::Relu || e.activation == Activation::Clip;
}

inline vfloat clamp(const Clamp& c, vfloat x) { return c.clamps ? xsimd::min(xsimd::max(x, c.lo), c.hi) : x; }

// store(i, act(acc[i])) for a tile's N accumulators, the activation chosen once per tile: a
// switch per vector (activate) costs as much as the K loop of a short product (K = 16 or 27:
// MobileNet's expansions, the 3-channel first layers). Unrolled, so acc stays in registers.
template <int N, class Store>
ONNXC_INLINE void store_activated(const vfloat* acc, const Epilogue& e, Store store) {
  if (e.activation == Activation::None) {
    ONNXC_UNROLL for (int i = 0; i < N; ++i) store(i, acc[i]);
  } else if (e.activation == Activation::Relu) {  // one max (the clamp's min with +inf is a no-op)
    const vfloat zero(0.0f);
    ONNXC_UNROLL for (int i = 0; i < N; ++i) store(i, xsimd::max(acc[i], zero));
  } else if (is_clamp(e)) {
    const Clamp c = clamp_of(e);
    ONNXC_UNROLL for (int i = 0; i < N; ++i) store(i, xsimd::min(xsimd::max(acc[i], c.lo), c.hi));
  } else {
    ONNXC_UNROLL for (int i = 0; i < N; ++i) store(i, activate(e, acc[i]));
  }
}

// (AVX-512's tile was 8 x 2: 8 x 3 loads 11 values per 24 FMAs instead of 10 per 16; M = 160,
// K = 960, N = 196: 153 -> 171 GFLOP/s, bench/gemm_bench.)
constexpr int kTileVectors = static_cast<int>(kTileVectorsMax);
constexpr int kTileRows = kVectorRegisters >= 32 ? 8 : 4;

// The first `cols` lanes of a vector, loaded and stored under a mask made once per tile. Where
// the ISA masks loads (AVX-512, AVX2), a partial vector costs what a whole one does, and the last
// tile of a row takes it (kMaskedTail); elsewhere it goes through simd.h's copies, in a
// one-vector tile of its own. (AVX2, M = 400, N = 49, K = 400: the copies made the one-column
// tail as slow as the six vectors before it.)
#if defined(__AVX512F__)
constexpr bool kMaskedTail = true;
struct LaneMask {
  __mmask16 mask;
  explicit LaneMask(index_t cols) : mask(static_cast<__mmask16>((1u << cols) - 1u)) {}
  vfloat load(const float* p) const { return _mm512_maskz_loadu_ps(mask, p); }
  void store(vfloat v, float* p) const { _mm512_mask_storeu_ps(p, mask, v); }
};
#elif defined(__AVX2__)
constexpr bool kMaskedTail = true;
struct LaneMask {
  __m256i mask;
  explicit LaneMask(index_t cols)
      : mask(_mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(cols)),
                                _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))) {}
  vfloat load(const float* p) const { return _mm256_maskload_ps(p, mask); }
  void store(vfloat v, float* p) const { _mm256_maskstore_ps(p, mask, v); }
};
#else
constexpr bool kMaskedTail = false;
struct LaneMask {
  index_t cols;
  explicit LaneMask(index_t c) : cols(c) {}
  vfloat load(const float* p) const { return load_partial(p, cols); }
  void store(vfloat v, float* p) const { store_partial(v, p, cols); }
};
#endif
static_assert(kTileRows * kTileVectors + kTileVectors + 1 <= kVectorRegisters, "the tile must fit the registers");

// The accumulators start from the bias, or from these zeros without one: a load either way. (With
// `bias ? bias[r] : 0.0f`, GCC built the start values in stack memory and reloaded them, 16 more
// stores and 16 loads of vectors per 8 x 2 tile: M = 96, K = 16, N = 12544 512 -> 503 us,
// M = 144, K = 24, N = 3136 251 -> 246 us.)
alignas(64) constexpr float kZeroBias[kTileRows] = {};

#if defined(ONNXC_PACKED_GEMM_NEON_H)
// AArch64: a whole 8 x 3 tile of a deep product over a row-major B, its k loop in assembly
// (packed_gemm_neon.h: fma_8x3_rows), the accumulators through a stack block.
ONNXC_INLINE void deep_tile_8x3(index_t k, const float* a, const MatrixRows& b, float* y, index_t ldy,
                                const float* bias, const Epilogue& e) {
  alignas(16) float regs[24 * kFloatLanes];
  const float* start = bias ? bias : kZeroBias;
  ONNXC_UNROLL for (int i = 0; i < 24; ++i) vfloat(start[i / 3]).store_aligned(regs + kFloatLanes * i);
  const index_t done = fma_8x3_rows(k, a, b.b, b.ldb, regs);
  vfloat acc[8][3];
  ONNXC_UNROLL for (int i = 0; i < 24; ++i) acc[i / 3][i % 3] = vfloat::load_aligned(regs + kFloatLanes * i);
  for (index_t l = done; l < k; ++l) {  // an odd k's last
    const vfloat bv[3] = {vfloat::load_unaligned(b.row(l)), vfloat::load_unaligned(b.row(l) + kFloatLanes),
                          vfloat::load_unaligned(b.row(l) + 2 * kFloatLanes)};
    fma_by_lane<8, 3>(a + l * 8, bv, acc);
  }
  ONNXC_UNROLL for (int r = 0; r < 8; ++r)
    store_activated<3>(acc[r], e, [&](int v, vfloat out) { out.store_unaligned(y + r * ldy + v * kFloatLanes); });
}
#endif

// y[Rows, Vecs vectors] = act(a_panel[Rows, K] * b[K, Vecs vectors] + bias): the accumulators
// live in registers for the whole K loop. `a` points at the tile's first row inside its
// panel; rows of the panel are a_step apart. With Partial, the last vector holds `tail` < lanes
// columns (LaneMask's loads and stores).
// With Deep (AArch64, panel(): an 8-row panel of a product of kAsmMinDepth or more over a
// row-major B), a whole 3-vector tile is deep_tile_8x3.
template <int Rows, int Vecs, bool Partial = false, bool Deep = false, class B>
ONNXC_INLINE void tile(index_t k, const float* a, index_t a_step, const B& b, float* y, index_t ldy,
                 const float* bias, const Epilogue& e, index_t tail = kFloatLanes) {
#if defined(ONNXC_PACKED_GEMM_NEON_H)
  if constexpr (Deep && Vecs == 3 && !Partial) return deep_tile_8x3(k, a, b, y, ldy, bias, e);
#endif
  const LaneMask last(Partial ? tail : kFloatLanes);
  auto load = [&](const float* p, int v) {
    return Partial && v + 1 == Vecs ? last.load(p) : vfloat::load_unaligned(p);
  };
  vfloat acc[Rows][Vecs];
  const float* start = bias ? bias : kZeroBias;
  ONNXC_UNROLL for (int r = 0; r < Rows; ++r) {
    ONNXC_UNROLL for (int v = 0; v < Vecs; ++v) acc[r][v] = vfloat(start[r]);
  }
  for (index_t l = 0; l < k; ++l) {
    vfloat bv[Vecs];
    ONNXC_UNROLL for (int v = 0; v < Vecs; ++v) bv[v] = load(b.row(l) + v * kFloatLanes, v);
#if (defined(__x86_64__) || defined(__i386__)) && !defined(__AVX512F__)
    // 16 registers (AVX2, SSE): the 4 x 3 tile takes all of them (12 accumulators, 3 of B, a
    // broadcast), and GCC 12 then folds B's loads into every FMA (vfmadd231ps mem, a load per
    // row: 16 loads per 12 FMAs, load-bound on Zen 3). An empty asm that takes each vector in a
    // register keeps it there (AVX2, Zen 3, thread CPU time, loaded: 512^3 46-48 -> 58-65
    // GFLOP/s, 256 x 196 x 2304 25-29 -> 37-43; docs/performance.md 'Convolution kernels
    // (ninth round)').
    ONNXC_UNROLL for (int v = 0; v < Vecs; ++v) asm("" : "+x"(bv[v].data));
#endif
#if defined(ONNXC_PACKED_GEMM_NEON_H)
    if constexpr (kFmaByLane<Rows>) {
      // The tile is its whole panel here (kTileRows == kPanelRows: panel() runs one tile from row
      // 0), so a_step == Rows: a constant step, which GCC otherwise kept in a stack slot and
      // reloaded on every k (512^3: 34 -> 33 instructions per step).
      static_assert(kTileRows == kPanelRows, "a by-lane tile is a whole panel");
      fma_by_lane<Rows, Vecs>(a + l * Rows, bv, acc);
      continue;
    }
#endif
    ONNXC_UNROLL for (int r = 0; r < Rows; ++r) {
      const vfloat av(a[l * a_step + r]);
      ONNXC_UNROLL for (int v = 0; v < Vecs; ++v) acc[r][v] = xsimd::fma(av, bv[v], acc[r][v]);
    }
  }
  // (A loop over acc[] that is not unrolled makes GCC keep the accumulators in memory and store
  // all of them on every k step: 4x slower. Since the tiles are inlined into panel_rows, that
  // includes the loops above: without ONNXC_UNROLL there, the 4-column tail of M = 64, K = 384,
  // N = 196 did, and the product took 99 us instead of 88.)
  // Row by row: GCC unrolls a loop of at most 16 (ONNXC_UNROLL), and over 8 x 3 accumulators
  // it kept a loop that addressed acc, so stored all 24 to the stack on every k step (M = 64,
  // N = 37, K = 64: 2.2 -> 5.2 us).
  ONNXC_UNROLL for (int r = 0; r < Rows; ++r) {
    store_activated<Vecs>(acc[r], e, [&](int v, vfloat out) {
      float* to = y + r * ldy + v * kFloatLanes;
      if (Partial && v + 1 == Vecs) last.store(out, to);
      else out.store_unaligned(to);
    });
  }
}

// The last cols < lanes columns: a one-vector tile with partial loads and stores (simd.h).
template <int Rows, class B>
ONNXC_INLINE void tail_tile(index_t cols, index_t k, const float* a, index_t a_step, const B& b, float* y,
                            index_t ldy, const float* bias, const Epilogue& e) {
  tile<Rows, 1, true>(k, a, a_step, b, y, ldy, bias, e, cols);
}

// Vecs vectors of columns from column j in one tile, the last one partial (`tail` columns) when
// `partial`.
template <int Rows, int Vecs, bool Deep = false, class B>
ONNXC_INLINE void tile_of(bool partial, index_t tail, index_t j, index_t k, const float* a, index_t a_step,
                          const B& b, float* y, index_t ldy, const float* bias, const Epilogue& e) {
  if (partial) tile<Rows, Vecs, true>(k, a, a_step, b.shifted(j), y + j, ldy, bias, e, tail);
  else tile<Rows, Vecs, false, Deep>(k, a, a_step, b.shifted(j), y + j, ldy, bias, e);
}

// Rows (<= kTileRows) rows of a panel times columns [0, n): tiles of 3 vectors, a remainder of 1
// or 4 vectors as tiles of 2 (and 1 when n has a single vector), then (without masked loads) the
// partial vector, each inlined into its column loop. (Choosing the height per tile instead, a
// switch among eight instantiations inside the column loop, made every tile a call: GCC keeps
// them out of line, and a call per tile, with its vzeroupper, saved registers and reloaded
// arguments, cost M = 64, K = 16, N = 3025 78 us against 59 us inlined; at K = 16 a tile is
// only 256 FMAs.)
template <int Rows, class B, bool Deep = false>
inline void panel_rows(index_t n, index_t k, const float* a, index_t a_step, const B& b, float* y, index_t ldy,
                       const float* bias, const Epilogue& e) {
  static_assert(kTileVectors == 3, "the remainders below are tiles of 2 and 1 vectors");
  constexpr index_t L = kFloatLanes;
  const index_t tail = n % L;
  const bool masked = kMaskedTail && tail != 0;  // the partial vector in the last tile
  const index_t vectors = n / L + (masked ? 1 : 0);
  index_t wide = vectors / 3, rest = vectors % 3;
  if (rest == 1 && wide > 0) --wide, rest = 4;
  index_t j = 0;
  for (index_t t = 0; t < wide; ++t, j += 3 * L)
    tile_of<Rows, 3, Deep>(masked && rest == 0 && t + 1 == wide, tail, j, k, a, a_step, b, y, ldy, bias, e);
  for (; rest >= 2; rest -= 2, j += 2 * L)
    tile_of<Rows, 2>(masked && rest == 2, tail, j, k, a, a_step, b, y, ldy, bias, e);
  if (rest == 1) tile_of<Rows, 1>(masked, tail, j, k, a, a_step, b, y, ldy, bias, e), j += L;
  if (!kMaskedTail && j < n) tail_tile<Rows>(n - j, k, a, a_step, b.shifted(j), y + j, ldy, bias, e);
}

#if defined(ONNXC_PACKED_GEMM_NEON_H)
// AArch64: 8 rows of a panel of a deep product over a row-major B (deep_tile_8x3's tiles).
__attribute__((noinline)) inline void deep_panel_rows(index_t n, index_t k, const float* a, index_t a_step,
                                                      const MatrixRows& b, float* y, index_t ldy, const float* bias,
                                                      const Epilogue& e) {
  panel_rows<8, MatrixRows, true>(n, k, a, a_step, b, y, ldy, bias, e);
}
#endif

// One panel times columns [0, n) of B, kTileRows rows at a time.
template <class B>
inline void panel(index_t rows, index_t n, index_t k, const float* a, const B& b, float* y,
                  index_t ldy, const float* bias, const Epilogue& e) {
  for (index_t r0 = 0; r0 < rows; r0 += kTileRows) {
    const index_t tr = rows - r0 < kTileRows ? rows - r0 : kTileRows;
    const float* ar = a + r0;
    float* yr = y + r0 * ldy;
    const float* br = bias ? bias + r0 : nullptr;
    switch (tr) {
      case 1: panel_rows<1>(n, k, ar, rows, b, yr, ldy, br, e); break;
      case 2: panel_rows<2>(n, k, ar, rows, b, yr, ldy, br, e); break;
      case 3: panel_rows<3>(n, k, ar, rows, b, yr, ldy, br, e); break;
      case 4: panel_rows<4>(n, k, ar, rows, b, yr, ldy, br, e); break;
      default:
        if constexpr (kTileRows == 8) {
          switch (tr) {
            case 5: panel_rows<5>(n, k, ar, rows, b, yr, ldy, br, e); break;
            case 6: panel_rows<6>(n, k, ar, rows, b, yr, ldy, br, e); break;
            case 7: panel_rows<7>(n, k, ar, rows, b, yr, ldy, br, e); break;
            case 8:
#if defined(ONNXC_PACKED_GEMM_NEON_H)
              // Out of line and a separate instantiation, so that the shallow products' code stays
              // what it was (a branch inside the tile made it 10-20 % longer: mobilenet_v2's K = 16
              // to 32 products under qemu-aarch64; bench/qemu/gemm_insns.cpp's shallow shapes now
              // count as before).
              if constexpr (std::is_same<B, MatrixRows>::value)
                if (k >= kAsmMinDepth) {
                  deep_panel_rows(n, k, ar, rows, b, yr, ldy, br, e);
                  break;
                }
#endif
              panel_rows<8>(n, k, ar, rows, b, yr, ldy, br, e);
              break;
            default: break;
          }
        }
        break;
    }
  }
}

#if defined(__AVX512F__)
// ---- few panels: the panels inside the column loop ----
//
// A product with few rows of A (M <= kFewPanels * 8: squeezenet1_1's 1x1 squeezes, M = 16, and
// MobileNet's projections to 16-32 channels) over a large plane: all of A fits L1, and B is the
// plane (1.5 MB at K = 128, N = 3025: it comes from L3). Every tile of B (K rows x 32 columns) is
// read from memory once and multiplied by every panel while it is in L1, and the next tile's
// rows are prefetched during this one: B's K rows are K streams N floats apart, too many for the
// hardware prefetcher. With B rotating among buffers in L3 (one thread, on a loaded machine):
// M = 16, K = 128, N = 3025: 154-178 -> 117 us; K = 64: 68-71 -> 62-64 us; K = 32, N = 12544:
// 222-405 -> 147-158 us; M = 24, K = 144, N = 3136: 258 -> 205 us; deeper or narrower products
// unchanged. The prefetch is most of it: the same loop without it was 131-178, 65-70 and 230-390
// us. (AVX2's 4 x 3 tiles measured the same either way, so they keep the panel loop.)
// Panels of M = 96 inside the column loop were 2x slower (N = 12544: y's 96 rows are 49 KB apart,
// 4 distinct offsets modulo 4 KB, and thrash L1's sets), hence only few panels.
constexpr index_t kFewPanels = 4;

template <int Rows, int Vecs>
ONNXC_INLINE void tile_prefetching(index_t k, const float* a, index_t a_step, const float* b, index_t ldb, float* y,
                             index_t ldy, const float* bias, const Epilogue& e, index_t prefetch) {
  vfloat acc[Rows][Vecs];
  const float* start = bias ? bias : kZeroBias;
  ONNXC_UNROLL for (int r = 0; r < Rows; ++r) {
    ONNXC_UNROLL for (int v = 0; v < Vecs; ++v) acc[r][v] = vfloat(start[r]);
  }
  for (index_t l = 0; l < k; ++l) {
    const float* row = b + l * ldb;
    vfloat bv[Vecs];
    for (int v = 0; v < Vecs; ++v) bv[v] = vfloat::load_unaligned(row + v * kFloatLanes);
    if (prefetch) {
      for (int v = 0; v < Vecs; ++v) __builtin_prefetch(row + prefetch + v * kFloatLanes);
      __builtin_prefetch(row + prefetch + Vecs * kFloatLanes - 1);
    }
    ONNXC_UNROLL for (int r = 0; r < Rows; ++r) {
      const vfloat av(a[l * a_step + r]);
      ONNXC_UNROLL for (int v = 0; v < Vecs; ++v) acc[r][v] = xsimd::fma(av, bv[v], acc[r][v]);
    }
  }
  store_activated<Rows * Vecs>(&acc[0][0], e, [&](int i, vfloat out) {
    out.store_unaligned(y + i / Vecs * ldy + i % Vecs * kFloatLanes);
  });
}

inline void few_panels(index_t m, index_t n, index_t k, const float* a_packed, const float* b, index_t ldb, float* y,
                       index_t ldy, const float* bias, const Epilogue& e) {
  constexpr index_t width = kTileVectors * kFloatLanes;
  index_t j = 0;
  for (; j + width <= n; j += width) {
    const index_t prefetch = n - j >= 2 * width ? width : 0;
    for (index_t p = 0; p < m; p += kPanelRows) {
      const index_t rows = m - p < kPanelRows ? m - p : kPanelRows;
      const float* br = bias ? bias + p : nullptr;
      if (rows == kTileRows)
        tile_prefetching<kTileRows, kTileVectors>(k, a_packed + p * k, rows, b + j, ldb, y + p * ldy + j, ldy, br, e,
                                                  p == 0 ? prefetch : 0);
      else
        panel(rows, width, k, a_packed + p * k, MatrixRows{b + j, ldb}, y + p * ldy + j, ldy, br, e);
    }
  }
  if (j < n)
    for (index_t p = 0; p < m; p += kPanelRows) {
      const index_t rows = m - p < kPanelRows ? m - p : kPanelRows;
      panel(rows, n - j, k, a_packed + p * k, MatrixRows{b + j, ldb}, y + p * ldy + j, ldy, bias ? bias + p : nullptr, e);
    }
}
#endif

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#elif !defined(__riscv_vector)  // (RVV: packed_gemm_rvv.h's panel)


template <class B>
inline void panel(index_t rows, index_t n, index_t k, const float* a, const B& b, float* y,
                  index_t ldy, const float* bias, const Epilogue& e) {
  panel_scalar(rows, n, k, a, b, y, ldy, bias, e);
}

#endif

}  // namespace packed_gemm_detail

// Panel `panel` (rows [8 * panel, 8 * panel + 8)) of y[M, n] = act(A * B[K, n] + bias).
inline void packed_gemm_panel(index_t panel, index_t m, index_t n, index_t k, const float* a_packed, const float* b,
                              index_t ldb, float* y, index_t ldy, const float* bias, const Epilogue& e) {
  const index_t p = panel * kPanelRows;
  const index_t rows = m - p < kPanelRows ? m - p : kPanelRows;
  packed_gemm_detail::panel(rows, n, k, a_packed + p * k, packed_gemm_detail::MatrixRows{b, ldb}, y + p * ldy, ldy, bias ? bias + p : nullptr, e);
}

inline index_t packed_gemm_panels(index_t m) { return (m + kPanelRows - 1) / kPanelRows; }

// y[M, n] = act(A * B[K, n] + bias) for n columns (one block: n <= packed_gemm_block_cols(k)
// keeps it in L2, but any n is correct). a_packed is laid out by pack_weights. With a
// parallel-for, each panel of rows is a task (they share the block of B, read only).
inline void packed_gemm_block(index_t m, index_t n, index_t k, const float* a_packed, const float* b, index_t ldb,
                              float* y, index_t ldy, const float* bias, const Epilogue& e,
                              Parallel parallel = nullptr) {
  parallel_for(parallel, packed_gemm_panels(m), [&](index_t panel) {
    packed_gemm_panel(panel, m, n, k, a_packed, b, ldb, y, ldy, bias, e);
  });
}

// ---- narrow products: vectors along the rows ----
//
// A product with few columns (MobileNet's 7 x 7 layers: N = 49) fills few of the lanes of
// vectors along N (49 of 64 on AVX-512, and the last column costs a whole K loop). With
// AVX-512, such products are computed with vectors along M instead: 16 consecutive rows of A at
// one k are two 8-row halves of adjacent panels, and a tile of kNarrowRowVectors vectors of rows
// by up to kNarrowMaxCols columns broadcasts B's elements. The tile's outputs go through a small
// buffer to y's rows (a transpose: scalar stores, paid once per tile after its K loop).
#if defined(ONNXC_SIMD) && defined(__AVX512F__)

namespace narrow_detail {

constexpr int kNarrowRowVectors = 2;  // 32 rows: four full panels
constexpr int kNarrowMaxCols = 8;     // 16 accumulators + 2 row vectors + 1 broadcast
constexpr index_t kNarrowRows = kNarrowRowVectors * kFloatLanes;
static_assert(kFloatLanes == 2 * kPanelRows, "a vector of rows is two panels' halves");

// Rows [row0, row0 + 16) of A at step l: the l-th 8 rows of two full panels.
inline vfloat load_rows(const float* a_packed, index_t k, index_t row0, index_t l) {
  const float* lo = a_packed + row0 * k + l * kPanelRows;
  return _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_loadu_ps(lo)), _mm256_loadu_ps(lo + kPanelRows * k), 1);
}

// y[row0 + i, c] for 32 rows and Cols columns of B (b: its first column).
template <int Cols>
inline void tile(index_t k, const float* a_packed, index_t row0, const float* b, index_t ldb, float* y, index_t ldy,
                 const float* bias, const Epilogue& e) {
  constexpr int V = kNarrowRowVectors;
  vfloat acc[Cols][V];
  for (int v = 0; v < V; ++v) {
    const vfloat start = bias ? vfloat::load_unaligned(bias + row0 + v * kFloatLanes) : vfloat(0.0f);
    for (int c = 0; c < Cols; ++c) acc[c][v] = start;
  }
  for (index_t l = 0; l < k; ++l) {
    vfloat av[V];
    for (int v = 0; v < V; ++v) av[v] = load_rows(a_packed, k, row0 + v * kFloatLanes, l);
    for (int c = 0; c < Cols; ++c) {
      const vfloat bv(b[l * ldb + c]);
      for (int v = 0; v < V; ++v) acc[c][v] = xsimd::fma(av[v], bv, acc[c][v]);
    }
  }
  alignas(64) float columns[Cols][kNarrowRows];
  packed_gemm_detail::store_activated<Cols * V>(&acc[0][0], e, [&](int i, vfloat out) {
    out.store_aligned(columns[i / V] + i % V * kFloatLanes);
  });
  for (index_t i = 0; i < kNarrowRows; ++i)
    for (int c = 0; c < Cols; ++c) y[(row0 + i) * ldy + c] = columns[c][i];
}

inline void tile_cols(index_t cols, index_t k, const float* a_packed, index_t row0, const float* b, index_t ldb,
                      float* y, index_t ldy, const float* bias, const Epilogue& e) {
  switch (cols) {
    case 1: return tile<1>(k, a_packed, row0, b, ldb, y, ldy, bias, e);
    case 2: return tile<2>(k, a_packed, row0, b, ldb, y, ldy, bias, e);
    case 3: return tile<3>(k, a_packed, row0, b, ldb, y, ldy, bias, e);
    case 4: return tile<4>(k, a_packed, row0, b, ldb, y, ldy, bias, e);
    case 5: return tile<5>(k, a_packed, row0, b, ldb, y, ldy, bias, e);
    case 6: return tile<6>(k, a_packed, row0, b, ldb, y, ldy, bias, e);
    case 7: return tile<7>(k, a_packed, row0, b, ldb, y, ldy, bias, e);
    case 8: return tile<8>(k, a_packed, row0, b, ldb, y, ldy, bias, e);
    default: return;
  }
}

// 32 rows from row0 times all n columns, in tiles of equal width (49 columns: 7 tiles of 7).
inline void rows(index_t n, index_t k, const float* a_packed, index_t row0, const float* b, index_t ldb, float* y,
                 index_t ldy, const float* bias, const Epilogue& e) {
  const index_t tiles = (n + kNarrowMaxCols - 1) / kNarrowMaxCols, width = (n + tiles - 1) / tiles;
  for (index_t j = 0; j < n; j += width)
    tile_cols(n - j < width ? n - j : width, k, a_packed, row0, b + j, ldb, y + j, ldy, bias, e);
}

}  // namespace narrow_detail

// Fewer columns than one wide tile (where vectors along N waste lanes), and deep enough that the
// transposed stores are a small part of a tile's work.
inline bool packed_gemm_is_narrow(index_t m, index_t n, index_t k) {
  return n < 4 * kFloatLanes && k >= 64 && m >= narrow_detail::kNarrowRows;
}

#else

inline bool packed_gemm_is_narrow(index_t, index_t, index_t) { return false; }

#endif

// The narrow product: a task per 32 rows; the rows of a last partial group go panel by panel.
inline void packed_gemm_narrow(index_t m, index_t n, index_t k, const float* a_packed, const float* b, index_t ldb,
                               float* y, index_t ldy, const float* bias, const Epilogue& e, Parallel parallel) {
#if defined(ONNXC_SIMD) && defined(__AVX512F__)
  using narrow_detail::kNarrowRows;
  parallel_for(parallel, (m + kNarrowRows - 1) / kNarrowRows, [&](index_t group) {
    const index_t row0 = group * kNarrowRows;
    if (m - row0 >= kNarrowRows) return narrow_detail::rows(n, k, a_packed, row0, b, ldb, y, ldy, bias, e);
    for (index_t panel = row0 / kPanelRows; panel < packed_gemm_panels(m); ++panel)
      packed_gemm_panel(panel, m, n, k, a_packed, b, ldb, y, ldy, bias, e);
  });
#else
  (void)m, (void)n, (void)k, (void)a_packed, (void)b, (void)ldb, (void)y, (void)ldy, (void)bias, (void)e, (void)parallel;
#endif
}

// ---- columns outer: a strip of B in L1, the panels of A streaming past it ----
//
// The panel loop (packed_gemm_panel) keeps one panel of A in L1 and reads the whole block of B
// from L2 for every panel: per k step, a tile's kTileVectors vectors from K rows ldb apart. When a
// strip of B one tile wide (K x 48 floats on AVX-512) fits L1, the other order reads less from L2:
// the strip stays in L1 while every panel of A (8 floats per k step, sequential) passes over it.
// Taken for a product that is one block of columns (at most kColumnsOuterMaxCols: y's rows are
// then close enough not to collide in L1's sets, which made M = 96, N = 12544 2x slower) of
// several panels. M = 960, N = 196, K = 160 (a 1x1 Conv on 14 x 14): 169 -> 187 GFLOP/s; K = 64,
// M = 384: 170 -> 187 (bench/gemm_bench's small-M products).
constexpr index_t kColumnsOuterL1Floats = 8 * 1024;  // 32 KB of the 48 KB L1
constexpr index_t kColumnsOuterMaxCols = 1024;

// (SIMD targets only: the portable kernel's 4 x 4 tiles would see strips of 3 columns.)
inline bool packed_gemm_columns_outer(index_t m, index_t n, index_t k) {
#if defined(ONNXC_SIMD)
  return k * kTileVectorsMax * kFloatLanes <= kColumnsOuterL1Floats && n <= kColumnsOuterMaxCols &&
         n > kTileVectorsMax * kFloatLanes && packed_gemm_panels(m) > 2;
#else
  (void)m, (void)n, (void)k;
  return false;
#endif
}

// Panels [p0, p1) times all n columns, a strip of columns at a time; the last strip takes what is
// left below two strips' width, so panel_rows splits the remainder as it would a whole row.
inline void packed_gemm_strips(index_t p0, index_t p1, index_t m, index_t n, index_t k, const float* a_packed,
                               const float* b, index_t ldb, float* y, index_t ldy, const float* bias,
                               const Epilogue& e) {
  constexpr index_t width = kTileVectorsMax * kFloatLanes;
  for (index_t j = 0; j < n;) {
    const index_t cols = n - j < 2 * width ? n - j : width;
    for (index_t p = p0; p < p1; ++p)
      packed_gemm_panel(p, m, cols, k, a_packed, b + j, ldb, y + j, ldy, bias, e);
    j += cols;
  }
}

// The whole product, block by block of columns: every (block, panel) pair is a task, panels of
// one block next to each other so threads share that block of B (serially: block by block).
inline void packed_gemm(index_t m, index_t n, index_t k, const float* a_packed, const float* b, index_t ldb, float* y,
                        index_t ldy, const float* bias, const Epilogue& e, Parallel parallel = nullptr) {
  if (packed_gemm_is_narrow(m, n, k)) return packed_gemm_narrow(m, n, k, a_packed, b, ldb, y, ldy, bias, e, parallel);
  if (packed_gemm_columns_outer(m, n, k)) {
    // Tasks are ranges of panels (each over every strip): threads share B's strips in L2.
    const index_t panels = packed_gemm_panels(m), tasks = parallel ? (panels < 8 ? panels : 8) : 1;
    return parallel_for(parallel, tasks, [&](index_t t) {
      const Range r = part_of(panels, tasks, t);
      packed_gemm_strips(r.begin, r.end, m, n, k, a_packed, b, ldb, y, ldy, bias, e);
    });
  }
  const index_t block = packed_gemm_block_cols(k);
  const index_t panels = packed_gemm_panels(m), blocks = (n + block - 1) / block;
#if defined(ONNXC_SIMD) && defined(__AVX512F__)
  if (panels <= packed_gemm_detail::kFewPanels && n >= 2 * block) {
    return parallel_for(parallel, blocks, [&](index_t task) {
      const index_t j = task * block;
      packed_gemm_detail::few_panels(m, n - j < block ? n - j : block, k, a_packed, b + j, ldb, y + j, ldy, bias, e);
    });
  }
#endif
  parallel_for(parallel, blocks * panels, [&](index_t task) {
    const index_t j = task / panels * block;
    packed_gemm_panel(task % panels, m, n - j < block ? n - j : block, k, a_packed, b + j, ldb, y + j, ldy, bias, e);
  });
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_PACKED_GEMM_H
