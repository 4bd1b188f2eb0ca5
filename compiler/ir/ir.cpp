#include "ir/ir.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "onnxc/base.h"

namespace onnxc {

int64_t shape_numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::string shape_str(const Shape& s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

std::string shape_cname(const Shape& s) {
  if (s.empty()) return "scalar";
  return fmt::format("{}", fmt::join(s, "x"));
}

Tensor::Tensor(DType t, Shape s) : dtype(t), shape(std::move(s)) {
  if (t == DType::String) {
    strings.resize(static_cast<std::size_t>(numel()));
  } else {
    bytes.assign(static_cast<std::size_t>(numel()) * dtype_size(t), 0);
  }
}

int64_t Tensor::int_at(int64_t i) const {
  switch (dtype) {
    case DType::Uint8: return data<uint8_t>()[i];
    case DType::Int8: return data<int8_t>()[i];
    case DType::Uint16: return data<uint16_t>()[i];
    case DType::Int16: return data<int16_t>()[i];
    case DType::Int32: return data<int32_t>()[i];
    case DType::Int64: return data<int64_t>()[i];
    case DType::Uint32: return data<uint32_t>()[i];
    case DType::Uint64: return static_cast<int64_t>(data<uint64_t>()[i]);
    case DType::Bool: return data<uint8_t>()[i] != 0;
    default: return static_cast<int64_t>(float_at(i));
  }
}

double Tensor::float_at(int64_t i) const {
  switch (dtype) {
    case DType::Float: return data<float>()[i];
    case DType::Double: return data<double>()[i];
    case DType::Float16: return rt::half_to_float(data<uint16_t>()[i]);
    case DType::BFloat16: return rt::bfloat16_to_float(data<uint16_t>()[i]);
    case DType::Float8E4M3FN: return rt::load(data<rt::float8e4m3fn>()[i]);
    case DType::Float8E4M3FNUZ: return rt::load(data<rt::float8e4m3fnuz>()[i]);
    case DType::Float8E5M2: return rt::load(data<rt::float8e5m2>()[i]);
    case DType::Float8E5M2FNUZ: return rt::load(data<rt::float8e5m2fnuz>()[i]);
    default: return static_cast<double>(int_at(i));
  }
}

std::vector<int64_t> Tensor::to_ints() const {
  std::vector<int64_t> v(static_cast<std::size_t>(numel()));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = int_at(static_cast<int64_t>(i));
  return v;
}

const char* attribute_kind_name(Attribute::Kind k) {
  switch (k) {
    case Attribute::Kind::Undefined: return "undefined";
    case Attribute::Kind::Float: return "float";
    case Attribute::Kind::Int: return "int";
    case Attribute::Kind::String: return "string";
    case Attribute::Kind::Tensor: return "tensor";
    case Attribute::Kind::Graph: return "graph";
    case Attribute::Kind::Floats: return "floats";
    case Attribute::Kind::Ints: return "ints";
    case Attribute::Kind::Strings: return "strings";
    case Attribute::Kind::Tensors: return "tensors";
    case Attribute::Kind::Graphs: return "graphs";
    case Attribute::Kind::TypeProto: return "type_proto";
  }
  return "?";
}

const Attribute* Node::attr(const std::string& n) const {
  auto it = attrs.find(n);
  return it == attrs.end() ? nullptr : &it->second;
}

int64_t Node::attr_int(const std::string& n, int64_t dflt) const {
  const Attribute* a = attr(n);
  return a ? a->i : dflt;
}

float Node::attr_float(const std::string& n, float dflt) const {
  const Attribute* a = attr(n);
  return a ? a->f : dflt;
}

std::string Node::attr_string(const std::string& n, const std::string& dflt) const {
  const Attribute* a = attr(n);
  return a ? a->s : dflt;
}

std::vector<int64_t> Node::attr_ints(const std::string& n, std::vector<int64_t> dflt) const {
  const Attribute* a = attr(n);
  return a ? a->ints : dflt;
}

std::vector<float> Node::attr_floats(const std::string& n, std::vector<float> dflt) const {
  const Attribute* a = attr(n);
  return a ? a->floats : dflt;
}

std::vector<std::string> Node::attr_strings(const std::string& n, std::vector<std::string> dflt) const {
  const Attribute* a = attr(n);
  return a ? a->strings : dflt;
}

void Node::set_attr_int(const std::string& n, int64_t v) {
  Attribute& a = attrs[n] = Attribute{};
  a.kind = Attribute::Kind::Int;
  a.i = v;
}

void Node::set_attr_float(const std::string& n, float v) {
  Attribute& a = attrs[n] = Attribute{};
  a.kind = Attribute::Kind::Float;
  a.f = v;
}

void Node::set_attr_string(const std::string& n, std::string v) {
  Attribute& a = attrs[n] = Attribute{};
  a.kind = Attribute::Kind::String;
  a.s = std::move(v);
}

void Node::set_attr_ints(const std::string& n, std::vector<int64_t> v) {
  Attribute& a = attrs[n] = Attribute{};
  a.kind = Attribute::Kind::Ints;
  a.ints = std::move(v);
}

void Node::set_attr_strings(const std::string& n, std::vector<std::string> v) {
  Attribute& a = attrs[n] = Attribute{};
  a.kind = Attribute::Kind::Strings;
  a.strings = std::move(v);
}

static void collect_outer_reads(const Graph& g, std::vector<Value*>& out) {
  for (auto& v : g.values)
    if (v->outer) out.push_back(v->outer);
  for (auto& n : g.nodes)
    for (const Graph* sub : n->subgraphs()) collect_outer_reads(*sub, out);
}

std::vector<Graph*> Node::subgraphs() const {
  std::vector<Graph*> out;
  for (auto& [name, a] : attrs) {  // std::map: sorted by name
    if (a.g) out.push_back(a.g.get());
    for (auto& sg : a.graphs)
      if (sg) out.push_back(sg.get());
  }
  return out;
}

bool Node::has_subgraphs() const {
  for (auto& [name, a] : attrs)
    if (a.kind == Attribute::Kind::Graph || a.kind == Attribute::Kind::Graphs) return true;
  return false;
}

std::vector<Value*> Node::implicit_inputs(const Graph& owner) const {
  std::vector<Value*> reads, out;
  for (const Graph* sub : subgraphs()) collect_outer_reads(*sub, reads);
  for (Value* v : reads)
    if (owner.find(v->name) == v && std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  return out;
}

std::string Node::describe() const {
  std::string op = domain.empty() ? op_type : domain + "." + op_type;
  if (version > 0) return fmt::format("node {} '{}' ({} version {}, opset {})", index, name, op, version, opset);
  return fmt::format("node {} '{}' ({}, opset {})", index, name, op, opset);
}

Value* Graph::find(const std::string& name) const {
  auto it = by_name.find(name);
  return it == by_name.end() ? nullptr : it->second;
}

Value* Graph::add_value(const std::string& name) {
  values.push_back(std::make_unique<Value>());
  Value* v = values.back().get();
  v->name = name;
  by_name[name] = v;
  return v;
}

Value* Graph::add_unique_value(const std::string& hint) {
  std::string name = hint;
  for (int i = 1; by_name.count(name); ++i) name = fmt::format("{}_{}", hint, i);
  return add_value(name);
}

Node* Graph::add_node(std::unique_ptr<Node> n) {
  nodes.push_back(std::move(n));
  return nodes.back().get();
}

void Graph::relink() {
  for (auto& v : values) v->producer = nullptr;
  for (auto& n : nodes)
    for (Value* o : n->outputs)
      if (o) o->producer = n.get();
}

std::vector<Node*> Graph::consumers(const Value* v) const {
  std::vector<Node*> out;
  for (auto& n : nodes)
    for (Value* in : n->inputs)
      if (in == v) {
        out.push_back(n.get());
        break;
      }
  return out;
}

Node* Graph::only_reader(const Value* v) const {
  if (!v || v->is_graph_output) return nullptr;
  std::vector<Node*> readers = consumers(v);
  return readers.size() == 1 ? readers[0] : nullptr;
}

}  // namespace onnxc
