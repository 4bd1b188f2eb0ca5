// TfIdfVectorizer: counts the n-grams of a pool in each row of token ids, with skips, and
// scales the counts (TF, IDF, TF-IDF).
#ifndef ONNXC_TFIDF_H
#define ONNXC_TFIDF_H

#include <cstdint>

#include "onnxc/base.h"

namespace onnxc {
namespace rt {

enum class TfIdfMode { tf, idf, tfidf };

// The pool of n-grams, grouped by length n = 1, 2, ..., lengths and sorted (lexicographically
// by token) within each group, so that looking one up is a binary search. The n-grams of
// length n are number first[n - 1] to first[n] - 1; their tokens are stored one after the
// other in `tokens` from offset[n - 1] on (so offset[n] - offset[n - 1] = n * their count).
struct NgramPool {
  const std::int64_t* tokens;
  const index_t* offset;  // lengths + 1 entries
  const index_t* first;   // lengths + 1 entries
  index_t lengths;
  const index_t* output;  // per n-gram: its position in an output row (ngram_indexes)
  const float* weight;    // per n-gram: its weight (weights); unused in TF mode
};

struct TfIdfParams {
  index_t rows;
  index_t row_length;  // tokens per row
  index_t columns;     // output values per row
  index_t min_length, max_length;  // the n-gram lengths counted
  index_t max_skip;    // n-grams of length >= 2 are also taken with 1..max_skip tokens skipped between items
  TfIdfMode mode;
};

namespace detail {

// The number of the length-n pool n-gram whose items are at[0], at[stride], ..., or -1.
template <class T>
inline index_t find_ngram(const NgramPool& pool, index_t n, const T* at, index_t stride) {
  index_t lo = 0, hi = pool.first[n] - pool.first[n - 1];
  const std::int64_t* grams = pool.tokens + pool.offset[n - 1];
  while (lo < hi) {
    const index_t mid = lo + (hi - lo) / 2;
    int order = 0;  // sign of (gram mid) - (the n-gram at `at`)
    for (index_t k = 0; k < n && order == 0; ++k) {
      const std::int64_t want = static_cast<std::int64_t>(at[k * stride]), have = grams[mid * n + k];
      order = have < want ? -1 : have > want ? 1 : 0;
    }
    if (order == 0) return pool.first[n - 1] + mid;
    if (order < 0) lo = mid + 1;
    else hi = mid;
  }
  return -1;
}

}  // namespace detail

// x is [rows, row_length] token ids; y is [rows, columns]. Every n-gram of the row whose
// length is in [min_length, max_length] and whose consecutive items are 1 + s apart
// (s = 0..max_skip; only s = 0 for 1-grams, which have no gaps) is looked up in the pool; y
// holds per pool n-gram: TF its count, IDF its weight if it occurs, TFIDF count * weight.
// Output positions no pool n-gram maps to stay 0. Each pool n-gram must have its own position.
template <class T>
inline void tfidf_vectorize(const TfIdfParams& p, const NgramPool& pool, const T* x, float* y) {
  const index_t longest = p.max_length < pool.lengths ? p.max_length : pool.lengths;
  const index_t shortest = p.min_length > 1 ? p.min_length : 1;
  for (index_t r = 0; r < p.rows; ++r) {
    const T* row = x + r * p.row_length;
    float* out = y + r * p.columns;
    for (index_t c = 0; c < p.columns; ++c) out[c] = 0.0f;
    for (index_t n = shortest; n <= longest; ++n) {
      const index_t skips = n == 1 ? 0 : p.max_skip;
      for (index_t s = 0; s <= skips; ++s) {
        const index_t stride = s + 1, span = (n - 1) * stride;
        for (index_t start = 0; start + span < p.row_length; ++start) {
          const index_t g = detail::find_ngram(pool, n, row + start, stride);
          if (g >= 0) out[pool.output[g]] += 1.0f;
        }
      }
    }
    if (p.mode == TfIdfMode::tf || shortest > longest) continue;
    for (index_t g = pool.first[shortest - 1]; g < pool.first[longest]; ++g) {
      float& v = out[pool.output[g]];
      v = p.mode == TfIdfMode::idf ? (v > 0.0f ? pool.weight[g] : 0.0f) : v * pool.weight[g];
    }
  }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_TFIDF_H
