// fuse-elementwise: merges groups of elementwise nodes into onnxc.FusedElementwise nodes
// (ops/fused_elementwise.h), each computed in one loop with no intermediate tensor.
#pragma once

#include "ir/ir.h"

namespace onnxc {

// Groups the elementwise nodes of g and of its control-flow bodies, each graph on its own
// (those whose operator gives an OpDef::elementwise_form): a node joins the group of the nodes
// reading its output when they are all in one group, the output is neither a graph output nor
// read by a body, it has as many elements as the group's output, and the group's inputs still
// broadcast onto that output within kMaxFusedLoops loops. A value read outside its group stays
// a tensor and ends its producer's group there. Every group of two or more nodes becomes one
// node at its last node's place. Returns the nodes removed.
int fuse_elementwise(Graph& g);

}  // namespace onnxc
