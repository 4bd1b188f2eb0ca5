// Expand and Tile: the output repeats the input; both are strided copies whose repeated dims
// have stride 0.
#include "ops/emitter.h"
#include "ops/strided_copy.h"

namespace onnxc {
namespace {

// ---- Expand: numpy broadcasting of the input to (the broadcast of itself and) a shape ----

Shape expand_shape(const Node& n) {
  require_dtype(n, 1, {DType::Int64});
  std::vector<int64_t> target = require_const_input(n, 1, "target shape").to_ints();
  for (int64_t d : target)
    if (d < 0) fail_invalid(n, fmt::format("target shape {} has a negative dim", shape_str(target)));
  return broadcast_shapes(n, input(n, 0).shape, target);
}

StridedCopy expand_copy(const Node& n) {
  StridedCopy c;
  c.shape = n.outputs[0]->shape;
  c.strides = broadcast_strides(input(n, 0).shape, c.shape);
  return c;
}

void infer_expand(Node& n) {
  check_arity(n, 2, 2, 1, 1);
  set_output(n, 0, input(n, 0).dtype, expand_shape(n));
}

// ---- Tile: the output along dim d is the input repeated repeats[d] times ----

// Tile-1 repeats along one axis (inputs 'tiles' and 'axis'); from 6 on, input 'repeats' has
// one count per dim.
std::vector<int64_t> tile_repeats(const Node& n) {
  const Value& x = input(n, 0);
  const std::size_t rank = x.shape.size();
  if (n.version < 6) {
    int64_t tiles = require_const_input(n, 1, "tiles").int_at(0);
    int64_t axis = normalize_axis(n, require_const_input(n, 2, "axis").int_at(0), static_cast<int64_t>(rank));
    std::vector<int64_t> repeats(rank, 1);
    repeats[static_cast<std::size_t>(axis)] = tiles;
    return repeats;
  }
  require_dtype(n, 1, {DType::Int64});
  std::vector<int64_t> repeats = require_const_input(n, 1, "repeats").to_ints();
  if (repeats.size() != rank)
    fail_invalid(n, fmt::format("'repeats' has {} entries for an input of rank {}", repeats.size(), rank));
  return repeats;
}

// The output viewed as (repeat, input dim) pairs: dims [r0, d0, r1, d1, ...] where a repeat
// index does not move in the input (stride 0).
StridedCopy tile_copy(const Node& n) {
  const Shape& in = input(n, 0).shape;
  std::vector<int64_t> repeats = tile_repeats(n), strides = contiguous_strides(in);
  StridedCopy c;
  for (std::size_t d = 0; d < in.size(); ++d) {
    c.shape.insert(c.shape.end(), {repeats[d], in[d]});
    c.strides.insert(c.strides.end(), {0, strides[d]});
  }
  return c;
}

void infer_tile(Node& n) {
  check_arity(n, n.version < 6 ? 3 : 2, n.version < 6 ? 3 : 2, 1, 1);
  const Value& x = input(n, 0);
  std::vector<int64_t> repeats = tile_repeats(n);
  Shape out;
  for (std::size_t d = 0; d < x.shape.size(); ++d) {
    if (repeats[d] < 0) fail_invalid(n, fmt::format("repeat count {} for dim {} is negative", repeats[d], d));
    out.push_back(x.shape[d] * repeats[d]);
  }
  set_output(n, 0, x.dtype, out);
}

const OpRegistrar expand_op(strided_copy_op("Expand", {8, 13}, infer_expand, expand_copy));
const OpRegistrar tile_op(strided_copy_op("Tile", {1, 6, 13}, infer_tile, tile_copy));

}  // namespace
}  // namespace onnxc
