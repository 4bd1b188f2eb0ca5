// AffineGrid (ai.onnx since 20): the sampling grid of an affine transform, for GridSample.
// With the output size a constant, the grid's normalised coordinates (x, y[, z], 1) are a
// constant table and the grid is one batched product with theta:
//   grid[n, positions, :] = base[positions, :] x theta[n]^T,
// lowered into Transpose, MatMul and Reshape. Coordinates run over [-1, 1]: at pixel centres
// ((2 i + 1) / length - 1) with align_corners = 0, at the corner pixels with align_corners = 1.
#include "ops/lowering.h"
#include "ops/op.h"

namespace onnxc {
namespace {

float coordinate(int64_t i, int64_t length, bool align_corners) {
  if (align_corners) return length > 1 ? -1.0f + 2.0f * static_cast<float>(i) / static_cast<float>(length - 1) : 0.0f;
  return (2.0f * static_cast<float>(i) + 1.0f) / static_cast<float>(length) - 1.0f;
}

std::vector<std::unique_ptr<Node>> lower_affine_grid(Node& n, Graph& g) {
  Lowering l(n, g);
  if (n.inputs.size() != 2 || !n.has_input(0) || !n.has_input(1)) fail_invalid(n, "needs theta and size");
  const Value& theta = *n.inputs[0];
  const Value& size = *n.inputs[1];
  if (theta.dtype != DType::Float)
    fail_unsupported(n, fmt::format("theta is {}; onnxc computes AffineGrid in float", dtype_name(theta.dtype)),
                     "cast theta to float");
  if (!size.constant)
    fail_unsupported(n, "input 'size' is computed at run time", "make it a constant (or pin it with --constant)");
  const int64_t dims = size.constant->numel() - 2;  // 2 or 3 spatial dims
  if (dims != 2 && dims != 3) fail_invalid(n, fmt::format("size has {} values; AffineGrid takes 4 or 5", dims + 2));
  const int64_t batch = size.constant->int_at(0);
  if (theta.shape != Shape{batch, dims, dims + 1})
    fail_invalid(n, fmt::format("theta has shape {}; size {} needs [{}, {}, {}]", shape_str(theta.shape),
                                shape_str(Shape{batch}), batch, dims, dims + 1));
  // Spatial lengths, slowest first (D, H, W); the coordinate order is x (W), y (H), z (D).
  std::vector<int64_t> lengths;
  for (int64_t d = 0; d < dims; ++d) lengths.push_back(size.constant->int_at(2 + d));
  const bool align = n.attr_int("align_corners", 0) != 0;
  Shape grid_shape{batch};
  grid_shape.insert(grid_shape.end(), lengths.begin(), lengths.end());
  grid_shape.push_back(dims + 1);
  require_tensor_fits(n, grid_shape, DType::Float, "the grid");
  int64_t positions = 1;
  for (int64_t len : lengths) positions *= len;
  Tensor base(DType::Float, {1, positions, dims + 1});
  float* b = base.data<float>();
  for (int64_t p = 0; p < positions; ++p) {
    int64_t rest = p;
    std::vector<int64_t> index(static_cast<std::size_t>(dims));
    for (int64_t d = dims - 1; d >= 0; --d) {
      index[static_cast<std::size_t>(d)] = rest % lengths[static_cast<std::size_t>(d)];
      rest /= lengths[static_cast<std::size_t>(d)];
    }
    for (int64_t c = 0; c < dims; ++c) {  // c = 0 is x: the last spatial axis
      const std::size_t axis = static_cast<std::size_t>(dims - 1 - c);
      b[p * (dims + 1) + c] = coordinate(index[axis], lengths[axis], align);
    }
    b[p * (dims + 1) + dims] = 1.0f;
  }
  Value* base_value = l.value("base_grid");
  set_constant_output(*base_value, std::move(base));
  Value* theta_t = l.value("theta_t");
  l.add("Transpose", {n.inputs[0]}, {theta_t}).set_attr_ints("perm", {0, 2, 1});
  Value* flat = l.value("grid_flat");
  l.add("MatMul", {base_value, theta_t}, {flat});
  std::vector<int64_t> shape{batch};
  shape.insert(shape.end(), lengths.begin(), lengths.end());
  shape.push_back(dims);
  l.add("Reshape", {flat, l.int64_constant("grid_shape", {static_cast<int64_t>(shape.size())}, shape)},
        {n.outputs[0]});
  return l.take();
}

const OpRegistrar affine_grid_op(lowered_op("", "AffineGrid", {20}, lower_affine_grid));

}  // namespace
}  // namespace onnxc
