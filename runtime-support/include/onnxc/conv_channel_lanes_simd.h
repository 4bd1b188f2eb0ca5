// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// rt::conv_channel_lanes on xsimd targets (AVX2, AVX-512); the layout is in conv_channel_lanes.h,
// which includes this header under ONNXC_SIMD (include that one).
//
// A register tile of Rows output positions by kLaneVectors vectors of output channels
// accumulates over the whole depth K: every step loads kLaneVectors vectors of packed weights
// (one sequential stream per panel) and broadcasts Rows input values, one per output position
// (AVX-512: up to 12 x 2 = 24 accumulators of 32 registers; AVX2: 6 x 2 of 16). A tile's
// outputs go through a buffer on the stack into the NCHW planes: each output channel's Rows
// positions are consecutive there. Positions are cut into tiles of equal height (49: 10 10 10
// 10 9), so none runs with a row or two. Tiles of one vector pair of channels sweep a block of
// positions (its input, K x positions, at most kChannelLaneBlockFloats: L2) while that pair's
// weight panels stay in L1; tasks of a parallel-for take ranges of whole vector pairs.
#ifndef ONNXC_CONV_CHANNEL_LANES_SIMD_H
#define ONNXC_CONV_CHANNEL_LANES_SIMD_H

#include "onnxc/packed_gemm.h"
#include "onnxc/simd.h"

namespace onnxc {
namespace rt {
namespace channel_lanes_detail {

constexpr int kLaneVectors = 2;
#if defined(__AVX512F__)
constexpr int kLaneRows = 12;
#else
constexpr int kLaneRows = 6;
#endif
static_assert(kLaneRows * kLaneVectors + kLaneVectors + 1 <= kVectorRegisters, "the tile must fit the registers");
static_assert(kPackedBCols % kFloatLanes == 0, "a panel is whole vectors");
constexpr index_t kTileChannels = kLaneVectors * kFloatLanes;

// The input as the tile reads it: position i's value of depth l at a[i + l * step] (an NCHW
// plane's positions, or an im2col block's columns).
struct Positions {
  const float* a;
  index_t step;
};

// Weights a tile fetches ahead, a cache line per depth step: the next channels' panels, which
// in a model come from memory (regnet_x_400mf's 400 x 400 layers hold 640 KB each) and would
// otherwise stall the first tile over them.
constexpr index_t kLineFloats = 16;
struct Prefetch {
  const float* at;
  index_t lines;
};

// y[channel c][position i] = act(sum over l of A[i, l] W[l, c] + bias[c]) for Rows positions
// from a.a (y's first at y) and Vecs vectors of channels from w (their panels' column),
// `channels` of them real; ldy: the floats between two output channels' planes.
template <int Rows, int Vecs>
ONNXC_INLINE void tile(index_t k, const Positions& a, const PackedColumns& w, index_t c0, index_t channels,
                       const float* bias, float* y, index_t ldy, const Epilogue& e, const Prefetch& pf) {
  constexpr index_t L = kFloatLanes;
  const float* wp[Vecs];
  ONNXC_UNROLL for (int v = 0; v < Vecs; ++v) wp[v] = w.column(c0 + v * L);
  vfloat acc[Rows][Vecs];
  ONNXC_UNROLL for (int v = 0; v < Vecs; ++v) {
    const index_t real = channels - v * L;
    const vfloat start = !bias || real <= 0 ? vfloat(0.0f)
                         : real >= L        ? vfloat::load_unaligned(bias + c0 + v * L)
                                            : load_partial(bias + c0 + v * L, real);
    ONNXC_UNROLL for (int r = 0; r < Rows; ++r) acc[r][v] = start;
  }
  const float* ap = a.a;
  const index_t step = a.step;
  auto depth_step = [&](index_t l) {
    vfloat wv[Vecs];
    ONNXC_UNROLL for (int v = 0; v < Vecs; ++v) wv[v] = vfloat::load_unaligned(wp[v] + l * kPackedBCols);
    const float* al = ap + l * step;
    ONNXC_UNROLL for (int r = 0; r < Rows; ++r) {
      const vfloat av(al[r]);
      ONNXC_UNROLL for (int v = 0; v < Vecs; ++v) acc[r][v] = xsimd::fma(av, wv[v], acc[r][v]);
    }
  };
  const index_t ahead = pf.lines < k ? pf.lines : k;
  for (index_t l = 0; l < ahead; ++l) {
    __builtin_prefetch(pf.at + l * kLineFloats);
    depth_step(l);
  }
  for (index_t l = ahead; l < k; ++l) depth_step(l);
  alignas(64) float out[Rows][Vecs * L];
  packed_gemm_detail::store_activated<Rows * Vecs>(
      &acc[0][0], e, [&](int i, vfloat v) { v.store_aligned(&out[i / Vecs][i % Vecs * L]); });
  for (index_t c = 0; c < channels; ++c) {
    float* yc = y + c * ldy;
    ONNXC_UNROLL for (int r = 0; r < Rows; ++r) yc[r] = out[r][c];
  }
}

// The tile of `rows` (<= kLaneRows) positions.
template <int Vecs, int Rows = kLaneRows>
inline void tile_of(index_t rows, index_t k, const Positions& a, const PackedColumns& w, index_t c0, index_t channels,
                    const float* bias, float* y, index_t ldy, const Epilogue& e, const Prefetch& pf) {
  if constexpr (Rows > 1) {
    if (rows < Rows) return tile_of<Vecs, Rows - 1>(rows, k, a, w, c0, channels, bias, y, ldy, e, pf);
  }
  tile<Rows, Vecs>(k, a, w, c0, channels, bias, y, ldy, e, pf);
}

// Positions [0, n) of a block for the channels [c0, c0 + channels) (at most kTileChannels):
// tiles of equal height (49: 10 10 10 10 9), the channels' weight panels kept in L1 over them;
// the tiles fetch the next `ahead` floats of weights from `next` on, a line per depth step.
template <int Vecs>
inline void channel_column(index_t n, index_t k, const Positions& a, const PackedColumns& w, index_t c0,
                           index_t channels, const float* bias, float* y, index_t ldy, const Epilogue& e,
                           const float* next, index_t ahead) {
  const index_t tiles = (n + kLaneRows - 1) / kLaneRows, lines = ahead / kLineFloats;
  for (index_t t = 0, i = 0; t < tiles; ++t) {
    const index_t rows = n / tiles + (t < n % tiles ? 1 : 0);
    const index_t first = t * k < lines ? t * k : lines;
    tile_of<Vecs>(rows, k, {a.a + i, a.step}, w, c0, channels, bias, y + c0 * ldy + i, ldy, e,
                  {next + first * kLineFloats, lines - first});
    i += rows;
  }
}

}  // namespace channel_lanes_detail

// Tasks of the parallel-for: ranges of whole vector pairs of channels, at most this many; with
// fewer pairs than that, each range of pairs is also cut into ranges of positions (whole tiles),
// so a product of 3 or 5 pairs (96 or 160 channels) still gives the threads equal work (as pairs
// alone, 3 tasks on 2 threads take 2/3 of the one-thread time, not 1/2).
constexpr index_t kChannelLaneTasks = 16;
// Floats of input a block of positions may span (K x positions: a quarter of L2, the weight
// panels passing over it the rest). Each block streams all the weights: at 64 K floats resnet18's
// 256 -> 512 stride-2 layer onto 7 x 7 (K = 2304) took 3 blocks of its 49 positions, 4.7 MB each.
constexpr index_t kChannelLaneBlockFloats = 128 * 1024;

// How a parallel product is cut: ranges of pairs times ranges of positions.
struct ChannelLaneTasks {
  index_t pair_parts, position_parts;
};
inline ChannelLaneTasks channel_lane_tasks(index_t pairs, index_t n) {
  using channel_lanes_detail::kLaneRows;
  const index_t pair_parts = pairs < kChannelLaneTasks ? pairs : kChannelLaneTasks;
  const index_t tiles = (n + kLaneRows - 1) / kLaneRows, wanted = (kChannelLaneTasks + pairs - 1) / pairs;
  return {pair_parts < 1 ? 1 : pair_parts, wanted < tiles ? wanted : (tiles < 1 ? 1 : tiles)};
}

// y[m channels, n positions] (channel c's plane at y + c * ldy) = act(W^T-panels x A + bias) for
// the input positions A (a.a + i + l * a.step) and weights packed by pack_b_panels (K = k rows,
// m columns).
inline void channel_lanes_product(index_t m, index_t n, index_t k, const channel_lanes_detail::Positions& a,
                                  const float* w_packed, const float* bias, float* y, index_t ldy, const Epilogue& e,
                                  Parallel parallel = nullptr) {
  using namespace channel_lanes_detail;
  const index_t pairs = (m + kTileChannels - 1) / kTileChannels;
  const ChannelLaneTasks cut = parallel ? channel_lane_tasks(pairs, n) : ChannelLaneTasks{1, 1};
  const PackedColumns w{w_packed, k};
  // Blocks of positions whose input (K x positions) stays in L2 while every vector pair of
  // channels passes over it: the weights stream once per block, sequentially (in a model they
  // come from memory: regnet_x_400mf's 400 x 400 layers hold 640 KB each).
  const index_t fit = kChannelLaneBlockFloats / (k > 0 ? k : 1);
  const index_t most = fit > kLaneRows ? fit : kLaneRows, blocks = n > most ? (n + most - 1) / most : 1;
  const index_t block = ((n + blocks - 1) / blocks + kLaneRows - 1) / kLaneRows * kLaneRows;
  const index_t tiles = (n + kLaneRows - 1) / kLaneRows;
  parallel_for(parallel, cut.pair_parts * cut.position_parts, [&](index_t task) {
    const Range q = part_of(pairs, cut.pair_parts, task / cut.position_parts);
    const Range t = part_of(tiles, cut.position_parts, task % cut.position_parts);
    const index_t end = t.end * kLaneRows < n ? t.end * kLaneRows : n;
    for (index_t i = t.begin * kLaneRows; i < end; i += block) {
      const index_t cols = end - i < block ? end - i : block;
      const Positions at{a.a + i, a.step};
      for (index_t pair = q.begin; pair < q.end; ++pair) {
        const index_t c0 = pair * kTileChannels, channels = m - c0 < kTileChannels ? m - c0 : kTileChannels;
        // The next pair's panels (the task's, or the next block's first), weights being contiguous.
        const index_t ahead = pair + 1 < q.end ? k * kTileChannels : 0;
        const float* next = w.column(c0) + k * kTileChannels;
        if (channels > kFloatLanes)
          channel_column<kLaneVectors>(cols, k, at, w, c0, channels, bias, y + i, ldy, e, next, ahead);
        else
          channel_column<1>(cols, k, at, w, c0, channels, bias, y + i, ldy, e, next, ahead);
      }
    }
  });
}

// The Conv (any group count, 1-3 spatial dims) over weights packed by pack_channel_lane_weights.
// scratch: block_cols im2col columns of one group (conv_gemm_scratch_floats of its group
// params), unused where the input is read as the matrix.
inline void conv_channel_lanes(const ConvParams& p, const float* x, const float* w_packed, const float* bias, float* y,
                               float* scratch, index_t block_cols, const Epilogue& e, Parallel parallel = nullptr) {
  const ConvParams q = conv_group_params(p);
  const index_t m = q.out_channels, k = conv_gemm_k(q), n = conv_gemm_n(q);
  const index_t in_group = q.in_channels * p.in_d * p.in_h * p.in_w, out_group = m * n;
  const index_t w_group = channel_lanes_group_floats(p);
  for (index_t b = 0; b < p.batch; ++b)
    for (index_t g = 0; g < p.group; ++g) {
      const float* xg = x + (b * p.group + g) * in_group;
      float* yg = y + (b * p.group + g) * out_group;
      const float* wg = w_packed + g * w_group;
      const float* bg = bias ? bias + g * m : nullptr;
      if (conv_reads_input_as_matrix(q)) {
        channel_lanes_product(m, n, k, {xg, n}, wg, bg, yg, n, e, parallel);
        continue;
      }
      for (index_t j = 0; j < n; j += block_cols) {
        const index_t cols = n - j < block_cols ? n - j : block_cols;
        im2col_block(q, xg, j, cols, scratch, parallel);
        channel_lanes_product(m, cols, k, {scratch, cols}, wg, bg, yg + j, n, e, parallel);
      }
    }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_CONV_CHANNEL_LANES_SIMD_H
