// MatMulInteger (int32 products of 8-bit matrices) and QLinearMatMul (the same, requantized to
// 8 bits), numpy matmul semantics with batch broadcasting (kernels in onnxc/quant.h).
//
// Zero points: a's per tensor or per row, b's per tensor or per column. QLinearMatMul's scales:
// a's and y's per tensor, b's per tensor or per column.
#include <limits>

#include "onnxc/qgemm.h"
#include "ops/conv_algorithm.h"
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

// Where b's packed copy and its column terms sit (pack-weights, kQGemmPackedInput), or 0 (none).
std::size_t packed_b_input(const Node& n) {
  const std::size_t at = n.op_type == "MatMulInteger" ? kQGemmPackedInput : kQLinearQGemmPackedInput;
  return n.has_input(at) && n.has_input(at + 1) ? at : 0;
}

// The call of rt::qgemm_packed where pack-weights gave the node b's packed copy (built with
// VNNI, AVX2 or NEON), and of rt::matmul_integer on the original b otherwise; each branch names the other's
// operands in discarded expressions (clang's -Wunused-const-variable counts the preprocessed code).
void emit_product(const Node& n, Emitter& e, std::size_t a, std::size_t b, const std::string& output) {
  const ProductShape s = product_shape(n, a, b);
  const std::size_t packed = packed_b_input(n);
  if (packed) {
    e.include("onnxc/qgemm.h");
    e.line("#if defined(ONNXC_QGEMM_PACKED)");
    e.linef("static_cast<void>({});", e.in(b));
    if (n.has_input(b + 2)) e.linef("static_cast<void>({});", e.in(b + 2));
    e.linef("rt::qgemm_packed({}, {}, {}, {}, {}, {}, {});", s.batches * s.m, s.n, s.k,
            quant_operand_code(n, e, a, a + 2), e.in(packed), e.in(packed + 1), output);
    e.line("#else");
    e.linef("static_cast<void>({});", e.in(packed));
    e.linef("static_cast<void>({});", e.in(packed + 1));
  }
  const std::string shape = emit_product_shape(e, s);
  e.linef("rt::matmul_integer({}, {}, {}, {});", shape, quant_operand_code(n, e, a, a + 2),
          quant_operand_code(n, e, b, b + 2), output);
  if (packed) e.line("#endif");
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
  emit_product(n, e, 0, 1, fmt::format("rt::StoreInt32{{{}}}", e.out(0)));
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

constexpr std::size_t kMatMulBias = 8;

// The bias input of the op, kNoBias for QLinearMatMul.
std::size_t bias_input(const Node& n) { return n.domain == "onnxc" ? kMatMulBias : kNoBias; }

void infer_qlinear_matmul(Node& n) {
  const bool with_bias = bias_input(n) != kNoBias;
  const bool residual = n.has_input(kMatMulResidualInput);
  check_arity(n, with_bias ? 9 : 8, residual ? static_cast<int>(kMatMulResidualInput + 3) : with_bias ? 9 : 8, 1, 1);
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
  if (residual) check_residual(n, kMatMulResidualInput, s.out);
  set_output(n, 0, y, s.out);
}

void emit_qlinear_matmul(const Node& n, Emitter& e) {
  if (n.outputs[0]->numel() == 0) return;
  e.include("onnxc/quant.h");
  const ProductShape s = product_shape(n, 0, 3);
  const std::string output = with_residual(
      n, e, kMatMulResidualInput, emit_requantize_output(n, e, kQLinearRequantInputs, s.n, 7, bias_input(n), e.scratch()));
  emit_product(n, e, 0, 3, output);
}

void fold_qlinear_matmul(const Node& n, std::vector<Tensor>& outs) {
  Tensor& y = fold_output(n, outs);
  const ProductShape s = product_shape(n, 0, 3);
  const auto a_offsets = index_vector(s.a_offsets), b_offsets = index_vector(s.b_offsets);
  const std::vector<rt::Requant> requant = constant_requants(n, kQLinearRequantInputs, s.n);
  const auto y_zero_point = static_cast<int32_t>(n.inputs[7]->constant->int_at(0));
  const rt::index_t stride = requant.size() == 1 ? 0 : 1;
  const int32_t* bias = bias_input(n) != kNoBias ? n.inputs[kMatMulBias]->constant->data<int32_t>() : nullptr;
  dispatch_8bit_pair(n, 0, 3, [&](auto a_tag, auto b_tag) {
    using A = typename decltype(a_tag)::type;
    using B = typename decltype(b_tag)::type;
    dispatch_in(n, y.dtype, EightBitTypes{}, [&](auto y_tag) {
      using Y = typename decltype(y_tag)::type;
      const rt::RequantizeOutput<Y> requantize{y.data<Y>(), bias, requant.data(), stride, y_zero_point};
      const auto product = [&](const auto& out) {
        rt::matmul_integer(s.batches, a_offsets.data(), b_offsets.data(), s.m, s.n, s.k,
                           fold_quant_operand<A>(n, 0, 2), fold_quant_operand<B>(n, 3, 5), out);
      };
      if (!n.has_input(kMatMulResidualInput)) return product(requantize);
      const std::size_t r = kMatMulResidualInput;
      const std::pair<int32_t, int32_t> bounds = residual_clamp(n);  // (not a structured binding: the lambda below captures them)
      const int32_t low = bounds.first, high = bounds.second;
      dispatch_in(n, n.inputs[r]->dtype, EightBitTypes{}, [&](auto r_tag) {
        using T = typename decltype(r_tag)::type;
        product(rt::requantize_add(requantize, n.inputs[r]->constant->data<T>(),
                                   static_cast<int32_t>(n.inputs[r + 2]->constant->int_at(0)),
                                   residual_multiplier(n, r), low, high));
      });
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
    return requant_scratch_bytes(n, kQLinearRequantInputs, product_shape(n, 0, 3).n);
  };
  d.macs = [](const Node& n) { return n.outputs[0]->numel() * product_shape(n, 0, 3).k; };
  return d;
}

const OpRegistrar qlinear_matmul_op(qlinear_matmul_def("", "QLinearMatMul", {10, 21}));
const OpRegistrar qlinear_matmul_bias_op(qlinear_matmul_def("onnxc", "QLinearMatMulBias", {1}));

}  // namespace

std::optional<std::pair<Tensor, Tensor>> integer_product_packed_b(const Node& n) {
  if (!n.domain.empty() && !(n.domain == "onnxc" && n.op_type == "QLinearMatMulBias")) return std::nullopt;
  if (n.op_type != "MatMulInteger" && n.op_type != "QLinearMatMul" && n.op_type != "QLinearMatMulBias")
    return std::nullopt;
  const std::size_t a = 0, b = n.op_type == "MatMulInteger" ? 1 : 3;
  const Value& bv = *n.inputs[b];
  if (!bv.constant || bv.shape.size() != 2 || n.outputs[0]->numel() == 0) return std::nullopt;
  if (n.has_input(b + 2) && !n.inputs[b + 2]->constant) return std::nullopt;
  const ProductShape s = product_shape(n, a, b);
  // One matrix of batches * m rows: b the same for every batch, a's batches one after another,
  // a's zero point per tensor when there are several batches.
  for (int64_t i = 0; i < s.batches; ++i)
    if (s.b_offsets[static_cast<std::size_t>(i)] != 0 || s.a_offsets[static_cast<std::size_t>(i)] != i * s.m * s.k)
      return std::nullopt;
  if (s.batches > 1 && n.has_input(a + 2) && n.inputs[a + 2]->numel() != 1) return std::nullopt;
  Tensor packed(DType::Int8, {static_cast<int64_t>(rt::qgemm_packed_bytes(s.k, s.n))});
  Tensor terms(DType::Int32, {static_cast<int64_t>(rt::qgemm_column_terms(s.n))});
  dispatch_in(n, bv.dtype, EightBitTypes{}, [&](auto tag) {
    using B = typename decltype(tag)::type;
    rt::qgemm_pack<B>(s.k, s.n, fold_quant_operand<B>(n, b, b + 2), packed.data<int8_t>(), terms.data<int32_t>());
  });
  return std::make_pair(std::move(packed), std::move(terms));
}

}  // namespace onnxc
