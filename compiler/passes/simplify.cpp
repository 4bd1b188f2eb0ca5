// simplify: removes nodes that compute nothing, after inference has given every value its type.
//   Identity, inference Dropout, Cast/CastLike to the input's own type, Transpose with the
//   identity permutation:                   readers read the input instead;
//   Pad by zero on every side, Slice of everything (steps 1), Expand or Tile to the input's
//   own shape, Concat of one input:          readers read the input instead;
//   Transpose of a Transpose:               one Transpose with the composed permutation, or
//                                           none when the two cancel.
// A node the rewrite leaves without readers is then dead and removed.
//
// Views (Reshape, Flatten, Squeeze, Unsqueeze) need no rewrite: the planner aliases them to
// their input, so a chain of them costs no memory and no copy.
#include <numeric>

#include "passes/passes.h"

namespace onnxc {
namespace {

bool has_readers(const Graph& g, const Value* v) { return v->is_graph_output || !g.consumers(v).empty(); }

// Makes every node that reads `from` read `to` instead. A graph output keeps its producer (the
// caller's buffer must be written) and a value a subgraph reads by name stays as it is.
bool forward(Graph& g, Value* from, Value* to, const std::set<const Value*>& read_by_subgraphs) {
  if (from->is_graph_output || read_by_subgraphs.count(from)) return false;
  for (Node* reader : g.consumers(from))
    for (Value*& in : reader->inputs)
      if (in == from) in = to;
  return true;
}

std::vector<int64_t> permutation(const Node& transpose) {
  std::size_t rank = transpose.inputs[0]->shape.size();
  std::vector<int64_t> reversed(rank);
  std::iota(reversed.rbegin(), reversed.rend(), 0);
  return transpose.attr_ints("perm", reversed);
}

bool is_identity(const std::vector<int64_t>& perm) {
  for (std::size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}

// Dropout that keeps every element, whose mask nobody reads: its output is its input. It keeps
// every element in inference mode (no training_mode input, or a constant false one) and in
// training mode with a constant ratio 0 (scale 1 / (1 - 0); torch exports attention dropout so).
bool is_inference_dropout(const Graph& g, const Node& n) {
  if (!is_op(&n, "Dropout")) return false;
  auto constant_scalar = [&](std::size_t i) {
    const Value* v = n.has_input(i) ? n.inputs[i] : nullptr;
    return v && v->constant && v->constant->numel() == 1;
  };
  if (n.has_input(2)) {
    if (!constant_scalar(2)) return false;
    const bool training = n.inputs[2]->constant->float_at(0) != 0;
    if (training && !(constant_scalar(1) && n.inputs[1]->constant->float_at(0) == 0)) return false;
  }
  return !n.has_output(1) || !has_readers(g, n.outputs[1]);
}

// Every element of a constant integer tensor equals `value` (an absent input counts as all).
bool all_elements_are(const Node& n, std::size_t input, int64_t value) {
  if (!n.has_input(input)) return true;
  const Value* v = n.inputs[input];
  if (!v->constant) return false;
  for (int64_t i = 0; i < v->constant->numel(); ++i)
    if (v->constant->int_at(i) != value) return false;
  return true;
}

// A Pad by zero on every side (pads from the attribute before opset 11, the input after), in
// any mode: nothing to add, whatever the mode would add.
bool is_zero_pad(const Node& n) {
  if (!is_op(&n, "Pad")) return false;
  if (n.attrs.count("pads")) {
    for (int64_t p : n.attr_ints("pads"))
      if (p != 0) return false;
    return true;
  }
  return n.has_input(1) && all_elements_are(n, 1, 0);
}

// Ops that only rearrange or repeat elements, and so copy their input when the output keeps
// its shape: Slice with unit steps (it can then only take every element), Expand and Tile (nothing
// to broadcast or repeat), and a Concat of a single input.
bool keeps_input_when_shape_is_kept(const Node& n) {
  if (is_op(&n, "Slice")) return all_elements_are(n, 4, 1);  // Slice-1 has no steps: they are 1
  if (is_op(&n, "Concat")) return n.inputs.size() == 1;
  return is_op(&n, "Expand") || is_op(&n, "Tile");
}

// The value a node's output equals, when the node computes nothing; else nullptr.
Value* passthrough_source(const Graph& g, const Node& n) {
  if (!n.has_input(0) || !n.has_output(0)) return nullptr;
  Value* in = n.inputs[0];
  const Value* out = n.outputs[0];
  if (in->is_sequence || out->is_sequence || in->is_optional || out->is_optional) return nullptr;
  if (is_op(&n, "Identity") || is_inference_dropout(g, n)) return in;
  if ((is_op(&n, "Cast") || is_op(&n, "CastLike")) && in->dtype == out->dtype) return in;
  if (is_op(&n, "Transpose") && is_identity(permutation(n))) return in;
  if (in->dtype != out->dtype || in->shape != out->shape) return nullptr;
  if (is_zero_pad(n) || keeps_input_when_shape_is_kept(n)) return in;
  return nullptr;
}

// Transpose(Transpose(x, p1), p2) reads x with perm q, q[i] = p1[p2[i]]. Returns true if the
// node now reads x directly.
bool compose_transposes(Node& outer) {
  if (!is_op(&outer, "Transpose") || !outer.has_input(0)) return false;
  Node* inner = outer.inputs[0]->producer;
  if (!is_op(inner, "Transpose") || !inner->has_input(0)) return false;
  std::vector<int64_t> p1 = permutation(*inner), p2 = permutation(outer), q(p2.size());
  for (std::size_t i = 0; i < p2.size(); ++i) q[i] = p1[static_cast<std::size_t>(p2[i])];
  outer.inputs[0] = inner->inputs[0];
  Attribute perm;
  perm.kind = Attribute::Kind::Ints;
  perm.ints = q;
  outer.attrs["perm"] = perm;
  return true;
}

std::set<const Value*> values_read_by_subgraphs(const Graph& g) {
  std::set<const Value*> read;
  for (const auto& n : g.nodes)
    for (Value* v : n->implicit_inputs(g)) read.insert(v);
  return read;
}

}  // namespace

int simplify(Graph& g) {
  const std::size_t before = g.nodes.size();
  const std::set<const Value*> read_by_subgraphs = values_read_by_subgraphs(g);
  for (auto& node : g.nodes) {
    Node& n = *node;
    compose_transposes(n);  // first, so a pair that cancels is then an identity Transpose
    if (Value* source = passthrough_source(g, n)) forward(g, n.outputs[0], source, read_by_subgraphs);
  }
  g.relink();
  eliminate_dead_nodes(g);
  return static_cast<int>(before - g.nodes.size());
}

}  // namespace onnxc
