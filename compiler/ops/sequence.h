// Helpers shared by the sequence operators (ops/sequence.cpp) and the sequence graph inputs and
// outputs (passes/sequence_io.cpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace onnxc {

// A new ai.onnx node at the version `opset` gives op_type, for rewrites that create nodes.
std::unique_ptr<Node> make_onnx_node(const std::string& op_type, std::string name, int opset, int index,
                                     std::vector<Value*> inputs, std::vector<Value*> outputs);

// Identity of a sequence: its output is the same list of elements (no node remains). Identity
// is the one operator outside the sequence family that passes sequences through.
std::vector<std::unique_ptr<Node>> lower_sequence_identity(Node& n, Graph& g);

}  // namespace onnxc
