// Col2Im (ai.onnx since 18): sums the columns of an im2col matrix back into an image, the
// adjoint of unfolding. That is a ConvTranspose: the input's C x prod(block) rows, viewed as
// channels over the grid of block positions, each carry one kernel tap of one image channel, so
// a grouped ConvTranspose (one group per image channel) whose weights are one-hot at that tap
// computes exactly the sum, with the same strides, dilations and pads. Lowered into Reshape and
// that ConvTranspose (its kernel is the compiler's ConvTranspose kernel); image and block
// shapes must be constants.
#include <limits>

#include "ops/lowering.h"
#include "ops/op.h"

namespace onnxc {
namespace {

std::vector<int64_t> constant_ints(const Node& n, std::size_t i, const char* what) {
  const Value& v = *n.inputs[i];
  if (!v.constant) fail_unsupported(n, fmt::format("input '{}' is computed at run time", what),
                                    "make it a constant (or pin it with --constant)");
  std::vector<int64_t> out;
  for (int64_t k = 0; k < v.constant->numel(); ++k) out.push_back(v.constant->int_at(k));
  return out;
}

std::vector<std::unique_ptr<Node>> lower_col2im(Node& n, Graph& g) {
  Lowering l(n, g);
  if (n.inputs.size() != 3 || !n.has_input(0) || !n.has_input(1) || !n.has_input(2))
    fail_invalid(n, "needs input, image_shape and block_shape");
  const Value& x = *n.inputs[0];
  if (x.dtype != DType::Float)
    fail_unsupported(n, fmt::format("input is {}; onnxc computes Col2Im in float", dtype_name(x.dtype)),
                     "cast the input to float");
  const std::vector<int64_t> image = constant_ints(n, 1, "image_shape");
  const std::vector<int64_t> block = constant_ints(n, 2, "block_shape");
  const std::size_t dims = image.size();
  if (block.size() != dims || dims == 0) fail_invalid(n, "image_shape and block_shape differ in length");
  if (x.shape.size() != 3) fail_invalid(n, fmt::format("input has rank {}; Col2Im takes (N, C x block, L)", x.shape.size()));
  const std::vector<int64_t> strides = n.attr_ints("strides", std::vector<int64_t>(dims, 1));
  const std::vector<int64_t> dilations = n.attr_ints("dilations", std::vector<int64_t>(dims, 1));
  const std::vector<int64_t> pads = n.attr_ints("pads", std::vector<int64_t>(2 * dims, 0));
  if (strides.size() != dims || dilations.size() != dims || pads.size() != 2 * dims)
    fail_invalid(n, "strides, dilations and pads must match image_shape's length");
  // Every length within 32 bits, so the arithmetic below cannot overflow.
  for (const std::vector<int64_t>* list : {&image, &block, &strides, &dilations, &pads})
    for (int64_t v : *list)
      if (v < 0 || v > std::numeric_limits<int32_t>::max())
        fail_invalid(n, fmt::format("a length, stride, dilation or pad is {}", v), "give values from 0 to 2^31 - 1");
  for (std::size_t d = 0; d < dims; ++d)
    if (strides[d] == 0 || dilations[d] == 0 || block[d] == 0)
      fail_invalid(n, "strides, dilations and block lengths must be positive");
  require_tensor_fits(n, block, DType::Float, "block_shape");
  int64_t taps = 1;
  for (int64_t b : block) taps *= b;
  if (taps <= 0 || x.shape[1] % taps)
    fail_invalid(n, fmt::format("input dim 1 ({}) is not a multiple of the block's {} taps", x.shape[1], taps));
  const int64_t channels = x.shape[1] / taps;
  // Block positions along each axis, and the ConvTranspose output_padding that gives the image
  // length the positions leave over.
  std::vector<int64_t> grid, output_padding;
  int64_t positions = 1;
  for (std::size_t d = 0; d < dims; ++d) {
    const int64_t span = dilations[d] * (block[d] - 1) + 1;
    const int64_t count = (image[d] + pads[d] + pads[d + dims] - span) / strides[d] + 1;
    if (count <= 0) fail_invalid(n, fmt::format("the block does not fit the padded image along axis {}", d));
    grid.push_back(count);
    require_tensor_fits(n, grid, DType::Float, "the grid of block positions");
    positions *= count;
    output_padding.push_back(image[d] - ((count - 1) * strides[d] - pads[d] - pads[d + dims] + span));
  }
  if (x.shape[2] != positions)
    fail_invalid(n, fmt::format("input has {} columns; the image and block give {} block positions", x.shape[2], positions));
  std::vector<int64_t> grid_shape{x.shape[0], x.shape[1]};
  grid_shape.insert(grid_shape.end(), grid.begin(), grid.end());
  Value* columns = l.value("columns");
  l.add("Reshape", {n.inputs[0], l.int64_constant("columns_shape", {static_cast<int64_t>(grid_shape.size())}, grid_shape)},
        {columns});
  Shape wshape{x.shape[1], 1};
  wshape.insert(wshape.end(), block.begin(), block.end());
  require_tensor_fits(n, wshape, DType::Float, "the one-hot weights");
  Tensor w(DType::Float, wshape);
  float* wd = w.data<float>();
  std::fill(wd, wd + w.numel(), 0.0f);
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t t = 0; t < taps; ++t) wd[(c * taps + t) * taps + t] = 1.0f;  // row c * taps + t: one-hot at tap t
  Value* weights = l.value("taps");
  set_constant_output(*weights, std::move(w));
  Node& ct = l.add("ConvTranspose", {columns, weights}, {n.outputs[0]});
  ct.set_attr_int("group", channels);
  ct.set_attr_ints("strides", strides);
  ct.set_attr_ints("dilations", dilations);
  ct.set_attr_ints("pads", pads);
  ct.set_attr_ints("output_padding", output_padding);
  ct.set_attr_ints("kernel_shape", block);
  return l.take();
}

const OpRegistrar col2im_op(lowered_op("", "Col2Im", {18}, lower_col2im));

}  // namespace
}  // namespace onnxc
