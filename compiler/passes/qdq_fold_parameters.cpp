// qdq_fold_parameters (part of lower-qdq, see qdq_patterns.h): the quantization parameters an
// exporter computes in the graph become constants before the patterns look for them, and a Cast
// of a QuantizeLinear's output to its own type goes. PyTorch 1.13's export of a quantized model
// writes every scale and zero point as a Constant node, each bias's zero point as ConstantOfShape
// then Cast to int32, and a Cast to uint8 between every QuantizeLinear and DequantizeLinear: with
// none of it folded, lower-qdq matched nothing and every operator stayed float. Its FX-mode export
// reads an activation's scale and zero point through Identity of an initializer (the Conv, Gemm
// after a Flatten, stayed float), and TensorRT-style exports quantize float weights in the graph
// (QuantizeLinear of a float initializer, then DequantizeLinear): both fold to constants too.
#include "ops/op.h"
#include "passes/passes.h"
#include "passes/qdq_patterns.h"

namespace onnxc {

int qdq_fold_parameters(Graph& g) {
  int folded = 0;
  for (const auto& node : g.nodes) {  // in order: a Constant before the ConstantOfShape reading it
    Node& n = *node;
    if (!is_op(&n, "Constant") && !is_op(&n, "ConstantOfShape") && !is_op(&n, "Cast") &&
        !is_op(&n, "Identity") && !is_op(&n, "QuantizeLinear"))
      continue;
    if (!n.has_output(0) || n.outputs[0]->constant || !inputs_all_constant(n)) continue;
    const OpDef* def = find_op(n.domain, n.op_type);
    if (!def) continue;
    def->infer(n);  // a Constant's sets its value
    if (!n.outputs[0]->constant && def->fold) fold_node(n, *def);
    if (n.outputs[0]->constant) ++folded;
  }
  for (const auto& node : g.nodes) {
    Node& cast = *node;
    if (!is_op(&cast, "Cast") || !cast.has_input(0) || !cast.has_output(0) || cast.outputs[0]->is_graph_output)
      continue;
    const Node* q = cast.inputs[0]->producer;
    const std::optional<QuantParams> p = is_op(q, "QuantizeLinear") ? per_tensor_params(*q) : std::nullopt;
    if (!p || cast.attr_int("to", 0) != static_cast<int64_t>(p->type)) continue;
    replace_uses(g, cast.outputs[0], q->outputs[0]);
    ++folded;
  }
  if (folded) g.relink();
  return folded;
}

}  // namespace onnxc
