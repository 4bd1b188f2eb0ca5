// The compiled form of a model the back end renders: blocks of steps in execution order (the
// main graph and, nested in control-flow steps, their subgraphs), where every tensor lives,
// and the arena plan of each block.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "ops/op.h"
#include "passes/memory_plan.h"

namespace onnxc {

enum class Storage {
  Constant,  // a const array in the generated source (weights)
  Input,     // the caller's input buffer (or, in a subgraph, the pointer its parent passes in)
  Output,    // the caller's output buffer (or, in a subgraph, where its parent wants it)
  Arena,     // an offset from the block's arena base
  Alias,     // the same memory as another tensor (views: Reshape, Flatten, ...)
  Outer,     // in a subgraph: a tensor of an enclosing graph
};

struct Block;

struct TensorPlace {
  Storage storage = Storage::Arena;
  std::size_t offset = 0;           // Arena: byte offset from the block's base
  const Value* alias_of = nullptr;  // Alias / Outer: the tensor whose memory this one is
  std::size_t alias_offset = 0;     // Alias: bytes into alias_of's memory (a slice of a Concat)
  int first = 0, last = 0;          // steps of its block it is live
  std::string cname;                // C++ identifier of its pointer
  std::string weight_cname;         // constants: the const array holding the data
  const Block* block = nullptr;     // the block that defines it
  bool in_place = false;            // Alias: computed over its input's dead buffer
  bool concat_slab = false;         // Alias: computed into its slab of a Concat's output
  std::size_t overlap_bytes = 0;    // Arena: bytes of its step's input's buffer it is written over
};

struct Step {
  const Node* node = nullptr;
  const OpDef* op = nullptr;
  std::size_t scratch_offset = 0, scratch_bytes = 0;  // includes the subgraphs' arenas
  std::size_t op_scratch_bytes = 0;                   // the part the op itself asked for
  // The largest scratch the op could have without growing the arena: the widest gap the
  // block's tensors (and nested arenas) leave at this step. See fit_scratch.
  std::size_t room_bytes = 0;
  std::vector<std::unique_ptr<Block>> subgraphs;      // graph attributes, in attribute-name order
  bool elided = false;  // computes nothing: a Concat its inputs' producers wrote in place
};

// One graph's code: its steps and its part of the arena.
struct Block {
  const Graph* graph = nullptr;
  std::string base;  // C++ name of the block's arena base pointer
  std::vector<Step> steps;
  std::vector<std::string> input_params, output_params;  // names of its inputs/outputs, in graph order
  // Main block: per output, the run() parameter that receives a bounded output's actual shape
  // (Value::dynamic_axis); empty for outputs of exact shape.
  std::vector<std::string> output_shape_params;
  MemoryPlan plan;
  std::size_t arena_bytes = 0;      // this block's tensors, scratch and nested blocks
  std::size_t peak_live_bytes = 0;
  std::vector<std::size_t> live_bytes;  // per step: bytes of its tensors and scratch live then
};

struct Program {
  Block main;
  std::map<const Value*, TensorPlace> tensors;  // every tensor of every block
  std::vector<const Value*> weights;            // constants the code reads, in first-use order
  std::size_t alignment = 16;
  std::size_t arena_bytes = 0;
  std::size_t weights_bytes = 0;
  std::size_t peak_live_bytes = 0;
};

}  // namespace onnxc
