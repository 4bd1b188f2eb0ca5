#include "ops/inline_graph.h"

#include <stdexcept>

#include <fmt/format.h>

namespace onnxc {
namespace {

using ValueMap = std::map<const Value*, Value*>;

// The value `v` of a graph being copied stands for in the copy: its mapped copy, or (values of
// graphs that are not copied) itself.
Value* mapped(const ValueMap& map, Value* v) {
  if (!v) return nullptr;
  auto it = map.find(v);
  return it == map.end() ? v : it->second;
}

std::shared_ptr<Graph> copy_subgraph(const Graph& src, Graph& owner, const ValueMap& outer_map);

// Replaces the subgraph attributes of `copy` (a node of `owner`) by copies reading through `map`.
void copy_subgraph_attrs(Node& copy, Graph& owner, const ValueMap& map) {
  for (auto& [name, a] : copy.attrs) {
    if (a.g) a.g = copy_subgraph(*a.g, owner, map);
    for (auto& sg : a.graphs) sg = copy_subgraph(*sg, owner, map);
  }
}

// A subgraph copied whole (values keep their names: they are scoped by the copy). `outer_map`
// maps the values of the graphs being copied around it, which its reads from outer scopes follow.
std::shared_ptr<Graph> copy_subgraph(const Graph& src, Graph& owner, const ValueMap& outer_map) {
  auto g = std::make_shared<Graph>();
  g->name = src.name;
  g->outer = &owner;
  ValueMap map = outer_map;
  for (const auto& v : src.values) {
    Value* c = g->add_value(v->name);
    *c = *v;
    c->producer = nullptr;
    c->outer = mapped(outer_map, v->outer);
    map[v.get()] = c;
  }
  for (const auto& n : src.nodes) {
    auto copy = std::make_unique<Node>(*n);
    for (Value*& in : copy->inputs) in = mapped(map, in);
    for (Value*& out : copy->outputs) out = mapped(map, out);
    copy_subgraph_attrs(*copy, *g, map);
    g->add_node(std::move(copy));
  }
  for (Value* v : src.inputs) g->inputs.push_back(mapped(map, v));
  for (Value* v : src.outputs) g->outputs.push_back(mapped(map, v));
  g->relink();
  return g;
}

// Whether `v` is a value of `g` itself (not of a graph around it).
bool owned_by(const Graph& g, const Value* v) { return g.find(v->name) == v; }

}  // namespace

std::vector<Value*> inline_graph(Lowering& l, const Graph& body, const std::vector<Value*>& inputs,
                                 const std::string& suffix) {
  Graph& g = l.graph();
  ValueMap map;
  for (std::size_t i = 0; i < body.inputs.size() && i < inputs.size(); ++i) map[body.inputs[i]] = inputs[i];
  for (const auto& v : body.values) {
    if (map.count(v.get())) continue;
    if (v->outer && owned_by(g, v->outer)) {  // a value of the graph the body is inlined into
      map[v.get()] = v->outer;
      continue;
    }
    Value* c = g.add_unique_value(v->name + suffix);
    const std::string name = c->name;
    *c = *v;  // type and shape as declared (or, for initializers, the constant)
    c->name = name;
    c->producer = nullptr;
    c->is_graph_input = c->is_graph_output = false;
    map[v.get()] = c;  // v->outer, if set, is further out: c reads it the same way
  }
  for (const auto& bn : body.nodes) {
    std::vector<Value*> ins, outs;
    for (Value* v : bn->inputs) ins.push_back(mapped(map, v));
    for (Value* v : bn->outputs) outs.push_back(mapped(map, v));
    copy_subgraph_attrs(l.add_copy(*bn, suffix, std::move(ins), std::move(outs)), g, map);
  }
  std::vector<Value*> outputs;
  for (Value* v : body.outputs) outputs.push_back(mapped(map, v));
  return outputs;
}

std::shared_ptr<Graph> copy_graph(const Graph& src) {
  if (!src.outer) throw std::logic_error("copy_graph: '" + src.name + "' is not a subgraph");
  return copy_subgraph(src, *src.outer, {});
}

}  // namespace onnxc
