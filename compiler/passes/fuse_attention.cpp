// fuse-attention: see kernel_passes.h. Canonicalises the ways exporters spell scaled dot-product
// attention into one onnxc.Attention node (ops/attention.h):
//
//   MatMul(Q, K^T) -> [Mul/Div by constant scalars]* -> [Add M] -> Softmax(last axis) -> MatMul(., V)
//
// with the scale taken from the scores, from Q or from K^T (a Mul/Div by a constant scalar that
// only the product reads), an additive mask M of any broadcast over batch, heads or rows, any
// leading batch/head dims (broadcast ones read with stride 0), and Transposes that only move
// batch/head dims (the last dim stays last) read as views: a Transpose producing Q or V, or
// consuming the result, disappears into the operands' strides. Every intermediate must be read
// only by the next node of the chain. K^T stays what the model computes (rt::attention reads it
// with the keys contiguous).
#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "ops/attention.h"
#include "ops/op.h"
#include "passes/kernel_passes.h"

namespace onnxc {
namespace {

bool is_float(const Value* v) { return v && v->dtype == DType::Float; }

// A float constant of one element.
std::optional<float> scalar_float_constant(const Value* v) {
  if (!is_float(v) || !v->constant || v->constant->numel() != 1) return std::nullopt;
  return static_cast<float>(v->constant->float_at(0));
}

// n as x * factor: Mul by a constant scalar (either side) or Div by one.
struct Scaling {
  Value* x = nullptr;
  float factor = 1.0f;
};
std::optional<Scaling> as_scaling(const Node* n) {
  if (!n || n->inputs.size() != 2 || !n->has_input(0) || !n->has_input(1) || n->outputs.size() != 1) return std::nullopt;
  if (is_op(n, "Mul")) {
    for (int k = 0; k < 2; ++k)
      if (auto c = scalar_float_constant(n->inputs[static_cast<std::size_t>(1 - k)]))
        return Scaling{n->inputs[static_cast<std::size_t>(k)], *c};
  } else if (is_op(n, "Div")) {
    if (auto c = scalar_float_constant(n->inputs[1]); c && *c != 0.0f) return Scaling{n->inputs[0], 1.0f / *c};
  }
  return std::nullopt;
}

// The strides of an operand stored with element strides `st` (its own rank), its batch dims
// aligned right with the two group dims; a batch dim of extent 1 broadcasts (stride 0).
AttentionStrides operand_strides(const Shape& shape, const std::vector<int64_t>& st) {
  const std::size_t r = shape.size();
  AttentionStrides s{0, 0, st[r - 2], st[r - 1]};
  for (std::size_t k = 0; k + 2 < r; ++k) s[k + 4 - r] = shape[k] == 1 ? 0 : st[k];
  return s;
}

std::vector<int64_t> transpose_perm_of(const Node& t) {
  std::vector<int64_t> perm = t.attr_ints("perm");
  if (perm.empty())
    for (std::size_t i = t.inputs[0]->shape.size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  return perm;
}

// Transposes whose last dim stays last: a row-major walk along it stays contiguous.
bool keeps_last_dim(const std::vector<int64_t>& perm) {
  return !perm.empty() && perm.back() == static_cast<int64_t>(perm.size()) - 1;
}

class AttentionFuser {
 public:
  explicit AttentionFuser(Graph& g) : g_(g) {}

  int run() {
    int removed = 0;
    std::vector<Node*> softmaxes;
    for (auto& n : g_.nodes)
      if (is_op(n.get(), "Softmax")) softmaxes.push_back(n.get());
    for (Node* sm : softmaxes) removed += fuse(*sm);
    if (removed) {
      std::vector<std::unique_ptr<Node>> kept;
      for (auto& n : g_.nodes) {
        auto r = replacement_.find(n.get());
        if (r != replacement_.end()) kept.push_back(std::move(r->second));
        else if (!gone_.count(n.get())) kept.push_back(std::move(n));
      }
      g_.nodes = std::move(kept);
      g_.relink();
    }
    return removed;
  }

 private:
  // The nodes of one match, all removed when it is fused.
  int fuse(Node& sm) {
    const Value* scores = sm.has_input(0) ? sm.inputs[0] : nullptr;
    if (!is_float(scores) || sm.outputs.size() != 1 || scores->shape.size() < 2) return 0;
    const int64_t rank = static_cast<int64_t>(scores->shape.size());
    if (normalize_axis(sm, sm.attr_int("axis", sm.version < 13 ? 1 : -1), rank) != rank - 1) return 0;
    Node* pv = g_.only_reader(sm.outputs[0]);
    if (!is_op(pv, "MatMul") || pv->inputs[0] != sm.outputs[0] || pv->inputs[1] == sm.outputs[0]) return 0;
    std::vector<Node*> chain = {&sm, pv};
    float scale = 1.0f;

    // Back from the Softmax: an additive mask, then scalings, then Q K^T. `reader` reads x.
    Value* x = sm.inputs[0];
    Node* reader = &sm;
    Value* mask = nullptr;
    Node* p = x->producer;
    if (g_.only_reader(x) != reader) return 0;
    if (is_op(p, "Add") && p->inputs.size() == 2) {
      for (std::size_t k = 0; k < 2 && !mask; ++k) {
        Value* s = p->inputs[k];
        Value* m = p->inputs[1 - k];
        if (s && m && s != m && s->shape == x->shape && is_float(m) && m->shape.size() <= x->shape.size() &&
            (is_op(s->producer, "MatMul") || as_scaling(s->producer)) && g_.only_reader(s) == p) {
          mask = m;
          chain.push_back(p);
          reader = p;
          x = s;
        }
      }
      if (!mask) return 0;
      p = x->producer;
    }
    while (auto sc = as_scaling(p)) {
      if (g_.only_reader(x) != reader || sc->x->shape != x->shape) return 0;
      scale *= sc->factor;
      chain.push_back(p);
      reader = p;
      x = sc->x;
      p = x->producer;
    }
    if (!is_op(p, "MatMul") || p->inputs.size() != 2 || g_.only_reader(x) != reader) return 0;
    Node* qk = p;
    chain.push_back(qk);

    // The scale on Q or K^T.
    Value* q = absorb_scaling(qk->inputs[0], *qk, scale, chain);
    Value* kt = absorb_scaling(qk->inputs[1], *qk, scale, chain);
    Value* v = pv->inputs[1];
    Value* out = pv->outputs[0];
    if (!is_float(q) || !is_float(kt) || !is_float(v) || !is_float(out)) return 0;
    const Shape& os = out->shape;
    if (os.size() > 4 || q->shape.size() < 2 || kt->shape.size() < 2 || v->shape.size() < 2) return 0;
    if (mask && mask->shape.size() > 4) return 0;

    AttentionGeometry geo;
    const std::size_t r = os.size();
    geo.groups0 = r >= 4 ? os[r - 4] : 1;
    geo.groups1 = r >= 3 ? os[r - 3] : 1;
    geo.q_rows = q->shape[q->shape.size() - 2];
    geo.depth = q->shape.back();
    geo.k_rows = kt->shape.back();
    geo.v_depth = v->shape.back();
    geo.scale = scale;
    if (os[r - 2] != geo.q_rows || os[r - 1] != geo.v_depth || v->shape[v->shape.size() - 2] != geo.k_rows) return 0;
    std::vector<Node*> views;
    Value* q_src = view_source(q, chain, views, geo.q);
    Value* v_src = view_source(v, chain, views, geo.v);
    geo.k = operand_strides(kt->shape, contiguous_strides(kt->shape));
    if (mask) {
      // Padded to the scores' rank: leading 1s broadcast.
      Shape ms = mask->shape;
      while (ms.size() < 2) ms.insert(ms.begin(), 1);
      std::vector<int64_t> st = contiguous_strides(ms);
      for (std::size_t k = 0; k < ms.size(); ++k)
        if (ms[k] == 1) st[k] = 0;
      geo.mask = operand_strides(ms, st);
    }
    Value* result = out;
    geo.out = operand_strides(os, contiguous_strides(os));
    if (Node* t = g_.only_reader(out); is_op(t, "Transpose") && t->outputs.size() == 1) {
      const std::vector<int64_t> perm = transpose_perm_of(*t);
      if (keeps_last_dim(perm)) {
        // Y = transpose(O): O's dim perm[k] moves by Y's stride along k.
        const std::vector<int64_t> ys = contiguous_strides(t->outputs[0]->shape);
        std::vector<int64_t> st(r);
        for (std::size_t k = 0; k < r; ++k) st[static_cast<std::size_t>(perm[k])] = ys[k];
        geo.out = operand_strides(os, st);
        result = t->outputs[0];
        views.push_back(t);
      }
    }

    auto n = std::make_unique<Node>();
    n->name = pv->name;
    n->domain = kAttentionDomain;
    n->op_type = kAttentionOp;
    n->opset = n->version = 1;
    n->index = pv->index;
    n->inputs = {q_src, kt, v_src};
    if (mask) n->inputs.push_back(mask);
    n->outputs = {result};
    set_attention_geometry(*n, geo);
    std::vector<std::string> merged;
    for (const Node* c : chain) merged.push_back(c->op_type);
    for (const Node* c : views) merged.push_back(c->op_type);
    n->set_attr_strings(kMergedOpsAttr, merged);
    for (Node* c : chain) gone_.insert(c);
    for (Node* c : views) gone_.insert(c);
    gone_.erase(pv);
    replacement_[pv] = std::move(n);
    return static_cast<int>(chain.size() + views.size()) - 1;
  }

  // operand, or the input of a Mul/Div by a constant scalar producing it that only `reader`
  // reads (its factor multiplied into scale).
  Value* absorb_scaling(Value* operand, const Node& reader, float& scale, std::vector<Node*>& chain) {
    std::optional<Scaling> sc = operand ? as_scaling(operand->producer) : std::nullopt;
    if (!sc || g_.only_reader(operand) != &reader || sc->x->shape != operand->shape) return operand;
    scale *= sc->factor;
    chain.push_back(operand->producer);
    return sc->x;
  }

  // What the step reads for `operand` (Q or V), and its strides: the input of a Transpose
  // producing it that keeps the last dim and that only the chain reads, or the operand itself.
  Value* view_source(Value* operand, const std::vector<Node*>& chain, std::vector<Node*>& views, AttentionStrides& s) {
    Node* t = operand->producer;
    Node* reader = g_.only_reader(operand);
    const bool chain_reads = reader && std::find(chain.begin(), chain.end(), reader) != chain.end();
    if (is_op(t, "Transpose") && chain_reads && t->has_input(0) && !gone_.count(t)) {
      const std::vector<int64_t> perm = transpose_perm_of(*t);
      if (keeps_last_dim(perm)) {
        const std::vector<int64_t> xs = contiguous_strides(t->inputs[0]->shape);
        std::vector<int64_t> st(perm.size());
        for (std::size_t k = 0; k < perm.size(); ++k) st[k] = xs[static_cast<std::size_t>(perm[k])];
        s = operand_strides(operand->shape, st);
        views.push_back(t);
        return t->inputs[0];
      }
    }
    s = operand_strides(operand->shape, contiguous_strides(operand->shape));
    return operand;
  }

  Graph& g_;
  std::set<const Node*> gone_;
  std::map<const Node*, std::unique_ptr<Node>> replacement_;
};

}  // namespace

int fuse_attention(Graph& g) { return AttentionFuser(g).run(); }

}  // namespace onnxc
