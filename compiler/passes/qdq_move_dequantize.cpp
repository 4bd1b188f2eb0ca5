// qdq_move_dequantize (part of lower-qdq, see qdq_patterns.h): a DequantizeLinear moves below
// the operators that commute with it, so the data movement runs on the 8-bit tensor and the DQ
// meets the next QuantizeLinear (qdq_fold_pairs) or the integer operator that reads it. First a
// QuantizeLinear moves above the same operators when it is their float output's one reader
// (TensorRT-style placement quantizes only the inputs of the operators it runs in int8, so a
// GlobalAveragePool -> Flatten -> Q left the pooling float): the operator then runs on 8 bits.
#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ops/op.h"
#include "passes/passes.h"
#include "passes/qdq_patterns.h"

namespace onnxc {
namespace {

// Operators f with f(DQ(q)) == DQ(f'(q)) exactly for every 8-bit q, reading the data at input 0.
// Views and copies move values unchanged; MaxPool takes the largest, and DQ is increasing (scale
// > 0); constant padding with 0 pads with the zero point; Relu is max(q, zero point). Gather and
// a nearest-neighbour Resize (any coordinate transformation) pick elements.
bool commutes(const Node& n) {
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Slice", "Relu", "Gather"})
    if (is_op(&n, op)) return true;
  if (is_op(&n, "Resize")) return n.version >= 11 && n.attr_string("mode", "nearest") == "nearest";
  if (is_op(&n, "MaxPool")) return n.version >= 12 && !n.has_output(1);
  if (!is_op(&n, "Pad") || n.version < 11 || n.attr_string("mode", "constant") != "constant") return false;
  if (!n.has_input(2)) return true;
  const Value* v = n.inputs[2];
  return v->constant && v->dtype == DType::Float && v->constant->numel() == 1 && v->constant->data<float>()[0] == 0.0f;
}

// A Concat whose inputs all come from DQs of equal parameters: their first one, else null.
const Node* equal_dequantized_concat(const Node& n) {
  if (!is_op(&n, "Concat") || n.inputs.empty()) return nullptr;
  const Node* first = per_tensor_dequantize(n.inputs[0]);
  if (!first) return nullptr;
  for (const Value* v : n.inputs) {
    const Node* dq = per_tensor_dequantize(v);
    if (!dq || !(*per_tensor_params(*dq) == *per_tensor_params(*first))) return nullptr;
  }
  return first;
}

// A Concat of DQs (per tensor, one 8-bit type) whose one reader is a Q: each input of other
// parameters than Q's goes through Q -> DQ of Q's parameters first. Exact: Q(concat(DQ_i(x_i)))
// is concat(Q(DQ_i(x_i))), and Q(DQ(v)) = v for DQ of Q's parameters. qdq_fold_pairs then makes
// each new DQ_i -> Q a requantizing table, and the Concat (now of equal parameters) moves below.
bool requantize_concat_inputs(Graph& g, Node& n) {
  if (!is_op(&n, "Concat") || n.inputs.empty() || equal_dequantized_concat(n)) return false;
  const Node* q = g.only_reader(n.outputs[0]);
  if (!is_op(q, "QuantizeLinear")) return false;
  const std::optional<QuantParams> out = per_tensor_params(*q);
  if (!out) return false;
  for (const Value* v : n.inputs) {
    const Node* dq = per_tensor_dequantize(v);
    if (!dq || per_tensor_params(*dq)->type != out->type) return false;
  }
  for (std::size_t k = 0; k < n.inputs.size(); ++k) {
    const Node* dq = per_tensor_dequantize(n.inputs[k]);
    if (*per_tensor_params(*dq) == *out) continue;
    const std::string name = n.inputs[k]->name + "_for_" + n.name;
    Value* requantized = g.add_unique_value(name + "_quantized");
    Value* dequantized = g.add_unique_value(name);
    Node* q_k = insert_node_after(g, dq, make_node(*q, "_input" + std::to_string(k), "", "QuantizeLinear", q->version,
                                                   {n.inputs[k], q->inputs[1], q->inputs[2]}, {requantized}));
    insert_node_after(g, q_k, make_node(*q, "_input" + std::to_string(k) + "_dequantize", "", "DequantizeLinear",
                                        q->version, {requantized, q->inputs[1], q->inputs[2]}, {dequantized}));
    n.inputs[k] = dequantized;
  }
  g.relink();
  return true;
}

// n reads the quantized data instead; a new DQ (dq's parameters) writes n's old output.
void move_below(Graph& g, Node& n, const Node& dq) {
  const QuantParams p = *per_tensor_params(dq);
  Value* out = n.outputs[0];
  Value* quantized = g.add_unique_value(out->name + "_quantized");
  if (is_op(&n, "Relu")) {  // max(q, zero point): an integer Clip
    n.op_type = "Clip";
    n.version = 13;
    n.inputs = {n.inputs[0], scalar_constant(g, n.name + "_low", p.type, p.zero_point),
                scalar_constant(g, n.name + "_high", p.type, p.highest())};
  }
  if (is_op(&n, "Pad")) {
    n.inputs.resize(3, nullptr);
    n.inputs[2] = scalar_constant(g, n.name + "_zero_point", p.type, p.zero_point);
  }
  if (is_op(&n, "Concat"))
    for (Value*& in : n.inputs) in = in->producer->inputs[0];
  else
    n.inputs[0] = dq.inputs[0];
  n.outputs[0] = quantized;
  quantized->producer = &n;
  insert_node_after(g, &n,
                    make_node(n, "_dequantize", "", "DequantizeLinear", dq.version,
                              {quantized, dq.inputs[1], dq.inputs[2]}, {out}));
}

// f -> Q, Q f's output's one reader, f commuting with Q (as with DQ above, Q being
// non-decreasing, Q(0) the zero point): Q moves above f, f runs on the quantized data. Relu is
// not moved (qdq_activation_to_clamp makes it a clamp after Q). Nodes are visited last first, so
// a Q climbs a chain of such operators in one pass.
int move_quantizes(Graph& g) {
  int moved = 0;
  std::set<const Node*> removed;
  for (std::size_t i = g.nodes.size(); i-- > 0;) {
    Node& n = *g.nodes[i];
    if (removed.count(&n) || !commutes(n) || is_op(&n, "Relu") || !n.has_input(0) || n.outputs.size() != 1)
      continue;
    if (per_tensor_dequantize(n.inputs[0]) || n.inputs[0]->constant) continue;  // the DQ moves down instead
    Node* q = g.only_reader(n.outputs[0]);
    if (!is_op(q, "QuantizeLinear") || q->inputs[0] != n.outputs[0]) continue;
    const std::optional<QuantParams> p = per_tensor_params(*q);
    if (!p) continue;
    Value* quantized = g.add_unique_value(n.inputs[0]->name + "_quantized_for_" + n.name);
    std::vector<Value*> q_inputs = q->inputs;
    q_inputs[0] = n.inputs[0];
    insert_node_after(g, i ? g.nodes[i - 1].get() : nullptr,
                      make_node(*q, "_before_" + n.name, "", "QuantizeLinear", q->version, q_inputs, {quantized}));
    Node& f = *g.nodes[i + 1];  // n, after the insertion
    f.inputs[0] = quantized;
    if (is_op(&f, "Pad")) {
      f.inputs.resize(3, nullptr);
      f.inputs[2] = scalar_constant(g, f.name + "_zero_point", p->type, p->zero_point);
    }
    f.outputs[0] = q->outputs[0];
    q->outputs[0]->producer = &f;
    q->outputs.clear();
    removed.insert(q);
    ++moved;
  }
  if (moved) erase_nodes(g, removed);
  return moved;
}

// DQ(constant 8-bit w [, axis a]) -> Transpose: DQ of the transposed constant (folded here, so
// the patterns see a constant weight), its axis where the permutation takes a. PyTorch's Linear
// (DQ(weight [out, in]) -> Transpose -> MatMul) and TFLite's weights in NHWC order export so.
bool transpose_dequantized_constant(Graph& g, Node& t) {
  if (!is_op(&t, "Transpose") || !t.has_input(0) || !t.has_output(0)) return false;
  const Node* dq = t.inputs[0]->producer;
  if (!is_op(dq, "DequantizeLinear") || !dq->inputs[0]->constant || !is_8bit(dq->inputs[0]->dtype) ||
      dq->attr_int("block_size", 0) != 0)
    return false;
  for (std::size_t k = 1; k < dq->inputs.size(); ++k)
    if (dq->has_input(k) && !dq->inputs[k]->constant) return false;
  const auto rank = static_cast<int64_t>(dq->inputs[0]->shape.size());
  std::vector<int64_t> perm = t.attr_ints("perm");
  if (perm.empty())
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  if (static_cast<int64_t>(perm.size()) != rank) return false;
  const bool per_axis = dq->inputs[1]->constant->numel() != 1 || dq->inputs[1]->shape.size() == 1;
  int64_t axis = dq->attr_int("axis", 1);
  axis = axis < 0 ? axis + rank : axis;
  const auto moved = std::find(perm.begin(), perm.end(), axis);
  if (per_axis && moved == perm.end()) return false;
  const OpDef* def = find_op(t.domain, t.op_type);
  if (!def || !def->fold) return false;
  Value* dequantized = t.outputs[0];
  Value* transposed = g.add_unique_value(dq->inputs[0]->name + "_transposed");
  std::vector<Value*> dq_inputs = dq->inputs;
  t.inputs[0] = dq->inputs[0];
  t.outputs[0] = transposed;
  transposed->producer = &t;
  def->infer(t);
  fold_node(t, *def);
  if (!transposed->constant) {  // undo: leave the float Transpose
    t.inputs[0] = dq->outputs[0];
    t.outputs[0] = dequantized;
    return false;
  }
  dq_inputs[0] = transposed;
  Node* moved_dq = insert_node_after(g, &t, make_node(*dq, "_transposed", "", "DequantizeLinear", dq->version,
                                                      dq_inputs, {dequantized}));
  moved_dq->attrs = dq->attrs;
  if (per_axis) moved_dq->set_attr_int("axis", moved - perm.begin());
  return true;
}

int move_dequantizes(Graph& g) {
  int moved = 0;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = *g.nodes[i];
    if (!n.has_input(0) || !n.has_output(0) || n.outputs.size() != 1) continue;
    if (transpose_dequantized_constant(g, n)) {
      ++moved;
      continue;
    }
    const Node* dq = equal_dequantized_concat(n);
    if (!dq && commutes(n)) dq = per_tensor_dequantize(n.inputs[0]);
    if (!dq) continue;
    move_below(g, n, *dq);
    ++moved;
  }
  if (moved) g.relink();
  return moved;
}

}  // namespace

// The moves, then each Concat of unequal parameters requantized (its inputs may have become DQs
// by the moves), then the moves again (the Concat itself and what follows it).
int qdq_move_dequantize(Graph& g) {
  int moved = move_quantizes(g) + move_dequantizes(g);
  std::vector<Node*> concats;
  for (const auto& n : g.nodes)
    if (is_op(n.get(), "Concat")) concats.push_back(n.get());
  int requantized = 0;
  for (Node* n : concats) requantized += requantize_concat_inputs(g, *n) ? 1 : 0;
  return moved + requantized + (requantized ? move_dequantizes(g) : 0);
}

}  // namespace onnxc
