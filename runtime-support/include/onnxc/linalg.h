// Linear algebra beyond matrix products: Det, and Einsum as a strided contraction.
#ifndef ONNXC_LINALG_H
#define ONNXC_LINALG_H

#include <cmath>

#include "onnxc/base.h"
#include "onnxc/numeric.h"

namespace onnxc {
namespace rt {

// ---- Det: x is [batches, m, m]; y[b] = det(x[b]) ----

// LU decomposition with partial pivoting in double precision; `lu` is scratch for m * m
// doubles. The determinant is the product of the pivots, negated once per row swap.
template <class T>
inline void det(const T* x, T* y, index_t batches, index_t m, double* lu) {
  for (index_t b = 0; b < batches; ++b) {
    const T* xm = x + b * m * m;
    for (index_t i = 0; i < m * m; ++i) lu[i] = static_cast<double>(load(xm[i]));
    double d = 1.0;
    for (index_t col = 0; col < m && d != 0.0; ++col) {
      index_t pivot = col;
      for (index_t r = col + 1; r < m; ++r)
        if (std::fabs(lu[r * m + col]) > std::fabs(lu[pivot * m + col])) pivot = r;
      if (lu[pivot * m + col] == 0.0) {
        d = 0.0;
        break;
      }
      if (pivot != col) {
        for (index_t c = 0; c < m; ++c) {
          const double t = lu[col * m + c];
          lu[col * m + c] = lu[pivot * m + c];
          lu[pivot * m + c] = t;
        }
        d = -d;
      }
      const double p = lu[col * m + col];
      d *= p;
      for (index_t r = col + 1; r < m; ++r) {
        const double f = lu[r * m + col] / p;
        for (index_t c = col + 1; c < m; ++c) lu[r * m + c] -= f * lu[col * m + c];
      }
    }
    y[b] = store<T>(static_cast<compute_t<T>>(d));
  }
}

// ---- Einsum ----

constexpr int kMaxEinsumOperands = 8;
constexpr int kMaxEinsumLabels = 16;

// An Einsum after the compiler has parsed its equation: every distinct index letter (and
// every dim an ellipsis stands for) is a label. The output labels are walked in the output's
// row-major order, the summed labels (those missing from the output) for every output element.
// strides[l][i] is operand i's element stride for label l: 0 when the operand lacks the label
// or broadcasts along it, the sum of its strides when the label repeats in it (a diagonal).
struct EinsumParams {
  int operands;
  int out_rank;
  index_t out_dims[kMaxEinsumLabels];
  index_t out_strides[kMaxEinsumLabels][kMaxEinsumOperands];
  int sum_rank;
  index_t sum_dims[kMaxEinsumLabels];
  index_t sum_strides[kMaxEinsumLabels][kMaxEinsumOperands];
};

// Calls f(offsets) for every point of a label space, offsets[i] being operand i's offset.
template <class F>
inline void for_each_label_point(int operands, int rank, const index_t* dims, const index_t (*strides)[kMaxEinsumOperands],
                                 const index_t* base, F f) {
  index_t offsets[kMaxEinsumOperands];
  for (int i = 0; i < operands; ++i) offsets[i] = base[i];
  for (int d = 0; d < rank; ++d)
    if (dims[d] == 0) return;
  index_t idx[kMaxEinsumLabels] = {};
  for (;;) {
    f(static_cast<const index_t*>(offsets));
    int d = rank - 1;
    for (; d >= 0; --d) {
      for (int i = 0; i < operands; ++i) offsets[i] += strides[d][i];
      if (++idx[d] < dims[d]) break;
      for (int i = 0; i < operands; ++i) offsets[i] -= strides[d][i] * dims[d];
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

// y[out] = sum over the summed labels of the product of every operand's element.
template <class T>
inline void einsum(const EinsumParams& p, const T* const* x, T* y) {
  using C = compute_t<T>;
  const index_t zero[kMaxEinsumOperands] = {};
  index_t at = 0;
  for_each_label_point(p.operands, p.out_rank, p.out_dims, p.out_strides, zero, [&](const index_t* out_offsets) {
    C acc = C(0);
    for_each_label_point(p.operands, p.sum_rank, p.sum_dims, p.sum_strides, out_offsets, [&](const index_t* offsets) {
      C prod = load(x[0][offsets[0]]);
      for (int i = 1; i < p.operands; ++i) prod = static_cast<C>(prod * load(x[i][offsets[i]]));
      acc = static_cast<C>(acc + prod);
    });
    y[at++] = store<T>(acc);
  });
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_LINALG_H
