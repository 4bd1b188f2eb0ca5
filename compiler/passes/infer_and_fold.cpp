#include <iterator>
#include <memory>

#include <fmt/format.h>

#include "ops/op.h"
#include "ops/sequence.h"
#include "passes/passes.h"

namespace onnxc {

namespace {

// Replaces g.nodes[k] by the nodes `lower` returns; they take its place in the order.
void lower_node(Graph& g, std::size_t k, const std::function<std::vector<std::unique_ptr<Node>>(Node&, Graph&)>& lower) {
  Node& n = *g.nodes[k];
  std::vector<std::unique_ptr<Node>> replacement = lower(n, g);
  for (Value* out : n.outputs)
    if (out && out->producer == &n) out->producer = nullptr;
  for (auto& r : replacement)
    for (Value* out : r->outputs)
      if (out) out->producer = r.get();
  g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(k));
  g.nodes.insert(g.nodes.begin() + static_cast<std::ptrdiff_t>(k), std::make_move_iterator(replacement.begin()),
                 std::make_move_iterator(replacement.end()));
}

// Where a bounded tensor came from, for messages: "output 0 of node 3 'nz' (NonZero, opset 13)".
std::string bounded_origin(const Value& v) {
  const Value* root = &v;
  while (root->outer) root = root->outer;
  if (!root->producer) return fmt::format("'{}'", root->name);
  const Node& p = *root->producer;
  for (std::size_t i = 0; i < p.outputs.size(); ++i)
    if (p.outputs[i] == root) return fmt::format("'{}' (output {} of {})", root->name, i, p.describe());
  return fmt::format("'{}'", root->name);
}

bool is_bounded_here_or_outside(const Value& v) {
  for (const Value* s = &v; s; s = s->outer)
    if (s->is_bounded()) return true;
  return false;
}

// A bounded tensor's extent is reported to the caller of the generated code; no operator reads
// one (their kernels are compiled for static shapes).
void refuse_bounded_input(const Node& n, const Value& in) {
  if (!is_bounded_here_or_outside(in)) return;
  fail_unsupported(n,
                   fmt::format("input {} has a size known only at run time (its shape {} is an upper bound)",
                               bounded_origin(in), shape_str(in.shape)),
                   "make that tensor an output of the model and continue in the caller, or give its producer "
                   "constant inputs so that it folds");
}

void refuse_bounded_subgraph_outputs(const Graph& g) {
  if (!g.outer) return;  // the model's outputs report their run-time shape
  for (const Value* out : g.outputs)
    if (out && is_bounded_here_or_outside(*out))
      throw CompileError(ErrorKind::Unsupported, fmt::format("subgraph '{}'", g.name),
                         fmt::format("output {} has a size known only at run time", bounded_origin(*out)),
                         "compute it outside the If/Loop/Scan body, as an output of the model");
}

}  // namespace

void infer_and_fold(Graph& g, bool fold, std::size_t first_node) {
  for (std::size_t k = first_node; k < g.nodes.size(); ++k) {
    Node& n = *g.nodes[k];
    const OpDef* def = find_op(n.domain, n.op_type);
    for (Value* in : n.inputs)
      if (in && in->outer && !in->has_shape && !in->is_sequence && !in->is_optional) {
        in->dtype = in->outer->dtype;
        in->shape = in->outer->shape;
        in->has_shape = in->outer->has_shape;
        in->constant = in->outer->constant;
        in->is_sequence = in->outer->is_sequence;
        in->is_optional = in->outer->is_optional;
        in->elements = in->outer->elements;
      }
    // Identity passes a sequence or optional through; every other standard operator reads tensors.
    auto lower = def->lower;
    if (lower && def->lowers_when && !def->lowers_when(n)) lower = nullptr;
    if (!lower && n.op_type == "Identity" && n.has_input(0) && (n.inputs[0]->is_sequence || n.inputs[0]->is_optional))
      lower = lower_structure_identity;
    for (std::size_t i = 0; i < n.inputs.size(); ++i) {
      Value* in = n.inputs[i];
      const bool structure = in && (in->is_sequence || in->is_optional);
      if (structure && !lower)
        fail_unsupported(n, fmt::format("input '{}' is a {}; {} reads it only as a tensor", in->name,
                                        in->is_sequence ? "sequence" : "optional", n.op_type));
      if (in && !in->has_shape && !structure)
        fail_unsupported(n, fmt::format("input '{}' has no static shape", in->name),
                         "bind the model's symbolic dims with --dim or --shape");
      if (in) refuse_bounded_input(n, *in);
    }
    if (lower) {
      lower_node(g, k, lower);
      --k;  // the replacement nodes start at k (unsigned wrap-around when k is 0 is well defined)
      continue;
    }
    def->infer(n);
    for (Value* out : n.outputs) {
      if (!out) continue;
      if (!out->has_shape || out->dtype == DType::Undefined)
        fail_invalid(n, fmt::format("internal: output '{}' was not inferred", out->name));
      for (int64_t d : out->shape)
        if (d < 0) fail_invalid(n, fmt::format("output '{}' would have negative dim in {}", out->name, shape_str(out->shape)));
    }
    if (fold && def->fold && inputs_all_constant(n) && !n.has_subgraphs()) fold_node(n, *def);
  }
  refuse_bounded_subgraph_outputs(g);
}

void fold_node(Node& n, const OpDef& def) {
  std::vector<Tensor> results;
  def.fold(n, results);
  for (std::size_t i = 0; i < n.outputs.size() && i < results.size(); ++i) {
    Value* out = n.outputs[i];
    if (!out) continue;
    if (out->is_bounded()) {  // the folded value has its exact shape
      out->shape = results[i].shape;
      out->dynamic_axis = -1;
    } else {
      results[i].shape = out->shape;  // the inferred shape is authoritative
    }
    out->constant = std::make_shared<Tensor>(std::move(results[i]));
  }
}

bool inputs_all_constant(const Node& n) {
  for (Value* v : n.inputs)
    if (v && !v->constant) return false;
  return true;
}

Value* add_constant(Graph& g, const std::string& hint, Tensor t) {
  Value* v = g.add_unique_value(hint);
  v->dtype = t.dtype;
  v->shape = t.shape;
  v->has_shape = true;
  v->constant = std::make_shared<Tensor>(std::move(t));
  return v;
}

void replace_nodes(Graph& g, std::map<const Node*, std::unique_ptr<Node>>& replacement,
                   const std::set<const Node*>& dropped) {
  std::vector<std::unique_ptr<Node>> nodes;
  for (auto& n : g.nodes) {
    if (dropped.count(n.get())) continue;
    auto r = replacement.find(n.get());
    nodes.push_back(r != replacement.end() ? std::move(r->second) : std::move(n));
  }
  g.nodes = std::move(nodes);
  g.relink();
}

void eliminate_dead_nodes(Graph& g) {
  // Walk backwards: a node is live if it writes a graph output or a value a live node reads.
  std::set<const Value*> needed(g.outputs.begin(), g.outputs.end());
  std::vector<bool> keep(g.nodes.size(), false);
  for (std::size_t i = g.nodes.size(); i-- > 0;) {
    Node& n = *g.nodes[i];
    bool live = false;
    for (Value* o : n.outputs)
      if (o && needed.count(o) && !o->constant) live = true;
    if (!live) continue;
    keep[i] = true;
    for (Value* in : n.inputs)
      if (in) needed.insert(in);
    for (Value* in : n.implicit_inputs(g)) needed.insert(in);
  }
  std::vector<std::unique_ptr<Node>> kept;
  for (std::size_t i = 0; i < g.nodes.size(); ++i)
    if (keep[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
  g.relink();
}

}  // namespace onnxc
