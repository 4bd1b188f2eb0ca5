// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// Attention of float on xsimd targets: attention.h includes this header under ONNXC_SIMD (include
// that one).
//
// A tile of kAttentionRows query rows walks the keys a block of two vectors at a time. The
// block's scores are a small register tile: for each depth d, the row's Q element broadcast
// times K^T's row d (contiguous keys). They go to a [rows x block] array on the stack, through
// exp_vec relative to each row's running maximum, and are folded into the output rows, which
// hold the running sums: per chunk of up to kAttentionDepthVectors vectors of the output row,
// the chunk is loaded once, rescaled, gets p[r][j] * V[j] for every key of the block, and is
// stored. So nothing larger than the [rows x block] tile is made.
#ifndef ONNXC_ATTENTION_SIMD_H
#define ONNXC_ATTENTION_SIMD_H

#include <limits>

#include "onnxc/math_simd.h"
#include "onnxc/simd.h"

namespace onnxc {
namespace rt {

constexpr index_t kAttentionRows = 4;
// Keys per block, in vectors: kAttentionRows x this score accumulators.
constexpr index_t kAttentionKeyVectors = kVectorRegisters >= 32 ? 4 : 2;
// Output vectors per chunk: kAttentionRows x this accumulators, this many V loads and a broadcast
// fit the register file (32 on AVX-512, 16 on AVX2).
constexpr index_t kAttentionDepthVectors = kVectorRegisters >= 32 ? 4 : 2;

// The strides attention_simd reads: unit along depth for Q, V and O, along the keys for K^T, and
// M's key stride 0 or 1.
inline bool attention_simd_applies(const AttentionParams& p) {
  return p.q.col == 1 && p.k.col == 1 && p.v.col == 1 && p.out.col == 1 && (p.mask.col == 0 || p.mask.col == 1);
}

namespace attention_detail {

constexpr index_t kBlock = kAttentionKeyVectors * kFloatLanes;

// The largest lane (scores are never NaN here unless an input is, and then the row is NaN
// through the sum anyway).
inline float lanes_max(vfloat x) {
#if defined(__AVX512F__)
  return _mm512_reduce_max_ps(x);
#else
  alignas(64) float lanes[kFloatLanes];
  x.store_aligned(lanes);
  float m = lanes[0];
  for (index_t i = 1; i < kFloatLanes; ++i) m = lanes[i] > m ? lanes[i] : m;
  return m;
#endif
}

// One group's operands, moved to its first query row of the tile.
struct TileOperands {
  const float* q;
  const float* kt;
  const float* v;
  const float* mask;  // null: no mask
  float* out;
};

// Adds p[r][j] * V[j] for the block's keys to C output vectors from `col` of each row, after
// scaling what they hold by correction[r].
template <index_t R, index_t C>
inline void accumulate_chunk(const float (&p)[R][kBlock], const float* v, index_t v_row, index_t keys, float* out,
                             index_t out_row, const float (&correction)[R], index_t col) {
  vfloat acc[R][C];
  for (index_t r = 0; r < R; ++r)
    for (index_t c = 0; c < C; ++c)
      acc[r][c] = vfloat::load_unaligned(out + r * out_row + col + c * kFloatLanes) * vfloat(correction[r]);
  for (index_t j = 0; j < keys; ++j) {
    vfloat vv[C];
    for (index_t c = 0; c < C; ++c) vv[c] = vfloat::load_unaligned(v + j * v_row + col + c * kFloatLanes);
    for (index_t r = 0; r < R; ++r) {
      const vfloat pr(p[r][j]);
      for (index_t c = 0; c < C; ++c) acc[r][c] = xsimd::fma(pr, vv[c], acc[r][c]);
    }
  }
  for (index_t r = 0; r < R; ++r)
    for (index_t c = 0; c < C; ++c) acc[r][c].store_unaligned(out + r * out_row + col + c * kFloatLanes);
}

template <index_t R, index_t C>
inline void accumulate_rest(const float (&p)[R][kBlock], const float* v, index_t v_row, index_t keys, float* out,
                            index_t out_row, const float (&correction)[R], index_t col, index_t vectors) {
  if constexpr (C > 0) {
    if (vectors == C) return accumulate_chunk<R, C>(p, v, v_row, keys, out, out_row, correction, col);
    accumulate_rest<R, C - 1>(p, v, v_row, keys, out, out_row, correction, col, vectors);
  }
}

// scale * Q K^T (+ M) for the keys [j0, j0 + keys) of the tile's rows, into the first V vectors
// of each row of s. Partial: the last vector holds fewer than kFloatLanes keys, read with a
// partial load (its other lanes are left as they come).
template <index_t R, index_t V, bool Partial>
inline void block_scores(const TileOperands& t, const AttentionParams& p, index_t j0, index_t keys,
                         float (&s)[R][kBlock]) {
  vfloat acc[R][V];
  for (index_t r = 0; r < R; ++r)
    for (index_t c = 0; c < V; ++c) acc[r][c] = vfloat(0.0f);
  const index_t last_cols = keys - (V - 1) * kFloatLanes;
  for (index_t d = 0; d < p.depth; ++d) {
    const float* kd = t.kt + d * p.k.row + j0;
    vfloat kv[V];
    for (index_t c = 0; c < V; ++c)
      kv[c] = Partial && c == V - 1 ? load_partial(kd + c * kFloatLanes, last_cols)
                                    : vfloat::load_unaligned(kd + c * kFloatLanes);
    for (index_t r = 0; r < R; ++r) {
      const vfloat qv(t.q[r * p.q.row + d]);
      for (index_t c = 0; c < V; ++c) acc[r][c] = xsimd::fma(qv, kv[c], acc[r][c]);
    }
  }
  const vfloat scale(p.scale);
  for (index_t r = 0; r < R; ++r) {
    const float* mr = t.mask ? t.mask + r * p.mask.row + j0 * p.mask.col : nullptr;
    for (index_t c = 0; c < V; ++c) {
      vfloat x = acc[r][c] * scale;
      if (mr && !Partial) x += p.mask.col ? vfloat::load_unaligned(mr + c * kFloatLanes) : vfloat(mr[0]);
      x.store_aligned(&s[r][c * kFloatLanes]);
    }
    if (mr && Partial)
      for (index_t j = 0; j < keys; ++j) s[r][j] += mr[j * p.mask.col];
  }
}

// The last block's scores (keys < kBlock): only the vectors that hold keys.
template <index_t R, index_t V>
inline void tail_scores(const TileOperands& t, const AttentionParams& p, index_t j0, index_t keys,
                        float (&s)[R][kBlock]) {
  if constexpr (V > 0) {
    if (keys > (V - 1) * kFloatLanes) {
      if (keys == V * kFloatLanes) return block_scores<R, V, false>(t, p, j0, keys, s);
      return block_scores<R, V, true>(t, p, j0, keys, s);
    }
    tail_scores<R, V - 1>(t, p, j0, keys, s);
  }
}

template <index_t R>
inline void attention_tile(const TileOperands& t, const AttentionParams& p) {
  constexpr float kMinusInf = -std::numeric_limits<float>::infinity();
  const index_t vd = p.v_depth;
  const index_t whole = vd - vd % kFloatLanes;
  for (index_t r = 0; r < R; ++r)
    for (index_t d = 0; d < vd; ++d) t.out[r * p.out.row + d] = 0.0f;
  float m[R], l[R], correction[R];
  for (index_t r = 0; r < R; ++r) m[r] = kMinusInf, l[r] = 0.0f;
  alignas(64) float s[R][kBlock];
  for (index_t j0 = 0; j0 < p.k_rows; j0 += kBlock) {
    const index_t keys = p.k_rows - j0 < kBlock ? p.k_rows - j0 : kBlock;
    const index_t used = (keys + kFloatLanes - 1) / kFloatLanes;  // vectors of s that hold keys
    // The scores of the block, scaled and masked; keys past the end -inf.
    if (keys == kBlock) {
      block_scores<R, kAttentionKeyVectors, false>(t, p, j0, keys, s);
    } else {
      tail_scores<R, kAttentionKeyVectors>(t, p, j0, keys, s);
      for (index_t r = 0; r < R; ++r)
        for (index_t j = keys; j < used * kFloatLanes; ++j) s[r][j] = kMinusInf;
    }
    // The online softmax: p = exp(s - m_new), the sums so far scaled by exp(m_old - m_new).
    for (index_t r = 0; r < R; ++r) {
      vfloat mx(m[r]);
      for (index_t c = 0; c < used; ++c) mx = xsimd::max(mx, vfloat::load_aligned(&s[r][c * kFloatLanes]));
      const float m_new = lanes_max(mx);
      // Only -inf so far: subtract 0, so exp gives 0, not NaN.
      const float base = m_new == kMinusInf ? 0.0f : m_new;
      correction[r] = m[r] == kMinusInf ? 0.0f : std::exp(m[r] - base);
      m[r] = m_new;
      vfloat sum(0.0f);
      for (index_t c = 0; c < used; ++c) {
        const vfloat e = exp_vec(vfloat::load_aligned(&s[r][c * kFloatLanes]) - vfloat(base));
        e.store_aligned(&s[r][c * kFloatLanes]);
        sum += e;
      }
      l[r] = l[r] * correction[r] + xsimd::hadd(sum);
    }
    const float* vb = t.v + j0 * p.v.row;
    index_t col = 0;
    for (; col + kAttentionDepthVectors * kFloatLanes <= whole; col += kAttentionDepthVectors * kFloatLanes)
      accumulate_chunk<R, kAttentionDepthVectors>(s, vb, p.v.row, keys, t.out, p.out.row, correction, col);
    if (col < whole)
      accumulate_rest<R, kAttentionDepthVectors - 1>(s, vb, p.v.row, keys, t.out, p.out.row, correction, col,
                                                      (whole - col) / kFloatLanes);
    for (index_t r = 0; r < R; ++r)
      for (index_t d = whole; d < vd; ++d) {
        float acc = t.out[r * p.out.row + d] * correction[r];
        for (index_t j = 0; j < keys; ++j) acc += s[r][j] * vb[j * p.v.row + d];
        t.out[r * p.out.row + d] = acc;
      }
  }
  for (index_t r = 0; r < R; ++r) {
    float* o = t.out + r * p.out.row;
    if (l[r] == 0.0f) {  // every score -inf: NaN, as Softmax gives
      for (index_t d = 0; d < vd; ++d) o[d] = std::numeric_limits<float>::quiet_NaN();
      continue;
    }
    const vfloat inv(1.0f / l[r]);
    index_t d = 0;
    for (; d < whole; d += kFloatLanes) (vfloat::load_unaligned(o + d) * inv).store_unaligned(o + d);
    for (; d < vd; ++d) o[d] *= 1.0f / l[r];
  }
}

template <index_t R>
inline void attention_rest(const TileOperands& t, const AttentionParams& p, index_t rows) {
  if constexpr (R > 0) {
    if (rows == R) return attention_tile<R>(t, p);
    attention_rest<R - 1>(t, p, rows);
  }
}

}  // namespace attention_detail

inline void attention_simd(const float* q, const float* kt, const float* v, const float* mask, float* out,
                           const AttentionParams& p) {
  using attention_detail::TileOperands;
  for (index_t a = 0; a < p.groups0; ++a)
    for (index_t b = 0; b < p.groups1; ++b) {
      const float* qg = q + a * p.q.g0 + b * p.q.g1;
      const float* kg = kt + a * p.k.g0 + b * p.k.g1;
      const float* vg = v + a * p.v.g0 + b * p.v.g1;
      const float* mg = mask ? mask + a * p.mask.g0 + b * p.mask.g1 : nullptr;
      float* og = out + a * p.out.g0 + b * p.out.g1;
      index_t i = 0;
      for (; i + kAttentionRows <= p.q_rows; i += kAttentionRows)
        attention_detail::attention_tile<kAttentionRows>(
            TileOperands{qg + i * p.q.row, kg, vg, mg ? mg + i * p.mask.row : nullptr, og + i * p.out.row}, p);
      if (i < p.q_rows)
        attention_detail::attention_rest<kAttentionRows - 1>(
            TileOperands{qg + i * p.q.row, kg, vg, mg ? mg + i * p.mask.row : nullptr, og + i * p.out.row}, p,
            p.q_rows - i);
    }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_ATTENTION_SIMD_H
