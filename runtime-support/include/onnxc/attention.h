// Scaled dot-product attention as one step: O = softmax(scale * Q K^T + M) V per head, the
// softmax along the keys, with no score matrix (float only): the scores of one query row are made a block of
// keys at a time and folded into the output row by an online softmax (running maximum m and sum
// l; when a block raises m, what was accumulated is rescaled by exp(m_old - m_new)).
//
// Operands are read through strides, so head split/merge transposes around the step can be
// views: two leading (group) dims g0, g1 (batch and heads), then
//   Q [g0, g1, q_rows, depth]    K^T [g0, g1, depth, k_rows]    V [g0, g1, k_rows, v_depth]
//   M [g0, g1, q_rows, k_rows]   (optional, additive; a stride of 0 broadcasts)
//   O [g0, g1, q_rows, v_depth]
// attention() below is the portable reference; attention_simd.h the xsimd one (float only),
// which needs unit strides along depth for Q, V, O and along the keys for K^T and M (or M's key
// stride 0); attention() takes it when they hold.
//
// A query row whose every score is -inf (fully masked) gives NaN, as Softmax does.
#ifndef ONNXC_ATTENTION_H
#define ONNXC_ATTENTION_H

#include <cmath>
#include <limits>

#include "onnxc/base.h"

namespace onnxc {
namespace rt {

struct AttentionStrides {
  index_t g0 = 0, g1 = 0, row = 0, col = 0;  // elements per step along each dim of the operand
};

struct AttentionParams {
  index_t groups0 = 1, groups1 = 1;  // leading dims (batch, heads)
  index_t q_rows = 1, k_rows = 1;    // queries, keys
  index_t depth = 1, v_depth = 1;    // Q/K's last dim, V's last dim
  float scale = 1.0f;                // on Q K^T, before M is added
  // Q: row = query, col = depth. K^T: row = depth, col = key. V: row = key, col = v_depth.
  // M: row = query, col = key. O: row = query, col = v_depth.
  AttentionStrides q, k, v, mask, out;
};

// The keys of one block of the reference's online softmax (its scores live on the stack).
constexpr index_t kAttentionKeyBlock = 64;

inline void attention_reference(const float* q, const float* kt, const float* v, const float* mask, float* out,
                                const AttentionParams& p) {
  constexpr float kMinusInf = -std::numeric_limits<float>::infinity();
  for (index_t a = 0; a < p.groups0; ++a)
    for (index_t b = 0; b < p.groups1; ++b) {
      const float* qg = q + a * p.q.g0 + b * p.q.g1;
      const float* kg = kt + a * p.k.g0 + b * p.k.g1;
      const float* vg = v + a * p.v.g0 + b * p.v.g1;
      const float* mg = mask ? mask + a * p.mask.g0 + b * p.mask.g1 : nullptr;
      float* og = out + a * p.out.g0 + b * p.out.g1;
      for (index_t i = 0; i < p.q_rows; ++i) {
        const float* qi = qg + i * p.q.row;
        float* oi = og + i * p.out.row;
        for (index_t d = 0; d < p.v_depth; ++d) oi[d * p.out.col] = 0.0f;
        float m = kMinusInf, l = 0.0f;
        float s[kAttentionKeyBlock];
        for (index_t j0 = 0; j0 < p.k_rows; j0 += kAttentionKeyBlock) {
          const index_t nj = p.k_rows - j0 < kAttentionKeyBlock ? p.k_rows - j0 : kAttentionKeyBlock;
          float block_max = kMinusInf;
          for (index_t j = 0; j < nj; ++j) {
            float dot = 0.0f;
            for (index_t d = 0; d < p.depth; ++d)
              dot += qi[d * p.q.col] * kg[d * p.k.row + (j0 + j) * p.k.col];
            float x = p.scale * dot;
            if (mg) x += mg[i * p.mask.row + (j0 + j) * p.mask.col];
            s[j] = x;
            block_max = x > block_max ? x : block_max;
          }
          const float m_new = block_max > m ? block_max : m;
          if (m_new == kMinusInf) continue;  // nothing but -inf so far: nothing to add
          const float correction = std::exp(m - m_new);
          m = m_new;
          l *= correction;
          for (index_t j = 0; j < nj; ++j) {
            s[j] = std::exp(s[j] - m);
            l += s[j];
          }
          for (index_t d = 0; d < p.v_depth; ++d) {
            float* o = oi + d * p.out.col;
            float acc = *o * correction;
            for (index_t j = 0; j < nj; ++j) acc += s[j] * vg[(j0 + j) * p.v.row + d * p.v.col];
            *o = acc;
          }
        }
        const float inv = 1.0f / l;  // l == 0 (all -inf): 0 * inf = NaN, as Softmax gives
        for (index_t d = 0; d < p.v_depth; ++d) {
          float* o = oi + d * p.out.col;
          *o = l == 0.0f ? std::numeric_limits<float>::quiet_NaN() : *o * inv;
        }
      }
    }
}

}  // namespace rt
}  // namespace onnxc

#if defined(ONNXC_SIMD)
#include "onnxc/attention_simd.h"
#endif

namespace onnxc {
namespace rt {

// Float only: the output rows accumulate in place, which 16-bit storage would round.
inline void attention(const float* q, const float* kt, const float* v, const float* mask, float* out,
                      const AttentionParams& p) {
#if defined(ONNXC_SIMD)
  if (attention_simd_applies(p)) {
    attention_simd(q, kt, v, mask, out, p);
    return;
  }
#endif
  attention_reference(q, kt, v, mask, out, p);
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_ATTENTION_H
