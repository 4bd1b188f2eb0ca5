// TensorScatter (ai.onnx since 24): a KV-cache update. Each sample's `update` rows are written
// into a copy of `past_cache` along `axis`, starting at write_indices[sample] (0 when absent),
// wrapping around the cache with mode = "circular". Lowered into ScatterElements with the
// target indices computed as write_indices (one per sample) + 0 .. sequence_length - 1 (mod the
// cache length when circular), broadcast to the update's shape.
#include "ops/lowering.h"
#include "ops/op.h"

namespace onnxc {
namespace {

std::vector<std::unique_ptr<Node>> lower_tensor_scatter(Node& n, Graph& g) {
  Lowering l(n, g);
  if (n.inputs.size() < 2 || !n.has_input(0) || !n.has_input(1)) fail_invalid(n, "needs past_cache and update");
  const Value& past = *n.inputs[0];
  const Value& update = *n.inputs[1];
  const int64_t rank = static_cast<int64_t>(past.shape.size());
  if (rank < 2 || static_cast<int64_t>(update.shape.size()) != rank)
    fail_invalid(n, fmt::format("past_cache has rank {} and update rank {}; both must be the same, at least 2", rank,
                                update.shape.size()));
  int64_t axis = n.attr_int("axis", -2);
  if (axis < -rank || axis >= rank) fail_invalid(n, fmt::format("axis {} is out of range for rank {}", axis, rank));
  if (axis < 0) axis += rank;
  if (axis == 0) fail_invalid(n, "axis 0 is the batch axis; the sequence axis must be another");
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && past.shape[static_cast<std::size_t>(d)] != update.shape[static_cast<std::size_t>(d)])
      fail_invalid(n, fmt::format("update {} and past_cache {} differ outside the sequence axis",
                                  shape_str(update.shape), shape_str(past.shape)));
  const int64_t cache_len = past.shape[static_cast<std::size_t>(axis)];
  const int64_t seq = update.shape[static_cast<std::size_t>(axis)];
  if (seq > cache_len) fail_invalid(n, fmt::format("update has {} rows; the cache holds {}", seq, cache_len));
  const std::string mode = n.attr_string("mode", "linear");
  if (mode != "linear" && mode != "circular") fail_invalid(n, fmt::format("mode '{}'; use 'linear' or 'circular'", mode));

  Shape along(static_cast<std::size_t>(rank), 1);
  along[static_cast<std::size_t>(axis)] = seq;
  std::vector<int64_t> steps(static_cast<std::size_t>(seq));
  for (int64_t s = 0; s < seq; ++s) steps[static_cast<std::size_t>(s)] = s;
  Value* index = l.int64_constant("rows", along, steps);
  if (n.has_input(2)) {
    if (n.inputs[2]->dtype != DType::Int64) fail_unsupported(n, "write_indices is not int64", "cast it to int64");
    Shape per_sample(static_cast<std::size_t>(rank), 1);
    per_sample[0] = past.shape[0];
    Value* starts = l.value("starts");
    l.add("Reshape", {n.inputs[2], l.int64_constant("starts_shape", {rank}, per_sample)}, {starts});
    Value* sum = l.value("targets");
    l.add("Add", {starts, index}, {sum});
    index = sum;
  }
  if (mode == "circular") {
    Value* wrapped = l.value("targets_wrapped");
    l.add("Mod", {index, l.int64_constant("cache_length", {}, {cache_len})}, {wrapped});
    index = wrapped;
  }
  Value* full = l.value("indices");
  l.add("Expand", {index, l.int64_constant("update_shape", {rank}, update.shape)}, {full});
  l.add("ScatterElements", {n.inputs[0], full, n.inputs[1]}, {n.outputs[0]}).set_attr_int("axis", axis);
  return l.take();
}

const OpRegistrar tensor_scatter_op(lowered_op("", "TensorScatter", {24}, lower_tensor_scatter));

}  // namespace
}  // namespace onnxc
