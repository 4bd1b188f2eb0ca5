// Conv: N-d convolution (1 to 3 spatial dims) with groups, pads, strides, dilations, auto_pad.
#include "onnxc/conv.h"
#include "ops/emitter.h"
#include "ops/spatial.h"

namespace onnxc {
namespace {

Window conv_window(const Node& n) {
  const Value& x = input(n, 0);
  std::vector<int64_t> in(x.shape.begin() + 2, x.shape.end());
  return resolve_window(n, in, weight_kernel(n, input(n, 1)), false);
}

void infer_conv(Node& n) {
  check_arity(n, 2, 3, 1, 1);
  const Value& x = input(n, 0);
  const Value& w = input(n, 1);
  require_float(n, 0);
  if (x.shape.size() < 3 || x.shape.size() > 5)
    fail_unsupported(n, fmt::format("input rank {} (onnxc supports 1 to 3 spatial dims)", x.shape.size()));
  if (w.shape.size() != x.shape.size())
    fail_invalid(n, fmt::format("weight rank {} differs from input rank {}", w.shape.size(), x.shape.size()));
  if (w.dtype != x.dtype) fail_invalid(n, "weight and input have different types");
  int64_t group = n.attr_int("group", 1);
  int64_t c = x.shape[1], m = w.shape[0];
  if (group < 1 || c % group != 0 || m % group != 0)
    fail_invalid(n, fmt::format("group {} does not divide the {} input and {} output channels", group, c, m));
  if (w.shape[1] * group != c)
    fail_invalid(n, fmt::format("weight has {} input channels per group; input has {} channels in {} groups",
                                w.shape[1], c, group));
  if (n.has_input(2) && n.inputs[2]->shape != Shape{m})
    fail_invalid(n, fmt::format("bias shape {} should be [{}]", shape_str(n.inputs[2]->shape), m));
  if (n.has_input(2) && n.inputs[2]->dtype != x.dtype) fail_invalid(n, "bias and input have different types");
  Window win = conv_window(n);
  Shape out = {x.shape[0], m};
  out.insert(out.end(), win.out.begin(), win.out.end());
  set_output(n, 0, x.dtype, out);
}

void emit_conv(const Node& n, Emitter& e) {
  e.include("onnxc/conv.h");
  const Value& x = *n.inputs[0];
  e.line(conv_params_code(conv_params(conv_window(n), x.shape[0], x.shape[1], n.inputs[1]->shape[0], n.attr_int("group", 1))));
  e.linef("rt::conv(p, {}, {}, {}, {});", e.in(0), e.in(1), e.in_or_null(2, x.dtype), e.out(0));
}

const OpRegistrar conv_op([] {
  OpDef d;
  d.op_type = "Conv";
  d.versions = {1, 11, 22};
  d.infer = infer_conv;
  d.emit = emit_conv;
  d.macs = [](const Node& n) {  // every output element: (C / group) * kernel taps
    const Shape& w = n.inputs[1]->shape;
    return n.outputs[0]->numel() * shape_numel(Shape(w.begin() + 1, w.end()));
  };
  return d;
}());

}  // namespace
}  // namespace onnxc
