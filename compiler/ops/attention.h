// onnxc.Attention: softmax(scale Q K^T + M) V as one step (rt::attention, onnxc/attention.h),
// made by fuse-attention (passes/kernel_passes.h) after inference and folding.
//
// Inputs Q, K^T, V and optionally the additive mask M, each read through the element strides
// of its AttentionGeometry (so a head split or merge Transpose around the step can be a view).
// Output: the product's result, written through its strides too.
#pragma once

#include <array>
#include <cstdint>

#include "ir/ir.h"

namespace onnxc {

constexpr const char* kAttentionDomain = "onnxc";
constexpr const char* kAttentionOp = "Attention";

// Strides in elements along (group 0, group 1, row, column) of one operand; 0 broadcasts.
using AttentionStrides = std::array<int64_t, 4>;

struct AttentionGeometry {
  int64_t groups0 = 1, groups1 = 1, q_rows = 1, k_rows = 1, depth = 1, v_depth = 1;
  float scale = 1.0f;
  // Q [query, depth], K^T [depth, key], V [key, v_depth], M [query, key], O [query, v_depth].
  AttentionStrides q{}, k{}, v{}, mask{}, out{};
};

void set_attention_geometry(Node& n, const AttentionGeometry& g);
AttentionGeometry attention_geometry(const Node& n);

}  // namespace onnxc
