// Loading an ONNX file into the IR: parse the protobuf, read external data, check what the
// IR spec says must hold about names and tensors, and sort nodes topologically.
#pragma once

#include <string>

#include "ir/ir.h"

namespace onnxc {

struct LoadOptions {
  // Largest tensor (in bytes) the loader accepts; guards against hostile dims.
  std::size_t max_tensor_bytes = std::size_t(4) << 30;
};

// Throws CompileError listing every problem found.
Model load_model(const std::string& path, const LoadOptions& options = {});

// Parses one serialized TensorProto (the test data format). Throws CompileError.
Tensor load_tensor_file(const std::string& path, std::string* name = nullptr);

}  // namespace onnxc
