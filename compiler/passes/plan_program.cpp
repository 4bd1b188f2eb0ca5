#include <algorithm>

#include "passes/passes.h"
#include "support/names.h"

namespace onnxc {

Program plan_program(const Graph& g, std::size_t alignment) {
  Program prog;
  prog.alignment = alignment;
  IdentifierPool ids;
  auto& T = prog.tensors;

  for (const Value* v : g.inputs) {
    T[v].storage = Storage::Input;
    T[v].cname = ids.make("", v->name);
    prog.input_params.push_back(T[v].cname);
  }
  for (const Value* v : g.outputs) {
    std::string param = ids.make("", v->name);
    prog.output_params.push_back(param);
    if (T.count(v)) continue;  // an input passed straight through: the back end copies it
    T[v].storage = Storage::Output;
    T[v].cname = param;
  }

  // Steps, and where each node output lives.
  for (auto& np : g.nodes) {
    const Node& n = *np;
    Step step;
    step.node = &n;
    step.op = find_op(n.domain, n.op_type);
    if (step.op->scratch_bytes) step.scratch_bytes = step.op->scratch_bytes(n);
    int idx = static_cast<int>(prog.steps.size());
    prog.steps.push_back(step);
    for (std::size_t i = 0; i < n.outputs.size(); ++i) {
      const Value* v = n.outputs[i];
      if (!v || T.count(v)) continue;
      TensorPlace& tp = T[v];
      tp.first = tp.last = idx;
      const Value* src = n.has_input(0) ? n.inputs[0] : nullptr;
      if (step.op->is_view && i == 0 && src && !src->constant && T.count(src)) {
        tp.storage = Storage::Alias;
        tp.alias_of = src;
        while (T[tp.alias_of].storage == Storage::Alias) tp.alias_of = T[tp.alias_of].alias_of;
      } else {
        tp.storage = Storage::Arena;
      }
      tp.cname = ids.make("t_", v->name);
    }
    for (const Value* in : n.inputs) {
      if (!in) continue;
      if (in->constant) {
        if (!T.count(in)) {
          T[in].storage = Storage::Constant;
          T[in].cname = T[in].weight_cname = ids.make("w_", in->name);
          prog.weights.push_back(in);
        }
        continue;
      }
      auto it = T.find(in);
      if (it == T.end()) continue;
      const Value* root = it->second.storage == Storage::Alias ? it->second.alias_of : in;
      T[root].last = std::max(T[root].last, idx);
    }
  }
  // Graph outputs that folded to constants are copied from a weight array.
  for (const Value* v : g.outputs) {
    if (v->constant && !std::count(prog.weights.begin(), prog.weights.end(), v)) {
      prog.weights.push_back(v);
    }
  }

  // Arena buffers: node outputs in the arena plus scratch areas.
  std::vector<BufferRequest> requests;
  std::vector<const Value*> owners;
  for (auto& np : g.nodes)
    for (const Value* v : np->outputs) {
      if (!v) continue;
      TensorPlace& tp = T[v];
      if (tp.storage != Storage::Arena) continue;
      requests.push_back(BufferRequest{v->byte_size(), tp.first, tp.last});
      owners.push_back(v);
    }
  std::vector<std::size_t> scratch_steps;
  for (std::size_t i = 0; i < prog.steps.size(); ++i)
    if (prog.steps[i].scratch_bytes) {
      int s = static_cast<int>(i);
      requests.push_back(BufferRequest{prog.steps[i].scratch_bytes, s, s});
      scratch_steps.push_back(i);
    }
  prog.plan = plan_memory(requests, alignment);
  prog.peak_live_bytes = peak_live_bytes(requests, alignment);
  prog.arena_bytes = prog.plan.arena_bytes;
  for (std::size_t i = 0; i < owners.size(); ++i) T[owners[i]].offset = prog.plan.offsets[i];
  for (std::size_t i = 0; i < scratch_steps.size(); ++i)
    prog.steps[scratch_steps[i]].scratch_offset = prog.plan.offsets[owners.size() + i];
  for (const Value* w : prog.weights) {
    prog.weights_bytes += w->byte_size();
    if (T[w].weight_cname.empty()) T[w].weight_cname = ids.make("w_", w->name);
  }
  return prog;
}

}  // namespace onnxc
