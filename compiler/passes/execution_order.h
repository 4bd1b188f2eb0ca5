// reorder: the order a graph's nodes run in. Any topological order computes the same values,
// but which tensors are live together depends on it (e.g. the branch order of ResNet,
// Inception or SqueezeNet blocks), and with it the arena's lower bound.
#pragma once

#include <cstddef>
#include <vector>

#include "ir/ir.h"

namespace onnxc {

// The largest sum of intermediate tensor sizes (outputs of views counted as free, sizes rounded
// up to `alignment`) live while a node of `order` runs: its inputs still needed and its outputs.
std::size_t order_peak_bytes(const Graph& g, const std::vector<const Node*>& order, std::size_t alignment);

// The file's order (already topological), or, when `search`, a greedy topological order that
// runs next the ready node whose outputs add the least memory net of the inputs it frees, kept
// only when its peak is lower. Deterministic: ties go to the earlier node of the file.
std::vector<const Node*> execution_order(const Graph& g, bool search, std::size_t alignment);

}  // namespace onnxc
