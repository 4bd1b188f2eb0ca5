// What one step computes and moves: its multiply-accumulates (or comparable operations) and the
// bytes it reads and writes. --report lists them; `onnxc bench --layers` sets each step's measured
// time against them (a roofline: compute-bound or memory-bound from their ratio).
#pragma once

#include <cstdint>

#include "ir/ir.h"
#include "ops/op.h"

namespace onnxc {

// The op's own count (OpDef::macs: Conv, ConvTranspose, Gemm, MatMul, the pools, Resize, fused
// elementwise chains, ...) or, without one, one operation per element of the node's largest
// tensor (elementwise ops, activations, normalisations, Softmax, reductions); 0 for ops that only
// move data (Transpose, Concat, Slice, Gather, Pad, views, ...).
int64_t node_macs(const Node& n, const OpDef& op);

// Bytes the node reads and writes, each input (weights included) and output counted once.
int64_t node_bytes_moved(const Node& n);

}  // namespace onnxc
