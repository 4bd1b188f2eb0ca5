// Reductions over any set of axes (ReduceSum, ReduceMean, ..., ReduceLogSumExp) and the
// arg-reductions along one axis (ArgMax, ArgMin).
#ifndef ONNXC_REDUCE_H
#define ONNXC_REDUCE_H

#include <cmath>
#include <cstdint>

#include <type_traits>

#include "onnxc/base.h"
#include "onnxc/numeric.h"
#include "onnxc/simd.h"

#if defined(ONNXC_SIMD)
#include "onnxc/reduce_sum_simd.h"
#endif

namespace onnxc {
namespace rt {

constexpr int kMaxReduceRank = 8;

// A reduction's input seen as two strided index spaces: the kept dims (one output element per
// point, in row-major order) and the reduced dims (the elements each output combines). The
// compiler drops dims of extent 1 and merges neighbours of the same kind, so the ranks are
// small; a rank of 0 is a single point.
struct ReduceParams {
  int kept_rank;
  index_t kept_dims[kMaxReduceRank];
  index_t kept_strides[kMaxReduceRank];
  int reduced_rank;
  index_t reduced_dims[kMaxReduceRank];
  index_t reduced_strides[kMaxReduceRank];
};

// Calls f(offset) for every point of a strided index space, in row-major order.
template <class F>
inline void for_each_offset(int rank, const index_t* dims, const index_t* strides, F f) {
  if (rank == 0) {
    f(index_t(0));
    return;
  }
  for (int d = 0; d < rank; ++d)
    if (dims[d] == 0) return;
  index_t idx[kMaxReduceRank] = {};
  const index_t inner = dims[rank - 1], inner_stride = strides[rank - 1];
  for (;;) {
    index_t base = 0;
    for (int d = 0; d < rank - 1; ++d) base += idx[d] * strides[d];
    for (index_t i = 0; i < inner; ++i) f(base + i * inner_stride);
    int d = rank - 2;
    for (; d >= 0; --d) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

inline index_t reduced_count(const ReduceParams& p) {
  index_t n = 1;
  for (int d = 0; d < p.reduced_rank; ++d) n *= p.reduced_dims[d];
  return n;
}

// Folds the reduced elements of x (x points at one output's first element) into an
// accumulator of type A, starting from init.
template <class A, class T, class F>
inline A accumulate(const T* x, const ReduceParams& p, A init, F f) {
  A acc = init;
  for_each_offset(p.reduced_rank, p.reduced_dims, p.reduced_strides,
                  [&](index_t o) { acc = f(acc, static_cast<A>(load(x[o]))); });
  return acc;
}

// The sum of term(v) over the reduced elements of x, blocked as blocked_sum (the same bits up to
// kSumBlock elements as accumulate's left-to-right chain).
template <class A, class T, class F>
inline A accumulate_sum(const T* x, const ReduceParams& p, F term) {
  A total = A(0), part = A(0);
  index_t in_part = 0;
  bool spilled = false;
  for_each_offset(p.reduced_rank, p.reduced_dims, p.reduced_strides, [&](index_t o) {
    part = static_cast<A>(part + term(static_cast<A>(load(x[o]))));
    if (++in_part == kSumBlock) {
      total = spilled ? static_cast<A>(total + part) : part;
      spilled = true;
      part = A(0);
      in_part = 0;
    }
  });
  if (!spilled) return part;
  return in_part ? static_cast<A>(total + part) : total;
}

// Whether the reduced elements of one output are contiguous floats that reduce_sum_simd.h sums in
// vectors (SIMD targets).
template <class T>
inline bool sums_contiguous(const ReduceParams& p) {
#if defined(ONNXC_SIMD)
  return std::is_same<T, float>::value && p.reduced_rank == 1 && p.reduced_strides[0] == 1;
#else
  (void)p;
  return false;
#endif
}

inline float contiguous_sum(const float* x, index_t n) {
#if defined(ONNXC_SIMD)
  return reduce_simd::contiguous_sum(x, n);
#else
  return blocked_sum<float>(n, [x](index_t i) { return x[i]; });
#endif
}
template <class T>
inline compute_t<T> contiguous_sum(const T*, index_t) { return compute_t<T>(0); }  // not taken: sums_contiguous

// ---- reducers: apply(x, p) combines the reduced elements of one output ----
// Reductions over an empty set give the operation's identity: 0 for sums, 1 for ReduceProd,
// -inf (or the type's lowest value) for ReduceMax and the logarithmic sums, +inf (or the highest
// value) for ReduceMin; ReduceMean gives NaN (0 for integers).

struct ReduceSum {
  template <class T> static compute_t<T> apply(const T* x, const ReduceParams& p) {
    using C = compute_t<T>;
    if (sums_contiguous<T>(p)) return contiguous_sum(x, p.reduced_dims[0]);
    return accumulate_sum<C>(x, p, [](C v) { return v; });
  }
};

struct ReduceSumSquare {
  template <class T> static compute_t<T> apply(const T* x, const ReduceParams& p) {
    using C = compute_t<T>;
    return accumulate_sum<C>(x, p, [](C v) { return static_cast<C>(v * v); });
  }
};

struct ReduceL1 {
  template <class T> static compute_t<T> apply(const T* x, const ReduceParams& p) {
    using C = compute_t<T>;
    return accumulate_sum<C>(x, p, [](C v) { return static_cast<C>(abs_value(v)); });
  }
};

struct ReduceL2 {
  template <class T> static compute_t<T> apply(const T* x, const ReduceParams& p) {
    return from_real<T>(std::sqrt(static_cast<real_t<T>>(ReduceSumSquare::apply(x, p))));
  }
};

struct ReduceProd {
  template <class T> static compute_t<T> apply(const T* x, const ReduceParams& p) {
    using C = compute_t<T>;
    return accumulate(x, p, C(1), [](C a, C v) { return static_cast<C>(a * v); });
  }
};

struct ReduceMean {
  template <class T> static compute_t<T> apply(const T* x, const ReduceParams& p) {
    using R = real_t<T>;
    const R sum = sums_contiguous<T>(p) ? static_cast<R>(contiguous_sum(x, p.reduced_dims[0]))
                                        : accumulate_sum<R>(x, p, [](R v) { return v; });
    return from_real<T>(sum / static_cast<R>(reduced_count(p)));  // 0/0: NaN, or 0 for integers
  }
};

struct ReduceMax {
  template <class T> static compute_t<T> apply(const T* x, const ReduceParams& p) {
    using C = compute_t<T>;
    // NaN wins, as in numpy: once the accumulator is NaN no comparison replaces it.
    return accumulate(x, p, lowest_value<C>(), [](C a, C v) { return (v > a || is_nan(v)) ? v : a; });
  }
};

struct ReduceMin {
  template <class T> static compute_t<T> apply(const T* x, const ReduceParams& p) {
    using C = compute_t<T>;
    return accumulate(x, p, highest_value<C>(), [](C a, C v) { return (v < a || is_nan(v)) ? v : a; });
  }
};

struct ReduceLogSum {
  template <class T> static compute_t<T> apply(const T* x, const ReduceParams& p) {
    using R = real_t<T>;
    return from_real<T>(std::log(accumulate(x, p, R(0), [](R a, R v) { return a + v; })));
  }
};

// log(sum(exp(x))) computed as max + log(sum(exp(x - max))) so large inputs do not overflow.
// An infinite max is not subtracted (inf - inf would be NaN): the plain formula is exact then.
struct ReduceLogSumExp {
  template <class T> static compute_t<T> apply(const T* x, const ReduceParams& p) {
    using R = real_t<T>;
    const R mx = accumulate(x, p, lowest_value<R>(), [](R a, R v) { return (v > a || is_nan(v)) ? v : a; });
    const R shift = std::isfinite(mx) ? mx : R(0);
    const R sum = accumulate(x, p, R(0), [shift](R a, R v) { return a + std::exp(v - shift); });
    return from_real<T>(std::log(sum) + shift);
  }
};

// y[i] = Reducer over the reduced elements of the i-th kept point.
template <class Reducer, class T>
inline void reduce(const ReduceParams& p, const T* x, T* y) {
  index_t i = 0;
  for_each_offset(p.kept_rank, p.kept_dims, p.kept_strides,
                  [&](index_t o) { y[i++] = store<T>(Reducer::apply(x + o, p)); });
}

// ---- ArgMax / ArgMin: x is [outer, n, inner]; y[outer, inner] gets the position along n ----

// Whether v replaces the current best. NaN counts as the extreme (numpy's argmax/argmin return
// the first NaN); select_last takes the last of equal values instead of the first.
template <bool kMax, class C>
inline bool beats(C v, C best, bool select_last) {
  if (is_nan(best)) return false;
  if (is_nan(v)) return true;
  if (select_last && v == best) return true;
  return kMax ? v > best : v < best;
}

template <bool kMax, class T>
inline void arg_extreme(const T* x, std::int64_t* y, index_t outer, index_t n, index_t inner, bool select_last) {
  for (index_t o = 0; o < outer; ++o)
    for (index_t i = 0; i < inner; ++i) {
      const T* lane = x + o * n * inner + i;
      auto best = load(lane[0]);
      index_t at = 0;
      for (index_t j = 1; j < n; ++j) {
        const auto v = load(lane[j * inner]);
        if (beats<kMax>(v, best, select_last)) {
          best = v;
          at = j;
        }
      }
      y[o * inner + i] = static_cast<std::int64_t>(at);
    }
}

template <class T>
inline void arg_max(const T* x, std::int64_t* y, index_t outer, index_t n, index_t inner, bool select_last) {
  arg_extreme<true>(x, y, outer, n, inner, select_last);
}

template <class T>
inline void arg_min(const T* x, std::int64_t* y, index_t outer, index_t n, index_t inner, bool select_last) {
  arg_extreme<false>(x, y, outer, n, inner, select_last);
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_REDUCE_H
