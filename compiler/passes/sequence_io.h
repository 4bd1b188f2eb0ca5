// Sequence and optional graph inputs and outputs. They cross the generated API as the tensors
// they hold: the sequence input or output NAME of n tensors becomes the tensor parameters
// NAME_0 .. NAME_{n-1} of run(), in its place; a present optional NAME becomes NAME_0 (its
// tensor) or NAME_0 .. NAME_{n-1} (its sequence's elements), an empty one no parameter at all.
// The length and element shapes of a sequence input, and whether an optional input is present,
// must be known at compile time (--sequence, --empty-optional; validate takes them from the test
// data).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace onnxc {

// Replaces each sequence or optional input of the main graph by the tensor inputs it holds:
// `sequence_shapes` gives the element shapes of sequences (and of optionals holding one),
// `empty_optionals` names the optionals compiled as empty; other optionals hold a tensor of
// their declared type. Fails (unsupported) for a sequence input without element shapes.
void bind_structured_inputs(Graph& g, const std::map<std::string, std::vector<Shape>>& sequence_shapes,
                            const std::set<std::string>& empty_optionals);

// After inference: replaces each sequence or optional output of the main graph by one tensor
// output per tensor it holds (copies, through Identity nodes that are inferred and folded like
// the others).
void expand_structured_outputs(Graph& g, int opset, bool fold);

}  // namespace onnxc
