// Winograd F(2x2, 3x3) convolution: 3 x 3, stride 1, dilation 1, one group, float.
//
// Each 2 x 2 block of outputs (a tile) of an output channel is A^T [sum over input channels of
// U(m, c) .* V(c, tile)] A, where V = B^T d B is the transform of the tile's 4 x 4 input patch d
// and U = G g G^T that of the 3 x 3 weight g (computed at compile time, winograd_pack_weights):
// 16 element-wise products per tile where the direct form takes 36, so the multiply-accumulates
// are 4/9 of the convolution's. Written as 16 matrix products, one per point of the 4 x 4
// transform: Y_xi[M, tiles] = U_xi[M, C] * V_xi[C, tiles], each through the packed product's
// register tiles (packed_gemm.h) with U_xi packed in its panels.
//
// The tiles go in blocks of whole rows of tiles: per block, the input transform writes V
// (16 x C x block floats of scratch), then each panel of 8 output channels takes its 16 products
// into a buffer of 16 x 8 x block floats and the output transform reads them back: bias,
// activation and the stores to the output planes (odd output sizes: the last tile's extra
// row or column is not stored). With a parallel-for the input transform splits by channel and
// the panels into `slots` tasks, each with its own product buffer.
//
// The transforms add and subtract only (B and A hold 0 and +-1; G holds halves), so the results
// differ from the direct sum by a few ulps of the inputs' magnitudes: within the conformance
// tolerance, not bit-identical to the other kernels.
#ifndef ONNXC_WINOGRAD_H
#define ONNXC_WINOGRAD_H

#include <utility>

#include "onnxc/base.h"
#include "onnxc/conv.h"
#include "onnxc/packed_gemm.h"
#include "onnxc/parallel.h"
#include "onnxc/simd.h"

namespace onnxc {
namespace rt {

constexpr index_t kWinogradPoints = 16;  // the 4 x 4 transform

// The convolutions the kernel computes (2-d, any padding up to 2 on each side).
inline bool conv_fits_winograd(const ConvParams& p) {
  return p.group == 1 && p.in_d == 1 && p.k_d == 1 && p.k_h == 3 && p.k_w == 3 && p.stride_h == 1 &&
         p.stride_w == 1 && p.dilation_h == 1 && p.dilation_w == 1 && p.pad_h <= 2 && p.pad_w <= 2 &&
         p.out_h >= 1 && p.out_w >= 1;
}

inline index_t winograd_tiles_h(const ConvParams& p) { return (p.out_h + 1) / 2; }
inline index_t winograd_tiles_w(const ConvParams& p) { return (p.out_w + 1) / 2; }

// U = G g G^T for every (m, c), G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1], stored as 16
// matrices U_xi[M, C] (xi = 4 * row + column of U), each in pack_weights' panel layout (the
// compiler calls this on the weights).
inline void winograd_pack_weights(const float* w, index_t m, index_t c, float* packed) {
  for (index_t mm = 0; mm < m; ++mm)
    for (index_t cc = 0; cc < c; ++cc) {
      const float* g = w + (mm * c + cc) * 9;
      float t[4][3];  // G g
      for (int col = 0; col < 3; ++col) {
        const float g0 = g[col], g1 = g[3 + col], g2 = g[6 + col];
        t[0][col] = g0;
        t[1][col] = 0.5f * (g0 + g1 + g2);
        t[2][col] = 0.5f * (g0 - g1 + g2);
        t[3][col] = g2;
      }
      const index_t p = mm / kPanelRows * kPanelRows, rows = m - p < kPanelRows ? m - p : kPanelRows;
      float* at = packed + p * c + cc * rows + (mm - p);  // (mm, cc) in U_0's panel layout
      for (int row = 0; row < 4; ++row) {  // (G g) G^T
        const float a = t[row][0], b = t[row][1], d = t[row][2];
        at[(row * 4 + 0) * m * c] = a;
        at[(row * 4 + 1) * m * c] = 0.5f * (a + b + d);
        at[(row * 4 + 2) * m * c] = 0.5f * (a - b + d);
        at[(row * 4 + 3) * m * c] = d;
      }
    }
}

namespace winograd_detail {

#if defined(ONNXC_SIMD)
using wvec = vfloat;
constexpr index_t kLanes = kFloatLanes;
inline wvec load(const float* p) { return vfloat::load_unaligned(p); }
inline void store(wvec v, float* p, index_t n) {
  if (n >= kLanes) v.store_unaligned(p);
  else store_partial(v, p, n);
}
// Lanes 0..L/2-1 and L/2..L-1 of a and b interleaved: a0 b0 a1 b1 ... (two output columns of
// consecutive tiles).
inline void interleave(wvec a, wvec b, wvec& lo, wvec& hi) {
#if defined(__AVX512F__)
  const __m512i ilo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i ihi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  lo = _mm512_permutex2var_ps(a, ilo, b);
  hi = _mm512_permutex2var_ps(a, ihi, b);
#elif defined(__AVX__)
  const __m256 l = _mm256_unpacklo_ps(a, b), h = _mm256_unpackhi_ps(a, b);
  lo = _mm256_permute2f128_ps(l, h, 0x20);
  hi = _mm256_permute2f128_ps(l, h, 0x31);
#else
  alignas(64) float x[kLanes], y[kLanes], out[2 * kLanes];
  a.store_aligned(x);
  b.store_aligned(y);
  for (index_t i = 0; i < kLanes; ++i) out[2 * i] = x[i], out[2 * i + 1] = y[i];
  lo = vfloat::load_aligned(out);
  hi = vfloat::load_aligned(out + kLanes);
#endif
}
#else
using wvec = float;
constexpr index_t kLanes = 1;
inline wvec load(const float* p) { return *p; }
inline void store(wvec v, float* p, index_t) { *p = v; }
#endif

// Slack after the split rows: whole vectors read from tile tx + 1 on. The widest vector on every
// target, so the scratch size the compiler computes (built without SIMD) is the kernel's.
constexpr index_t kSplitSlack = 16;
static_assert(kLanes <= kSplitSlack, "the split rows' slack must hold a vector");

// The even and odd columns of input row `ih` of a channel plane, zero outside the plane: the
// columns tile tx's patch reads are even[tx], odd[tx], even[tx + 1], odd[tx + 1] (from input
// column 2 tx - pad_w), for tiles [tx0, tx1). Entries up to tx1 + kLanes are written.
inline void split_row(const ConvParams& p, const float* xc, index_t ih, index_t tx0, index_t tx1, float* even,
                      float* odd) {
#if defined(ONNXC_SIMD) && defined(__AVX512F__)
  // 16 pairs per step: two masked loads (lanes outside the row read as zero and touch no memory)
  // split into their even and odd lanes. (Scalar, the split rows took most of the time of the
  // small planes: resnet8-cifar's 8 x 8 input transform 35 us.)
  const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i od = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  const bool inside = ih >= 0 && ih < p.in_h;
  const float* row = xc + (inside ? ih : 0) * p.in_w;
  for (index_t i = tx0; i <= tx1; i += 16) {  // (entries after tx1 only feed lanes of no tile)
    __m512 a = _mm512_setzero_ps(), b = a;
    if (inside) {
      const index_t col = 2 * i - p.pad_w;  // of lane 0 of a
      auto mask = [&](index_t first) {     // lanes from input column first on inside the row
        const index_t lo = first < 0 ? -first : 0, hi = p.in_w - first;
        if (hi <= 0 || lo >= 16) return static_cast<__mmask16>(0);
        const unsigned top = hi >= 16 ? 0xffffu : (1u << hi) - 1u;
        return static_cast<__mmask16>(top & ~((1u << lo) - 1u));
      };
      const __mmask16 ma = mask(col), mb = mask(col + 16);
      if (ma) a = _mm512_maskz_loadu_ps(ma, row + col);
      if (mb) b = _mm512_maskz_loadu_ps(mb, row + col + 16);
    }
    _mm512_storeu_ps(even + i, _mm512_permutex2var_ps(a, ev, b));
    _mm512_storeu_ps(odd + i, _mm512_permutex2var_ps(a, od, b));
  }
#else
  const index_t end = tx1 + kSplitSlack;
  if (ih < 0 || ih >= p.in_h) {
    for (index_t i = tx0; i <= end; ++i) even[i] = odd[i] = 0.0f;
    return;
  }
  const float* row = xc + ih * p.in_w;
  for (index_t i = tx0; i <= end; ++i) {
    const index_t iw = 2 * i - p.pad_w;
    even[i] = iw >= 0 && iw < p.in_w ? row[iw] : 0.0f;
    odd[i] = iw + 1 >= 0 && iw + 1 < p.in_w ? row[iw + 1] : 0.0f;
  }
#endif
}

// Calls f(ty, tx0, tx1, at) for the tiles [t0, t1) of the flat order (ty * tiles_w + tx), one
// call per row of tiles they cover; `at` is tx0's index from t0.
template <class F>
inline void for_tile_rows(index_t tw, index_t t0, index_t t1, F f) {
  for (index_t t = t0; t < t1;) {
    const index_t ty = t / tw, tx0 = t % tw, tx1 = tx0 + (t1 - t < tw - tx0 ? t1 - t : tw - tx0);
    f(ty, tx0, tx1, t - t0);
    t += tx1 - tx0;
  }
}

// V for input channel c and tiles [t0, t1) into v (16 planes of ldv floats, channel c's row of
// each ldc floats in): B^T d B, B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]. `split` holds
// four pairs of split rows (winograd_split_floats).
inline void input_transform(const ConvParams& p, const float* x, index_t c, index_t t0, index_t t1, float* v,
                            index_t ldv, index_t ldc, float* split) {
  const index_t tw = winograd_tiles_w(p), stride = tw + 2 + 2 * kSplitSlack;
  const float* xc = x + c * p.in_h * p.in_w;
  float* even[4];
  float* odd[4];
  for (int i = 0; i < 4; ++i) {
    even[i] = split + 2 * i * stride;
    odd[i] = even[i] + stride;
  }
  index_t split_ty = -2, split_tx0 = 0, split_tx1 = 0;  // the tile row whose input rows `split` holds
  for_tile_rows(tw, t0, t1, [&](index_t ty, index_t tx0, index_t tx1, index_t at) {
    // Rows 2 ty - pad_h + 2 and + 3 are rows 0 and 1 of the next row of tiles: split once.
    const bool follows = ty == split_ty + 1 && tx0 == split_tx0 && tx1 == split_tx1;
    if (follows) {
      std::swap(even[0], even[2]), std::swap(even[1], even[3]);
      std::swap(odd[0], odd[2]), std::swap(odd[1], odd[3]);
    }
    for (int i = follows ? 2 : 0; i < 4; ++i) split_row(p, xc, 2 * ty - p.pad_h + i, tx0, tx1, even[i], odd[i]);
    split_ty = ty, split_tx0 = tx0, split_tx1 = tx1;
    float* vt = v + c * ldc + at - tx0;
    for (index_t tx = tx0; tx < tx1; tx += kLanes) {
      const index_t n = tx1 - tx;
      wvec t[4][4];
      for (int i = 0; i < 4; ++i) {
        const wvec d0 = load(even[i] + tx), d1 = load(odd[i] + tx), d2 = load(even[i] + tx + 1),
                   d3 = load(odd[i] + tx + 1);
        t[i][0] = d0 - d2;
        t[i][1] = d1 + d2;
        t[i][2] = d2 - d1;
        t[i][3] = d1 - d3;
      }
      for (int j = 0; j < 4; ++j) {
        store(t[0][j] - t[2][j], vt + (0 * 4 + j) * ldv + tx, n);
        store(t[1][j] + t[2][j], vt + (1 * 4 + j) * ldv + tx, n);
        store(t[2][j] - t[1][j], vt + (2 * 4 + j) * ldv + tx, n);
        store(t[1][j] - t[3][j], vt + (3 * 4 + j) * ldv + tx, n);
      }
    }
  });
}

inline float activate_scalar(const Epilogue& e, float v) {
  activate_row(e, &v, 1);
  return v;
}

// Output channels [m0, m0 + rows) of tiles [t0, t1) from their products (16 planes xi_step
// floats apart of `rows` x ldp floats, tile t0 first): Y = A^T M A, A^T = [1 1 1 0; 0 1 -1 -1], plus bias and the
// activation.
inline void output_transform(const ConvParams& p, const float* prod, index_t ldp, index_t xi_step, index_t m0,
                             index_t rows, index_t t0, index_t t1, const float* bias, float* y, const Epilogue& e) {
  const index_t tw = winograd_tiles_w(p), plane = p.out_h * p.out_w;
#if defined(ONNXC_SIMD)
  const bool clamps = packed_gemm_detail::is_clamp(e);
  const packed_gemm_detail::Clamp clamp = packed_gemm_detail::clamp_of(e);
#endif
  for (index_t r = 0; r < rows; ++r) {
    float* yc = y + (m0 + r) * plane;
    const wvec b(bias ? bias[m0 + r] : 0.0f);
    for_tile_rows(tw, t0, t1, [&](index_t ty, index_t tx0, index_t tx1, index_t at) {
      const float* pt = prod + r * ldp + at - tx0;
      const index_t oh = 2 * ty;
      for (index_t tx = tx0; tx < tx1; tx += kLanes) {
        wvec s[4][2];
        for (int i = 0; i < 4; ++i) {
          const float* pi = pt + (i * 4) * xi_step + tx;
          const wvec q0 = load(pi), q1 = load(pi + xi_step), q2 = load(pi + 2 * xi_step), q3 = load(pi + 3 * xi_step);
          s[i][0] = q0 + q1 + q2;
          s[i][1] = q1 - q2 - q3;
        }
        wvec out[2][2];
        for (int j = 0; j < 2; ++j) {
          out[0][j] = s[0][j] + s[1][j] + s[2][j] + b;
          out[1][j] = s[1][j] - s[2][j] - s[3][j] + b;
        }
        // Output columns of these tiles: 2 per tile, the last tile's second one only when it exists.
        const index_t tiles = tx1 - tx < kLanes ? tx1 - tx : kLanes;
        const index_t cols = 2 * (tx + tiles) <= p.out_w ? 2 * tiles : p.out_w - 2 * tx;
        for (int i = 0; i < 2 && oh + i < p.out_h; ++i) {
          float* yr = yc + (oh + i) * p.out_w + 2 * tx;
#if defined(ONNXC_SIMD)
          wvec a = out[i][0], c = out[i][1];
          if (clamps) {
            a = packed_gemm_detail::clamp(clamp, a);
            c = packed_gemm_detail::clamp(clamp, c);
          } else if (e.activation != Activation::None) {
            a = packed_gemm_detail::activate(e, a);
            c = packed_gemm_detail::activate(e, c);
          }
          wvec lo, hi;
          interleave(a, c, lo, hi);
          store(lo, yr, cols);
          if (cols > kLanes) store(hi, yr + kLanes, cols - kLanes);
#else
          yr[0] = activate_scalar(e, out[i][0]);
          if (cols > 1) yr[1] = activate_scalar(e, out[i][1]);
#endif
        }
      }
    });
  }
}

}  // namespace winograd_detail

// Input-transform tasks (ranges of channels; each has its four pairs of split rows in scratch):
// with one output-stage slot (the step runs serially, or fitting left room for no more) one.
constexpr index_t kWinogradSplitTasks = 8;
inline index_t winograd_split_tasks(const ConvParams& p, index_t slots) {
  return slots <= 1 ? 1 : p.in_channels < kWinogradSplitTasks ? p.in_channels : kWinogradSplitTasks;
}
inline index_t winograd_split_floats(const ConvParams& p) {
  return 8 * (winograd_tiles_w(p) + 2 + 2 * winograd_detail::kSplitSlack);
}

// Output channels per task of the output stage: one panel (8), or 32 (four panels: the narrow
// product's 32 rows, kWinogradNarrowRows).
constexpr index_t kWinogradNarrowRows = 32;

// Floats of scratch for blocks of `block_rows` rows of tiles and `slots` output-stage tasks of
// `group_rows` output channels: V of a block, each slot's products of a block, the split rows.
constexpr index_t kPlanePad = 16;  // floats: a cache line
inline index_t winograd_scratch_floats(const ConvParams& p, index_t block_rows, index_t slots,
                                       index_t group_rows = kPanelRows) {
  const index_t block = block_rows * winograd_tiles_w(p);
  return kWinogradPoints * ((p.in_channels * block + kPlanePad) + slots * (group_rows * block + kPlanePad)) +
         winograd_split_tasks(p, slots) * winograd_split_floats(p);
}

// Whether groups of kWinogradNarrowRows output channels take the narrow product (vectors along
// the output channels, AVX-512: packed_gemm_narrow's kernel): for blocks of fewer tiles than
// two register tiles' columns (13 x 13 planes: 49 tiles), where vectors along the tiles leave
// lanes empty.
inline bool winograd_block_is_narrow(index_t tiles) {
  return tiles < 2 * 32;  // two AVX-512 register tiles of 2 vectors
}

// One convolution conv_fits_winograd accepts, `block_rows` rows of tiles at a time; scratch holds
// winograd_scratch_floats(p, block_rows, slots, group_rows) floats and u the weights from
// winograd_pack_weights. The output stage goes by groups of `group_rows` output channels (8 or
// kWinogradNarrowRows; with 32 on AVX-512 the full groups of narrow blocks take the narrow
// product); with a parallel-for it splits into `slots` tasks. (Blocks of whole rows: blocks of
// one register tile's columns, whose products would stay in L1, cut the rows of tiles into
// partial vectors and ran slower, squeezenet1_1's 55 x 55 layer 566 against 437 us.)
inline void conv_winograd(const ConvParams& p, const float* x, const float* u, const float* bias, float* y,
                          float* scratch, index_t block_rows, index_t slots, const Epilogue& e,
                          Parallel parallel = nullptr, index_t group_rows = kPanelRows) {
  using namespace winograd_detail;
  const index_t tw = winograd_tiles_w(p), tiles = winograd_tiles_h(p) * tw, m = p.out_channels, c = p.in_channels;
  // The 16 planes of V and of the products are a cache line more than their data apart: a
  // power-of-two plane (64 channels of 16 tiles: 4 KiB) put the 16 stores of a transform in one
  // L1 set.
  const index_t block = block_rows * tw, v_plane = c * block + kPlanePad, prod_plane = group_rows * block + kPlanePad;
  const index_t prod_floats = kWinogradPoints * prod_plane;
  float* v = scratch;                                // 16 x C x block
  float* prods = v + kWinogradPoints * v_plane;      // slots x 16 x group_rows x block
  float* splits = prods + slots * prod_floats;
  const index_t split_floats = winograd_split_floats(p), split_tasks = winograd_split_tasks(p, slots);
  // Serially one product buffer: cycling through all of them would only spread the writes over
  // more memory.
  const index_t groups = (m + group_rows - 1) / group_rows, mc = m * c;
  const index_t tasks = !parallel ? 1 : groups < slots ? groups : slots;
  const index_t in_image = c * p.in_h * p.in_w, out_image = m * p.out_h * p.out_w;
  for (index_t b = 0; b < p.batch; ++b) {
    const float* xb = x + b * in_image;
    float* yb = y + b * out_image;
    for (index_t t0 = 0; t0 < tiles; t0 += block) {
      const index_t n = tiles - t0 < block ? tiles - t0 : block;
      parallel_for(parallel, split_tasks, [&](index_t task) {
        const Range cs = part_of(c, split_tasks, task);
        for (index_t ic = cs.begin; ic < cs.end; ++ic)
          input_transform(p, xb, ic, t0, t0 + n, v, v_plane, block, splits + task * split_floats);
      });
      parallel_for(parallel, tasks, [&](index_t slot) {
        float* prod = prods + slot * prod_floats;
        for (index_t group = slot; group < groups; group += tasks) {
          const index_t m0 = group * group_rows, r = m - m0 < group_rows ? m - m0 : group_rows;
          for (index_t xi = 0; xi < kWinogradPoints; ++xi) {
            const float* uxi = u + xi * mc;
            const float* vxi = v + xi * v_plane;
            float* pxi = prod + xi * prod_plane;
#if defined(ONNXC_SIMD) && defined(__AVX512F__)
            if (r == kWinogradNarrowRows && winograd_block_is_narrow(n)) {
              narrow_detail::rows(n, c, uxi + m0 * c, 0, vxi, block, pxi, block, nullptr, Epilogue{});
              continue;
            }
#endif
            for (index_t r0 = 0; r0 < r; r0 += kPanelRows)
              packed_gemm_detail::panel(r - r0 < kPanelRows ? r - r0 : kPanelRows, n, c, uxi + (m0 + r0) * c,
                                        packed_gemm_detail::MatrixRows{vxi, block}, pxi + r0 * block, block, nullptr,
                                        Epilogue{});
          }
          output_transform(p, prod, block, prod_plane, m0, r, t0, t0 + n, bias, yb, e);
        }
      });
    }
  }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_WINOGRAD_H
