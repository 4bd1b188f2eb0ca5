// fuse-output-table (passes/kernel_passes.h): onnxc.QLinearLookup merged into the QLinearConv
// writing its input.
#include <set>

#include "ops/conv_algorithm.h"
#include "ops/quant_common.h"
#include "passes/kernel_passes.h"
#include "passes/qdq_patterns.h"

namespace onnxc {

int fuse_output_tables(Graph& g) {
  std::set<const Node*> merged;
  for (auto& owned : g.nodes) {
    Node& conv = *owned;
    if (!conv.domain.empty() || conv.op_type != "QLinearConv" || conv.has_input(kOutputTableInput) ||
        conv.has_input(kResidualInput))  // (rt::RequantizeAddOutput has no table)
      continue;
    if (!conv.has_output(0) || conv.inputs[0]->constant) continue;  // (a constant Conv folds)
    Node* lookup = g.only_reader(conv.outputs[0]);
    if (!lookup || lookup->domain != "onnxc" || lookup->op_type != "QLinearLookup") continue;
    if (lookup->inputs[0] != conv.outputs[0] || !lookup->inputs[1]->constant) continue;
    if (lookup->outputs[0]->dtype != conv.outputs[0]->dtype) continue;
    if (conv.inputs.size() <= kOutputTableInput) conv.inputs.resize(kOutputTableInput + 1, nullptr);
    conv.inputs[kOutputTableInput] = lookup->inputs[1];
    conv.outputs[0] = lookup->outputs[0];
    merged.insert(lookup);
  }
  if (!merged.empty()) erase_nodes(g, merged);
  return static_cast<int>(merged.size());
}

}  // namespace onnxc
