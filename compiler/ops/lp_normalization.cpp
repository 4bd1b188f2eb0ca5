// LpNormalization (ai.onnx 1, 22): x divided by its L1 or L2 norm along one axis, lowered into
// ReduceL1/ReduceL2 (keepdims) and Div, in the form the model's opset has (axes as an attribute
// before version 18, as an input since).
#include "ops/lowering.h"
#include "ops/op.h"

namespace onnxc {
namespace {

std::vector<std::unique_ptr<Node>> lower_lp_normalization(Node& n, Graph& g) {
  Lowering l(n, g);
  if (n.inputs.size() != 1 || !n.has_input(0)) fail_invalid(n, "needs one input");
  const Value& x = *n.inputs[0];
  if (x.dtype != DType::Float && x.dtype != DType::Double)
    fail_unsupported(n, fmt::format("input is {}; onnxc computes LpNormalization in float or double",
                                    dtype_name(x.dtype)),
                     "cast the input to float");
  const int64_t p = n.attr_int("p", 2);
  if (p != 1 && p != 2) fail_invalid(n, fmt::format("p is {}; LpNormalization takes 1 or 2", p));
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  int64_t axis = n.attr_int("axis", -1);
  if (axis < -rank || axis >= rank) fail_invalid(n, fmt::format("axis {} is out of range for rank {}", axis, rank));
  if (axis < 0) axis += rank;
  const char* reduce = p == 1 ? "ReduceL1" : "ReduceL2";
  Value* norm = l.value("norm");
  if (l.version_of(reduce) >= 18) {
    l.add(reduce, {n.inputs[0], l.int64_constant("axes", {1}, {axis})}, {norm}).set_attr_int("keepdims", 1);
  } else {
    Node& r = l.add(reduce, {n.inputs[0]}, {norm});
    r.set_attr_ints("axes", {axis});
    r.set_attr_int("keepdims", 1);
  }
  l.add("Div", {n.inputs[0], norm}, {n.outputs[0]});
  return l.take();
}

const OpRegistrar lp_normalization_op(lowered_op("", "LpNormalization", {1, 22}, lower_lp_normalization));

}  // namespace
}  // namespace onnxc
