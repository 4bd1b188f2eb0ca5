// The graph as text, for `--dump-after PASS`: one line per value and node, in execution order,
// nested graphs indented under the node that owns them. Deterministic (attributes in name order,
// floats in their shortest round-trip form), so two dumps compare with diff.
#pragma once

#include <string>

#include "ir/ir.h"

namespace onnxc {

std::string graph_text(const Graph& g);

}  // namespace onnxc
