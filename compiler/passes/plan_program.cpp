#include <algorithm>
#include <set>

#include "passes/concat_in_place.h"
#include "passes/execution_order.h"
#include "passes/passes.h"
#include "support/align.h"
#include "support/names.h"

namespace onnxc {

namespace {

// Whether a node has outputs other than its first.
bool writes_more_outputs(const Node& n) {
  for (std::size_t i = 1; i < n.outputs.size(); ++i)
    if (n.outputs[i]) return true;
  return false;
}

// The value an outer-scope reference finally names.
const Value* outer_root(const Value* v) {
  while (v->outer) v = v->outer;
  return v;
}

class Planner {
 public:
  Planner(Program& prog, const PlanOptions& options) : prog_(prog), T(prog.tensors), options_(options) {}

  // Plans one graph into `b`. Returns the outer-scope tensors it (or a nested block) reads,
  // so the enclosing block keeps them alive across the control-flow step.
  std::set<const Value*> plan_block(const Graph& g, Block& b, bool is_main, const std::string& base_hint) {
    b.graph = &g;
    b.base = is_main ? "base" : ids_.make("base_", base_hint);
    std::set<const Value*> outer_reads;
    for (const Value* v : g.inputs) {
      if (v->constant) {  // bound by --constant: read from a weight array, the parameter is unused
        b.input_params.push_back(ids_.make(is_main ? "" : "in_", v->name));
        continue;
      }
      TensorPlace& tp = place(v, &b);
      tp.storage = Storage::Input;
      tp.cname = ids_.make(is_main ? "" : "in_", v->name);
      b.input_params.push_back(tp.cname);
    }
    for (const Value* v : g.outputs) {
      std::string param = ids_.make(is_main ? "" : "out_", v->name);
      b.output_params.push_back(param);
      if (is_main) b.output_shape_params.push_back(v->is_bounded() ? ids_.make("", v->name + "_shape") : "");
      if (T.count(v) || v->constant || v->outer) continue;  // copied by the back end
      TensorPlace& tp = place(v, &b);
      tp.storage = Storage::Output;
      tp.cname = param;
    }

    // Only the main graph is reordered: a subgraph's nodes are few and its arena nests in a step.
    const std::vector<const Node*> order = execution_order(g, options_.reorder && is_main, prog_.alignment);
    const std::map<const Value*, int> last_read = last_reads(g, order);
    const ConcatsInPlace concats =
        options_.concat_in_place ? concats_in_place(g, prog_.alignment) : ConcatsInPlace{};
    std::vector<Overlap> overlaps;
    for (const Node* np : order) {
      const Node& n = *np;
      int idx = static_cast<int>(b.steps.size());
      b.steps.emplace_back();
      Step& step = b.steps.back();
      step.node = &n;
      step.op = find_op(n.domain, n.op_type);
      step.elided = concats.concats.count(&n) != 0;
      if (step.op->scratch_bytes) step.op_scratch_bytes = step.op->scratch_bytes(n);
      step.scratch_bytes = step.op_scratch_bytes;
      // Nested blocks: their arenas follow the op's own scratch; branches share the space.
      std::size_t nested = 0;
      const std::vector<Graph*> graphs = n.subgraphs();
      for (std::size_t k = 0; k < graphs.size(); ++k) {
        const Graph* sg = graphs[k];
        if (step.op->uses_subgraph && !step.op->uses_subgraph(n, k)) {
          step.subgraphs.push_back(nullptr);  // never runs: not planned, not emitted
          continue;
        }
        step.subgraphs.push_back(std::make_unique<Block>());
        for (const Value* r : plan_block(*sg, *step.subgraphs.back(), false, n.name)) read_outer(b, r, idx, outer_reads);
        nested = std::max(nested, step.subgraphs.back()->arena_bytes);
      }
      if (nested) step.scratch_bytes = align_up(step.op_scratch_bytes, prog_.alignment) + nested;

      for (const Value* in : n.inputs)
        if (in) read(b, in, idx, outer_reads);
      for (std::size_t i = 0; i < n.outputs.size(); ++i) {
        const Value* v = n.outputs[i];
        if (!v || T.count(v)) continue;
        auto slice = concats.slices.find(v);
        if (slice != concats.slices.end()) {
          place_slice(b, v, slice->second, idx);
          continue;
        }
        TensorPlace& tp = place(v, &b);
        tp.first = tp.last = idx;
        const Value* src = n.has_input(0) ? n.inputs[0] : nullptr;
        // A view's output is its input; not a Dropout's with a mask to write (codegen skips a
        // view's step, and with it the mask).
        if (step.op->is_view && i == 0 && src && !src->constant && T.count(src) &&
            T[src].storage != Storage::Outer && !writes_more_outputs(n)) {
          alias(tp, src);
        } else if (options_.in_place && step.op->inplace && i == 0 && dies_here(b, src, v, idx, last_read)) {
          alias(tp, src);
          tp.in_place = true;
        } else {
          tp.storage = Storage::Arena;
          if (i == 0) consider_overlap(b, n, *step.op, v, idx, last_read, overlaps);
        }
        tp.cname = ids_.make("t_", v->name);
      }
    }
    int end = static_cast<int>(b.steps.size());
    for (const Value* v : g.outputs) {
      if (v->constant) use_weight(v);
      else if (v->outer) read_outer(b, outer_root(v), end, outer_reads);
    }
    plan_arena(b, overlaps);
    return outer_reads;
  }

 private:
  // The last step of the graph that reads each value (outputs: past the end).
  static std::map<const Value*, int> last_reads(const Graph& g, const std::vector<const Node*>& order) {
    std::map<const Value*, int> last;
    int idx = 0;
    for (const Node* np : order) {
      for (const Value* in : np->inputs)
        if (in) last[in] = idx;
      for (const Value* in : np->implicit_inputs(g)) last[in] = idx;
      ++idx;
    }
    for (const Value* v : g.outputs) last[v] = idx + 1;
    return last;
  }

  const Value* root_of(const Value* v) const {
    auto it = T.find(v);
    return it != T.end() && it->second.storage == Storage::Alias ? it->second.alias_of : v;
  }

  // True when an elementwise op may write `out` over `src`: src's memory is an arena buffer
  // of this block, no tensor sharing that memory is read after this step, and the two have
  // the same type and size.
  bool dies_here(const Block& b, const Value* src, const Value* out, int idx,
                 const std::map<const Value*, int>& last_read) const {
    if (!src || src->constant || src->outer || src->dtype != out->dtype || src->byte_size() != out->byte_size())
      return false;
    const Value* root = root_of(src);
    auto it = T.find(root);
    if (it == T.end() || it->second.storage != Storage::Arena || it->second.block != &b) return false;
    for (auto& [v, tp] : T) {
      if (v != root && !(tp.storage == Storage::Alias && tp.alias_of == root)) continue;
      auto lr = last_read.find(v);
      if (lr != last_read.end() && lr->second > idx) return false;
    }
    return true;
  }

  // Output 0 of a step may overlap the input buffer the step reads last (OpDef::overlap_delta).
  struct Overlap {
    const Value* input;  // the buffer's owner (an Arena tensor of the block)
    const Value* output;
    int64_t max_delta;
  };

  // Records that `out` (output 0 of `n`, an Arena tensor) may overlap input 0's buffer: when the
  // op proves a distance for its kernel, input 0 is the whole of an Arena buffer of this block
  // that no later step reads and no other input of the step shares.
  void consider_overlap(const Block& b, const Node& n, const OpDef& op, const Value* out, int idx,
                        const std::map<const Value*, int>& last_read, std::vector<Overlap>& overlaps) {
    if (!options_.overlap || !op.overlap_delta || !n.has_input(0)) return;
    const Value* src = n.inputs[0];
    if (src->constant || src->outer || !T.count(src)) return;
    const TensorPlace& sp = T.at(src);
    if (sp.storage == Storage::Alias && sp.alias_offset != 0) return;
    const Value* root = root_of(src);
    const auto it = T.find(root);
    if (it == T.end() || it->second.storage != Storage::Arena || it->second.block != &b ||
        root->byte_size() != src->byte_size())
      return;
    for (std::size_t k = 1; k < n.inputs.size(); ++k)
      if (n.inputs[k] && T.count(n.inputs[k]) && root_of(n.inputs[k]) == root) return;
    for (auto& [v, tp] : T) {  // no later reader of the buffer, under any of its names
      if (v != root && !(tp.storage == Storage::Alias && tp.alias_of == root)) continue;
      auto lr = last_read.find(v);
      if (lr != last_read.end() && lr->second > idx) return;
    }
    const std::optional<int64_t> delta = op.overlap_delta(n);
    if (!delta) return;
    overlaps.push_back(Overlap{root, out, *delta});
  }

  // `tp` shares the memory of `src` (which may itself share another tensor's).
  void alias(TensorPlace& tp, const Value* src) {
    const TensorPlace& s = T.at(src);
    tp.storage = Storage::Alias;
    tp.alias_of = s.storage == Storage::Alias ? s.alias_of : src;
    tp.alias_offset = s.storage == Storage::Alias ? s.alias_offset : 0;
  }

  // `v`, computed at step idx, lives in its slab of an in-place Concat's output, whose buffer
  // is live from the first slab's step on.
  void place_slice(const Block& b, const Value* v, const ConcatSlice& slice, int idx) {
    if (!T.count(slice.concat)) {
      TensorPlace& whole = place(slice.concat, &b);
      whole.storage = Storage::Arena;
      whole.first = whole.last = idx;
      whole.cname = ids_.make("t_", slice.concat->name);
    }
    TensorPlace& tp = place(v, &b);
    tp.first = tp.last = idx;
    tp.storage = Storage::Alias;
    tp.alias_of = slice.concat;
    tp.alias_offset = slice.bytes;
    tp.concat_slab = true;
    tp.cname = ids_.make("t_", v->name);
  }

  TensorPlace& place(const Value* v, const Block* b) {
    TensorPlace& tp = T[v];
    tp.block = b;
    return tp;
  }

  void use_weight(const Value* v) {
    TensorPlace& tp = T[v];
    if (!tp.weight_cname.empty()) return;
    if (!tp.block && tp.cname.empty()) tp.storage = Storage::Constant;
    tp.weight_cname = ids_.make("w_", v->name);
    if (tp.storage == Storage::Constant) tp.cname = tp.weight_cname;
    prog_.weights.push_back(v);
  }

  // A block reads `v` at step idx: keep its memory alive until then.
  void read(Block& b, const Value* v, int idx, std::set<const Value*>& outer_reads) {
    if (v->constant) {
      use_weight(v);
      return;
    }
    if (v->outer) {
      const Value* root = outer_root(v);
      if (root->constant) {
        use_weight(root);
        T[v] = T[root];
        return;
      }
      TensorPlace& tp = T[v];
      tp.storage = Storage::Outer;
      tp.alias_of = root;
      tp.cname = T[root].storage == Storage::Constant ? T[root].weight_cname : T[root].cname;
      read_outer(b, root, idx, outer_reads);
      return;
    }
    auto it = T.find(v);
    if (it == T.end()) return;
    const Value* root = it->second.storage == Storage::Alias ? it->second.alias_of : v;
    T[root].last = std::max(T[root].last, idx);
  }

  // `root` (defined in this block or further out) is read by this block at step idx.
  void read_outer(Block& b, const Value* root, int idx, std::set<const Value*>& outer_reads) {
    auto it = T.find(root);
    if (it != T.end() && it->second.block == &b) {
      const Value* r = it->second.storage == Storage::Alias ? it->second.alias_of : root;
      T[r].last = std::max(T[r].last, idx);
    } else if (!root->constant) {
      outer_reads.insert(root);
    }
  }

  // Tensors first (with the arenas of nested blocks, which a step needs whole), then each
  // kernel's scratch into the gaps they leave at its step: scratch sized to fit those gaps
  // (fit_scratch, through PlanOptions::size_scratch) costs no arena. Kept unless packing
  // everything together does better.
  void plan_arena(Block& b, const std::vector<Overlap>& overlaps) {
    std::vector<BufferRequest> fixed;
    std::vector<const Value*> owners;
    std::map<const Value*, std::size_t> request_of;
    for (const Step& s : b.steps)
      for (const Value* v : s.node->outputs) {
        if (!v || T[v].storage != Storage::Arena || T[v].block != &b) continue;
        request_of[v] = fixed.size();
        fixed.push_back(BufferRequest{v->byte_size(), T[v].first, T[v].last});
        owners.push_back(v);
      }
    std::vector<OverlapAllowance> allowed;
    for (const Overlap& o : overlaps)
      allowed.push_back(OverlapAllowance{request_of.at(o.input), request_of.at(o.output),
                                         static_cast<std::ptrdiff_t>(o.max_delta)});
    std::vector<std::size_t> fixed_scratch;  // steps holding nested arenas, in request order
    for (std::size_t i = 0; i < b.steps.size(); ++i) {
      if (!holds_nested_arenas(b.steps[i]) || !b.steps[i].scratch_bytes) continue;
      const int s = static_cast<int>(i);
      fixed.push_back(BufferRequest{b.steps[i].scratch_bytes, s, s});
      fixed_scratch.push_back(i);
    }
    const MemoryPlan tensors_first = plan_memory(fixed, prog_.alignment, allowed);
    for (std::size_t i = 0; i < b.steps.size(); ++i)
      b.steps[i].room_bytes = largest_gap_at(fixed, tensors_first, static_cast<int>(i), prog_.alignment);
    if (options_.size_scratch) size_scratch(b);
    std::vector<BufferRequest> late;
    std::vector<std::size_t> late_scratch;  // steps, in request order
    for (std::size_t i = 0; i < b.steps.size(); ++i) {
      if (holds_nested_arenas(b.steps[i]) || !b.steps[i].scratch_bytes) continue;
      const int s = static_cast<int>(i);
      late.push_back(BufferRequest{b.steps[i].scratch_bytes, s, s});
      late_scratch.push_back(i);
    }
    std::vector<BufferRequest> requests = fixed;
    requests.insert(requests.end(), late.begin(), late.end());
    MemoryPlan fitted = place_into_gaps(fixed, tensors_first, late, prog_.alignment, allowed);
    fitted.strategy = tensors_first.strategy + ", scratch in the gaps";
    MemoryPlan together = plan_memory(requests, prog_.alignment, allowed);
    b.plan = together.arena_bytes < fitted.arena_bytes ? std::move(together) : std::move(fitted);
    if (!allowed.empty() && !options_.size_scratch) {
      // Greedy packing is not monotone in what it may overlap: keep the plan without overlaps
      // unless they make the arena smaller (the same plan, so the same code, where they do not).
      const MemoryPlan apart_first = plan_memory(fixed, prog_.alignment);
      MemoryPlan apart = place_into_gaps(fixed, apart_first, late, prog_.alignment);
      apart.strategy = apart_first.strategy + ", scratch in the gaps";
      MemoryPlan apart_together = plan_memory(requests, prog_.alignment);
      if (apart_together.arena_bytes < apart.arena_bytes) apart = std::move(apart_together);
      if (apart.arena_bytes <= b.plan.arena_bytes) {
        b.plan = std::move(apart);
        allowed.clear();
        for (std::size_t i = 0; i < b.steps.size(); ++i)
          b.steps[i].room_bytes = largest_gap_at(fixed, apart_first, static_cast<int>(i), prog_.alignment);
      }
    }
    // One step past the last: where a block's results are read by its parent.
    b.live_bytes = live_bytes_per_step(requests, prog_.alignment, static_cast<int>(b.steps.size()) + 1);
    b.peak_live_bytes = *std::max_element(b.live_bytes.begin(), b.live_bytes.end());
    b.arena_bytes = b.plan.arena_bytes;
    for (std::size_t i = 0; i < owners.size(); ++i) T[owners[i]].offset = b.plan.offsets[i];
    for (const OverlapAllowance& a : allowed) {  // for --report: the bytes the two share
      const std::size_t in_lo = b.plan.offsets[a.input], out_lo = b.plan.offsets[a.output];
      const std::size_t in_hi = in_lo + align_up(fixed[a.input].size, prog_.alignment);
      const std::size_t out_hi = out_lo + align_up(fixed[a.output].size, prog_.alignment);
      const std::size_t lo = std::max(in_lo, out_lo), hi = std::min(in_hi, out_hi);
      if (hi > lo) T[owners[a.output]].overlap_bytes = hi - lo;
    }
    std::vector<std::size_t> scratch_steps = fixed_scratch;
    scratch_steps.insert(scratch_steps.end(), late_scratch.begin(), late_scratch.end());
    for (std::size_t i = 0; i < scratch_steps.size(); ++i)
      b.steps[scratch_steps[i]].scratch_offset = b.plan.offsets[owners.size() + i];
  }

  // A step whose scratch holds nested blocks' arenas (placed with the tensors, not in their gaps).
  static bool holds_nested_arenas(const Step& s) { return s.scratch_bytes != s.op_scratch_bytes; }

  // Lets PlanOptions::size_scratch size each kernel step's scratch to its room, then reads it.
  void size_scratch(Block& b) {
    for (Step& step : b.steps) {
      if (holds_nested_arenas(step)) continue;
      options_.size_scratch(*step.node, step.room_bytes);
      if (step.op->scratch_bytes) step.op_scratch_bytes = step.scratch_bytes = step.op->scratch_bytes(*step.node);
    }
  }

  Program& prog_;
  std::map<const Value*, TensorPlace>& T;
  IdentifierPool ids_;
  const PlanOptions options_;
};

}  // namespace

Program plan_program(const Graph& g, std::size_t alignment, const PlanOptions& options) {
  Program prog;
  prog.alignment = alignment;
  Planner planner(prog, options);
  planner.plan_block(g, prog.main, true, "");
  prog.arena_bytes = prog.main.arena_bytes;
  prog.peak_live_bytes = prog.main.peak_live_bytes;
  for (const Value* w : prog.weights) prog.weights_bytes += w->byte_size();
  return prog;
}

}  // namespace onnxc
