// Checks every node against its operator's signature (ops/onnx_schemas.h): input and output
// counts, required inputs not left empty, required attributes present, no undeclared
// attributes, attribute types as declared. Runs on subgraphs too, and reports every problem of
// the model at once.
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "ops/onnx_schemas.h"
#include "ops/onnx_versions.h"
#include "passes/passes.h"
#include "support/diagnostics.h"

namespace onnxc {
namespace {

const char* attr_type_name(AttrType t) {
  switch (t) {
    case AttrType::Float: return "float";
    case AttrType::Int: return "int";
    case AttrType::String: return "string";
    case AttrType::Tensor: return "tensor";
    case AttrType::Graph: return "graph";
    case AttrType::Floats: return "floats";
    case AttrType::Ints: return "ints";
    case AttrType::Strings: return "strings";
    case AttrType::Tensors: return "tensors";
    case AttrType::Graphs: return "graphs";
    case AttrType::SparseTensor: return "sparse_tensor";
    case AttrType::SparseTensors: return "sparse_tensors";
    case AttrType::TypeProto: return "type_proto";
    case AttrType::TypeProtos: return "type_protos";
  }
  return "?";
}

// The loader keeps TYPE_PROTO and TYPE_PROTOS as one kind; every other kind is one type.
bool kind_matches(Attribute::Kind kind, AttrType type) {
  switch (kind) {
    case Attribute::Kind::Float: return type == AttrType::Float;
    case Attribute::Kind::Int: return type == AttrType::Int;
    case Attribute::Kind::String: return type == AttrType::String;
    case Attribute::Kind::Tensor: return type == AttrType::Tensor;
    case Attribute::Kind::Graph: return type == AttrType::Graph;
    case Attribute::Kind::Floats: return type == AttrType::Floats;
    case Attribute::Kind::Ints: return type == AttrType::Ints;
    case Attribute::Kind::Strings: return type == AttrType::Strings;
    case Attribute::Kind::Tensors: return type == AttrType::Tensors;
    case Attribute::Kind::Graphs: return type == AttrType::Graphs;
    case Attribute::Kind::TypeProto: return type == AttrType::TypeProto || type == AttrType::TypeProtos;
    case Attribute::Kind::Undefined: return false;
  }
  return false;
}

std::string op_label(const OpSchema& s) {
  return fmt::format("{}{}-{}", *s.domain ? std::string(s.domain) + "." : "", s.op_type, s.since_version);
}

// "2", "1 to 3", "1 or more"
std::string arity_range(int lo, int hi) {
  if (hi == kUnbounded) return fmt::format("{} or more", lo);
  if (lo == hi) return fmt::format("{}", lo);
  return fmt::format("{} to {}", lo, hi);
}

// "X, W, B (optional)"
std::string param_list(const std::vector<FormalParam>& params) {
  std::vector<std::string> names;
  for (const FormalParam& p : params)
    names.push_back(p.name + std::string(p.option == ParamOption::Optional   ? " (optional)"
                                         : p.option == ParamOption::Variadic ? "..."
                                                                             : ""));
  return names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "));
}

std::string attribute_list(const OpSchema& s) {
  std::vector<std::string> names;
  for (const AttrSchema& a : s.attributes) names.push_back(a.name);
  return names.empty() ? "it has none" : fmt::format("its attributes are {}", fmt::join(names, ", "));
}

const AttrSchema* find_attribute(const OpSchema& s, const std::string& name) {
  for (const AttrSchema& a : s.attributes)
    if (name == a.name) return &a;
  return nullptr;
}

class NodeValidator {
 public:
  explicit NodeValidator(Diagnostics& diag) : diag_(diag) {}

  void graph(const Graph& g) {
    for (const auto& n : g.nodes) {
      node(*n);
      for (const Graph* sub : n->subgraphs()) graph(*sub);
    }
  }

 private:
  void node(const Node& n) {
    // Nodes whose operator or opset is unknown are left to resolve_operators, which names them.
    int max_opset = max_known_opset(n.domain);
    if (max_opset == 0 || n.opset > max_opset) return;
    int version = resolve_op_version(n.domain, n.op_type, n.opset);
    const OpSchema* s = version > 0 ? find_op_schema(n.domain, n.op_type, version) : nullptr;
    if (!s) return;
    if (s->exact) {
      arity(n, *s, n.inputs, s->inputs, s->min_inputs, s->max_inputs, "input");
      arity(n, *s, n.outputs, s->outputs, s->min_outputs, s->max_outputs, "output");
      required_attributes(n, *s);
    }
    attribute_types(n, *s);
  }

  void arity(const Node& n, const OpSchema& s, const std::vector<Value*>& given,
             const std::vector<FormalParam>& params, int lo, int hi, const char* what) {
    int count = static_cast<int>(given.size());
    if (count < lo || count > hi) {
      diag_.invalid(n.describe(),
                    fmt::format("has {} {}{}; {} takes {} ({})", count, what, count == 1 ? "" : "s", op_label(s),
                                arity_range(lo, hi), param_list(params)),
                    fmt::format("give the node {} {}s (an empty name skips an optional one)", arity_range(lo, hi),
                                what));
      return;
    }
    for (std::size_t i = 0; i < given.size() && i < params.size(); ++i)
      if (!given[i] && params[i].option == ParamOption::Single)
        diag_.invalid(n.describe(),
                      fmt::format("{} {} ({}) of {} is required but its name is empty", what, i, params[i].name,
                                  op_label(s)),
                      fmt::format("name the value that feeds {} {}", what, i));
  }

  void required_attributes(const Node& n, const OpSchema& s) {
    for (const AttrSchema& a : s.attributes)
      if (a.required && !n.has_attr(a.name))
        diag_.invalid(n.describe(), fmt::format("lacks attribute '{}' ({}), which {} requires", a.name,
                                                attr_type_name(a.type), op_label(s)),
                      fmt::format("add the attribute '{}'", a.name));
  }

  void attribute_types(const Node& n, const OpSchema& s) {
    for (const auto& [name, a] : n.attrs) {
      const AttrSchema* expected = find_attribute(s, name);
      if (!expected) {
        bool tolerated = s.allows_unknown_attributes || !s.exact || name.rfind("__", 0) == 0;
        if (!tolerated)
          diag_.invalid(n.describe(), fmt::format("has attribute '{}', which {} does not declare", name, op_label(s)),
                        fmt::format("remove it or check its spelling ({})", attribute_list(s)));
        continue;
      }
      if (!kind_matches(a.kind, expected->type))
        diag_.invalid(n.describe(),
                      fmt::format("attribute '{}' is of type {}; {} declares it {}", name, attribute_kind_name(a.kind),
                                  op_label(s), attr_type_name(expected->type)),
                      fmt::format("store '{}' with type {}", name, attr_type_name(expected->type)));
    }
  }

  Diagnostics& diag_;
};

}  // namespace

void validate_nodes(const Model& m) {
  Diagnostics diag;
  NodeValidator(diag).graph(m.graph);
  diag.throw_if_any();
}

}  // namespace onnxc
