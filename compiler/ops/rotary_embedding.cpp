// RotaryEmbedding (ai.onnx since 23): rotary position embeddings (RoPE) on 4-D (batch, heads,
// sequence, head size) or 3-D (batch, sequence, heads * head size) input, lowered into the nodes
// of its definition: the input as (batch, sequence, heads, head size), cos and sin for each
// token (gathered by position_ids from the caches, or given per token), the first
// rotary_embedding_dim channels of every head rotated as pairs (the two halves, or neighbouring
// channels with interleaved = 1) and the rest passed through, then the input's layout restored.
#include "ops/lowering.h"
#include "ops/op.h"

namespace onnxc {
namespace {

using Nodes = std::vector<std::unique_ptr<Node>>;

// x[..., start:end:step] along axis 3.
Value* slice_channels(Lowering& l, Value* x, int64_t start, int64_t end, int64_t step, const std::string& hint) {
  Value* y = l.value(hint);
  l.add("Slice", {x, l.int64_constant(hint + "_starts", {1}, {start}), l.int64_constant(hint + "_ends", {1}, {end}),
                  l.int64_constant(hint + "_axes", {1}, {3}), l.int64_constant(hint + "_steps", {1}, {step})},
        {y});
  return y;
}

Value* binary(Lowering& l, const char* op, Value* a, Value* b, const std::string& hint) {
  Value* y = l.value(hint);
  l.add(op, {a, b}, {y});
  return y;
}

Nodes lower_rotary_embedding(Node& n, Graph& g) {
  Lowering l(n, g);
  if (n.inputs.size() < 3 || !n.has_input(0) || !n.has_input(1) || !n.has_input(2))
    fail_invalid(n, "needs X, cos_cache and sin_cache");
  for (std::size_t i = 0; i < 3; ++i)
    if (n.inputs[i]->dtype != DType::Float)
      fail_unsupported(n, fmt::format("input {} is {}; onnxc computes RotaryEmbedding in float", i,
                                      dtype_name(n.inputs[i]->dtype)),
                       "cast the inputs to float");
  Value* x = n.inputs[0];
  const Shape& xs = x->shape;
  const bool rank3 = xs.size() == 3;
  if (xs.size() != 3 && xs.size() != 4) fail_invalid(n, fmt::format("X has rank {}; it must be 3 or 4", xs.size()));
  const int64_t batch = xs[0];
  int64_t heads, seq, head;
  Value* bshd = l.value("x_bshd");
  if (rank3) {
    heads = n.attr_int("num_heads", 0);
    if (heads <= 0 || xs[2] % heads)
      fail_invalid(n, fmt::format("3-D X needs num_heads dividing its hidden size {}", xs[2]));
    seq = xs[1];
    head = xs[2] / heads;
    l.add("Reshape", {x, l.int64_constant("x_shape", {4}, {batch, seq, heads, head})}, {bshd});
  } else {
    heads = xs[1];
    seq = xs[2];
    head = xs[3];
    l.add("Transpose", {x}, {bshd}).set_attr_ints("perm", {0, 2, 1, 3});
  }
  const int64_t rot = n.attr_int("rotary_embedding_dim", 0) ? n.attr_int("rotary_embedding_dim", 0) : head;
  if (rot % 2 || rot > head)
    fail_invalid(n, fmt::format("rotary_embedding_dim {} must be even and at most the head size {}", rot, head));
  const int64_t half = rot / 2;

  // cos and sin as (batch, sequence, 1, rot / 2).
  auto per_token = [&](std::size_t input, const char* hint) {
    Value* cache = n.inputs[input];
    Value* table = cache;
    if (n.has_input(3)) {
      table = l.value(fmt::format("{}_gathered", hint));
      l.add("Gather", {cache, n.inputs[3]}, {table}).set_attr_int("axis", 0);
    }
    const Shape& cs = cache->shape;
    if (cs.empty() || cs.back() != half)
      fail_invalid(n, fmt::format("{}'s last dim is {}; rotating {} channels needs {}", hint,
                                  cs.empty() ? 0 : cs.back(), rot, half));
    return l.unsqueeze(table, 2);
  };
  Value* cos = per_token(1, "cos_cache");
  Value* sin = per_token(2, "sin_cache");

  Value* rotated = rot == head ? bshd : slice_channels(l, bshd, 0, rot, 1, "x_rotated");
  const bool interleaved = n.attr_int("interleaved", 0) != 0;
  Value* x1 = interleaved ? slice_channels(l, rotated, 0, rot, 2, "x_even") : slice_channels(l, rotated, 0, half, 1, "x_first");
  Value* x2 = interleaved ? slice_channels(l, rotated, 1, rot, 2, "x_odd") : slice_channels(l, rotated, half, rot, 1, "x_second");
  Value* real = binary(l, "Sub", binary(l, "Mul", x1, cos, "x1_cos"), binary(l, "Mul", x2, sin, "x2_sin"), "real");
  Value* imag = binary(l, "Add", binary(l, "Mul", x2, cos, "x2_cos"), binary(l, "Mul", x1, sin, "x1_sin"), "imag");
  Value* y_rot = l.value("y_rotated");
  if (interleaved) {
    Value* pairs = l.value("y_pairs");
    l.add("Concat", {l.unsqueeze(real, 4), l.unsqueeze(imag, 4)}, {pairs}).set_attr_int("axis", 4);
    l.add("Reshape", {pairs, l.int64_constant("y_rotated_shape", {4}, {batch, seq, heads, rot})}, {y_rot});
  } else {
    l.add("Concat", {real, imag}, {y_rot}).set_attr_int("axis", 3);
  }
  Value* y = y_rot;
  if (rot < head) {
    y = l.value("y_bshd");
    l.add("Concat", {y_rot, slice_channels(l, bshd, rot, head, 1, "x_passed")}, {y}).set_attr_int("axis", 3);
  }
  if (rank3)
    l.add("Reshape", {y, l.int64_constant("y_shape", {3}, {batch, seq, heads * head})}, {n.outputs[0]});
  else
    l.add("Transpose", {y}, {n.outputs[0]}).set_attr_ints("perm", {0, 2, 1, 3});
  return l.take();
}

const OpRegistrar rotary_embedding_op(lowered_op("", "RotaryEmbedding", {23}, lower_rotary_embedding));

}  // namespace
}  // namespace onnxc
