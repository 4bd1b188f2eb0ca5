// Helpers shared by the sequence and optional operators (ops/sequence.cpp, ops/optional.cpp)
// and their graph inputs and outputs (passes/sequence_io.cpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <functional>

#include "ir/ir.h"
#include "ops/op.h"

namespace onnxc {

// A new ai.onnx node at the version `opset` gives op_type, for rewrites that create nodes.
std::unique_ptr<Node> make_onnx_node(const std::string& op_type, std::string name, int opset, int index,
                                     std::vector<Value*> inputs, std::vector<Value*> outputs);

// Identity of a sequence or optional: its output is the same structure (no node remains).
// Identity is the one operator outside the sequence and optional families that passes them.
std::vector<std::unique_ptr<Node>> lower_structure_identity(Node& n, Graph& g);

// The OpDef of a sequence or optional operator: it is only ever lowered (replaced by the nodes
// `lower` returns, operating on the structure's elements), never inferred or emitted itself.
OpDef structure_op(const char* name, std::vector<int> versions,
                   std::function<std::vector<std::unique_ptr<Node>>(Node&, Graph&)> lower);

// Makes `out` the constant `t` (sequence lengths, optional presence: known at compile time).
void set_constant_output(Value& out, Tensor t);

}  // namespace onnxc
