// Helpers shared by the sequence and optional operators (ops/sequence.cpp, ops/optional.cpp),
// control flow over them (ops/control_flow.cpp) and their graph inputs and outputs
// (passes/sequence_io.cpp).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "ir/ir.h"
#include "ops/lowering.h"
#include "ops/op.h"

namespace onnxc {

// Identity of a sequence or optional: its output is the same structure (no node remains).
// Identity is the one operator outside the sequence and optional families that passes them.
std::vector<std::unique_ptr<Node>> lower_structure_identity(Node& n, Graph& g);

// The OpDef of a sequence or optional operator: it is only ever lowered (replaced by the nodes
// `lower` returns, operating on the structure's elements), never inferred or emitted itself.
OpDef structure_op(const char* name, std::vector<int> versions,
                   std::function<std::vector<std::unique_ptr<Node>>(Node&, Graph&)> lower);

// The tensors a structure holds (depth first, in order), or `v` itself when it is a tensor.
void collect_tensors(Value& v, std::vector<Value*>& out);

// `v` as a value declared like `declared` expects: a tensor or sequence passed where an
// optional is declared is wrapped; a present optional passed where its content is declared is
// unwrapped. Anything else is returned as is.
Value* as_declared(Lowering& l, Value* v, const Value& declared);

}  // namespace onnxc
