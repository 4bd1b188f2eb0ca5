// --report and --report-json: the memory plan and per-step cost, for a person and for tools.
#pragma once

#include <string>

#include "passes/pipeline.h"

namespace onnxc {

// A readable report: totals, every step (op, shapes, MACs, bytes moved, notes) and every
// tensor (storage, offset, size, lifetime).
std::string report_text(const Compilation& c);
// The same as JSON: arena_bytes, weights_bytes, peak_live_bytes, steps[], tensors[].
std::string report_json(const Compilation& c);
// onnxc --check --report-json: the inferred dtype and shape of every value of the main graph
// (inputs, initializers, node outputs, folded ones included), before any optimisation.
std::string inferred_values_json(const Model& m);
// s as a JSON string literal, quotes included.
std::string json_string(const std::string& s);

}  // namespace onnxc
