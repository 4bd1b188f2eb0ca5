// qdq_fold_pairs (part of lower-qdq, see qdq_patterns.h): Q(DQ(q)) on 8-bit q of one type.
// With equal parameters it is q exactly (every 8-bit value dequantizes to a float that quantizes
// back to it); with others it is a requantization, tabulated over the 256 values of q as ONNX
// computes it (float DQ, float division, round half to even, saturation). An integer Clip
// reading such a table's output only is folded into the table, and so is one writing the
// table's input that nothing else reads (table[clamp(v)] for each v).
#include <algorithm>
#include <memory>
#include <set>

#include "passes/passes.h"
#include "passes/qdq_patterns.h"

namespace onnxc {
namespace {

bool is_lookup(const Node* n) { return n && n->domain == "onnxc" && n->op_type == "QLinearLookup"; }

// The [lo, hi] of an integer Clip with constant 8-bit scalar bounds (both given).
bool integer_clip_bounds(const Node& n, int32_t& lo, int32_t& hi) {
  if (!is_op(&n, "Clip") || n.version < 12 || !n.has_input(1) || !n.has_input(2)) return false;
  const Value* a = n.inputs[1];
  const Value* b = n.inputs[2];
  if (!a->constant || !b->constant || !is_8bit(a->dtype) || a->dtype != b->dtype) return false;
  lo = static_cast<int32_t>(a->constant->int_at(0));
  hi = static_cast<int32_t>(b->constant->int_at(0));
  return true;
}

}  // namespace

int qdq_fold_pairs(Graph& g) {
  int folded = 0;
  std::set<const Node*> removed;
  for (auto& np : g.nodes) {
    Node& q = *np;
    if (!is_op(&q, "QuantizeLinear")) continue;
    const Node* dq = per_tensor_dequantize(q.inputs[0]);
    const std::optional<QuantParams> out = per_tensor_params(q);
    if (!dq || !out) continue;
    const QuantParams in = *per_tensor_params(*dq);
    if (in.type != out->type) continue;
    Value* data = dq->inputs[0];
    if (in == *out) {
      if (q.outputs[0]->is_graph_output) {
        // The quantized output is the model's: data's producer writes it (data read as it).
        Node* producer = data->producer;
        if (!producer || data->is_graph_output) continue;
        Value* output = q.outputs[0];
        replace_uses(g, data, output);
        std::replace(producer->outputs.begin(), producer->outputs.end(), data, output);
        output->producer = producer;
      } else {
        replace_uses(g, q.outputs[0], data);
      }
      removed.insert(&q);
    } else {
      Tensor table = table_of(in.type, [&](int32_t v) { return out->quantize(in.dequantize(v)); });
      q.domain = "onnxc";
      q.op_type = "QLinearLookup";
      q.opset = 1;
      q.version = 1;
      q.attrs.clear();
      q.inputs = {data, add_constant(g, q.name + "_table", std::move(table))};
    }
    ++folded;
  }
  erase_nodes(g, removed);
  // A clamp after a table: the table clamped.
  for (auto& np : g.nodes) {
    Node& clip = *np;
    int32_t lo = 0, hi = 0;
    if (removed.count(&clip) || !integer_clip_bounds(clip, lo, hi)) continue;
    Node* lookup = clip.inputs[0]->producer;
    if (!is_lookup(lookup) || g.only_reader(lookup->outputs[0]) != &clip || !lookup->inputs[1]->constant ||
        clip.outputs[0]->is_graph_output)
      continue;
    Tensor table = *lookup->inputs[1]->constant;
    for (uint8_t& b : table.bytes) {
      const int32_t v = table.dtype == DType::Int8 ? static_cast<int8_t>(b) : b;
      b = static_cast<uint8_t>(std::clamp(v, lo, hi));
    }
    lookup->inputs[1] = add_constant(g, lookup->name + "_clamped", std::move(table));
    replace_uses(g, clip.outputs[0], lookup->outputs[0]);
    removed.insert(&clip);
    ++folded;
  }
  erase_nodes(g, removed);
  // A clamp before a table: the table of the clamped values (Relu's integer Clip before a
  // requantization in the every-tensor QDQ form). The DQs the tables replaced read the clamps
  // still: dropped first.
  eliminate_dead_nodes(g);
  removed.clear();
  for (auto& np : g.nodes) {
    Node& lookup = *np;
    if (!is_lookup(&lookup) || !lookup.inputs[1]->constant) continue;
    Node* clip = lookup.inputs[0]->producer;
    int32_t lo = 0, hi = 0;
    if (!clip || removed.count(clip) || !integer_clip_bounds(*clip, lo, hi) || clip->outputs[0]->is_graph_output ||
        g.only_reader(clip->outputs[0]) != &lookup || clip->inputs[1]->dtype != lookup.inputs[1]->dtype)
      continue;
    const Tensor& old = *lookup.inputs[1]->constant;
    Tensor table = table_of(old.dtype, [&](int32_t v) {
      const int32_t c = std::clamp(v, lo, hi);
      const uint8_t b = old.bytes[static_cast<std::size_t>(old.dtype == DType::Int8 ? c + 128 : c)];
      return old.dtype == DType::Int8 ? static_cast<int32_t>(static_cast<int8_t>(b)) : static_cast<int32_t>(b);
    });
    lookup.inputs[1] = add_constant(g, lookup.name + "_of_clamped", std::move(table));
    lookup.inputs[0] = clip->inputs[0];
    removed.insert(clip);
    ++folded;
  }
  erase_nodes(g, removed);
  return folded;
}

}  // namespace onnxc
