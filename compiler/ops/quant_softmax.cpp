// ONNX Runtime's QLinearSoftmax(X, X_scale, x_zero_point, y_scale, y_zero_point) (domain
// com.microsoft, version 1; attributes axis and opset, the version of the Softmax it stands for):
// its QOperator format writes it, and lower-qdq produces it from DequantizeLinear -> Softmax ->
// QuantizeLinear. Kernel in onnxc/quant_softmax.h: a table of exp(-d X_scale) for the 256
// differences d to the row's largest logit, computed here, and an int32 sum per row.
#include <cmath>

#include "onnxc/quant_softmax.h"
#include "ops/emitter.h"
#include "ops/quant_common.h"
#include "ops/softmax.h"

namespace onnxc {
namespace {

struct QuantSoftmax {
  SoftmaxGeometry g;
  std::vector<std::int32_t> exp_table;  // round(exp(-d x_scale) 2^bits), d = 0..255
  float y_scale;
  std::int32_t y_zero_point;
};

QuantSoftmax quant_softmax(const Node& n) {
  const int64_t opset = n.attr_int("opset", 13);
  QuantSoftmax q;
  q.g = softmax_geometry(n, n.inputs[0]->shape, n.attr_int("axis", opset < 13 ? 1 : -1), opset < 13);
  for (std::size_t i : {std::size_t{1}, std::size_t{3}}) {
    require_dtype(n, i, {DType::Float});
    require_per_tensor(n, i, i == 1 ? "X_scale" : "y_scale");
  }
  for (std::size_t i : {std::size_t{2}, std::size_t{4}})
    if (n.has_input(i)) {
      require_same_dtype(n, i, 0);
      require_per_tensor(n, i, i == 2 ? "x_zero_point" : "y_zero_point");
    }
  const double x_scale = require_const_input(n, 1, "X_scale").data<float>()[0];
  q.y_scale = require_const_input(n, 3, "y_scale").data<float>()[0];
  q.y_zero_point = n.has_input(4) ? static_cast<std::int32_t>(require_const_input(n, 4, "y_zero_point").int_at(0)) : 0;
  if (n.has_input(2)) require_const_input(n, 2, "x_zero_point");
  // The row's sum, at most n 2^bits, within 2^30; 23 bits are a float's precision.
  int bits = 23;
  while (bits > 0 && (int64_t{1} << bits) * q.g.n > (int64_t{1} << 30)) --bits;
  if (bits < 8)
    fail_unsupported(n, fmt::format("a softmax over rows of {} elements (an int32 sum of them keeps under 8 bits each)", q.g.n),
                     "keep this Softmax in float (run without lower-qdq)");
  for (int d = 0; d < 256; ++d)
    q.exp_table.push_back(static_cast<std::int32_t>(std::nearbyint(std::ldexp(std::exp(-d * x_scale), bits))));
  return q;
}

void infer_qlinear_softmax(Node& n) {
  check_arity(n, 4, 5, 1, 1);
  require_dtype(n, 0, {DType::Uint8, DType::Int8});
  if (n.inputs[0]->shape.empty()) fail_invalid(n, "QLinearSoftmax needs an input of rank >= 1");
  quant_softmax(n);  // validates the axis, scales and zero points
  set_output(n, 0, n.inputs[0]->dtype, n.inputs[0]->shape);
}

void emit_qlinear_softmax(const Node& n, Emitter& e) {
  e.include("onnxc/quant_softmax.h");
  const QuantSoftmax q = quant_softmax(n);
  e.linef("static constexpr std::int32_t exp_table[256] = {{{}}};", fmt::join(q.exp_table, ", "));
  e.linef("rt::qlinear_softmax({}, {}, {}, {}, {}, exp_table, {}, {});", e.in(0), e.out(0), q.g.outer, q.g.n, q.g.inner,
          float_literal(q.y_scale), q.y_zero_point);
}

void fold_qlinear_softmax(const Node& n, std::vector<Tensor>& outs) {
  Tensor& y = fold_output(n, outs);
  const QuantSoftmax q = quant_softmax(n);
  dispatch_in(n, y.dtype, EightBitTypes{}, [&](auto tag) {
    using Q = typename decltype(tag)::type;
    rt::qlinear_softmax(n.inputs[0]->constant->data<Q>(), y.data<Q>(), q.g.outer, q.g.n, q.g.inner, q.exp_table.data(),
                        q.y_scale, q.y_zero_point);
  });
}

OpDef qlinear_softmax() {
  OpDef d;
  d.domain = "com.microsoft";
  d.op_type = "QLinearSoftmax";
  d.versions = {1};
  d.inplace = true;
  d.infer = infer_qlinear_softmax;
  d.emit = emit_qlinear_softmax;
  d.fold = fold_qlinear_softmax;
  return d;
}
const OpRegistrar qlinear_softmax_op(qlinear_softmax());

}  // namespace
}  // namespace onnxc
