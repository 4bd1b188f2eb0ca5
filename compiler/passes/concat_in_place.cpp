#include "passes/concat_in_place.h"

#include <algorithm>
#include <vector>

#include "ops/op.h"
#include "passes/program.h"

namespace onnxc {
namespace {

// Every dim before the axis is 1: each input is one contiguous run of the output's bytes.
bool inputs_are_slabs(const Node& concat) {
  const Value* out = concat.outputs[0];
  const int64_t rank = static_cast<int64_t>(out->shape.size());
  int64_t axis = concat.attr_int("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return false;
  for (int64_t d = 0; d < axis; ++d)
    if (out->shape[static_cast<std::size_t>(d)] != 1) return false;
  return true;
}

bool is_plain_tensor(const Value* v) { return v && !v->constant && !v->outer && !v->is_sequence && !v->is_optional; }

// A node whose outputs can be given any buffer: it computes them (not a view of its input) and
// has no subgraph, whose blocks choose their outputs' memory themselves.
bool writes_its_own_outputs(const Node& n) {
  const OpDef* op = find_op(n.domain, n.op_type);
  return op && !op->is_view && n.subgraphs().empty();
}

}  // namespace

ConcatsInPlace concats_in_place(const Graph& g, std::size_t alignment) {
  std::set<const Node*> nodes_of_g;
  for (auto& n : g.nodes) nodes_of_g.insert(n.get());
  auto intermediate = [&](const Value* v) {
    return is_plain_tensor(v) && !v->is_graph_input && !v->is_graph_output && v->producer &&
           nodes_of_g.count(v->producer) && writes_its_own_outputs(*v->producer);
  };
  ConcatsInPlace result;
  std::map<const Value*, ConcatSlice> direct;  // input -> (its Concat's output, offset)
  std::vector<const Node*> accepted;
  for (auto& np : g.nodes) {
    const Node& n = *np;
    if (n.op_type != "Concat" || !n.domain.empty() || !n.has_output(0) || !is_plain_tensor(n.outputs[0]) ||
        n.outputs[0]->is_graph_output || !inputs_are_slabs(n))
      continue;
    std::map<const Value*, ConcatSlice> mine;
    std::size_t offset = 0, first = 0;
    // A dense block (DenseNet: each layer concatenates all the block's earlier outputs and its
    // own): where an in-place Concat's inputs are the first of this one's, its output is this
    // output's first bytes, and only the rest are placed here.
    for (auto m = accepted.rbegin(); m != accepted.rend(); ++m) {
      const Node& prefix = **m;
      const Value* out = prefix.outputs[0];
      if (prefix.inputs.size() < n.inputs.size() && !direct.count(out) && out->dtype == n.outputs[0]->dtype &&
          std::equal(prefix.inputs.begin(), prefix.inputs.end(), n.inputs.begin())) {
        mine[out] = ConcatSlice{n.outputs[0], 0};
        offset = out->byte_size();
        first = prefix.inputs.size();
        break;
      }
    }
    bool ok = true;
    for (std::size_t i = first; i < n.inputs.size(); ++i) {
      const Value* in = n.inputs[i];
      ok = ok && intermediate(in) && !direct.count(in) && !mine.count(in) &&
           (alignment == 0 || offset % alignment == 0);
      if (!ok) break;
      mine[in] = ConcatSlice{n.outputs[0], offset};
      offset += in->byte_size();
    }
    if (!ok || n.inputs.empty()) continue;
    direct.insert(mine.begin(), mine.end());
    result.concats.insert(&n);
    accepted.push_back(&n);
  }
  // A Concat's output that is itself a slice of a later Concat: its inputs go in that one.
  for (auto& [v, slice] : direct) {
    ConcatSlice resolved = slice;
    for (auto outer = direct.find(resolved.concat); outer != direct.end(); outer = direct.find(resolved.concat))
      resolved = ConcatSlice{outer->second.concat, resolved.bytes + outer->second.bytes};
    result.slices[v] = resolved;
  }
  return result;
}

}  // namespace onnxc
