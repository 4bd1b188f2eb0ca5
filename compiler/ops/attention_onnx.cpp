// Attention (ai.onnx since 23): scaled dot-product attention over 4-D (batch, heads, sequence,
// head size) or 3-D (batch, sequence, heads * head size) Q, K, V, lowered into the nodes the
// operator's definition computes:
//
//   [3-D: Reshape, Transpose to heads] -> [Concat past K/V] -> [grouped-query heads: Expand]
//   -> MatMul(Q, Transpose(K)) -> Mul(scale) -> [Add(mask + causal bias)] -> Softmax
//   -> MatMul(., V) -> [3-D: Transpose, Reshape]
//
// which fuse-attention then turns into one onnxc.Attention step (ops/attention.h), so the
// operator runs on the same kernel as the attention exporters write out node by node.
// softcap and the qk_matmul_output output add nodes fuse-attention does not take (the steps then
// run one by one); so does nonpad_kv_seqlen, a padding bias from the lengths (Less, Where).
// Refused with a message: a causal mask with more queries than keys, masks narrower than the keys.
#include <cmath>
#include <limits>

#include "ops/lowering.h"
#include "ops/op.h"

namespace onnxc {
namespace {

using Nodes = std::vector<std::unique_ptr<Node>>;

Node& with_ints(Node& n, const char* name, std::vector<int64_t> v) {
  n.set_attr_ints(name, std::move(v));
  return n;
}

// (batch, sequence, heads * size) -> (batch, heads, sequence, size).
Value* split_heads(Lowering& l, Value* x, int64_t heads, const std::string& hint) {
  const Shape& s = x->shape;
  Value* r = l.value(hint + "_bshd");
  l.add("Reshape", {x, l.int64_constant(hint + "_shape", {4}, {s[0], s[1], heads, s[2] / heads})}, {r});
  Value* t = l.value(hint + "_heads");
  with_ints(l.add("Transpose", {r}, {t}), "perm", {0, 2, 1, 3});
  return t;
}

void require_float(const Node& n, std::size_t i, const char* what) {
  if (n.inputs[i]->dtype != DType::Float)
    fail_unsupported(n, fmt::format("{} is {}; onnxc computes Attention in float", what, dtype_name(n.inputs[i]->dtype)),
                     "cast the inputs to float");
}

Nodes lower_attention(Node& n, Graph& g) {
  Lowering l(n, g);
  if (n.inputs.size() < 3 || !n.has_input(0) || !n.has_input(1) || !n.has_input(2))
    fail_invalid(n, "needs Q, K and V");
  require_float(n, 0, "Q");
  require_float(n, 1, "K");
  require_float(n, 2, "V");
  if (n.has_input(6) && n.version < 24) fail_invalid(n, "input nonpad_kv_seqlen is an input of Attention-24 on");
  const float softcap = n.attr_float("softcap", 0.0f);
  const int64_t qk_mode = n.attr_int("qk_matmul_output_mode", 0);
  if (qk_mode < 0 || qk_mode > 3) fail_invalid(n, fmt::format("qk_matmul_output_mode {} is not 0 to 3", qk_mode));
  // The fourth output is the scores at the stage qk_matmul_output_mode names: 0 the scaled
  // product, 1 with the mask added, 2 after softcap and the mask, 3 the softmax. Masked scores
  // are -inf here and the lowest float in ONNX Runtime.
  Value* qk_output = n.outputs.size() > 3 && n.has_output(3) ? n.outputs[3] : nullptr;
  auto stage = [&](int64_t mode, Value* scores) {
    if (qk_output && qk_mode == mode) l.add("Identity", {scores}, {qk_output});
  };
  Value *q = n.inputs[0], *k = n.inputs[1], *v = n.inputs[2];
  const std::size_t rank = q->shape.size();
  if ((rank != 3 && rank != 4) || k->shape.size() != rank || v->shape.size() != rank)
    fail_invalid(n, fmt::format("Q, K and V have ranks {}, {} and {}; Attention takes all 3-D or all 4-D", rank,
                                k->shape.size(), v->shape.size()));
  const int64_t batch = q->shape[0];
  int64_t q_heads = 0, kv_heads = 0;
  if (rank == 3) {
    q_heads = n.attr_int("q_num_heads", 0);
    kv_heads = n.attr_int("kv_num_heads", 0);
    if (q_heads <= 0 || kv_heads <= 0)
      fail_invalid(n, "3-D inputs need the attributes q_num_heads and kv_num_heads");
    if (q->shape[2] % q_heads || k->shape[2] % kv_heads || v->shape[2] % kv_heads)
      fail_invalid(n, fmt::format("hidden sizes {}, {}, {} are not multiples of the head counts {} and {}",
                                  q->shape[2], k->shape[2], v->shape[2], q_heads, kv_heads));
    q = split_heads(l, q, q_heads, "q");
    k = split_heads(l, k, kv_heads, "k");
    v = split_heads(l, v, kv_heads, "v");
  } else {
    q_heads = q->shape[1];
    kv_heads = k->shape[1];
  }
  const int64_t q_len = rank == 3 ? n.inputs[0]->shape[1] : q->shape[2];
  const int64_t head = rank == 3 ? n.inputs[0]->shape[2] / q_heads : q->shape[3];
  const int64_t v_head = rank == 3 ? n.inputs[2]->shape[2] / kv_heads : v->shape[3];
  int64_t kv_len = rank == 3 ? n.inputs[1]->shape[1] : k->shape[2];
  if (q_heads % kv_heads)
    fail_invalid(n, fmt::format("q_num_heads {} is not a multiple of kv_num_heads {}", q_heads, kv_heads));

  // The past keys and values come first; present_key/present_value are the concatenations.
  const bool past = n.has_input(4) || n.has_input(5);
  if (past && !(n.has_input(4) && n.has_input(5))) fail_invalid(n, "past_key and past_value go together");
  auto present = [&](Value* x, std::size_t past_input, std::size_t output, const char* hint) {
    Value* out = n.has_output(output) ? n.outputs[output] : nullptr;
    if (!past) {
      if (out) l.add("Identity", {x}, {out});
      return x;
    }
    require_float(n, past_input, hint);
    Value* joined = out ? out : l.value(fmt::format("{}_present", hint));
    l.add("Concat", {n.inputs[past_input], x}, {joined}).set_attr_int("axis", 2);
    return joined;
  };
  if (past) kv_len += n.inputs[4]->shape.size() == 4 ? n.inputs[4]->shape[2] : 0;
  k = present(k, 4, 1, "past_key");
  v = present(v, 5, 2, "past_value");

  // Grouped-query heads: query head h reads key/value head h / (q_heads / kv_heads).
  if (q_heads != kv_heads) {
    const int64_t group = q_heads / kv_heads;
    auto widen = [&](Value* x, int64_t size, const char* hint) {
      Value* u = l.unsqueeze(x, 2);
      Value* e = l.value(fmt::format("{}_grouped", hint));
      l.add("Expand", {u, l.int64_constant(fmt::format("{}_group_shape", hint), {5}, {batch, kv_heads, group, kv_len, size})},
            {e});
      Value* r = l.value(fmt::format("{}_heads_q", hint));
      l.add("Reshape", {e, l.int64_constant(fmt::format("{}_heads_shape", hint), {4}, {batch, q_heads, kv_len, size})},
            {r});
      return r;
    };
    k = widen(k, head, "k");
    v = widen(v, v_head, "v");
  }

  Value* kt = l.value("k_t");
  with_ints(l.add("Transpose", {k}, {kt}), "perm", {0, 1, 3, 2});
  Value* product = l.value("qk");
  l.add("MatMul", {q, kt}, {product});
  const float scale = n.has_attr("scale") ? n.attr_float("scale", 1.0f) : 1.0f / std::sqrt(static_cast<float>(head));
  Value* scores = l.value("scores");
  l.add("Mul", {product, l.float_constant("scale", {}, {scale})}, {scores});
  stage(0, scores);
  // The bias: the mask (a float mask added, a boolean one where False is -inf) and the causal
  // triangle (key j > query i is -inf).
  constexpr float kMasked = -std::numeric_limits<float>::infinity();
  Value* bias = nullptr;
  if (n.has_input(3)) {
    Value* mask = n.inputs[3];
    if (mask->shape.empty() || mask->shape.back() != kv_len)
      fail_unsupported(n, fmt::format("attn_mask's last dim is {}, not the {} keys", mask->shape.empty() ? 0 : mask->shape.back(), kv_len),
                       "give the mask one column per key (past included)");
    if (mask->dtype == DType::Bool) {
      bias = l.value("mask_bias");
      l.add("Where", {mask, l.float_constant("attend", {}, {0.0f}), l.float_constant("masked", {}, {kMasked})}, {bias});
    } else {
      require_float(n, 3, "attn_mask");
      bias = mask;
    }
  }
  // nonpad_kv_seqlen (version 24): batch b attends to its first nonpad_kv_seqlen[b] keys only.
  if (n.has_input(6)) {
    Value* lengths = n.inputs[6];
    if (lengths->dtype != DType::Int64 || lengths->shape != Shape{batch})
      fail_invalid(n, fmt::format("nonpad_kv_seqlen is {} {}; expected int64 [{}]", dtype_name(lengths->dtype),
                                  shape_str(lengths->shape), batch));
    std::vector<int64_t> positions(static_cast<std::size_t>(kv_len));
    for (int64_t j = 0; j < kv_len; ++j) positions[static_cast<std::size_t>(j)] = j;
    Value* limit = l.value("nonpad_limit");
    l.add("Reshape", {lengths, l.int64_constant("nonpad_shape", {4}, {batch, 1, 1, 1})}, {limit});
    Value* keep = l.value("nonpad_keep");
    l.add("Less", {l.int64_constant("key_positions", {kv_len}, positions), limit}, {keep});
    Value* padding = l.value("nonpad_bias");
    l.add("Where", {keep, l.float_constant("nonpad_attend", {}, {0.0f}), l.float_constant("nonpad_masked", {}, {kMasked})},
          {padding});
    if (bias) {
      Value* both = l.value("mask_and_padding");
      l.add("Add", {bias, padding}, {both});
      bias = both;
    } else {
      bias = padding;
    }
  }
  if (n.attr_int("is_causal", 0)) {
    // With a past the queries are the last q_len positions: query i sees keys up to
    // i + kv_len - q_len (the triangle aligned to the bottom right, as ONNX Runtime does).
    if (q_len > kv_len)
      fail_unsupported(n, fmt::format("is_causal with {} queries and only {} keys", q_len, kv_len),
                       "give the causal mask as attn_mask");
    require_tensor_fits(n, {q_len, kv_len}, DType::Float, "the causal bias");
    std::vector<float> triangle(static_cast<std::size_t>(q_len * kv_len), 0.0f);
    for (int64_t i = 0; i < q_len; ++i)
      for (int64_t j = i + 1 + kv_len - q_len; j < kv_len; ++j) triangle[static_cast<std::size_t>(i * kv_len + j)] = kMasked;
    Value* causal = l.float_constant("causal", {q_len, kv_len}, triangle);
    if (bias) {
      Value* both = l.value("bias");
      l.add("Add", {bias, causal}, {both});
      bias = both;
    } else {
      bias = causal;
    }
  }
  if (bias) {
    Value* masked = l.value("scores_masked");
    l.add("Add", {scores, bias}, {masked});
    scores = masked;
  }
  stage(1, scores);
  // softcap * tanh(scores / softcap) bounds the scores to (-softcap, softcap), after the mask as
  // the operator defines it (qk_matmul_output_mode 1 is the scores with the mask, 2 after softcap):
  // a masked score (-inf) becomes -softcap, so masked keys keep a small weight. ONNX Runtime 1.30
  // applies softcap before the mask instead (docs/conformance.md); onnxc follows the operator.
  if (softcap != 0.0f) {
    Value* shrunk = l.value("scores_over_cap");
    l.add("Mul", {scores, l.float_constant("inverse_softcap", {}, {1.0f / softcap})}, {shrunk});
    Value* bounded = l.value("scores_tanh");
    l.add("Tanh", {shrunk}, {bounded});
    Value* capped = l.value("scores_capped");
    l.add("Mul", {bounded, l.float_constant("softcap", {}, {softcap})}, {capped});
    scores = capped;
  }
  stage(2, scores);
  Value* probs = l.value("probs");
  l.add("Softmax", {scores}, {probs}).set_attr_int("axis", -1);
  stage(3, probs);
  if (rank == 4) {
    l.add("MatMul", {probs, v}, {n.outputs[0]});
    return l.take();
  }
  Value* heads = l.value("y_heads");
  l.add("MatMul", {probs, v}, {heads});
  Value* bshd = l.value("y_bshd");
  with_ints(l.add("Transpose", {heads}, {bshd}), "perm", {0, 2, 1, 3});
  l.add("Reshape", {bshd, l.int64_constant("y_shape", {3}, {batch, q_len, q_heads * v_head})}, {n.outputs[0]});
  return l.take();
}

const OpRegistrar attention_onnx(lowered_op("", "Attention", {23, 24}, lower_attention));

}  // namespace
}  // namespace onnxc
