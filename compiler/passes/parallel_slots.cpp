// give_parallel_slots: see kernel_passes.h.
#include "ops/conv_algorithm.h"
#include "passes/kernel_passes.h"

namespace onnxc {

int give_parallel_slots(Graph& g) {
  int given = 0;
  for (auto& node : g.nodes) {
    Node& n = *node;
    if (!n.domain.empty() || n.op_type != "Conv" || n.has_attr(kParallelSlotsAttr) ||
        conv_algorithm(n) != ConvAlgorithm::Depthwise)
      continue;
    n.set_attr_int(kParallelSlotsAttr, kDepthwiseParallelSlots);
    ++given;
  }
  return given;
}

}  // namespace onnxc
