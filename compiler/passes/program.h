// The compiled form of a graph the back end renders: the execution order, where every tensor
// lives, and the arena plan.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "ops/op.h"
#include "passes/memory_plan.h"

namespace onnxc {

enum class Storage {
  Constant,  // a const array in the generated source (weights)
  Input,     // the caller's input buffer
  Output,    // the caller's output buffer
  Arena,     // an offset in the arena
  Alias,     // the same memory as another tensor (views: Reshape, Flatten, ...)
};

struct TensorPlace {
  Storage storage = Storage::Arena;
  std::size_t offset = 0;       // Arena: byte offset
  const Value* alias_of = nullptr;  // Alias: the tensor whose memory this one shares
  int first = 0, last = 0;      // steps it is live
  std::string cname;            // C++ identifier of its pointer
  std::string weight_cname;     // constants: the const array holding the data
};

struct Step {
  const Node* node = nullptr;
  const OpDef* op = nullptr;
  std::size_t scratch_offset = 0, scratch_bytes = 0;
};

struct Program {
  std::vector<Step> steps;
  std::map<const Value*, TensorPlace> tensors;
  std::vector<const Value*> weights;  // constants the code reads, in first-use order
  std::vector<std::string> input_params, output_params;  // run()'s parameter names, in graph order
  MemoryPlan plan;
  std::size_t alignment = 16;
  std::size_t arena_bytes = 0;
  std::size_t weights_bytes = 0;
  std::size_t peak_live_bytes = 0;
};

}  // namespace onnxc
