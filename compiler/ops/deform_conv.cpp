// DeformConv (ai.onnx 19, 22), 2-D: a convolution whose kernel taps are read at learned
// offsets (bilinear interpolation, zero outside the image), each scaled by a learned mask.
// Lowered into
//
//   onnxc.DeformIm2Col(X, offset[, mask]) -> cols [N, group, C/group * kH * kW, oH * oW]
//   MatMul(W as [group, M/group, C/group * kH * kW], cols) -> Reshape [N, M, oH, oW] [-> Add(B)]
//
// so that the product runs on the MatMul kernels; the sampling is rt::deform_im2col
// (onnxc/deform_conv.h).
#include "onnxc/deform_conv.h"
#include "ops/emitter.h"
#include "ops/lowering.h"

namespace onnxc {
namespace {

constexpr const char* kDomain = "onnxc";
constexpr const char* kIm2Col = "DeformIm2Col";

using Nodes = std::vector<std::unique_ptr<Node>>;

// Geometry of a DeformConv node's sampling, from X's shape and the attributes (kept on the
// onnxc.DeformIm2Col node, which also carries kernel_shape).
rt::DeformIm2ColParams deform_params(const Node& n, const Shape& x, int64_t kernel_h, int64_t kernel_w) {
  if (x.size() != 4) fail_unsupported(n, fmt::format("X is {}-D; onnxc implements 2-D DeformConv (4-D X) only", x.size()));
  const std::vector<int64_t> strides = n.attr_ints("strides", {1, 1}), dilations = n.attr_ints("dilations", {1, 1}),
                             pads = n.attr_ints("pads", {0, 0, 0, 0});
  if (strides.size() != 2 || dilations.size() != 2 || pads.size() != 4)
    fail_invalid(n, "strides and dilations need 2 values and pads 4 for a 2-D DeformConv");
  for (int64_t v : strides)
    if (v <= 0) fail_invalid(n, "strides must be positive");
  for (int64_t v : dilations)
    if (v <= 0) fail_invalid(n, "dilations must be positive");
  const int64_t offset_groups = n.attr_int("offset_group", 1);
  if (offset_groups <= 0 || x[1] % offset_groups)
    fail_invalid(n, fmt::format("offset_group {} does not divide the {} channels", offset_groups, x[1]));
  rt::DeformIm2ColParams p{};
  p.batch = x[0], p.channels = x[1], p.height = x[2], p.width = x[3];
  p.kernel_h = kernel_h, p.kernel_w = kernel_w;
  p.stride_h = strides[0], p.stride_w = strides[1], p.dilation_h = dilations[0], p.dilation_w = dilations[1];
  p.pad_top = pads[0], p.pad_left = pads[1];
  p.out_h = (x[2] + pads[0] + pads[2] - dilations[0] * (kernel_h - 1) - 1) / strides[0] + 1;
  p.out_w = (x[3] + pads[1] + pads[3] - dilations[1] * (kernel_w - 1) - 1) / strides[1] + 1;
  if (p.out_h <= 0 || p.out_w <= 0)
    fail_invalid(n, fmt::format("the output would be {} x {}", p.out_h, p.out_w));
  p.offset_groups = offset_groups;
  return p;
}

void require_shape(const Node& n, std::size_t i, const char* what, const Shape& expected) {
  if (n.inputs[i]->shape != expected)
    fail_invalid(n, fmt::format("{} has shape {}; expected {}", what, shape_str(n.inputs[i]->shape), shape_str(expected)));
}

Nodes lower_deform_conv(Node& n, Graph& g) {
  check_arity(n, 3, 5, 1, 1);
  for (std::size_t i = 0; i < n.inputs.size(); ++i)
    if (n.has_input(i) && n.inputs[i]->dtype != DType::Float)
      fail_unsupported(n, fmt::format("input {} is {}; onnxc computes DeformConv in float", i, dtype_name(n.inputs[i]->dtype)),
                       "cast the inputs to float");
  Lowering l(n, g);
  Value *x = n.inputs[0], *w = n.inputs[1], *offset = n.inputs[2];
  if (x->shape.size() != 4)
    fail_unsupported(n, fmt::format("X is {}-D; onnxc implements 2-D DeformConv (4-D X) only", x->shape.size()));
  const Shape& ws = w->shape;
  if (ws.size() != 4) fail_invalid(n, fmt::format("W has shape {}; expected [M, C/group, kH, kW]", shape_str(ws)));
  const std::vector<int64_t> kernel = n.attr_ints("kernel_shape", {ws[2], ws[3]});
  if (kernel != std::vector<int64_t>{ws[2], ws[3]})
    fail_invalid(n, fmt::format("kernel_shape {} differs from W's {} x {}", shape_str(kernel), ws[2], ws[3]));
  const rt::DeformIm2ColParams p = deform_params(n, x->shape, ws[2], ws[3]);
  const int64_t group = n.attr_int("group", 1);
  if (group <= 0 || p.channels % group || ws[0] % group || ws[1] * group != p.channels)
    fail_invalid(n, fmt::format("group {} does not fit {} input channels and W {}", group, p.channels, shape_str(ws)));
  const int64_t taps = p.kernel_h * p.kernel_w;
  require_shape(n, 2, "offset", {p.batch, p.offset_groups * 2 * taps, p.out_h, p.out_w});
  if (n.has_input(3)) require_shape(n, 3, "B", {ws[0]});
  if (n.has_input(4)) require_shape(n, 4, "mask", {p.batch, p.offset_groups * taps, p.out_h, p.out_w});

  std::vector<Value*> sample_inputs = {x, offset};
  if (n.has_input(4)) sample_inputs.push_back(n.inputs[4]);
  Value* cols = l.value("cols");
  Node& sample = l.add(kIm2Col, sample_inputs, {cols});
  sample.domain = kDomain;
  sample.version = 1;
  for (const char* a : {"strides", "dilations", "pads", "offset_group"})
    if (const Attribute* attr = n.attr(a)) sample.attrs[a] = *attr;
  sample.set_attr_ints("kernel_shape", kernel);
  sample.set_attr_int("group", group);

  const int64_t depth = p.channels / group * taps;
  Value* weights = l.value("weights");
  l.add("Reshape", {w, l.int64_constant("weights_shape", {3}, {group, ws[0] / group, depth})}, {weights});
  Value* product = l.value("product");
  l.add("MatMul", {weights, cols}, {product});
  Value* y = n.has_input(3) ? l.value("y_no_bias") : n.outputs[0];
  l.add("Reshape", {product, l.int64_constant("y_shape", {4}, {p.batch, ws[0], p.out_h, p.out_w})}, {y});
  if (n.has_input(3)) {
    Value* bias = l.value("bias");
    l.add("Reshape", {n.inputs[3], l.int64_constant("bias_shape", {3}, {ws[0], 1, 1})}, {bias});
    l.add("Add", {y, bias}, {n.outputs[0]});
  }
  return l.take();
}

const OpRegistrar deform_conv(lowered_op("", "DeformConv", {19, 22}, lower_deform_conv));

// ---- onnxc.DeformIm2Col ----

rt::DeformIm2ColParams im2col_params(const Node& n) {
  const std::vector<int64_t> kernel = n.attr_ints("kernel_shape");
  if (kernel.size() != 2) fail_invalid(n, "kernel_shape needs 2 values");
  return deform_params(n, n.inputs[0]->shape, kernel[0], kernel[1]);
}

void infer_im2col(Node& n) {
  check_arity(n, 2, 3, 1, 1);
  const rt::DeformIm2ColParams p = im2col_params(n);
  const int64_t group = n.attr_int("group", 1);
  set_output(n, 0, DType::Float,
             {p.batch, group, p.channels / group * p.kernel_h * p.kernel_w, p.out_h * p.out_w});
}

void emit_im2col(const Node& n, Emitter& e) {
  e.include("onnxc/deform_conv.h");
  const rt::DeformIm2ColParams p = im2col_params(n);
  e.linef("constexpr rt::DeformIm2ColParams p = {{{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}}};", p.batch,
          p.channels, p.height, p.width, p.kernel_h, p.kernel_w, p.stride_h, p.stride_w, p.pad_top, p.pad_left,
          p.dilation_h, p.dilation_w, p.out_h, p.out_w, p.offset_groups);
  e.linef("rt::deform_im2col({}, {}, {}, {}, p);", e.in(0), e.in(1), e.in_or_null(2, DType::Float), e.out(0));
}

const OpRegistrar deform_im2col([] {
  OpDef d;
  d.domain = kDomain;
  d.op_type = kIm2Col;
  d.versions = {1};
  d.infer = infer_im2col;
  d.emit = emit_im2col;
  d.fold = [](const Node& n, std::vector<Tensor>& outs) {
    const Value& y = *n.outputs[0];
    outs.emplace_back(y.dtype, y.shape);
    const Tensor* mask = n.inputs.size() > 2 && n.inputs[2] ? n.inputs[2]->constant.get() : nullptr;
    rt::deform_im2col(n.inputs[0]->constant->data<float>(), n.inputs[1]->constant->data<float>(),
                      mask ? mask->data<float>() : nullptr, outs[0].data<float>(), im2col_params(n));
  };
  return d;
}());

}  // namespace
}  // namespace onnxc
