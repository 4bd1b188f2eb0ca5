#include "passes/execution_order.h"

#include <map>
#include <set>

#include "ops/op.h"

namespace onnxc {
namespace {

// What the schedules need of the graph: each node's distinct reads, and each value's arena
// bytes and readers.
class Dataflow {
 public:
  Dataflow(const Graph& g, std::size_t alignment) {
    for (std::size_t i = 0; i < g.nodes.size(); ++i) index_[g.nodes[i].get()] = i;
    for (auto& np : g.nodes) {
      const Node& n = *np;
      std::set<const Value*> reads;
      for (const Value* v : n.inputs)
        if (v) reads.insert(v);
      for (const Value* v : n.implicit_inputs(g)) reads.insert(v);
      for (const Value* v : reads) ++readers_[v];
      reads_[&n] = std::vector<const Value*>(reads.begin(), reads.end());
      const OpDef* op = find_op(n.domain, n.op_type);
      for (std::size_t k = 0; k < n.outputs.size(); ++k) {
        const Value* v = n.outputs[k];
        if (!v || v->is_graph_output || v->constant || (op && op->is_view && k == 0)) continue;
        const std::size_t a = alignment ? alignment : 1;
        bytes_[v] = (v->byte_size() + a - 1) / a * a;
      }
    }
  }

  const std::vector<const Value*>& reads(const Node* n) const { return reads_.at(n); }
  std::size_t bytes(const Value* v) const {
    auto it = bytes_.find(v);
    return it == bytes_.end() ? 0 : it->second;
  }
  std::size_t output_bytes(const Node* n) const {
    std::size_t sum = 0;
    for (const Value* v : n->outputs)
      if (v) sum += bytes(v);
    return sum;
  }
  // The node of the graph that computes v, or nullptr (inputs, constants, outer values).
  const Node* producer(const Value* v) const {
    return v->producer && index_.count(v->producer) ? v->producer : nullptr;
  }
  std::size_t index(const Node* n) const { return index_.at(n); }
  std::map<const Value*, int> readers() const { return readers_; }

 private:
  std::map<const Node*, std::size_t> index_;
  std::map<const Node*, std::vector<const Value*>> reads_;
  std::map<const Value*, int> readers_;
  std::map<const Value*, std::size_t> bytes_;
};

// Live bytes as nodes run one after another: outputs are allocated when their node runs and
// freed after their last reader.
class LiveSet {
 public:
  explicit LiveSet(const Dataflow& df) : df_(df), unread_(df.readers()) {}

  // Bytes run(n) would free (inputs it reads last), without running it.
  std::size_t freed_by(const Node* n) const {
    std::size_t sum = 0;
    for (const Value* v : df_.reads(n))
      if (unread_.at(v) == 1) sum += df_.bytes(v);
    return sum;
  }
  void run(const Node* n) {
    const std::size_t out = df_.output_bytes(n);
    peak_ = std::max(peak_, live_ + out);
    live_ += out;
    for (const Value* v : df_.reads(n))
      if (--unread_[v] == 0) live_ -= df_.bytes(v);
    for (const Value* v : n->outputs)
      if (v && !unread_.count(v)) live_ -= df_.bytes(v);  // nobody reads it
  }
  std::size_t peak() const { return peak_; }

 private:
  const Dataflow& df_;
  std::map<const Value*, int> unread_;  // readers still to run
  std::size_t live_ = 0, peak_ = 0;
};

std::size_t peak_of(const Dataflow& df, const std::vector<const Node*>& order) {
  LiveSet live(df);
  for (const Node* n : order) live.run(n);
  return live.peak();
}

std::vector<const Node*> greedy_order(const Graph& g, const Dataflow& df) {
  std::map<const Node*, int> waiting;  // producers not yet run
  std::map<const Node*, std::vector<const Node*>> successors;
  for (auto& np : g.nodes) {
    std::set<const Node*> producers;
    for (const Value* v : df.reads(np.get()))
      if (const Node* p = df.producer(v)) producers.insert(p);
    waiting[np.get()] = static_cast<int>(producers.size());
    for (const Node* p : producers) successors[p].push_back(np.get());
  }
  auto by_file_order = [&df](const Node* a, const Node* b) { return df.index(a) < df.index(b); };
  std::set<const Node*, decltype(by_file_order)> ready(by_file_order);
  for (auto& [n, count] : waiting)
    if (count == 0) ready.insert(n);
  LiveSet live(df);
  std::vector<const Node*> order;
  while (!ready.empty()) {
    // The ready node adding the least memory (outputs minus the inputs it frees); the
    // earliest in the file among equals.
    const Node* best = nullptr;
    long long best_delta = 0;
    for (const Node* n : ready) {
      const long long delta =
          static_cast<long long>(df.output_bytes(n)) - static_cast<long long>(live.freed_by(n));
      if (!best || delta < best_delta) {
        best = n;
        best_delta = delta;
      }
    }
    ready.erase(best);
    live.run(best);
    order.push_back(best);
    for (const Node* s : successors[best])
      if (--waiting[s] == 0) ready.insert(s);
  }
  return order;
}

}  // namespace

std::size_t order_peak_bytes(const Graph& g, const std::vector<const Node*>& order, std::size_t alignment) {
  return peak_of(Dataflow(g, alignment), order);
}

std::vector<const Node*> execution_order(const Graph& g, bool search, std::size_t alignment) {
  std::vector<const Node*> file;
  for (auto& n : g.nodes) file.push_back(n.get());
  if (!search || file.size() < 3) return file;
  const Dataflow df(g, alignment);
  std::vector<const Node*> greedy = greedy_order(g, df);
  if (greedy.size() != file.size()) return file;  // not a DAG over its own nodes: keep it as it is
  return peak_of(df, greedy) < peak_of(df, file) ? greedy : file;
}

}  // namespace onnxc
