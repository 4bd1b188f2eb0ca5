// The geometry of a numpy-style matrix product (MatMul, MatMulInteger, QLinearMatMul): shared by
// the float and the integer operators so they agree on promotion and batch broadcasting.
#pragma once

#include <cstddef>
#include <vector>

#include "ir/ir.h"

namespace onnxc {

// Internal attribute (never in a model file), int 1: the MatMul's input 1 holds B transposed
// ([..., N, K]), the Transpose before it folded away (fold-transpose); product_shape reads B so.
constexpr const char* kTransposedBAttr = "onnxc.transposed_b";

// The product's geometry: 1-D operands are promoted (a: prepend 1, b: append 1) and the added
// dim dropped from the output; batch dims broadcast, each batch reading a at a_offsets[b] and
// b at b_offsets[b].
struct ProductShape {
  Shape out;
  int64_t m = 0, n = 0, k = 0, batches = 0;
  std::vector<int64_t> a_offsets, b_offsets;
};

ProductShape product_shape(const Node& node, std::size_t a_index, std::size_t b_index);

}  // namespace onnxc
