// Building the nodes an operator is rewritten into (OpDef::lower): the sequence and optional
// operators, control flow resolved at compile time (ops/control_flow.cpp) and Gradient.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace onnxc {

// A new ai.onnx node at the version `opset` gives op_type, for rewrites that create nodes.
std::unique_ptr<Node> make_onnx_node(const std::string& op_type, std::string name, int opset, int index,
                                     std::vector<Value*> inputs, std::vector<Value*> outputs);

// Makes `out` the constant `t` (a sequence length, a gradient seed: known at compile time).
void set_constant_output(Value& out, Tensor t);

// Builds the nodes an operator is lowered to, named after it and at the versions its opset
// gives them.
class Lowering {
 public:
  // New ai.onnx nodes take the versions `onnx_opset` gives them (default: the node's own opset,
  // right for an ai.onnx node; a node of another domain passes the model's ai.onnx opset).
  Lowering(const Node& n, Graph& g, int onnx_opset = 0) : n_(n), g_(g), opset_(onnx_opset ? onnx_opset : n.opset) {}

  Node& add(const std::string& op_type, std::vector<Value*> inputs, std::vector<Value*> outputs);
  // A copy of `src` (another graph's node, e.g. of a body being inlined) on new inputs and outputs,
  // with the same attributes (subgraphs shared: see inline_graph for copies), named after it with
  // `suffix` (which copy it is).
  Node& add_copy(const Node& src, const std::string& suffix, std::vector<Value*> inputs, std::vector<Value*> outputs);

  int version_of(const std::string& op_type) const;
  const Node& node() const { return n_; }
  Graph& graph() { return g_; }

  // A new tensor value, typed and shaped by inference.
  Value* value(const std::string& hint);
  Value* int64_constant(const std::string& hint, Shape shape, const std::vector<int64_t>& v);
  Value* float_constant(const std::string& hint, Shape shape, const std::vector<float>& v);
  Value* bool_constant(const std::string& hint, Shape shape, bool v);
  // x with a new axis of extent 1 (Unsqueeze in the form the opset has).
  Value* unsqueeze(Value* x, int64_t axis);
  // An optional value holding `content` (no node: its presence is known).
  Value* wrap_in_optional(Value* content);

  std::vector<std::unique_ptr<Node>> take() { return std::move(nodes_); }

 private:
  const Node& n_;
  Graph& g_;
  int opset_;
  std::vector<std::unique_ptr<Node>> nodes_;
};

}  // namespace onnxc
