#include "ir/print.h"

#include <fmt/format.h>

namespace onnxc {
namespace {

// "x: float [1, 3, 224, 224]", "w: const float [16, 3, 3, 3]", "-" for an omitted optional.
std::string value_text(const Value* v) {
  if (!v) return "-";
  std::string kind = v->is_sequence ? "sequence of " : v->is_optional ? "optional " : "";
  if (v->is_constant()) kind = "const " + kind;
  std::string shape = v->has_shape ? " " + shape_str(v->shape) : " [?]";
  if (v->is_bounded()) shape += fmt::format(" (axis {} bounded)", v->dynamic_axis);
  return fmt::format("{}: {}{}{}", v->name.empty() ? "<unnamed>" : v->name, kind, dtype_name(v->dtype), shape);
}

std::string tensor_text(const Tensor& t) { return fmt::format("tensor {} {}", dtype_name(t.dtype), shape_str(t.shape)); }

void append_graph(std::string& out, const Graph& g, const std::string& indent);

// One attribute's value on one line; graphs go under the node (append_graph).
std::string attribute_text(const Attribute& a) {
  switch (a.kind) {
    case Attribute::Kind::Float: return fmt::format("{}", a.f);
    case Attribute::Kind::Int: return fmt::format("{}", a.i);
    case Attribute::Kind::String: return fmt::format("\"{}\"", a.s);
    case Attribute::Kind::Tensor: return a.t ? tensor_text(*a.t) : "tensor";
    case Attribute::Kind::Graph: return "graph (below)";
    case Attribute::Kind::Floats: return fmt::format("[{}]", fmt::join(a.floats, ", "));
    case Attribute::Kind::Ints: return fmt::format("[{}]", fmt::join(a.ints, ", "));
    case Attribute::Kind::Strings: {
      std::string s;
      for (const std::string& x : a.strings) s += (s.empty() ? "\"" : ", \"") + x + "\"";
      return "[" + s + "]";
    }
    case Attribute::Kind::Tensors: return fmt::format("{} tensors", a.tensors.size());
    case Attribute::Kind::Graphs: return fmt::format("{} graphs (below)", a.graphs.size());
    default: return attribute_kind_name(a.kind);
  }
}

void append_graph(std::string& out, const Graph& g, const std::string& indent) {
  out += fmt::format("{}graph '{}': {} inputs, {} outputs, {} nodes\n", indent, g.name, g.inputs.size(),
                     g.outputs.size(), g.nodes.size());
  for (const Value* v : g.inputs) out += fmt::format("{}  input  {}\n", indent, value_text(v));
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = *g.nodes[i];
    std::vector<std::string> ins, outs;
    for (const Value* v : n.inputs) ins.push_back(value_text(v));
    for (const Value* v : n.outputs) outs.push_back(value_text(v));
    out += fmt::format("{}  [{}] {}{} '{}' ({}) -> ({})\n", indent, i, n.domain.empty() ? "" : n.domain + ".",
                       n.op_type, n.name, fmt::join(ins, ", "), fmt::join(outs, ", "));
    for (const auto& [name, a] : n.attrs) {
      out += fmt::format("{}      {} = {}\n", indent, name, attribute_text(a));
      if (a.kind == Attribute::Kind::Graph && a.g) append_graph(out, *a.g, indent + "        ");
      if (a.kind == Attribute::Kind::Graphs)
        for (const auto& sub : a.graphs)
          if (sub) append_graph(out, *sub, indent + "        ");
    }
  }
  for (const Value* v : g.outputs) out += fmt::format("{}  output {}\n", indent, value_text(v));
}

}  // namespace

std::string graph_text(const Graph& g) {
  std::string out;
  append_graph(out, g, "");
  return out;
}

}  // namespace onnxc
