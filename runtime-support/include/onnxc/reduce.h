// Reductions over any set of axes (ReduceSum, ReduceMean, ..., ReduceLogSumExp) and the
// arg-reductions along one axis (ArgMax, ArgMin).
#ifndef ONNXC_REDUCE_H
#define ONNXC_REDUCE_H

#include <cmath>
#include <cstdint>

#include <type_traits>

#include "onnxc/base.h"
#include "onnxc/numeric.h"
#include "onnxc/math_simd.h"
#include "onnxc/simd.h"

#if defined(ONNXC_SIMD)
#include "onnxc/reduce_rows_simd.h"
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

// Whether the reduced elements of one output are contiguous floats that reduce_sum_simd.h sums
// (and reduce_rows_simd.h's fold_contiguous takes the max or min of) in vectors (SIMD targets).
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

struct ReduceMax;
struct ReduceMin;
template <class Reducer, class T> inline compute_t<T> contiguous_extreme(const T* x, index_t n);

struct ReduceMax {
  template <class T> static compute_t<T> apply(const T* x, const ReduceParams& p) {
    using C = compute_t<T>;
    if (sums_contiguous<T>(p)) return contiguous_extreme<ReduceMax>(x, p.reduced_dims[0]);
    // NaN wins, as in numpy: once the accumulator is NaN no comparison replaces it.
    return accumulate(x, p, lowest_value<C>(), [](C a, C v) { return (v > a || is_nan(v)) ? v : a; });
  }
};

struct ReduceMin {
  template <class T> static compute_t<T> apply(const T* x, const ReduceParams& p) {
    using C = compute_t<T>;
    if (sums_contiguous<T>(p)) return contiguous_extreme<ReduceMin>(x, p.reduced_dims[0]);
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

// ---- the row form: the input's last axis is kept ----
// When the last kept axis is the input's contiguous last axis (a reduction over the channels of
// NCHW, over the rows of a plane, over the batch), every output row y[o, 0..w) combines whole
// input rows, one per reduced point: the rows are folded into a row of accumulators, a vector
// at a time along the contiguous axis, instead of each output walking its strided elements.
// Each accumulator sees its elements in the general walk's order (blocked sums included), so
// the results are the general walk's bit for bit.

// The steps of the row form, on one element and (SIMD targets) on a vector of floats.
struct StepAdd {
  template <class A> A operator()(A a, A v) const { return static_cast<A>(a + v); }
};
struct StepAddSquare {
  template <class A> A operator()(A a, A v) const { return static_cast<A>(a + static_cast<A>(v * v)); }
};
struct StepAddAbs {
  template <class A> A operator()(A a, A v) const { return static_cast<A>(a + abs_value(v)); }
#if defined(ONNXC_SIMD)
  vfloat operator()(vfloat a, vfloat v) const { return a + xsimd::abs(v); }
#endif
};
struct StepMul {
  template <class A> A operator()(A a, A v) const { return static_cast<A>(a * v); }
};
// NaN wins (as ReduceMax/ReduceMin's general walk): once an accumulator is NaN no comparison replaces it.
struct StepMax {
  template <class A> A operator()(A a, A v) const { return (v > a || is_nan(v)) ? v : a; }
#if defined(ONNXC_SIMD)
  vfloat operator()(vfloat a, vfloat v) const { return xsimd::select((v > a) | xsimd::isnan(v), v, a); }
#endif
};
struct StepMin {
  template <class A> A operator()(A a, A v) const { return (v < a || is_nan(v)) ? v : a; }
#if defined(ONNXC_SIMD)
  vfloat operator()(vfloat a, vfloat v) const { return xsimd::select((v < a) | xsimd::isnan(v), v, a); }
#endif
};

// ReduceMax/ReduceMin of contiguous floats in vectors (reduce_rows_simd.h) where sums_contiguous
// holds; never called otherwise.
template <class Reducer, class T>
inline compute_t<T> contiguous_extreme(const T* x, index_t n) {
#if defined(ONNXC_SIMD)
  if constexpr (std::is_same<T, float>::value) {
    if constexpr (std::is_same<Reducer, ReduceMax>::value)
      return reduce_simd::fold_contiguous(x, n, lowest_value<float>(), StepMax{});
    else
      return reduce_simd::fold_contiguous(x, n, highest_value<float>(), StepMin{});
  }
#endif
  (void)x;
  (void)n;
  return compute_t<T>(0);
}

// acc[j] = step(acc[j], row[j]) for j < w.
template <class A, class T, class Step>
inline void fold_row(A* acc, const T* row, index_t w, Step step) {
  for (index_t j = 0; j < w; ++j) acc[j] = step(acc[j], static_cast<A>(load(row[j])));
}
#if defined(ONNXC_SIMD)
template <class Step>
inline void fold_row(float* acc, const float* row, index_t w, Step step) {
  reduce_simd::fold_row(acc, row, w, step);
}
#endif

// A reducer's row form: the accumulator type A, its start, the step, whether the steps are summed
// in blocks of kSumBlock (as accumulate_sum) and the output from the accumulator and the count.
// Reducers without one (ReduceLogSumExp) take the general walk.
template <class Reducer, class T>
struct RowForm {
  static constexpr bool kExists = false;
};
template <class T, class Step, bool kBlockedSum, class Acc = compute_t<T>>
struct RowFormOf {
  static constexpr bool kExists = true;
  static constexpr bool kBlocked = kBlockedSum;
  using A = Acc;
  using StepType = Step;
};
template <class T> struct RowForm<ReduceSum, T> : RowFormOf<T, StepAdd, true> {
  static compute_t<T> start() { return compute_t<T>(0); }
  static compute_t<T> finish(compute_t<T> s, index_t) { return s; }
};
template <class T> struct RowForm<ReduceSumSquare, T> : RowFormOf<T, StepAddSquare, true> {
  static compute_t<T> start() { return compute_t<T>(0); }
  static compute_t<T> finish(compute_t<T> s, index_t) { return s; }
};
template <class T> struct RowForm<ReduceL1, T> : RowFormOf<T, StepAddAbs, true> {
  static compute_t<T> start() { return compute_t<T>(0); }
  static compute_t<T> finish(compute_t<T> s, index_t) { return s; }
};
template <class T> struct RowForm<ReduceL2, T> : RowFormOf<T, StepAddSquare, true> {
  static compute_t<T> start() { return compute_t<T>(0); }
  static compute_t<T> finish(compute_t<T> s, index_t) { return from_real<T>(std::sqrt(static_cast<real_t<T>>(s))); }
};
template <class T> struct RowForm<ReduceMean, T> : RowFormOf<T, StepAdd, true, real_t<T>> {
  static real_t<T> start() { return real_t<T>(0); }
  static compute_t<T> finish(real_t<T> s, index_t n) { return from_real<T>(s / static_cast<real_t<T>>(n)); }
};
template <class T> struct RowForm<ReduceProd, T> : RowFormOf<T, StepMul, false> {
  static compute_t<T> start() { return compute_t<T>(1); }
  static compute_t<T> finish(compute_t<T> s, index_t) { return s; }
};
template <class T> struct RowForm<ReduceMax, T> : RowFormOf<T, StepMax, false> {
  static compute_t<T> start() { return lowest_value<compute_t<T>>(); }
  static compute_t<T> finish(compute_t<T> s, index_t) { return s; }
};
template <class T> struct RowForm<ReduceMin, T> : RowFormOf<T, StepMin, false> {
  static compute_t<T> start() { return highest_value<compute_t<T>>(); }
  static compute_t<T> finish(compute_t<T> s, index_t) { return s; }
};
template <class T> struct RowForm<ReduceLogSum, T> : RowFormOf<T, StepAdd, false, real_t<T>> {
  static real_t<T> start() { return real_t<T>(0); }
  static compute_t<T> finish(real_t<T> s, index_t) { return from_real<T>(std::log(s)); }
};

// ReduceLogSumExp: two passes over the rows, the max and then the sum of exp(v - max), as its
// general walk (reduce_rows_log_sum_exp below).
template <class T> struct RowForm<ReduceLogSumExp, T> {
  static constexpr bool kExists = true;
};

// Whether the row form applies: the last kept axis is the input's last.
template <class Reducer, class T>
inline bool reduces_by_rows(const ReduceParams& p) {
  return RowForm<Reducer, T>::kExists && p.kept_rank > 0 && p.kept_strides[p.kept_rank - 1] == 1;
}

// Accumulators on the stack: the kept rows are taken kRowChunk elements at a time.
constexpr index_t kRowChunk = 256;

template <class T>
inline void reduce_rows_log_sum_exp(const ReduceParams& p, const T* x, T* y) {
  using R = real_t<T>;
  const index_t width = p.kept_dims[p.kept_rank - 1];
  R shift[kRowChunk], sum[kRowChunk];
  for_each_offset(p.kept_rank - 1, p.kept_dims, p.kept_strides, [&](index_t o) {
    for (index_t j0 = 0; j0 < width; j0 += kRowChunk) {
      const index_t w = width - j0 < kRowChunk ? width - j0 : kRowChunk;
      for (index_t j = 0; j < w; ++j) {
        shift[j] = lowest_value<R>();
        sum[j] = R(0);
      }
      for_each_offset(p.reduced_rank, p.reduced_dims, p.reduced_strides,
                      [&](index_t r) { fold_row(shift, x + o + r + j0, w, StepMax{}); });
      for (index_t j = 0; j < w; ++j) shift[j] = std::isfinite(shift[j]) ? shift[j] : R(0);
      for_each_offset(p.reduced_rank, p.reduced_dims, p.reduced_strides, [&](index_t r) {
        const T* row = x + o + r + j0;
        for (index_t j = 0; j < w; ++j) sum[j] = sum[j] + std::exp(static_cast<R>(load(row[j])) - shift[j]);
      });
      for (index_t j = 0; j < w; ++j) y[j0 + j] = store<T>(from_real<T>(std::log(sum[j]) + shift[j]));
    }
    y += width;
  });
}

template <class Reducer, class T>
inline void reduce_rows_folded(const ReduceParams& p, const T* x, T* y) {
  using Form = RowForm<Reducer, T>;
  using A = typename Form::A;
  const typename Form::StepType step{};
  const index_t width = p.kept_dims[p.kept_rank - 1], count = reduced_count(p);
  A part[kRowChunk], total[kRowChunk] = {};  // total is read only once written (spilled)
  for_each_offset(p.kept_rank - 1, p.kept_dims, p.kept_strides, [&](index_t o) {
    for (index_t j0 = 0; j0 < width; j0 += kRowChunk) {
      const index_t w = width - j0 < kRowChunk ? width - j0 : kRowChunk;
      for (index_t j = 0; j < w; ++j) part[j] = Form::start();
      index_t in_part = 0;
      bool spilled = false;
      for_each_offset(p.reduced_rank, p.reduced_dims, p.reduced_strides, [&](index_t r) {
        fold_row(part, x + o + r + j0, w, step);
        if (Form::kBlocked && ++in_part == kSumBlock) {
          if (spilled) {
            fold_row(total, part, w, StepAdd{});
          } else {
            for (index_t j = 0; j < w; ++j) total[j] = part[j];
          }
          spilled = true;
          for (index_t j = 0; j < w; ++j) part[j] = A(0);
          in_part = 0;
        }
      });
      if (spilled && in_part) fold_row(total, part, w, StepAdd{});
      const A* result = spilled ? total : part;
      for (index_t j = 0; j < w; ++j) y[j0 + j] = store<T>(Form::finish(result[j], count));
    }
    y += width;
  });
}

template <class Reducer, class T>
inline void reduce_rows(const ReduceParams& p, const T* x, T* y) {
  if constexpr (std::is_same<Reducer, ReduceLogSumExp>::value) {
    reduce_rows_log_sum_exp(p, x, y);
  } else {
    reduce_rows_folded<Reducer>(p, x, y);
  }
}

// Float reductions on SIMD targets whose outputs each take a short contiguous run (at most
// reduce_simd::kShortRowMax elements) or strided elements, where the row form does not apply:
// the kept points along the innermost kept axis a vector at a time, one lane each
// (reduce_rows_simd.h's fold_lanes with the row form's step and finish), where one output at a
// time left the lanes mostly idle and the fold's latency exposed (ReduceMax over a last axis of
// 20: 3.7x ORT). Each output's elements in the general walk's order; the sums one chain each, so
// only where an output takes at most kSumBlock elements (the walk's blocks: its chain's bits).
template <class Reducer, class T>
inline bool reduces_in_lanes(const ReduceParams& p) {
#if defined(ONNXC_SIMD)
  if constexpr (!std::is_same<T, float>::value || !RowForm<Reducer, T>::kExists) {
    (void)p;
    return false;
  } else {
    if (p.kept_rank < 1 || p.reduced_rank < 1 || p.kept_dims[p.kept_rank - 1] < 2) return false;
    if constexpr (!std::is_same<Reducer, ReduceLogSumExp>::value) {  // (its walk's sum is one chain)
      if (RowForm<Reducer, T>::kBlocked && reduced_count(p) > kSumBlock) return false;
    }
    // ReduceSum and ReduceMean sum contiguous runs in vectors: a run over half a vector is summed
    // faster so than by one gather per element (docs/performance.md, sixth round)
    constexpr bool kContiguousSums = std::is_same<Reducer, ReduceSum>::value || std::is_same<Reducer, ReduceMean>::value;
    if (kContiguousSums && sums_contiguous<T>(p) && 2 * p.reduced_dims[0] > kFloatLanes) return false;
    const int last = p.reduced_rank - 1;
    return p.reduced_strides[last] != 1 || p.reduced_dims[last] <= reduce_simd::kShortRowMax;
  }
#else
  (void)p;
  return false;
#endif
}

template <class Reducer>
inline void reduce_in_lanes(const ReduceParams& p, const float* x, float* y) {
#if defined(ONNXC_SIMD)
  if constexpr (!RowForm<Reducer, float>::kExists) {
    (void)p;  // not taken: reduces_in_lanes
    (void)x;
    (void)y;
  } else if constexpr (std::is_same<Reducer, ReduceLogSumExp>::value) {
    const int outer = p.kept_rank - 1;
    const index_t inner = p.kept_dims[outer], stride = p.kept_strides[outer];
    const auto reduced = [&p](auto f) { for_each_offset(p.reduced_rank, p.reduced_dims, p.reduced_strides, f); };
    index_t i = 0;
    for_each_offset(outer, p.kept_dims, p.kept_strides, [&](index_t o) {
      reduce_simd::log_sum_exp_lanes(x + o, inner, stride, reduced, y + i);
      i += inner;
    });
  } else {
  using Form = RowForm<Reducer, float>;
  const int outer = p.kept_rank - 1;
  const index_t inner = p.kept_dims[outer], stride = p.kept_strides[outer], count = reduced_count(p);
  const auto reduced = [&p](auto f) { for_each_offset(p.reduced_rank, p.reduced_dims, p.reduced_strides, f); };
  index_t i = 0;
  for_each_offset(outer, p.kept_dims, p.kept_strides, [&](index_t o) {
    reduce_simd::fold_lanes(x + o, inner, stride, reduced, Form::start(), typename Form::StepType{}, y + i);
    for (index_t j = i; j < i + inner; ++j) y[j] = Form::finish(y[j], count);  // Mean, L2, LogSum; else y[j]
    i += inner;
  });
  }
#else
  (void)p;
  (void)x;
  (void)y;
#endif
}
template <class Reducer, class T>
inline void reduce_in_lanes(const ReduceParams&, const T*, T*) {}  // not taken: reduces_in_lanes

// y[i] = Reducer over the reduced elements of the i-th kept point.
template <class Reducer, class T>
inline void reduce(const ReduceParams& p, const T* x, T* y) {
  if constexpr (RowForm<Reducer, T>::kExists) {
    if (reduces_by_rows<Reducer, T>(p)) {
      reduce_rows<Reducer>(p, x, y);
      return;
    }
  }
  if (reduces_in_lanes<Reducer, T>(p)) {
    reduce_in_lanes<Reducer>(p, x, y);
    return;
  }
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
