// fuse-activation: see kernel_passes.h. The fused activation is recorded in internal
// attributes of the producer (ops/conv_algorithm.h), which its emitter turns into an
// rt::Epilogue.
#include <algorithm>
#include <cmath>
#include <set>
#include <limits>
#include <optional>

#include "ops/conv_algorithm.h"
#include "passes/kernel_passes.h"

namespace onnxc {
namespace {

struct FusedActivation {
  std::string kind;
  float alpha = 0, beta = 0;
};

// A constant scalar input, or `fallback` when the input is omitted; nullopt when it is
// computed at run time.
std::optional<float> constant_scalar(const Node& n, std::size_t i, float fallback) {
  if (!n.has_input(i)) return fallback;
  const Value& v = *n.inputs[i];
  if (!v.constant || v.constant->numel() != 1) return std::nullopt;
  return static_cast<float>(v.constant->float_at(0));
}

// What `act` computes, as an epilogue; nullopt when it cannot be one.
std::optional<FusedActivation> as_epilogue(const Node& act) {
  const std::string& op = act.op_type;
  if (op == "Relu" || op == "Sigmoid" || op == "Tanh" || op == "HardSwish") return FusedActivation{op};
  if (op == "LeakyRelu") return FusedActivation{op, act.attr_float("alpha", 0.01f)};
  if (op == "Swish" && act.attr_float("alpha", 1.0f) == 1.0f) return FusedActivation{"Silu"};
  if (op == "HardSigmoid") return FusedActivation{op, act.attr_float("alpha", 0.2f), act.attr_float("beta", 0.5f)};
  if (op == "Gelu") return FusedActivation{act.attr_string("approximate", "none") == "tanh" ? "GeluTanh" : "Gelu"};
  if (op == "Clip") {
    constexpr float inf = std::numeric_limits<float>::infinity();
    if (act.version < 11) return FusedActivation{op, act.attr_float("min", -inf), act.attr_float("max", inf)};
    auto lo = constant_scalar(act, 1, -inf), hi = constant_scalar(act, 2, inf);
    if (!lo || !hi) return std::nullopt;
    return FusedActivation{op, *lo, *hi};
  }
  return std::nullopt;
}

bool is_node(const Node* n, const char* op) {
  return n && n->op_type == op && n->domain.empty() && n->inputs.size() == 2 && n->has_input(0) && n->has_input(1);
}

// The operand of binary node n that is not `x`, when the other one is x.
const Value* other_operand(const Node& n, const Value* x) {
  if (n.inputs[0] == x) return n.inputs[1];
  if (n.inputs[1] == x) return n.inputs[0];
  return nullptr;
}

bool is_scalar(const Value* v, double want) {
  return v && v->constant && v->constant->numel() == 1 && v->dtype == DType::Float &&
         std::abs(v->constant->float_at(0) - want) <= 1e-6 * std::abs(want);
}

// Exact GELU written out, as exporters do for opsets before Gelu-20 (PyTorch):
//   Div(x, sqrt 2) or Mul(x, 1 / sqrt 2) -> Erf -> Add 1 -> Mul x -> Mul 0.5
// with x read by exactly the first and the fourth node and every value inside read once.
// Returns the last node, whose output is GELU(x); fills `inner` with the others.
Node* written_out_gelu(const Graph& g, const Value* x, std::vector<Node*>& inner) {
  std::vector<Node*> readers = g.consumers(x);
  if (readers.size() != 2 || x->is_graph_output) return nullptr;
  for (int first = 0; first < 2; ++first) {
    Node* scale = readers[static_cast<std::size_t>(first)];
    Node* times_x = readers[static_cast<std::size_t>(1 - first)];
    const bool divides = is_node(scale, "Div") && scale->inputs[0] == x && is_scalar(scale->inputs[1], std::sqrt(2.0));
    const bool multiplies = is_node(scale, "Mul") && is_scalar(other_operand(*scale, x), 1.0 / std::sqrt(2.0));
    if (!divides && !multiplies) continue;
    Node* erf = g.only_reader(scale->outputs[0]);
    if (!erf || erf->op_type != "Erf" || !erf->domain.empty()) continue;
    Node* plus_one = g.only_reader(erf->outputs[0]);
    if (!is_node(plus_one, "Add") || !is_scalar(other_operand(*plus_one, erf->outputs[0]), 1.0)) continue;
    if (!is_node(times_x, "Mul") || other_operand(*times_x, x) != plus_one->outputs[0]) continue;
    if (g.only_reader(plus_one->outputs[0]) != times_x) continue;
    Node* half = g.only_reader(times_x->outputs[0]);
    if (!is_node(half, "Mul") || !is_scalar(other_operand(*half, times_x->outputs[0]), 0.5)) continue;
    inner = {scale, erf, plus_one, times_x};
    return half;
  }
  return nullptr;
}

// SiLU (swish) written out, as exporters do (PyTorch's SiLU, EfficientNet's swish): Sigmoid(x)
// and Mul(x, Sigmoid(x)), x read by exactly those two and the Sigmoid's output by the Mul alone.
// Returns the Mul, whose output is SiLU(x); fills `inner` with the Sigmoid.
Node* written_out_silu(const Graph& g, const Value* x, std::vector<Node*>& inner) {
  std::vector<Node*> readers = g.consumers(x);
  if (readers.size() != 2 || x->is_graph_output) return nullptr;
  for (int first = 0; first < 2; ++first) {
    Node* sigmoid = readers[static_cast<std::size_t>(first)];
    Node* times_x = readers[static_cast<std::size_t>(1 - first)];
    if (sigmoid->op_type != "Sigmoid" || !sigmoid->domain.empty() || sigmoid->outputs.size() != 1) continue;
    if (!is_node(times_x, "Mul") || other_operand(*times_x, x) != sigmoid->outputs[0]) continue;
    if (g.only_reader(sigmoid->outputs[0]) != times_x) continue;
    inner = {sigmoid};
    return times_x;
  }
  return nullptr;
}

// The Conv, Gemm, MatMul (matmul_can_be_gemm) or ConvTranspose (rt::conv_transpose_gemm) producing x, when an activation of x may move into it: directly, or
// through one view (Reshape, Flatten, Squeeze, Unsqueeze: an elementwise function commutes
// with it) of its output that nothing else reads. `readers` is how many nodes the activation
// reads x with (the written-out GELU reads it twice).
Node* fusable_producer(const Graph& g, const Value* x, std::size_t readers) {
  if (x->dtype != DType::Float || !x->producer || x->is_graph_output || g.consumers(x).size() != readers) return nullptr;
  Node* p = x->producer;
  static const std::set<std::string> views = {"Reshape", "Flatten", "Squeeze", "Unsqueeze"};
  if (views.count(p->op_type) && p->domain.empty() && p->has_input(0)) {
    const Value* before = p->inputs[0];
    if (!before->producer || before->is_graph_output || before->is_graph_input || g.consumers(before).size() != 1) return nullptr;
    p = before->producer;
  }
  if (p->has_attr(kActivationAttr) || !p->domain.empty()) return nullptr;
  if (p->op_type == "Conv" || p->op_type == "Gemm" || matmul_can_be_gemm(*p)) return p;
  if (p->op_type == "ConvTranspose" && conv_transpose_gemm_applies(*p)) return p;  // its reference loops take none
  return nullptr;
}

}  // namespace

int fuse_activation(Graph& g) {
  int fused = 0;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    Node& act = *g.nodes[i];
    // The activation's input and the nodes that compute it: one node, or a written-out GELU.
    const Value* x = nullptr;
    Node* last = nullptr;
    std::vector<Node*> inner;
    std::optional<FusedActivation> f = as_epilogue(act);
    if (f && act.has_input(0) && act.domain.empty() && act.outputs.size() == 1) {
      x = act.inputs[0];
      last = &act;
    } else if (!act.outputs.empty() && act.outputs[0] && (last = written_out_gelu(g, act.outputs[0], inner))) {
      x = act.outputs[0];
      f = FusedActivation{"Gelu"};
    } else if (!act.outputs.empty() && act.outputs[0] && (last = written_out_silu(g, act.outputs[0], inner))) {
      x = act.outputs[0];
      f = FusedActivation{"Silu"};
    } else {
      continue;
    }
    Node* producer = fusable_producer(g, x, inner.empty() ? 1 : 2);
    if (!producer) continue;
    if (producer->op_type == "MatMul") {
      // A Gemm takes the epilogue; for rank > 2 a view after it writes x now. Nodes moved.
      matmul_as_gemm(g, *producer, nullptr);
      i = 0;
      while (g.nodes[i].get() != &act) ++i;
    }
    producer->set_attr_string(kActivationAttr, f->kind);
    producer->set_attr_float(kActivationAlphaAttr, f->alpha);
    producer->set_attr_float(kActivationBetaAttr, f->beta);
    std::vector<std::string> merged = producer->attr_strings(kMergedOpsAttr);
    for (const Node* m : inner) merged.push_back(m->op_type);
    merged.push_back(last->op_type);
    producer->set_attr_strings(kMergedOpsAttr, merged);
    // The producer, or the view after it, now writes the activation's output.
    Node* writer = x->producer;
    writer->outputs[0] = last->outputs[0];
    writer->outputs[0]->producer = writer;  // before the activation is freed: later nodes look it up
    inner.push_back(last);
    for (const Node* gone : inner) {
      std::size_t at = 0;
      while (g.nodes[at].get() != gone) ++at;
      g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(at));
      if (at <= i) --i;
    }
    ++fused;
  }
  g.relink();
  return fused;
}

}  // namespace onnxc
