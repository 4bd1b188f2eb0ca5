// Pad: constant, reflect, edge and wrap modes. Negative pads crop.
#include "onnxc/pad.h"
#include "ops/emitter.h"
#include "ops/scalar_literal.h"

namespace onnxc {
namespace {

// What to pad with, resolved from whichever form the node's version uses.
struct PadSpec {
  std::vector<int64_t> begin, end;  // per input dim; negative values crop
  rt::PadMode mode = rt::PadMode::Constant;
  const char* mode_name = "Constant";
  std::shared_ptr<const Tensor> value;  // the constant: nullptr for zero, or a computed input
};

rt::PadMode pad_mode(const Node& n, const char** name) {
  std::string mode = n.attr_string("mode", "constant");
  if (mode == "constant") return *name = "Constant", rt::PadMode::Constant;
  if (mode == "reflect") return *name = "Reflect", rt::PadMode::Reflect;
  if (mode == "edge") return *name = "Edge", rt::PadMode::Edge;
  if (mode == "wrap") {
    if (n.version < 19) fail_invalid(n, "mode 'wrap' exists from version 19 on");
    return *name = "Wrap", rt::PadMode::Wrap;
  }
  fail_invalid(n, fmt::format("mode '{}' is not constant, reflect, edge or wrap", mode));
}

// Pads are [begin of each dim..., end of each dim...]: an attribute ('paddings' in version 1,
// 'pads' in 2) or, from 11, an input, which from 18 may cover only the dims in input 'axes'.
PadSpec pad_spec(const Node& n) {
  const Value& x = input(n, 0);
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  PadSpec p;
  p.mode = pad_mode(n, &p.mode_name);
  std::vector<int64_t> pads, axes;
  if (n.version < 11) {
    const char* attr = n.version < 2 ? "paddings" : "pads";
    if (!n.has_attr(attr)) fail_invalid(n, fmt::format("required attribute '{}' is missing", attr));
    pads = n.attr_ints(attr);
    if (n.attr_float("value", 0.f) != 0.f) {
      auto v = std::make_shared<Tensor>(DType::Float, Shape{});
      v->data<float>()[0] = n.attr_float("value", 0.f);
      p.value = v;
    }
  } else {
    require_dtype(n, 1, {DType::Int64});
    pads = require_const_input(n, 1, "pads").to_ints();
    if (n.has_input(2)) {
      if (input(n, 2).dtype != x.dtype) fail_invalid(n, "constant_value must have the data's type");
      if (input(n, 2).numel() != 1) fail_invalid(n, "constant_value must have one element");
      p.value = n.inputs[2]->constant;  // nullptr when computed at run time: read in the generated code
    }
    if (n.has_input(3)) {
      require_dtype(n, 3, {DType::Int32, DType::Int64});
      axes = require_const_input(n, 3, "axes").to_ints();
    }
  }
  if (!n.has_input(3))
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  if (pads.size() != 2 * axes.size())
    fail_invalid(n, fmt::format("pads has {} entries; expected {} (begin and end of {} axes)", pads.size(),
                                2 * axes.size(), axes.size()));
  p.begin.assign(static_cast<std::size_t>(rank), 0);
  p.end.assign(static_cast<std::size_t>(rank), 0);
  for (std::size_t j = 0; j < axes.size(); ++j) {
    std::size_t d = static_cast<std::size_t>(normalize_axis(n, axes[j], rank, "axes entry"));
    p.begin[d] = pads[j];
    p.end[d] = pads[j + axes.size()];
  }
  return p;
}

// The source after cropping by negative pads: its first element, lengths and the (now
// non-negative) front padding.
struct PadGeometry {
  int64_t offset = 0;
  std::vector<int64_t> strides, src_len, pad_begin;
};

PadGeometry pad_geometry(const Node& n, const PadSpec& p) {
  const Shape& x = n.inputs[0]->shape;
  PadGeometry g;
  g.strides = contiguous_strides(x);
  for (std::size_t d = 0; d < x.size(); ++d) {
    const int64_t crop_front = std::max<int64_t>(-p.begin[d], 0), crop_back = std::max<int64_t>(-p.end[d], 0);
    g.offset += crop_front * g.strides[d];
    g.src_len.push_back(std::max<int64_t>(x[d] - crop_front - crop_back, 0));
    g.pad_begin.push_back(std::max<int64_t>(p.begin[d], 0));
  }
  return g;
}

void infer_pad(Node& n) {
  check_arity(n, 1, n.version < 11 ? 1 : (n.version < 18 ? 3 : 4), 1, 1);
  const Value& x = input(n, 0);
  if (x.shape.size() > static_cast<std::size_t>(rt::kMaxCopyRank)) fail_unsupported(n, fmt::format("rank {}", x.shape.size()));
  PadSpec p = pad_spec(n);
  Shape out;
  for (std::size_t d = 0; d < x.shape.size(); ++d) {
    const int64_t len = x.shape[d] + p.begin[d] + p.end[d];
    if (len < 0) fail_invalid(n, fmt::format("pads crop dim {} (size {}) below zero", d, x.shape[d]));
    if (p.mode != rt::PadMode::Constant && len > 0 && pad_geometry(n, p).src_len[d] == 0)
      fail_invalid(n, fmt::format("mode {} cannot pad dim {}: nothing is left to repeat", n.attr_string("mode", ""), d));
    out.push_back(len);
  }
  set_output(n, 0, x.dtype, out);
}

// The pad value as a C++ expression: a literal, or element 0 of the run-time input.
std::string pad_value_expr(const Node& n, const PadSpec& p, Emitter& e) {
  const DType t = n.outputs[0]->dtype;
  if (p.value) return scalar_literal(t, *p.value);
  if (n.has_input(2)) return e.in(2) + "[0]";
  return fmt::format("rt::store<{}>(0)", dtype_ctype(t));
}

const OpRegistrar pad_op([] {
  OpDef d;
  d.op_type = "Pad";
  d.versions = {1, 2, 11, 13, 18, 19, 21, 23, 24, 25};
  d.infer = infer_pad;
  d.emit = [](const Node& n, Emitter& e) {
    const Value& y = *n.outputs[0];
    if (y.numel() == 0) return;
    PadSpec p = pad_spec(n);
    PadGeometry g = pad_geometry(n, p);
    e.include("onnxc/pad.h");
    e.index_array("x_strides", g.strides);
    e.index_array("src_len", g.src_len);
    e.index_array("out_shape", y.shape);
    e.index_array("pad_begin", g.pad_begin);
    e.linef("rt::pad({}{}, {}, x_strides, src_len, out_shape, pad_begin, {}, rt::PadMode::{}, {});", e.in(0),
            g.offset ? fmt::format(" + {}", g.offset) : "", e.out(0), y.shape.size(), p.mode_name,
            pad_value_expr(n, p, e));
  };
  d.fold = [](const Node& n, std::vector<Tensor>& outs) {
    const Value& y = *n.outputs[0];
    outs.emplace_back(y.dtype, y.shape);
    if (y.numel() == 0) return;
    PadSpec p = pad_spec(n);
    PadGeometry g = pad_geometry(n, p);
    std::vector<rt::index_t> strides(g.strides.begin(), g.strides.end()), len(g.src_len.begin(), g.src_len.end()),
        shape(y.shape.begin(), y.shape.end()), begin(g.pad_begin.begin(), g.pad_begin.end());
    dispatch_dtype(n, y.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T value = rt::store<T>(0);
      if (p.value && p.value->dtype == y.dtype) value = p.value->data<T>()[0];
      else if (p.value) value = rt::store<T>(static_cast<rt::compute_t<T>>(p.value->float_at(0)));
      rt::pad(n.inputs[0]->constant->data<T>() + g.offset, outs[0].data<T>(), strides.data(), len.data(), shape.data(),
              begin.data(), static_cast<int>(shape.size()), p.mode, value);
    });
  };
  return d;
}());

}  // namespace
}  // namespace onnxc
