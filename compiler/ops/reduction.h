// What the reductions (ops/reduce.cpp) and MeanVarianceNormalization share: reading an axis
// list, and splitting an input shape into the kept and reduced index spaces that
// runtime-support's reduce kernels walk.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"
#include "onnxc/reduce.h"

namespace onnxc {

// Which axes of a rank-`rank` tensor `axes` names; fails on out-of-range or repeated axes.
std::vector<bool> axes_mask(const Node& n, const std::vector<int64_t>& axes, int64_t rank);

// The input `shape` as kept and reduced strided spaces (reduced[d]: axis d is reduced). Axes of
// extent 1 are dropped and neighbours of the same kind merged, so the kernel's loops are few
// and long. Fails (unsupported) beyond the kernel's rank limit.
rt::ReduceParams reduce_params(const Node& n, const Shape& shape, const std::vector<bool>& reduced);

// `rt::ReduceParams{...}` for generated code.
std::string reduce_params_literal(const rt::ReduceParams& p);

}  // namespace onnxc
