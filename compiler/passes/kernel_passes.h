// Passes that prepare nodes for the optimised kernels of runtime-support.
#pragma once

#include "ir/ir.h"
#include "ops/conv_algorithm.h"
#include "passes/program.h"

namespace onnxc {

// fuse-activation: an activation (Relu, Clip with constant bounds, LeakyRelu, Sigmoid,
// HardSigmoid, HardSwish, Tanh) whose input is a float Conv's or Gemm's output that nothing
// else reads is merged into that node, which applies it in its epilogue. Returns the
// activations removed.
int fuse_activation(Graph& g);

// im2col-blocks: the width of the im2col blocks of every Conv the matrix-product kernel will
// compute through im2col, and of every QLinearConv that can use the integer one
// (kIm2colColsAttr), so its scratch fits in the room the scratch-free plan leaves at its step in
// its block (`scratch_free`: the main graph, with its nested blocks, planned before
// pack-weights, when no Conv asks for scratch yet) and the arena does not grow. See
// choose_im2col_cols. Runs before pack-weights, which leaves a Conv given 0 columns unpacked.
// Returns the Convs given a width.
int choose_im2col_blocks(Graph& g, const Block& scratch_free, bool memory_first);

// The im2col block (columns) of a Conv with `slack_bytes` free under the plan's peak at its
// step: the fastest block when it fits, else the widest whole number of register-tile rows that
// fits; when not even one fits, the smallest block (the arena grows a little, the Conv stays
// fast) or, memory_first, 0: the direct kernel, which needs no scratch.
int64_t choose_im2col_cols(const Im2colShape& shape, std::size_t slack_bytes, bool memory_first);

// The main graph's depthwise Convs get kDepthwiseParallelSlots scratch copies
// (kParallelSlotsAttr), so that with a parallel-for they split into that many tasks. Not for
// memory-first targets: there the arena is what counts and nobody passes a thread pool. Returns
// the Convs given slots.
constexpr int64_t kDepthwiseParallelSlots = 4;
int give_parallel_slots(Graph& g);

// pack-weights: the constant weights of every Conv that the matrix-product kernel computes are
// rewritten into the panel layout it reads (rt::pack_weights), so nothing is packed at run time;
// a float Gemm's constant transposed B is stored transposed back (transB = 0), the layout its
// kernel reads fastest. With vnni_layout (Target::int8_dot_product), a QLinearConv that rt::qconv_vnni
// computes gets its weights in that kernel's layout as well, as the extra input kVnniWeightsInput.
// Returns the nodes rewritten.
int pack_weights(Graph& g, bool vnni_layout);

}  // namespace onnxc
