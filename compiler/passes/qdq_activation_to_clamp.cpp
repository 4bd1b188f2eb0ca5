// qdq_activation_to_clamp (part of lower-qdq, see qdq_patterns.h): a Relu or Clip whose only
// reader is a QuantizeLinear becomes an integer Clip after it. Quantization is increasing, so
// Q(clip(x, lo, hi)) == clamp(Q(x), Q(lo), Q(hi)) for every x: exact, whatever the quantizer
// calibrated. When [Q(lo), Q(hi)] covers the whole 8-bit range the clamp is dropped (Relu before
// a Q whose zero point is the type's lowest value).
#include <algorithm>
#include <limits>
#include <memory>
#include <optional>

#include "passes/passes.h"
#include "passes/qdq_patterns.h"

namespace onnxc {
namespace {

struct Bounds {
  float lo, hi;
};

// A constant float bound of Clip-11+ (input i), or `fallback` when omitted.
std::optional<float> bound(const Node& n, std::size_t i, float fallback) {
  if (!n.has_input(i)) return fallback;
  const Value* v = n.inputs[i];
  if (!v->constant || v->dtype != DType::Float || v->constant->numel() != 1) return std::nullopt;
  return v->constant->data<float>()[0];
}

std::optional<Bounds> activation_bounds(const Node& n) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  if (is_op(&n, "Relu")) return Bounds{0.0f, inf};
  if (!is_op(&n, "Clip")) return std::nullopt;
  if (n.version < 11) return Bounds{n.attr_float("min", -inf), n.attr_float("max", inf)};
  const std::optional<float> lo = bound(n, 1, -inf), hi = bound(n, 2, inf);
  if (!lo || !hi || !(*lo <= *hi)) return std::nullopt;
  return Bounds{*lo, *hi};
}

}  // namespace

int qdq_activation_to_clamp(Graph& g) {
  int rewritten = 0;
  std::vector<const Node*> removed;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    Node& act = *g.nodes[i];
    const std::optional<Bounds> b = activation_bounds(act);
    if (!b || !act.has_input(0) || act.inputs[0]->dtype == DType::Int8 || act.inputs[0]->dtype == DType::Uint8) continue;
    Node* q = g.only_reader(act.outputs[0]);
    if (!q || q->inputs[0] != act.outputs[0]) continue;
    const std::optional<QuantParams> p = per_tensor_params(*q);
    if (!p) continue;
    const int32_t lo = p->quantize(b->lo), hi = p->quantize(b->hi);
    q->inputs[0] = act.inputs[0];
    removed.push_back(&act);
    ++rewritten;
    if (lo <= p->lowest() && hi >= p->highest()) continue;
    Value* y = q->outputs[0];
    Value* unclamped = g.add_unique_value(y->name + "_unclamped");
    q->outputs[0] = unclamped;
    unclamped->producer = q;
    insert_node_after(g, q,
                      make_node(act, "_clamp", "", "Clip", 13,
                                {unclamped, scalar_constant(g, act.name + "_low", p->type, lo),
                                 scalar_constant(g, act.name + "_high", p->type, hi)},
                                {y}));
  }
  for (const Node* n : removed)
    g.nodes.erase(std::find_if(g.nodes.begin(), g.nodes.end(), [n](const auto& p) { return p.get() == n; }));
  if (rewritten) g.relink();
  return rewritten;
}

}  // namespace onnxc
