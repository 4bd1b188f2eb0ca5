// Loading an ONNX file into the IR: parse the protobuf, read external data, check what the
// IR spec says must hold about names, types and tensors, and sort nodes topologically.
//
// The loader trusts nothing in the file: every count, size and offset is checked before it
// is used, and problems are collected and reported together as one CompileError.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "support/diagnostics.h"

namespace onnxc {

struct LoadOptions {
  // Largest tensor (in bytes) the loader accepts; guards against hostile dims.
  std::size_t max_tensor_bytes = std::size_t(4) << 30;
  // Deepest nesting of subgraphs (If inside Loop inside ...) accepted.
  int max_graph_depth = 64;
  // --strict: refuse a model that breaks a MUST of the spec onnxc can compile around (node
  // names repeated in a graph) instead of warning and renaming.
  bool strict = false;
  // Receives those warnings; none: they are dropped.
  std::function<void(const Problem&)> warn;
};

// Throws CompileError listing every problem found.
Model load_model(const std::string& path, const LoadOptions& options = {});

// Loads a serialized ModelProto held in memory. `name_for_messages` stands for the file in
// messages and Model::path; external data is looked up in `dir` and never outside it.
Model load_model_from_bytes(const std::string& bytes, const std::string& name_for_messages,
                            const std::string& dir, const LoadOptions& options = {});

// Parses one serialized TensorProto (the test data format). Throws CompileError.
Tensor load_tensor_file(const std::string& path, std::string* name = nullptr);

// The serialized TensorProto of each element of a serialized SequenceProto file (the test data
// format of sequence inputs and outputs), in order. Throws CompileError.
std::vector<std::string> sequence_file_elements(const std::string& path);

// A serialized OptionalProto file: empty, a tensor, or a sequence of tensors (as serialized
// TensorProtos). Throws CompileError.
struct OptionalFile {
  bool present = false;
  bool is_sequence = false;
  std::vector<std::string> tensors;
};
OptionalFile load_optional_file(const std::string& path);

}  // namespace onnxc
