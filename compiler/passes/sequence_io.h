// Sequence graph inputs and outputs. A sequence crosses the generated API as its elements: the
// sequence input or output NAME of n tensors becomes the tensor parameters NAME_0 .. NAME_{n-1}
// of run(), in its place. The length and element shapes of a sequence input must be known at
// compile time (validate takes them from the test data).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace onnxc {

// Replaces each sequence input of the main graph by tensor inputs with the element shapes
// `shapes` gives for it. Fails (unsupported) for a sequence input without shapes.
void bind_sequence_inputs(Graph& g, const std::map<std::string, std::vector<Shape>>& shapes);

// After inference: replaces each sequence output of the main graph by one tensor output per
// element (a copy of it, through Identity nodes that are inferred and folded like the others).
void expand_sequence_outputs(Graph& g, int opset, bool fold);

}  // namespace onnxc
