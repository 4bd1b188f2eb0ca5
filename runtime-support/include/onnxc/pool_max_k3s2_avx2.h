// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// 3 x 3 stride-2 MaxPool rows on AVX2 (pool.h includes it inside pool_detail::k3s2 where
// __AVX2__ is defined and __AVX512F__ is not; pool.h's shared part walks the planes and rows).
// The AVX-512 form's scheme in 8 lanes: the 17 input columns under 8 windows are two whole loads
// and one broadcast per input row, their maxima over the window's three rows taken first, then
// the even columns, the odd ones and the even ones shifted by a lane with column 16 coming in;
// two output rows per pass share their middle input row. Same taps in the same order as the
// general rows (column maxima top row first, then kernel columns left to right), so the same
// value wins a tie. Before it, AVX2 builds took column_max's buffer and max_pool_row<2>, whose
// loads at odd offsets straddle two of the buffer's stores (squeezenet1_1's three MaxPools
// 3-10x the AVX-512 build's time, docs/performance-avx2.md 'Eighth round').

inline __m256 column_max(__m256 r0, __m256 r1, __m256 r2) {
  return max_skipping_nan(r2, max_skipping_nan(r1, r0));
}

// 8 windows from the column maxima of their 17 input columns: c0 = columns 0-7, c1 = columns
// 8-15, lane 7 of c2 = column 16 (c2 is that column broadcast, or zeros in a row's tail that
// does not store window 7).
inline __m256 windows(__m256 c0, __m256 c1, __m256 c2) {
  // shuffle_ps picks within 128-bit halves: [c0 0 2, c1 0 2 | c0 4 6, c1 4 6], then the 64-bit
  // pairs in order 0, 2, 1, 3.
  const __m256 e = _mm256_castpd_ps(_mm256_permute4x64_pd(
      _mm256_castps_pd(_mm256_shuffle_ps(c0, c1, _MM_SHUFFLE(2, 0, 2, 0))), _MM_SHUFFLE(3, 1, 2, 0)));
  const __m256 o = _mm256_castpd_ps(_mm256_permute4x64_pd(
      _mm256_castps_pd(_mm256_shuffle_ps(c0, c1, _MM_SHUFFLE(3, 1, 3, 1))), _MM_SHUFFLE(3, 1, 2, 0)));
  const __m256 next = _mm256_blend_ps(_mm256_permutevar8x32_ps(e, _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 7)), c2, 0x80);
  return max_skipping_nan(next, max_skipping_nan(o, e));
}

// One input row's 17 columns from `at` (whole loads: they lie inside the row).
struct Row {
  __m256 v0, v1, v2;
};

inline Row load(const float* row, index_t at) {
  return {_mm256_loadu_ps(row + at), _mm256_loadu_ps(row + at + 8), _mm256_set1_ps(row[at + 16])};
}

// The first lanes of a row's tail (whose last window may end in the row's last column while
// the next vector would not fit: 8 windows, 17 floats): masked loads, fault-free past the row's
// end, and column 16 only where the tail reads it.
inline Row load(const float* row, index_t at, __m256i m0, __m256i m1, bool column16) {
  return {_mm256_maskload_ps(row + at, m0), _mm256_maskload_ps(row + at + 8, m1),
          column16 ? _mm256_set1_ps(row[at + 16]) : _mm256_setzero_ps()};
}

inline __m256 windows(const Row& a, const Row& b, const Row& c) {
  return windows(column_max(a.v0, b.v0, c.v0), column_max(a.v1, b.v1, c.v1), column_max(a.v2, b.v2, c.v2));
}

inline __m256i first_lanes(index_t n) {
  const int lanes = n >= 8 ? 8 : n <= 0 ? 0 : static_cast<int>(n);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(lanes), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// The columns of a row's last vector of windows that whole loads cannot take (if any: cols > 0)
// and their masks, computed once per MaxPool rather than per pair of rows.
struct Tail {
  index_t ow, at, cols;
  __m256i m0, m1, out;
  bool column16;
};

inline Tail tail_of(const PoolParams& p, const WindowColumns& w) {
  const index_t cols = w.hi - w.whole, floats = 2 * cols + 1;
  return {w.whole,          2 * w.whole - p.pad_w,    cols, first_lanes(floats), first_lanes(floats - 8),
          first_lanes(cols), floats > 16};
}

// Output columns [w.lo, w.hi) of Rows (1 or 2) output rows: y0 from input rows r[0..3), y1 from
// r[2..5).
template <int Rows>
inline void rows(const PoolParams& p, const WindowColumns& w, const Tail& t, const float* const* r, float* y0,
                 float* y1) {
  for (index_t ow = w.lo; ow < w.whole; ow += 8) {
    const index_t at = 2 * ow - p.pad_w;
    const Row a = load(r[0], at), b = load(r[1], at), c = load(r[2], at);
    _mm256_storeu_ps(y0 + ow, windows(a, b, c));
    if (Rows == 2) {
      const Row d = load(r[3], at), f = load(r[4], at);
      _mm256_storeu_ps(y1 + ow, windows(c, d, f));
    }
  }
  if (t.cols > 0) {
    const Row a = load(r[0], t.at, t.m0, t.m1, t.column16), b = load(r[1], t.at, t.m0, t.m1, t.column16),
              c = load(r[2], t.at, t.m0, t.m1, t.column16);
    _mm256_maskstore_ps(y0 + t.ow, t.out, windows(a, b, c));
    if (Rows == 2) {
      const Row d = load(r[3], t.at, t.m0, t.m1, t.column16), f = load(r[4], t.at, t.m0, t.m1, t.column16);
      _mm256_maskstore_ps(y1 + t.ow, t.out, windows(c, d, f));
    }
  }
}
