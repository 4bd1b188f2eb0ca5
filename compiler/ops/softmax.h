// The geometry Softmax and its quantized form (QLinearSoftmax) share.
#pragma once

#include "ops/op.h"

namespace onnxc {

// The input as [outer, n, inner], normalised along n.
struct SoftmaxGeometry {
  int64_t outer, n, inner;
};

// Before opset 13 (coerce_2d) the input is coerced to 2-D at `axis` and normalised over
// everything from axis on; from 13 along `axis` alone. Fails naming n when the axis is out of range.
SoftmaxGeometry softmax_geometry(const Node& n, const Shape& s, int64_t axis, bool coerce_2d);

}  // namespace onnxc
