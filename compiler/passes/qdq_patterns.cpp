#include "passes/qdq_patterns.h"

#include <algorithm>
#include <cmath>

#include "onnxc/quant.h"
#include "ops/quant_common.h"
#include "passes/passes.h"

namespace onnxc {

bool is_8bit(DType t) { return t == DType::Uint8 || t == DType::Int8; }

int32_t QuantParams::quantize(float x) const {
  const float q = rt::round_half_even(x / scale) + static_cast<float>(zero_point);
  return static_cast<int32_t>(std::clamp(q, static_cast<float>(lowest()), static_cast<float>(highest())));
}

float QuantParams::dequantize(int32_t q) const { return static_cast<float>(q - zero_point) * scale; }

bool operator==(const QuantParams& a, const QuantParams& b) {
  return a.scale == b.scale && a.zero_point == b.zero_point && a.type == b.type;
}

std::optional<QuantParams> per_tensor_params(const Node& n) {
  const bool quantize = is_op(&n, "QuantizeLinear");
  if (!quantize && !is_op(&n, "DequantizeLinear")) return std::nullopt;
  if (n.attr_int("block_size", 0) != 0 || !n.has_input(1) || !n.has_input(2)) return std::nullopt;
  const Value* s = n.inputs[1];
  const Value* z = n.inputs[2];
  if (!s->constant || s->dtype != DType::Float || !is_per_tensor(s->constant->shape)) return std::nullopt;
  if (!z->constant || !is_8bit(z->dtype) || !is_per_tensor(z->constant->shape)) return std::nullopt;
  if (quantize && n.attr_int("output_dtype", 0) != 0 && n.attr_int("output_dtype", 0) != static_cast<int>(z->dtype))
    return std::nullopt;
  QuantParams p;
  p.scale = s->constant->data<float>()[0];
  if (!(p.scale > 0.0f) || !std::isfinite(p.scale)) return std::nullopt;
  p.zero_point = static_cast<int32_t>(z->constant->int_at(0));
  p.type = z->dtype;
  p.scale_value = s;
  p.zero_point_value = z;
  return p;
}

const Node* per_tensor_dequantize(const Value* v) {
  const Node* dq = v ? v->producer : nullptr;
  if (!is_op(dq, "DequantizeLinear") || !per_tensor_params(*dq)) return nullptr;
  return dq;
}

void replace_uses(Graph& g, const Value* from, Value* to) {
  for (auto& n : g.nodes)
    for (Value*& in : n->inputs)
      if (in == from) in = to;
}

Node* insert_node_after(Graph& g, const Node* after, std::unique_ptr<Node> n) {
  auto at = std::find_if(g.nodes.begin(), g.nodes.end(), [after](const auto& p) { return p.get() == after; });
  at = at == g.nodes.end() ? g.nodes.begin() : at + 1;
  Node* raw = n.get();
  g.nodes.insert(at, std::move(n));
  for (Value* o : raw->outputs)
    if (o) o->producer = raw;
  return raw;
}

std::unique_ptr<Node> make_node(const Node& like, const std::string& name_suffix, const char* domain,
                                const char* op_type, int version, std::vector<Value*> inputs,
                                std::vector<Value*> outputs) {
  auto n = std::make_unique<Node>();
  n->name = like.name + name_suffix;
  n->op_type = op_type;
  n->domain = domain;
  n->opset = n->domain.empty() ? like.opset : 1;
  n->version = version;
  n->index = like.index;
  n->inputs = std::move(inputs);
  n->outputs = std::move(outputs);
  return n;
}

void erase_nodes(Graph& g, const std::set<const Node*>& removed) {
  g.nodes.erase(std::remove_if(g.nodes.begin(), g.nodes.end(), [&](const auto& n) { return removed.count(n.get()) != 0; }),
                g.nodes.end());
  g.relink();
}

Value* transposed_8bit(Graph& g, const Value& w) {
  const Tensor& t = *w.constant;
  const int64_t rows = t.shape[0], cols = t.shape[1];
  Tensor out(t.dtype, {cols, rows});
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      out.bytes[static_cast<std::size_t>(c * rows + r)] = t.bytes[static_cast<std::size_t>(r * cols + c)];
  return add_constant(g, w.name + "_transposed", std::move(out));
}

Value* scalar_constant(Graph& g, const std::string& hint, DType type, int32_t value) {
  Tensor t(type, {});
  t.bytes[0] = static_cast<uint8_t>(value);
  return add_constant(g, hint, std::move(t));
}

}  // namespace onnxc
