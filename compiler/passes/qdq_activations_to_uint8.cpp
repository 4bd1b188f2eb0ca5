// qdq_activations_to_uint8 (part of lower-qdq, see qdq_patterns.h): int8 activations become
// uint8 ones. With zero point z + 128, QuantizeLinear to uint8 gives exactly QuantizeLinear to
// int8 plus 128 (the rounding is the same, both saturations shift with it), and the
// DequantizeLinears read the same floats; so the model computes the same. The integer kernels
// have their fastest forms for uint8 activations and int8 weights (rt::qconv_gemm and the dot
// product kernels), which int8 activations would miss.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "passes/passes.h"
#include "passes/qdq_patterns.h"

namespace onnxc {
namespace {

// ---- the same for the integer operators of QOperator and TFLite-converted models ----
//
// An int8 tensor read and written only by operators that take it with its zero point
// (QLinearConv, QLinearMatMul, QLinearAdd, QLinearMul, QLinearGlobalAveragePool, QuantizeLinear,
// DequantizeLinear) or that move it unchanged (Transpose, Reshape, Flatten, Squeeze, Unsqueeze,
// MaxPool, Pad with a constant: their input and output flip together) is uint8 with zero point
// z + 128: each operator computes on q - z, the same; Q rounds alike and saturates shifted.

constexpr std::size_t kNoOutput = ~std::size_t{0};

// The (data, zero point) operand positions of an integer operator and its output's zero point.
struct ZeroPoints {
  std::vector<std::pair<std::size_t, std::size_t>> operands;
  std::size_t output = kNoOutput;
};

std::optional<ZeroPoints> zero_points(const Node& n) {
  const bool ms = n.domain == "com.microsoft", onnx = n.domain.empty();
  if (onnx && n.op_type == "QLinearConv") return ZeroPoints{{{0, 2}}, 7};
  if ((onnx && n.op_type == "QLinearMatMul") || (n.domain == "onnxc" && n.op_type == "QLinearMatMulBias") ||
      (ms && (n.op_type == "QLinearAdd" || n.op_type == "QLinearMul")))
    return ZeroPoints{{{0, 2}, {3, 5}}, 7};
  if (ms && n.op_type == "QLinearGlobalAveragePool") return ZeroPoints{{{0, 2}}, 4};
  if (onnx && n.op_type == "QuantizeLinear") return ZeroPoints{{}, 2};
  if (onnx && n.op_type == "DequantizeLinear") return ZeroPoints{{{0, 2}}, kNoOutput};
  return std::nullopt;
}

// Operators whose 8-bit operands and output have one type (ONNX Runtime's contrib operators):
// their tensors flip together.
bool one_type(const Node& n) { return n.domain == "com.microsoft" && zero_points(n).has_value(); }

bool moves_data(const Node& n) {
  for (const char* op : {"Transpose", "Reshape", "Flatten", "Squeeze", "Unsqueeze"})
    if (is_op(&n, op)) return true;
  if (is_op(&n, "MaxPool")) return !n.has_output(1);
  return is_op(&n, "Pad") && n.attr_string("mode", "constant") == "constant";
}

// A constant int8 scalar (or [1]) at input i of n.
bool int8_scalar_at(const Node& n, std::size_t i) {
  if (!n.has_input(i)) return false;
  const Value* v = n.inputs[i];
  return v->constant && v->dtype == DType::Int8 && v->constant->numel() == 1;
}

// The same constant as uint8, shifted by 128, of the same shape.
Value* shifted(Graph& g, const Value& v) {
  Tensor t(DType::Uint8, v.constant->shape);
  t.bytes[0] = static_cast<uint8_t>(static_cast<int8_t>(v.constant->bytes[0]) + 128);
  return add_constant(g, v.name + "_uint8", std::move(t));
}

int qoperator_activations_to_uint8(Graph& g) {
  // Groups of values tied by data movement (union-find over the values).
  std::map<const Value*, const Value*> parent;
  std::function<const Value*(const Value*)> root = [&](const Value* v) {
    auto it = parent.find(v);
    if (it == parent.end() || it->second == v) return v;
    return it->second = root(it->second);
  };
  for (const auto& n : g.nodes) {
    if (moves_data(*n) && n->has_input(0) && n->has_output(0)) parent[root(n->outputs[0])] = root(n->inputs[0]);
    if (!one_type(*n) || !n->has_output(0)) continue;
    const ZeroPoints z = *zero_points(*n);
    for (const auto& [data, zp] : z.operands)
      if (n->has_input(data) && !n->inputs[data]->constant) parent[root(n->inputs[data])] = root(n->outputs[0]);
  }
  // Each group's zero point slots (node, input), and whether every use of it has one.
  struct Group {
    std::vector<std::pair<Node*, std::size_t>> slots;
    bool int8 = false, ok = true;
  };
  std::map<const Value*, Group> groups;
  auto slot = [&](const Value* v, Node* n, std::size_t zp) {
    Group& grp = groups[root(v)];
    if (!int8_scalar_at(*n, zp)) {
      grp.ok = false;
      return;
    }
    grp.int8 = true;
    grp.slots.push_back({n, zp});
  };
  for (const auto& np : g.nodes) {
    Node* n = np.get();
    const std::optional<ZeroPoints> z = zero_points(*n);
    const bool moves = moves_data(*n);
    // QLinearAdd and QLinearMul take one 8-bit type: a constant operand (not flipped) pins it.
    bool constant_operand = false;
    if (z && z->operands.size() == 2 && n->domain == "com.microsoft")
      for (const auto& [data, zp] : z->operands) constant_operand = constant_operand || (n->has_input(data) && n->inputs[data]->constant);
    if (constant_operand) {
      for (const auto& [data, zp] : z->operands)
        if (n->has_input(data)) groups[root(n->inputs[data])].ok = false;
      groups[root(n->outputs[0])].ok = false;
    }
    for (std::size_t i = 0; i < n->inputs.size(); ++i) {
      const Value* v = n->inputs[i];
      if (!v || v->constant) continue;
      bool known = moves && i == 0;
      if (z)
        for (const auto& [data, zp] : z->operands)
          if (data == i) {
            slot(v, n, zp);
            known = true;
          }
      if (!known) groups[root(v)].ok = false;  // read without its zero point
    }
    if (moves && is_op(n, "Pad") && n->has_input(2)) {
      if (int8_scalar_at(*n, 2)) groups[root(n->outputs[0])].slots.push_back({n, 2});
      else groups[root(n->outputs[0])].ok = false;
    }
    for (std::size_t o = 0; o < n->outputs.size(); ++o) {
      const Value* v = n->outputs[o];
      if (!v) continue;
      if (z && o == 0 && z->output != kNoOutput) slot(v, n, z->output);
      else if (!(moves && o == 0)) groups[root(v)].ok = false;  // written by another operator
    }
  }
  for (const Value* v : g.inputs) groups[root(v)].ok = false;
  for (const Value* v : g.outputs) groups[root(v)].ok = false;
  int flipped = 0;
  std::map<const Value*, Value*> replaced;  // each zero point constant's uint8 form
  for (auto& [r, grp] : groups) {
    if (!grp.ok || !grp.int8) continue;
    for (auto& [n, i] : grp.slots) {
      Value*& u = replaced[n->inputs[i]];
      if (!u) u = shifted(g, *n->inputs[i]);
      n->inputs[i] = u;
      if (is_op(n, "QuantizeLinear")) n->attrs.erase("output_dtype");
    }
    ++flipped;
  }
  if (flipped) g.relink();
  return flipped;
}

}  // namespace

int qdq_activations_to_uint8(Graph& g) {
  int flipped = 0;
  for (auto& np : g.nodes) {
    Node& q = *np;
    const std::optional<QuantParams> p = per_tensor_params(q);
    if (!p || !is_op(&q, "QuantizeLinear") || p->type != DType::Int8 || q.outputs[0]->is_graph_output) continue;
    if (q.outputs[0]->constant) continue;  // a weight quantized in the graph, folded already: it stays int8
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
  return flipped + qoperator_activations_to_uint8(g);
}

}  // namespace onnxc
