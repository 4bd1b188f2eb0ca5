#include "ops/lowering.h"

#include <algorithm>

#include <fmt/format.h>

#include "ops/onnx_versions.h"

namespace onnxc {

std::unique_ptr<Node> make_onnx_node(const std::string& op_type, std::string name, int opset, int index,
                                     std::vector<Value*> inputs, std::vector<Value*> outputs) {
  auto node = std::make_unique<Node>();
  node->name = std::move(name);
  node->op_type = op_type;
  node->opset = opset;
  node->version = resolve_op_version("", op_type, opset);
  node->index = index;
  node->inputs = std::move(inputs);
  node->outputs = std::move(outputs);
  return node;
}

Node& Lowering::add(const std::string& op_type, std::vector<Value*> inputs, std::vector<Value*> outputs) {
  nodes_.push_back(make_onnx_node(op_type, fmt::format("{}/{}_{}", n_.name, op_type, nodes_.size()), opset_,
                                  n_.index, std::move(inputs), std::move(outputs)));
  return *nodes_.back();
}

Node& Lowering::add_copy(const Node& src, const std::string& suffix, std::vector<Value*> inputs,
                         std::vector<Value*> outputs) {
  auto copy = std::make_unique<Node>();
  copy->name = fmt::format("{}/{}{}", n_.name, src.name, suffix);
  copy->op_type = src.op_type;
  copy->domain = src.domain;
  copy->opset = src.opset;
  copy->version = src.version;
  copy->index = n_.index;
  copy->inputs = std::move(inputs);
  copy->outputs = std::move(outputs);
  copy->attrs = src.attrs;
  nodes_.push_back(std::move(copy));
  return *nodes_.back();
}

int Lowering::version_of(const std::string& op_type) const { return resolve_op_version("", op_type, opset_); }

Value* Lowering::value(const std::string& hint) { return g_.add_unique_value(n_.name + "/" + hint); }

Value* Lowering::int64_constant(const std::string& hint, Shape shape, const std::vector<int64_t>& v) {
  Tensor t(DType::Int64, std::move(shape));
  std::copy(v.begin(), v.end(), t.data<int64_t>());
  Value* c = value(hint);
  set_constant_output(*c, std::move(t));
  return c;
}

Value* Lowering::float_constant(const std::string& hint, Shape shape, const std::vector<float>& v) {
  Tensor t(DType::Float, std::move(shape));
  std::copy(v.begin(), v.end(), t.data<float>());
  Value* c = value(hint);
  set_constant_output(*c, std::move(t));
  return c;
}

Value* Lowering::bool_constant(const std::string& hint, Shape shape, bool v) {
  Tensor t(DType::Bool, std::move(shape));
  std::fill(t.bytes.begin(), t.bytes.end(), v ? 1 : 0);
  Value* c = value(hint);
  set_constant_output(*c, std::move(t));
  return c;
}

// Unsqueeze took its axes as an attribute before version 13 and as an input since.
Value* Lowering::unsqueeze(Value* x, int64_t axis) {
  Value* y = value(x->name + "_unsqueezed");
  if (version_of("Unsqueeze") >= 13) {
    add("Unsqueeze", {x, int64_constant("axes", {1}, {axis})}, {y});
  } else {
    Attribute axes;
    axes.kind = Attribute::Kind::Ints;
    axes.ints = {axis};
    add("Unsqueeze", {x}, {y}).attrs["axes"] = axes;
  }
  return y;
}

Value* Lowering::wrap_in_optional(Value* content) {
  Value* o = value(content->name + "_optional");
  o->is_optional = true;
  o->dtype = content->dtype;
  o->elements = {content};
  return o;
}

void set_constant_output(Value& out, Tensor t) {
  out.dtype = t.dtype;
  out.shape = t.shape;
  out.has_shape = true;
  out.constant = std::make_shared<Tensor>(std::move(t));
}

}  // namespace onnxc
