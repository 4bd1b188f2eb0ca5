// How a recurrent node (RNN, GRU, LSTM) is computed: shared by its emitter and fit-scratch.
#pragma once

#include "ir/ir.h"

namespace onnxc {

// Internal attribute fit-scratch leaves on an LSTM: int 1: the state lives in the outputs
// (rt::lstm_in_outputs), no scratch.
constexpr const char* kStateInOutputsAttr = "onnxc.state_in_outputs";

// Whether an LSTM can keep its state in its outputs: its element type is its own compute type
// (float, double) and it produces Y and Y_c.
bool lstm_can_keep_state_in_outputs(const Node& lstm);

}  // namespace onnxc
