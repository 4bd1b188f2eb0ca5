#include "ops/cost.h"

#include <algorithm>
#include <set>
#include <string>

namespace onnxc {
namespace {

// Ops whose work is copying elements, not computing them.
bool moves_data_only(const Node& n) {
  static const std::set<std::string> kMoves = {
      "Transpose", "Concat", "Split", "Slice", "Gather", "GatherElements", "GatherND", "ScatterND", "ScatterElements",
      "Pad", "Tile", "Expand", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "DepthToSpace",
      "SpaceToDepth", "Shape", "Size", "ConcatFromSequence", "SplitToSequence", "Compress", "ReverseSequence"};
  return n.domain.empty() && kMoves.count(n.op_type) > 0;
}

}  // namespace

int64_t node_macs(const Node& n, const OpDef& op) {
  if (op.macs) return op.macs(n);
  if (op.is_view || moves_data_only(n)) return 0;
  int64_t largest = 0;
  for (const std::vector<Value*>* values : {&n.inputs, &n.outputs})
    for (const Value* v : *values)
      if (v) largest = std::max(largest, v->numel());
  return largest;
}

int64_t node_bytes_moved(const Node& n) {
  std::set<const Value*> seen;  // x * x reads x once
  int64_t bytes = 0;
  for (const std::vector<Value*>* values : {&n.inputs, &n.outputs})
    for (const Value* v : *values)
      if (v && seen.insert(v).second) bytes += static_cast<int64_t>(v->byte_size());
  return bytes;
}

}  // namespace onnxc
