// How a Conv node is computed: chosen at compile time per layer from its shape and types, and
// shared by the Conv emitter and the pass that packs weights for it (passes/pack_weights.cpp).
#pragma once

#include <string>

#include "ir/ir.h"

namespace onnxc {

enum class ConvAlgorithm {
  Gemm,       // float, one group, constant weights: packed-weight matrix product (rt::conv_gemm)
  Depthwise,  // float 2-d, one channel per group: rt::conv_depthwise
  Direct,     // anything else: the reference loop nest (rt::conv)
};

// Whether the Conv may use the Gemm algorithm once its weights are packed (pack-weights does it).
bool conv_packs_weights(const Node& conv);
ConvAlgorithm conv_algorithm(const Node& conv);
// The rt::Epilogue literal of the activation fused into the node (None when there is none).
std::string epilogue_code(const Node& node);

// Internal attributes the kernel passes leave on Conv and Gemm nodes (never in a model file).
constexpr const char* kPackedWeightsAttr = "onnxc.packed_weights";  // int 1: input 1 is packed
constexpr const char* kActivationAttr = "onnxc.activation";         // string: the fused activation
constexpr const char* kActivationAlphaAttr = "onnxc.activation_alpha";
constexpr const char* kActivationBetaAttr = "onnxc.activation_beta";

}  // namespace onnxc
