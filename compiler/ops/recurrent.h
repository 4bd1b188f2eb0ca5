// How a recurrent node (RNN, GRU, LSTM) is computed: shared by its emitter and fit-scratch.
#pragma once

#include "ir/ir.h"

namespace onnxc {

// Internal attribute fit-scratch leaves on an LSTM: int 1: the state lives in the outputs
// (rt::lstm_in_outputs), no scratch.
constexpr const char* kStateInOutputsAttr = "onnxc.state_in_outputs";

// Internal attribute fit-scratch leaves on an LSTM with packed weights: int 1: the input
// projections of all steps come first, into scratch (rt::RnnParams::projected).
constexpr const char* kProjectedAttr = "onnxc.projected";

// Whether pack-weights stores an LSTM's W and R in the unit-chunk layout (rt::pack_recurrent_weights):
// float, W and R constant, on SIMD targets.
bool lstm_packs_weights(const Node& lstm, bool simd);

// Scratch bytes of an LSTM's gate buffers (rt::lstm) and of its input projections.
std::size_t lstm_gate_scratch_bytes(const Node& lstm);
std::size_t lstm_projection_bytes(const Node& lstm);

// Whether an LSTM can keep its state in its outputs: its element type is its own compute type
// (float, double) and it produces Y and Y_c.
bool lstm_can_keep_state_in_outputs(const Node& lstm);

}  // namespace onnxc
