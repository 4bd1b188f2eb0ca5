// MatMulInteger (int32 products of 8-bit matrices) and QLinearMatMul (the same, requantized to
// 8 bits), numpy matmul semantics with batch broadcasting (kernels in onnxc/quant.h).
//
// Zero points: a's per tensor or per row, b's per tensor or per column. QLinearMatMul's scales:
// a's and y's per tensor, b's per tensor or per column.
#include <limits>

#include "ops/elementwise.h"
#include "ops/emitter.h"
#include "ops/matmul_shape.h"
#include "ops/quant_common.h"

namespace onnxc {
namespace {

constexpr std::size_t kNoBias = std::numeric_limits<std::size_t>::max();

// Declares the offset arrays and returns the leading arguments of rt::matmul_integer.
std::string emit_product_shape(Emitter& e, const ProductShape& s) {
  e.index_array("a_offsets", s.a_offsets);
  e.index_array("b_offsets", s.b_offsets);
  return fmt::format("{}, a_offsets, b_offsets, {}, {}, {}", s.batches, s.m, s.n, s.k);
}

std::vector<rt::index_t> index_vector(const std::vector<int64_t>& v) { return {v.begin(), v.end()}; }

// ---- MatMulInteger ----

void infer_matmul_integer(Node& n) {
  check_arity(n, 2, 4, 1, 1);
  require_dtype(n, 0, {DType::Uint8, DType::Int8});
  require_dtype(n, 1, {DType::Uint8, DType::Int8});
  const ProductShape s = product_shape(n, 0, 1);
  if (n.has_input(2)) {
    require_same_dtype(n, 2, 0);
    require_per_tensor_or_channel(n, 2, s.m, "a_zero_point");
  }
  if (n.has_input(3)) {
    require_same_dtype(n, 3, 1);
    require_per_tensor_or_channel(n, 3, s.n, "b_zero_point");
  }
  set_output(n, 0, DType::Int32, s.out);
}

void emit_matmul_integer(const Node& n, Emitter& e) {
  if (n.outputs[0]->numel() == 0) return;
  e.include("onnxc/quant.h");
  const std::string shape = emit_product_shape(e, product_shape(n, 0, 1));
  e.linef("rt::matmul_integer({}, {}, {}, rt::StoreInt32{{{}}});", shape, quant_operand_code(n, e, 0, 2),
          quant_operand_code(n, e, 1, 3), e.out(0));
}

void fold_matmul_integer(const Node& n, std::vector<Tensor>& outs) {
  Tensor& y = fold_output(n, outs);
  const ProductShape s = product_shape(n, 0, 1);
  const auto a_offsets = index_vector(s.a_offsets), b_offsets = index_vector(s.b_offsets);
  dispatch_8bit_pair(n, 0, 1, [&](auto a_tag, auto b_tag) {
    using A = typename decltype(a_tag)::type;
    using B = typename decltype(b_tag)::type;
    rt::matmul_integer(s.batches, a_offsets.data(), b_offsets.data(), s.m, s.n, s.k, fold_quant_operand<A>(n, 0, 2),
                       fold_quant_operand<B>(n, 1, 3), rt::StoreInt32{y.data<int32_t>()});
  });
}

const OpRegistrar matmul_integer_op([] {
  OpDef d;
  d.op_type = "MatMulInteger";
  d.versions = {10};
  d.infer = infer_matmul_integer;
  d.emit = emit_matmul_integer;
  d.fold = fold_matmul_integer;
  d.macs = [](const Node& n) { return n.outputs[0]->numel() * product_shape(n, 0, 1).k; };
  return d;
}());

// ---- QLinearMatMul, and onnxc.QLinearMatMulBias ----
//
// QLinearMatMulBias is onnxc's own: QLinearMatMul with a ninth input, an int32 bias [N] added to
// the accumulators before requantization (scale a_scale * b_scale, zero point 0, as QLinearConv's
// B). lower-qdq makes it from DQ -> Gemm -> Q; models cannot name it.

const RequantInputs kRequantInputs = {1, 4, 6};
constexpr std::size_t kMatMulBias = 8;

// The bias input of the op, kNoBias for QLinearMatMul.
std::size_t bias_input(const Node& n) { return n.domain == "onnxc" ? kMatMulBias : kNoBias; }

void infer_qlinear_matmul(Node& n) {
  const bool with_bias = bias_input(n) != kNoBias;
  check_arity(n, with_bias ? 9 : 8, with_bias ? 9 : 8, 1, 1);
  std::vector<DType> scales = {DType::Float};
  if (n.version >= 21) scales = {DType::Float, DType::Float16, DType::BFloat16};
  const DType y = check_qlinear_inputs(n, scales);
  const ProductShape s = product_shape(n, 0, 3);
  require_per_tensor_or_channel(n, 4, s.n, "b_scale");
  if (with_bias) {
    require_dtype(n, kMatMulBias, {DType::Int32});
    if (n.inputs[kMatMulBias]->shape != Shape{s.n})
      fail_invalid(n, fmt::format("bias has shape {}; it must be [{}]", shape_str(n.inputs[kMatMulBias]->shape), s.n));
  }
  set_output(n, 0, y, s.out);
}

void emit_qlinear_matmul(const Node& n, Emitter& e) {
  if (n.outputs[0]->numel() == 0) return;
  e.include("onnxc/quant.h");
  const ProductShape s = product_shape(n, 0, 3);
  const std::string shape = emit_product_shape(e, s);
  const std::string output = emit_requantize_output(n, e, kRequantInputs, s.n, 7, bias_input(n), e.scratch());
  e.linef("rt::matmul_integer({}, {}, {}, {});", shape, quant_operand_code(n, e, 0, 2), quant_operand_code(n, e, 3, 5),
          output);
}

void fold_qlinear_matmul(const Node& n, std::vector<Tensor>& outs) {
  Tensor& y = fold_output(n, outs);
  const ProductShape s = product_shape(n, 0, 3);
  const auto a_offsets = index_vector(s.a_offsets), b_offsets = index_vector(s.b_offsets);
  const std::vector<rt::Requant> requant = constant_requants(n, kRequantInputs, s.n);
  const auto y_zero_point = static_cast<int32_t>(n.inputs[7]->constant->int_at(0));
  const rt::index_t stride = requant.size() == 1 ? 0 : 1;
  const int32_t* bias = bias_input(n) != kNoBias ? n.inputs[kMatMulBias]->constant->data<int32_t>() : nullptr;
  dispatch_8bit_pair(n, 0, 3, [&](auto a_tag, auto b_tag) {
    using A = typename decltype(a_tag)::type;
    using B = typename decltype(b_tag)::type;
    dispatch_in(n, y.dtype, EightBitTypes{}, [&](auto y_tag) {
      using Y = typename decltype(y_tag)::type;
      rt::matmul_integer(s.batches, a_offsets.data(), b_offsets.data(), s.m, s.n, s.k, fold_quant_operand<A>(n, 0, 2),
                         fold_quant_operand<B>(n, 3, 5),
                         rt::RequantizeOutput<Y>{y.data<Y>(), bias, requant.data(), stride, y_zero_point});
    });
  });
}

OpDef qlinear_matmul_def(const char* domain, const char* op_type, std::vector<int> versions) {
  OpDef d;
  d.domain = domain;
  d.op_type = op_type;
  d.versions = std::move(versions);
  d.infer = infer_qlinear_matmul;
  d.emit = emit_qlinear_matmul;
  d.fold = fold_qlinear_matmul;
  d.scratch_bytes = [](const Node& n) {
    return requant_scratch_bytes(n, kRequantInputs, product_shape(n, 0, 3).n);
  };
  d.macs = [](const Node& n) { return n.outputs[0]->numel() * product_shape(n, 0, 3).k; };
  return d;
}

const OpRegistrar qlinear_matmul_op(qlinear_matmul_def("", "QLinearMatMul", {10, 21}));
const OpRegistrar qlinear_matmul_bias_op(qlinear_matmul_def("onnxc", "QLinearMatMulBias", {1}));

}  // namespace
}  // namespace onnxc
