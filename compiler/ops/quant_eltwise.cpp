// ONNX Runtime's quantized elementwise and pooling operators (domain com.microsoft, version 1):
// QLinearAdd, QLinearMul and QLinearGlobalAveragePool. ORT's quantizer writes them in its
// QOperator format, and lower-qdq produces them from DequantizeLinear -> Add / Mul / global
// average -> QuantizeLinear; and onnxc.QLinearLookup, lower-qdq's form of quantized activations.
// Kernels in onnxc/quant.h; scales and zero points must be constant, per tensor.
#include "ops/elementwise.h"
#include "ops/emitter.h"
#include "ops/quant_common.h"

namespace onnxc {
namespace {

constexpr const char* kDomain = "com.microsoft";

float scale_of(const Node& n, std::size_t i, const char* what) {
  require_dtype(n, i, {DType::Float});
  require_per_tensor(n, i, what);
  return require_const_input(n, i, what).data<float>()[0];
}

// An optional zero point input: constant, per tensor, of the data's type (input `data`); 0 when absent.
int32_t zero_point_of(const Node& n, std::size_t i, std::size_t data, const char* what) {
  if (!n.has_input(i)) return 0;
  require_same_dtype(n, i, data);
  require_per_tensor(n, i, what);
  return static_cast<int32_t>(require_const_input(n, i, what).int_at(0));
}

// ---- QLinearAdd and QLinearMul(A, A_scale, A_zero_point, B, B_scale, B_zero_point, C_scale,
// C_zero_point), numpy broadcasting of A and B ----

struct Scales {
  float a, b, c;
  int32_t a_zero_point, b_zero_point, c_zero_point;
};

Scales binary_scales(const Node& n) {
  return {scale_of(n, 1, "A_scale"),
          scale_of(n, 4, "B_scale"),
          scale_of(n, 6, "C_scale"),
          zero_point_of(n, 2, 0, "A_zero_point"),
          zero_point_of(n, 5, 3, "B_zero_point"),
          zero_point_of(n, 7, 0, "C_zero_point")};
}

// The functor (folding) and its C++ text (generated code) for each operator.
rt::QLinearAdd add_functor(const Node& n) {
  const Scales s = binary_scales(n);
  return {s.a / s.c, s.b / s.c, s.a_zero_point, s.b_zero_point, s.c_zero_point};
}
std::string functor_code(const rt::QLinearAdd& f) {
  return fmt::format("rt::QLinearAdd{{{}, {}, {}, {}, {}}}", float_literal(f.a_ratio), float_literal(f.b_ratio),
                     f.a_zero_point, f.b_zero_point, f.c_zero_point);
}

rt::QLinearMul mul_functor(const Node& n) {
  const Scales s = binary_scales(n);
  return {s.a * s.b / s.c, s.a_zero_point, s.b_zero_point, s.c_zero_point};
}
std::string functor_code(const rt::QLinearMul& f) {
  return fmt::format("rt::QLinearMul{{{}, {}, {}, {}}}", float_literal(f.multiplier), f.a_zero_point,
                     f.b_zero_point, f.c_zero_point);
}

template <class F>
OpDef qlinear_binary(const char* op_type, F (*make)(const Node&)) {
  OpDef d;
  d.domain = kDomain;
  d.op_type = op_type;
  d.versions = {1};
  d.inplace = true;
  d.infer = [make](Node& n) {
    check_arity(n, 7, 8, 1, 1);
    require_dtype(n, 0, {DType::Uint8, DType::Int8});
    require_same_dtype(n, 3, 0);
    make(n);  // validates scales and zero points
    set_output(n, 0, n.inputs[0]->dtype, broadcast_shapes(n, n.inputs[0]->shape, n.inputs[3]->shape));
  };
  d.emit = [make](const Node& n, Emitter& e) {
    e.include("onnxc/quant.h");
    EltwiseWriter(e, n.outputs[0]->shape)
        .zip({e.in(0), n.inputs[0]->shape, "a"}, {e.in(3), n.inputs[3]->shape, "b"}, e.out(0), functor_code(make(n)));
  };
  d.fold = [make](const Node& n, std::vector<Tensor>& outs) {
    Tensor& y = fold_output(n, outs);
    dispatch_in(n, y.dtype, EightBitTypes{}, [&](auto tag) {
      using Q = typename decltype(tag)::type;
      fold_binary<Q, Q, Q>(*n.inputs[0]->constant, *n.inputs[3]->constant, y, make(n));
    });
  };
  return d;
}
const OpRegistrar qlinear_add_op(qlinear_binary("QLinearAdd", add_functor));
const OpRegistrar qlinear_mul_op(qlinear_binary("QLinearMul", mul_functor));

// ---- onnxc.QLinearLookup(X, table): y = table[x], a quantized unary function tabulated by
// lower-qdq over the 256 values of X's 8-bit type ----

OpDef qlinear_lookup() {
  OpDef d;
  d.domain = "onnxc";
  d.op_type = "QLinearLookup";
  d.versions = {1};
  d.inplace = true;
  d.infer = [](Node& n) {
    check_arity(n, 2, 2, 1, 1);
    require_dtype(n, 0, {DType::Uint8, DType::Int8});
    require_same_dtype(n, 1, 0);
    if (n.inputs[1]->shape != Shape{256}) fail_invalid(n, "the table must have 256 entries");
    set_output(n, 0, n.inputs[0]->dtype, n.inputs[0]->shape);
  };
  d.emit = [](const Node& n, Emitter& e) {
    e.include("onnxc/quant.h");
    e.linef("rt::lookup({}, {}, {}, {});", e.in(0), e.in(1), e.out(0), n.outputs[0]->numel());
  };
  d.fold = [](const Node& n, std::vector<Tensor>& outs) {
    Tensor& y = fold_output(n, outs);
    dispatch_in(n, y.dtype, EightBitTypes{}, [&](auto tag) {
      using Q = typename decltype(tag)::type;
      rt::lookup(n.inputs[0]->constant->data<Q>(), n.inputs[1]->constant->data<Q>(), y.data<Q>(), y.numel());
    });
  };
  return d;
}
const OpRegistrar qlinear_lookup_op(qlinear_lookup());

// ---- QLinearGlobalAveragePool(X, x_scale, x_zero_point, y_scale, y_zero_point), NCHW ----

struct GlobalAverage {
  int64_t planes, size;
  int32_t x_zero_point, y_zero_point;
  float multiplier;
};

GlobalAverage global_average(const Node& n) {
  const Shape& s = n.inputs[0]->shape;
  GlobalAverage g;
  g.planes = s[0] * s[1];
  g.size = g.planes == 0 ? 0 : shape_numel(s) / g.planes;
  g.x_zero_point = zero_point_of(n, 2, 0, "x_zero_point");
  g.y_zero_point = zero_point_of(n, 4, 0, "y_zero_point");
  g.multiplier = rt::global_average_multiplier(scale_of(n, 1, "x_scale"), scale_of(n, 3, "y_scale"),
                                               static_cast<rt::index_t>(std::max<int64_t>(g.size, 1)));
  return g;
}

void infer_qlinear_global_average_pool(Node& n) {
  check_arity(n, 4, 5, 1, 1);
  require_dtype(n, 0, {DType::Uint8, DType::Int8});
  const Shape& x = n.inputs[0]->shape;
  if (x.size() < 3) fail_invalid(n, fmt::format("input rank {} is below 3", x.size()));
  if (n.attr_int("channels_last", 0) != 0)
    fail_unsupported(n, "channels_last=1 (NHWC)", "export the model with channels_last=0 (NCHW)");
  global_average(n);  // validates scales and zero points
  Shape out = x;
  for (std::size_t i = 2; i < out.size(); ++i) out[i] = 1;
  set_output(n, 0, n.inputs[0]->dtype, out);
}

void emit_qlinear_global_average_pool(const Node& n, Emitter& e) {
  e.include("onnxc/quant.h");
  const GlobalAverage g = global_average(n);
  e.linef("rt::qlinear_global_average_pool({}, {}, {}, {}, {}, {}, {});", g.planes, g.size, e.in(0), g.x_zero_point,
          float_literal(g.multiplier), g.y_zero_point, e.out(0));
}

void fold_qlinear_global_average_pool(const Node& n, std::vector<Tensor>& outs) {
  Tensor& y = fold_output(n, outs);
  const GlobalAverage g = global_average(n);
  dispatch_in(n, y.dtype, EightBitTypes{}, [&](auto tag) {
    using Q = typename decltype(tag)::type;
    rt::qlinear_global_average_pool(g.planes, g.size, n.inputs[0]->constant->data<Q>(), g.x_zero_point, g.multiplier,
                                    g.y_zero_point, y.data<Q>());
  });
}

OpDef qlinear_global_average_pool() {
  OpDef d;
  d.domain = kDomain;
  d.op_type = "QLinearGlobalAveragePool";
  d.versions = {1};
  d.infer = infer_qlinear_global_average_pool;
  d.emit = emit_qlinear_global_average_pool;
  d.fold = fold_qlinear_global_average_pool;
  return d;
}
const OpRegistrar qlinear_global_average_pool_op(qlinear_global_average_pool());

}  // namespace
}  // namespace onnxc
