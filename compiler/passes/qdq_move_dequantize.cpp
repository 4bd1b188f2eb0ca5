// qdq_move_dequantize (part of lower-qdq, see qdq_patterns.h): a DequantizeLinear moves below
// the operators that commute with it, so the data movement runs on the 8-bit tensor and the DQ
// meets the next QuantizeLinear (qdq_fold_pairs) or the integer operator that reads it.
#include <memory>

#include "passes/passes.h"
#include "passes/qdq_patterns.h"

namespace onnxc {
namespace {

// Operators f with f(DQ(q)) == DQ(f'(q)) exactly for every 8-bit q, reading the data at input 0.
// Views and copies move values unchanged; MaxPool takes the largest, and DQ is increasing (scale
// > 0); constant padding with 0 pads with the zero point; Relu is max(q, zero point).
bool commutes(const Node& n) {
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Slice", "Relu"})
    if (is_onnx_op(&n, op)) return true;
  if (is_onnx_op(&n, "MaxPool")) return n.version >= 12 && !n.has_output(1);
  if (!is_onnx_op(&n, "Pad") || n.version < 11 || n.attr_string("mode", "constant") != "constant") return false;
  if (!n.has_input(2)) return true;
  const Value* v = n.inputs[2];
  return v->constant && v->dtype == DType::Float && v->constant->numel() == 1 && v->constant->data<float>()[0] == 0.0f;
}

// A Concat whose inputs all come from DQs of equal parameters: their first one, else null.
const Node* equal_dequantized_concat(const Node& n) {
  if (!is_onnx_op(&n, "Concat") || n.inputs.empty()) return nullptr;
  const Node* first = per_tensor_dequantize(n.inputs[0]);
  if (!first) return nullptr;
  for (const Value* v : n.inputs) {
    const Node* dq = per_tensor_dequantize(v);
    if (!dq || !(*per_tensor_params(*dq) == *per_tensor_params(*first))) return nullptr;
  }
  return first;
}

// n reads the quantized data instead; a new DQ (dq's parameters) writes n's old output.
void move_below(Graph& g, Node& n, const Node& dq) {
  const QuantParams p = *per_tensor_params(dq);
  Value* out = n.outputs[0];
  Value* quantized = g.add_unique_value(out->name + "_quantized");
  if (is_onnx_op(&n, "Relu")) {  // max(q, zero point): an integer Clip
    n.op_type = "Clip";
    n.version = 13;
    n.inputs = {n.inputs[0], scalar_constant(g, n.name + "_low", p.type, p.zero_point),
                scalar_constant(g, n.name + "_high", p.type, p.highest())};
  }
  if (is_onnx_op(&n, "Pad")) {
    n.inputs.resize(3, nullptr);
    n.inputs[2] = scalar_constant(g, n.name + "_zero_point", p.type, p.zero_point);
  }
  if (is_onnx_op(&n, "Concat"))
    for (Value*& in : n.inputs) in = in->producer->inputs[0];
  else
    n.inputs[0] = dq.inputs[0];
  n.outputs[0] = quantized;
  quantized->producer = &n;
  insert_node_after(g, &n,
                    make_node(n, "_dequantize", "", "DequantizeLinear", dq.version,
                              {quantized, dq.inputs[1], dq.inputs[2]}, {out}));
}

}  // namespace

int qdq_move_dequantize(Graph& g) {
  int moved = 0;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = *g.nodes[i];
    if (!n.has_input(0) || !n.has_output(0) || n.outputs.size() != 1) continue;
    const Node* dq = equal_dequantized_concat(n);
    if (!dq && commutes(n)) dq = per_tensor_dequantize(n.inputs[0]);
    if (!dq) continue;
    move_below(g, n, *dq);
    ++moved;
  }
  if (moved) g.relink();
  return moved;
}

}  // namespace onnxc
