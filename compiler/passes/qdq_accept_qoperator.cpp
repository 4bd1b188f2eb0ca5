// qdq_accept_qoperator (part of lower-qdq, see qdq_patterns.h): ONNX Runtime's QOperator
// format writes some quantized operators in its own domain (com.microsoft). Those onnxc
// implements pass as they are (resolve_operators accepts them); QGemm becomes QLinearMatMul, or
// onnxc.QLinearMatMulBias with its int32 bias, on the weight transposed at compile time when
// transB is set. Runs before the operators are resolved.
#include <memory>

#include "ops/op.h"
#include "ops/quant_common.h"
#include "passes/passes.h"
#include "passes/qdq_patterns.h"
#include "support/diagnostics.h"

namespace onnxc {
namespace {

[[noreturn]] void refuse(const Node& n, const std::string& what) {
  throw CompileError(ErrorKind::Unsupported, n.describe(), "QGemm " + what + ": onnxc lowers QGemm to QLinearMatMul only with "
                     "alpha 1, A not transposed, a constant 2-D B and an 8-bit output (y_scale and y_zero_point given)",
                     "quantize the Gemm in QDQ form (QuantizeLinear/DequantizeLinear around a float Gemm) instead");
}

// QGemm(A, a_scale, a_zp, B, b_scale, b_zp, C, y_scale, y_zp), attributes alpha, transA, transB.
void lower_qgemm(Graph& g, Node& n, int onnx_opset) {
  if (n.attr_float("alpha", 1.0f) != 1.0f) refuse(n, "with alpha other than 1");
  if (n.attr_int("transA", 0)) refuse(n, "with transA");
  if (!n.has_input(7) || !n.has_input(8)) refuse(n, "with a float output");
  Value* b = n.inputs[3];
  if (!b->constant || b->constant->shape.size() != 2 || !is_8bit(b->dtype)) refuse(n, "with a B that is not a 2-D 8-bit constant");
  Value* b_zero_point = n.has_input(5) ? n.inputs[5] : nullptr;
  if (!b_zero_point) b_zero_point = add_constant(g, n.name + "_b_zero_point", Tensor(b->dtype, n.inputs[4]->shape));
  std::vector<Value*> inputs = {n.inputs[0], n.inputs[1], n.inputs[2], n.attr_int("transB", 0) ? transposed_8bit(g, *b) : b,
                                n.inputs[4], b_zero_point, n.inputs[7], n.inputs[8]};
  n.attrs.clear();
  if (n.has_input(6)) {
    inputs.push_back(n.inputs[6]);
    n.domain = "onnxc";
    n.op_type = "QLinearMatMulBias";
    n.opset = n.version = 1;
  } else {
    n.domain.clear();
    n.op_type = "QLinearMatMul";
    n.opset = onnx_opset;
    n.version = 10;
  }
  n.inputs = std::move(inputs);
}

}  // namespace

int qdq_accept_qoperator(Model& m) {
  int lowered = 0;
  for (auto& n : m.graph.nodes)
    if (n->domain == "com.microsoft" && n->op_type == "QGemm") {
      lower_qgemm(m.graph, *n, m.opsets.count("") ? m.opsets.at("") : 10);
      ++lowered;
    }
  return lowered;
}

}  // namespace onnxc
