// fuse-activation: see kernel_passes.h. The fused activation is recorded in internal
// attributes of the producer (ops/conv_algorithm.h), which its emitter turns into an
// rt::Epilogue.
#include <algorithm>
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
  if (op == "HardSigmoid") return FusedActivation{op, act.attr_float("alpha", 0.2f), act.attr_float("beta", 0.5f)};
  if (op == "Clip") {
    constexpr float inf = std::numeric_limits<float>::infinity();
    if (act.version < 11) return FusedActivation{op, act.attr_float("min", -inf), act.attr_float("max", inf)};
    auto lo = constant_scalar(act, 1, -inf), hi = constant_scalar(act, 2, inf);
    if (!lo || !hi) return std::nullopt;
    return FusedActivation{op, *lo, *hi};
  }
  return std::nullopt;
}

// The Conv or Gemm producing `act`'s input, when the activation may move into it.
Node* fusable_producer(const Graph& g, const Node& act) {
  if (!act.domain.empty() || !act.has_input(0) || act.outputs.size() != 1) return nullptr;
  const Value* x = act.inputs[0];
  if (x->dtype != DType::Float || !x->producer || x->is_graph_output || g.consumers(x).size() != 1) return nullptr;
  Node* p = x->producer;
  if ((p->op_type != "Conv" && p->op_type != "Gemm") || !p->domain.empty() || p->has_attr(kActivationAttr))
    return nullptr;
  return p;
}

}  // namespace

int fuse_activation(Graph& g) {
  int fused = 0;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    Node& act = *g.nodes[i];
    std::optional<FusedActivation> f = as_epilogue(act);
    if (!f) continue;
    Node* producer = fusable_producer(g, act);
    if (!producer) continue;
    producer->set_attr_string(kActivationAttr, f->kind);
    producer->set_attr_float(kActivationAlphaAttr, f->alpha);
    producer->set_attr_float(kActivationBetaAttr, f->beta);
    producer->outputs[0] = act.outputs[0];
    producer->outputs[0]->producer = producer;  // before `act` is freed: later nodes look it up
    g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(i));
    --i;
    ++fused;
  }
  g.relink();
  return fused;
}

}  // namespace onnxc
