// onnxc.FusedElementwise: a group of elementwise nodes that fuse-elementwise merged into one
// node. Its code is one loop nest computing each output element from the node's inputs, step
// by step, with no intermediate tensor: each step applies the functor of the node it was
// (OpDef::elementwise_form) to its operands, which are node inputs or earlier steps' results.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace onnxc {

constexpr const char* kFusedElementwiseDomain = "onnxc";
constexpr const char* kFusedElementwiseOp = "FusedElementwise";

// One node of a fused group. Its result is rounded to its element type (rt::store) before the
// next step reads it (rt::load), as the unfused kernels round it into their output tensor, so the
// fused loop's elements are bit-identical to theirs.
struct FusedStep {
  std::string op_type;        // the node it was, for --report
  std::string functor;        // C++ text of its functor, e.g. "rt::Elu{1.f}"
  DType dtype = DType::Undefined;  // element type of its result
  std::vector<int64_t> args;  // per operand: >= 0 the fused node's input, < 0 step -1 - arg's result
};

// The step that reads `result_of_step`'s result, as an args entry.
inline int64_t step_arg(std::size_t result_of_step) { return -1 - static_cast<int64_t>(result_of_step); }

// Stores `steps` (in order; the last one computes the node's output) in n's attributes.
void set_fused_steps(Node& n, const std::vector<FusedStep>& steps);
// The steps a FusedElementwise node computes.
std::vector<FusedStep> fused_steps(const Node& n);

// The loop nest computing an output of shape `out` from operands of the given shapes, read
// broadcast to it like numpy: out's dims of extent above 1, each run of adjacent dims that every
// operand reads alike (contiguously, or not at all) merged into one loop. The last loop is the
// inner one: every operand's stride along it is 1 or 0.
struct LoopNest {
  std::vector<int64_t> extents;               // outermost first; at least one loop
  std::vector<std::vector<int64_t>> strides;  // per operand, per loop, in elements; 0: broadcast
};
LoopNest elementwise_loops(const std::vector<Shape>& operands, const Shape& out);

// The deepest nest a fused node is written with: same shapes need one loop, a per-channel [C, 1, 1]
// operand of [1, C, H, W] two (C, then H*W), of a batch [N, C, H, W] three. Broadcasts that need
// more loops stay with the unfused kernels.
constexpr std::size_t kMaxFusedLoops = 3;

}  // namespace onnxc
