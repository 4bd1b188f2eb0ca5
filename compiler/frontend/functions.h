// Model-local functions (ModelProto.functions, IR 8 and later): every node that calls one is
// replaced by the function's body before the graph is converted, so the rest of the compiler
// sees only operators.
//
// A call binds the function's formal inputs and outputs to the node's, resolves each body
// attribute that refers to the caller's (`ref_attr_name`) from the call or from the function's
// default (`attribute_proto`, IR 9), and gives every other name in the body (including those of
// nested If/Loop/Scan bodies) a prefix made of the calling node's name, so the steps of an
// expanded call carry it in --report. Calls inside function bodies and inside subgraphs are
// expanded too; body nodes keep the function's own opset imports.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "support/diagnostics.h"

namespace onnx {
class ModelProto;
class NodeProto;
}  // namespace onnx

namespace onnxc {

using OpsetMap = std::map<std::string, int>;  // domain ("" = ai.onnx) -> version

struct FunctionExpansion {
  int calls = 0;  // calls expanded, nested ones included
  // The opsets of each node copied out of a function body (its function's imports over the
  // model's); nodes not listed use the model's.
  std::unordered_map<const onnx::NodeProto*, const OpsetMap*> node_opsets;
  std::vector<std::unique_ptr<OpsetMap>> opset_maps;
};

// Rewrites `model.graph` in place with every call of a model-local function expanded.
// Problems (recursion, an attribute the function does not declare, a duplicate definition) are
// added to `diag`. `model_opsets` are the model's imports, already read.
void expand_functions(onnx::ModelProto& model, const OpsetMap& model_opsets, Diagnostics& diag,
                      FunctionExpansion& out);

}  // namespace onnxc
