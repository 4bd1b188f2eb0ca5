// Passes that prepare nodes for the optimised kernels of runtime-support.
#pragma once

#include "ir/ir.h"

namespace onnxc {

// fuse-activation: an activation (Relu, Clip with constant bounds, LeakyRelu, Sigmoid,
// HardSigmoid, HardSwish, Tanh) whose input is a float Conv's or Gemm's output that nothing
// else reads is merged into that node, which applies it in its epilogue. Returns the
// activations removed.
int fuse_activation(Graph& g);

// pack-weights: the constant weights of every Conv that the matrix-product kernel computes are
// rewritten into the panel layout it reads (rt::pack_weights), so nothing is packed at run time;
// a float Gemm's constant transposed B is stored transposed back (transB = 0), the layout its
// kernel reads fastest. Returns the nodes rewritten.
int pack_weights(Graph& g);

}  // namespace onnxc
