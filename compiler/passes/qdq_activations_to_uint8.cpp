// qdq_activations_to_uint8 (part of lower-qdq, see qdq_patterns.h): int8 activations become
// uint8 ones. With zero point z + 128, QuantizeLinear to uint8 gives exactly QuantizeLinear to
// int8 plus 128 (the rounding is the same, both saturations shift with it), and the
// DequantizeLinears read the same floats; so the model computes the same. The integer kernels
// have their fastest forms for uint8 activations and int8 weights (rt::qconv_gemm and the dot
// product kernels), which int8 activations would miss.
#include <memory>
#include <optional>

#include "passes/passes.h"
#include "passes/qdq_patterns.h"

namespace onnxc {

int qdq_activations_to_uint8(Graph& g) {
  int flipped = 0;
  for (auto& np : g.nodes) {
    Node& q = *np;
    const std::optional<QuantParams> p = per_tensor_params(q);
    if (!p || !is_onnx_op(&q, "QuantizeLinear") || p->type != DType::Int8 || q.outputs[0]->is_graph_output) continue;
    const std::vector<Node*> readers = g.consumers(q.outputs[0]);
    bool all_dequantize = !readers.empty();
    for (const Node* r : readers)
      all_dequantize = all_dequantize && r->inputs[0] == q.outputs[0] && per_tensor_params(*r) &&
                       *per_tensor_params(*r) == *p;
    if (!all_dequantize) continue;
    Value* zero_point = scalar_constant(g, q.name + "_uint8_zero_point", DType::Uint8, p->zero_point + 128);
    if (q.inputs[2]->constant->shape.size() == 1) {  // keep the [1] shape the file gave
      Tensor t = *zero_point->constant;
      t.shape = {1};
      zero_point->constant = std::make_shared<Tensor>(std::move(t));
      zero_point->shape = {1};
    }
    q.inputs[2] = zero_point;
    q.attrs.erase("output_dtype");
    for (Node* r : readers) r->inputs[2] = zero_point;
    ++flipped;
  }
  return flipped;
}

}  // namespace onnxc
