// Conv: N-d convolution (1 to 3 spatial dims) with groups, pads, strides, dilations, auto_pad.
#include "onnxc/conv.h"
#include "ops/emitter.h"
#include "ops/spatial.h"

namespace onnxc {
namespace {

Window conv_window(const Node& n) {
  const Value& x = input(n, 0);
  const Value& w = input(n, 1);
  std::vector<int64_t> in(x.shape.begin() + 2, x.shape.end());
  std::vector<int64_t> kernel(w.shape.begin() + 2, w.shape.end());
  if (n.has_attr("kernel_shape") && n.attr_ints("kernel_shape") != kernel)
    fail_invalid(n, fmt::format("kernel_shape {} does not match the weight's spatial dims {}",
                                shape_str(n.attr_ints("kernel_shape")), shape_str(kernel)));
  return resolve_window(n, in, kernel, false);
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
  Window win = conv_window(n);
  Shape out = {x.shape[0], m};
  out.insert(out.end(), win.out.begin(), win.out.end());
  set_output(n, 0, x.dtype, out);
}

rt::ConvParams conv_params(const Node& n) {
  const Value& x = *n.inputs[0];
  const Value& w = *n.inputs[1];
  Window win = conv_window(n);
  auto in = to_3d(win.in, 1), out = to_3d(win.out, 1), k = to_3d(win.kernel, 1), s = to_3d(win.strides, 1),
       d = to_3d(win.dilations, 1), p = to_3d(win.pad_begin, 0);
  return rt::ConvParams{x.shape[0], x.shape[1], w.shape[0], n.attr_int("group", 1), in[0], in[1], in[2], out[0], out[1],
                        out[2], k[0], k[1], k[2], s[0], s[1], s[2], d[0], d[1], d[2], p[0], p[1], p[2]};
}

void emit_conv(const Node& n, Emitter& e) {
  e.include("onnxc/conv.h");
  rt::ConvParams p = conv_params(n);
  e.linef("constexpr rt::ConvParams p = {};",
          params_literal("rt::ConvParams",
                         {{"batch", fmt::format("{}", p.batch)}, {"in_channels", fmt::format("{}", p.in_channels)},
                          {"out_channels", fmt::format("{}", p.out_channels)}, {"group", fmt::format("{}", p.group)},
                          {"in_dhw", fmt::format("{}, {}, {}", p.in_d, p.in_h, p.in_w)},
                          {"out_dhw", fmt::format("{}, {}, {}", p.out_d, p.out_h, p.out_w)},
                          {"kernel_dhw", fmt::format("{}, {}, {}", p.k_d, p.k_h, p.k_w)},
                          {"stride_dhw", fmt::format("{}, {}, {}", p.stride_d, p.stride_h, p.stride_w)},
                          {"dilation_dhw", fmt::format("{}, {}, {}", p.dilation_d, p.dilation_h, p.dilation_w)},
                          {"pad_dhw", fmt::format("{}, {}, {}", p.pad_d, p.pad_h, p.pad_w)}}));
  e.linef("rt::conv(p, {}, {}, {}, {});", e.in(0), e.in(1), e.in_or_null(2, n.inputs[0]->dtype), e.out(0));
}

const OpRegistrar conv_op([] {
  OpDef d;
  d.op_type = "Conv";
  d.versions = {1, 11, 22};
  d.infer = infer_conv;
  d.emit = emit_conv;
  return d;
}());

}  // namespace
}  // namespace onnxc
