// fuse-elementwise: merges groups of elementwise nodes into onnxc.FusedElementwise nodes
// (ops/fused_elementwise.h), each computed in one loop with no intermediate tensor.
#pragma once

#include "ir/ir.h"

namespace onnxc {

// Groups the main graph's elementwise nodes (those whose operator gives an
// OpDef::elementwise_form) into maximal trees: a node joins the group of the node reading its
// output when that is the output's only reader (not a graph output, not read by a subgraph) and
// has as many elements, and the group's inputs still broadcast onto its output within
// kMaxFusedLoops loops. A value read elsewhere stays a tensor and ends its producer's group
// there. Every group of two or more nodes becomes one node at its last node's place. Returns
// the nodes removed.
int fuse_elementwise(Graph& g);

}  // namespace onnxc
