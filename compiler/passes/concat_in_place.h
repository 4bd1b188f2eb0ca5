// concat-in-place: a Concat whose inputs are each a contiguous slab of its output (every dim
// before the axis is 1) is computed by its inputs' producers writing straight into those slabs;
// the Concat itself then runs no code. The planner (plan_program.cpp) places the inputs.
#pragma once

#include <cstddef>
#include <map>
#include <set>

#include "ir/ir.h"

namespace onnxc {

// Where a Concat input lives: `bytes` into the memory of `concat` (the Concat's output, or,
// when that is itself the input of an enclosing in-place Concat, the outermost one's).
struct ConcatSlice {
  const Value* concat = nullptr;
  std::size_t bytes = 0;
};

struct ConcatsInPlace {
  std::set<const Node*> concats;                  // Concats that run no code
  std::map<const Value*, ConcatSlice> slices;    // their inputs (and nested Concats' outputs)
};

// The Concats of `g` that can be written in place. A Concat qualifies when its output is an
// intermediate of `g` and every input is an intermediate that a non-view node of `g` produces,
// appears once among the Concat's inputs (and in no other qualifying Concat), is not a graph
// output and starts at an offset that keeps `alignment`. Inputs that are an earlier qualifying
// Concat's inputs, in order, at the start of this one's (a DenseNet block) are exempt: that
// Concat's output becomes this one's first bytes.
ConcatsInPlace concats_in_place(const Graph& g, std::size_t alignment);

}  // namespace onnxc
