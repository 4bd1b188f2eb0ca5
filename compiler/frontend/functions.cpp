#include "frontend/functions.h"

#include <algorithm>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "onnx.pb.h"

namespace onnxc {
namespace {

std::string canonical_domain(const std::string& d) { return d == "ai.onnx" ? "" : d; }

struct FunctionKey {
  std::string domain, name, overload;
  bool operator<(const FunctionKey& o) const {
    return std::tie(domain, name, overload) < std::tie(o.domain, o.name, o.overload);
  }
};

// Domains whose operators onnxc knows itself: a call there that names no local function is an
// operator call.
bool is_operator_domain(const std::string& d) {
  return d.empty() || d == "ai.onnx.ml" || d == "ai.onnx.preview.training" || d == "com.microsoft" || d == "onnxc";
}

std::string describe(const FunctionKey& k) {
  std::string s = k.domain.empty() ? k.name : fmt::format("{}.{}", k.domain, k.name);
  return k.overload.empty() ? s : fmt::format("{} (overload '{}')", s, k.overload);
}

std::string describe_node(const onnx::NodeProto& n) {
  return fmt::format("node '{}' ({})", n.name(), n.op_type());
}

// One call being expanded: what the body's names and attribute references become.
struct Call {
  const onnx::FunctionProto* function = nullptr;
  std::string label;   // the function, for messages
  std::string prefix;  // "<caller's node name>/"
  std::string where;   // the calling node, for messages
  std::map<std::string, std::string> names;             // body name -> graph name
  std::map<std::string, const onnx::AttributeProto*> values;  // attribute -> the call's or default value
  std::set<std::string> declared;                       // every attribute the function declares
};

class Expander {
 public:
  Expander(onnx::ModelProto& model, const OpsetMap& model_opsets, Diagnostics& diag, FunctionExpansion& out)
      : model_(model), model_opsets_(model_opsets), diag_(diag), out_(out) {}

  void run() {
    for (const auto& f : model_.functions()) {
      FunctionKey key{canonical_domain(f.domain()), f.name(), f.overload()};
      if (f.name().empty()) {
        diag_.invalid("model", "a function has no name", "name every FunctionProto in ModelProto.functions");
        continue;
      }
      domains_[key.domain].insert(key.overload.empty() ? key.name : fmt::format("{} (overload '{}')", key.name, key.overload));
      if (!functions_.emplace(key, &f).second)
        diag_.invalid(fmt::format("function {}", describe(key)), "is defined twice",
                      "a function's (domain, name, overload) must be unique in the model");
    }
    if (functions_.empty()) return;
    collect_names(model_.graph());
    expand_graph(*model_.mutable_graph(), nullptr);
  }

 private:
  const onnx::FunctionProto* find(const onnx::NodeProto& n) const {
    auto it = functions_.find(FunctionKey{canonical_domain(n.domain()), n.op_type(), n.overload()});
    return it == functions_.end() ? nullptr : it->second;
  }

  // Every value and node name of the graph and its subgraphs, so the expanded bodies' names
  // can be kept apart from them.
  void collect_names(const onnx::GraphProto& g) {
    for (const auto& v : g.input()) used_.insert(v.name());
    for (const auto& v : g.output()) used_.insert(v.name());
    for (const auto& v : g.value_info()) used_.insert(v.name());
    for (const auto& t : g.initializer()) used_.insert(t.name());
    for (const auto& t : g.sparse_initializer()) used_.insert(t.values().name());
    for (const auto& n : g.node()) {
      used_.insert(n.name());
      for (const auto& o : n.output()) used_.insert(o);
      for (const auto& a : n.attribute()) {
        if (a.has_g()) collect_names(a.g());
        for (const auto& sg : a.graphs()) collect_names(sg);
      }
    }
  }

  // `base`, or base_2, base_3 ... if a name is taken.
  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int k = 2; used_.count(name); ++k) name = fmt::format("{}_{}", base, k);
    used_.insert(name);
    return name;
  }

  const OpsetMap* opsets_of(const onnx::FunctionProto& f) {
    auto it = function_opsets_.find(&f);
    if (it != function_opsets_.end()) return it->second;
    auto map = std::make_unique<OpsetMap>(model_opsets_);
    for (const auto& os : f.opset_import()) (*map)[canonical_domain(os.domain())] = static_cast<int>(os.version());
    const OpsetMap* p = map.get();
    out_.opset_maps.push_back(std::move(map));
    function_opsets_[&f] = p;
    return p;
  }

  void expand_graph(onnx::GraphProto& g, const OpsetMap* opsets) {
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    nodes.Swap(g.mutable_node());
    for (auto& n : nodes) emit(n, opsets, g);
  }

  // Appends `n` to `g`: a call expanded into its function's body, anything else as it is with
  // the calls in its subgraphs expanded. `opsets`: those of the function `n` came from, if any.
  void emit(onnx::NodeProto& n, const OpsetMap* opsets, onnx::GraphProto& g) {
    if (const onnx::FunctionProto* f = find(n)) {
      inline_call(n, *f, g);
      return;
    }
    std::string domain = canonical_domain(n.domain());
    if (auto d = domains_.find(domain); d != domains_.end() && !is_operator_domain(domain)) {
      std::string defined;
      for (const auto& name : d->second) defined += (defined.empty() ? "" : ", ") + name;
      diag_.invalid(describe_node(n),
                    fmt::format("calls '{}'{} of domain '{}', but the model defines no function '{}' there ({})",
                                n.op_type(), n.overload().empty() ? "" : fmt::format(" (overload '{}')", n.overload()),
                                domain, n.op_type(), defined),
                    "add the function to ModelProto.functions or fix the node's op_type, domain or overload");
      return;
    }
    onnx::NodeProto* added = g.add_node();
    added->Swap(&n);
    for (auto& a : *added->mutable_attribute()) {
      if (a.has_g()) expand_graph(*a.mutable_g(), opsets);
      for (auto& sg : *a.mutable_graphs()) expand_graph(sg, opsets);
    }
    if (opsets) out_.node_opsets[added] = opsets;
  }

  std::string rename(Call& c, const std::string& name) {
    if (name.empty()) return name;
    auto it = c.names.find(name);
    if (it != c.names.end()) return it->second;
    return c.names[name] = fresh(c.prefix + name);
  }

  bool bind(Call& c, const onnx::NodeProto& call) {
    const onnx::FunctionProto& f = *c.function;
    if (call.input_size() > f.input_size() || call.output_size() > f.output_size()) {
      diag_.invalid(c.where,
                    fmt::format("has {} inputs and {} outputs; function {} takes {} and gives {}", call.input_size(),
                                call.output_size(), c.label, f.input_size(), f.output_size()),
                    "pass at most as many inputs and outputs as the function declares");
      return false;
    }
    for (int i = 0; i < f.input_size(); ++i) c.names[f.input(i)] = i < call.input_size() ? call.input(i) : "";
    for (const auto& a : f.attribute()) c.declared.insert(a);
    for (const auto& a : f.attribute_proto()) {
      c.declared.insert(a.name());
      c.values[a.name()] = &a;
    }
    bool ok = true;
    for (const auto& a : call.attribute()) {
      if (!c.declared.count(a.name())) {
        diag_.invalid(c.where, fmt::format("sets attribute '{}', which function {} does not declare", a.name(), c.label),
                      "remove the attribute, or declare it in the function's attribute list");
        ok = false;
      }
      c.values[a.name()] = &a;
    }
    return ok;
  }

  // Replaces the node's references to the function's attributes by their values; renames the
  // names of its subgraphs.
  void resolve_attributes(Call& c, onnx::NodeProto& n) {
    google::protobuf::RepeatedPtrField<onnx::AttributeProto> kept;
    for (auto& a : *n.mutable_attribute()) {
      if (a.ref_attr_name().empty()) {
        if (a.has_g()) rename_graph(c, *a.mutable_g());
        for (auto& sg : *a.mutable_graphs()) rename_graph(c, sg);
        kept.Add()->Swap(&a);
        continue;
      }
      std::string where = fmt::format("{} in function {} called by {}", describe_node(n), c.label, c.where);
      auto it = c.values.find(a.ref_attr_name());
      if (it == c.values.end()) {
        if (!c.declared.count(a.ref_attr_name()))
          diag_.invalid(where,
                        fmt::format("attribute '{}' refers to '{}', which the function does not declare", a.name(),
                                    a.ref_attr_name()),
                        "declare the attribute in the function or give the body node a value");
        // Declared, with no default, and not set by the call: the body's attribute is unset,
        // so the operator's own default (or its "required" check) applies.
        continue;
      }
      onnx::AttributeProto value = *it->second;
      if (a.has_type() && value.has_type() && a.type() != value.type()) {
        diag_.invalid(where,
                      fmt::format("attribute '{}' is declared {} but the call gives '{}' as {}", a.name(),
                                  onnx::AttributeProto::AttributeType_Name(a.type()), a.ref_attr_name(),
                                  onnx::AttributeProto::AttributeType_Name(value.type())),
                      "give the function attribute a value of the type the body expects");
        continue;
      }
      value.set_name(a.name());
      value.clear_ref_attr_name();
      *kept.Add() = std::move(value);
    }
    n.mutable_attribute()->Swap(&kept);
  }

  void rename_node(Call& c, onnx::NodeProto& n) {
    for (auto& in : *n.mutable_input()) in = rename(c, in);
    for (auto& out : *n.mutable_output()) out = rename(c, out);
    resolve_attributes(c, n);
  }

  // A subgraph of a body node: every name in it is the body's (a function reads nothing of its
  // caller but its inputs), so all are renamed, its own included.
  void rename_graph(Call& c, onnx::GraphProto& g) {
    for (auto& v : *g.mutable_input()) v.set_name(rename(c, v.name()));
    for (auto& v : *g.mutable_output()) v.set_name(rename(c, v.name()));
    for (auto& v : *g.mutable_value_info()) v.set_name(rename(c, v.name()));
    for (auto& t : *g.mutable_initializer()) t.set_name(rename(c, t.name()));
    for (auto& t : *g.mutable_sparse_initializer()) {
      t.mutable_values()->set_name(rename(c, t.values().name()));
      if (!t.indices().name().empty()) t.mutable_indices()->set_name(rename(c, t.indices().name()));
    }
    for (auto& n : *g.mutable_node()) {
      if (!n.name().empty()) n.set_name(fresh(c.prefix + n.name()));
      rename_node(c, n);
    }
  }

  void inline_call(const onnx::NodeProto& call, const onnx::FunctionProto& f, onnx::GraphProto& g) {
    Call c;
    c.function = &f;
    c.label = describe(FunctionKey{canonical_domain(f.domain()), f.name(), f.overload()});
    std::string caller = call.name().empty() ? fresh(fmt::format("{}_call", call.op_type())) : call.name();
    c.where = fmt::format("node '{}' ({})", caller, call.op_type());
    if (std::find(stack_.begin(), stack_.end(), &f) != stack_.end()) {
      std::string chain;
      for (const onnx::FunctionProto* s : stack_) chain += s->name() + " -> ";
      diag_.invalid(c.where, fmt::format("calls function {} recursively ({}{})", c.label, chain, f.name()),
                    "functions must not call themselves, directly or through others");
      return;
    }
    if (!bind(c, call)) return;
    c.prefix = caller + "/";
    std::set<std::string> formal_inputs(f.input().begin(), f.input().end());
    std::vector<std::pair<std::string, std::string>> passed_through;  // formal output = formal input
    for (int j = 0; j < f.output_size(); ++j) {
      const std::string& formal = f.output(j);
      std::string actual = j < call.output_size() ? call.output(j) : "";
      if (formal_inputs.count(formal)) {
        if (!actual.empty()) passed_through.emplace_back(c.names[formal], actual);
        continue;
      }
      // An output the caller does not use gets a name of its own; its producer is dead code.
      c.names[formal] = actual.empty() ? fresh(c.prefix + formal) : actual;
    }
    ++out_.calls;
    stack_.push_back(&f);
    const OpsetMap* opsets = opsets_of(f);
    std::set<std::string> produced;
    for (int k = 0; k < f.node_size(); ++k) {
      onnx::NodeProto n = f.node(k);
      n.set_name(fresh(c.prefix + (n.name().empty() ? fmt::format("{}_{}", n.op_type(), k) : n.name())));
      for (const auto& o : f.node(k).output()) produced.insert(o);
      rename_node(c, n);
      emit(n, opsets, g);
    }
    stack_.pop_back();
    for (const auto& formal : f.output())
      if (!formal_inputs.count(formal) && !produced.count(formal))
        diag_.invalid(c.where, fmt::format("function {}'s output '{}' is computed by no node of its body", c.label, formal),
                      "the function must compute each of its outputs");
    for (const auto& [from, to] : passed_through) {
      onnx::NodeProto* id = g.add_node();
      id->set_op_type("Identity");
      id->set_name(fresh(c.prefix + "Identity_" + to));
      id->add_input(from);
      id->add_output(to);
    }
  }

  onnx::ModelProto& model_;
  const OpsetMap& model_opsets_;
  Diagnostics& diag_;
  FunctionExpansion& out_;
  std::map<FunctionKey, const onnx::FunctionProto*> functions_;
  std::map<std::string, std::set<std::string>> domains_;  // domain -> the functions defined in it
  std::map<const onnx::FunctionProto*, const OpsetMap*> function_opsets_;
  std::vector<const onnx::FunctionProto*> stack_;
  std::set<std::string> used_;
};

}  // namespace

void expand_functions(onnx::ModelProto& model, const OpsetMap& model_opsets, Diagnostics& diag,
                      FunctionExpansion& out) {
  Expander(model, model_opsets, diag, out).run();
}

}  // namespace onnxc
