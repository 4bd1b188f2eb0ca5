// mark-weights-from-memory: see kernel_passes.h.
#include <set>

#include "ops/op.h"
#include "passes/kernel_passes.h"

namespace onnxc {

namespace {

bool reads_constant(const Node& n) {
  for (const Value* v : n.inputs)
    if (v && v->constant) return true;
  return false;
}

}  // namespace

int mark_weights_from_memory(Graph& g) {
  std::set<const Value*> constants;
  int64_t bytes = 0;
  for_each_nested_node(g, [&](Node& n) {
    for (const Value* v : n.inputs)
      if (v && v->constant && constants.insert(v).second) bytes += static_cast<int64_t>(v->byte_size());
  });
  if (bytes <= kCoreCacheBytes) return 0;
  int marked = 0;
  for_each_nested_node(g, [&](Node& n) {
    if (!reads_constant(n)) return;
    n.set_attr_int(kWeightsFromMemoryAttr, 1);
    ++marked;
  });
  return marked;
}

}  // namespace onnxc
