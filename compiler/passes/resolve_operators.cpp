#include <algorithm>

#include "ops/onnx_versions.h"
#include "ops/op.h"
#include "passes/passes.h"

namespace onnxc {

static void resolve_graph(Graph& g, Diagnostics& diag) {
  for (auto& np : g.nodes) {
    Node& n = *np;
    std::string op_name = n.domain.empty() ? n.op_type : n.domain + "." + n.op_type;
    int max_opset = max_known_opset(n.domain);
    // ONNX Runtime's quantized operators (QOperator format) and onnxc's own that onnxc
    // implements: version 1, the only one.
    if (max_opset == 0 && (n.domain == "com.microsoft" || n.domain == "onnxc")) {
      if (const OpDef* def = find_op(n.domain, n.op_type); def && def->versions == std::vector<int>{1}) {
        n.version = 1;
        continue;
      }
    }
    if (max_opset == 0) {
      diag.unsupported(n.describe(), fmt::format("domain '{}' is not supported", n.domain),
                       "onnxc compiles the ONNX domains (ai.onnx, ai.onnx.ml, ai.onnx.preview.training); replace custom ops "
                       "with standard ones");
      continue;
    }
    if (n.opset > max_opset) {
      diag.unsupported(n.describe(),
                       fmt::format("the model imports opset {} of '{}', newer than onnxc knows ({})", n.opset,
                                   n.domain.empty() ? "ai.onnx" : n.domain, max_opset),
                       fmt::format("convert the model to opset {} or lower (onnx.version_converter)", max_opset));
      continue;
    }
    if (!onnx_since_versions(n.domain, n.op_type)) {
      diag.invalid(n.describe(), fmt::format("'{}' is not an operator of ONNX", op_name),
                   "check the op_type spelling and domain");
      continue;
    }
    int at = 0;
    if (op_removed(n.domain, n.op_type, n.opset, &at)) {
      diag.invalid(n.describe(), fmt::format("{} was removed from ONNX in opset {}", op_name, at),
                   "use its replacement or an older opset");
      continue;
    }
    n.version = resolve_op_version(n.domain, n.op_type, n.opset);
    if (n.version == 0) {
      diag.invalid(n.describe(), fmt::format("{} does not exist yet in opset {}", op_name, n.opset),
                   "raise the model's opset_import");
      continue;
    }
    const OpDef* def = find_op(n.domain, n.op_type);
    if (!def) {
      diag.unsupported(n.describe(), fmt::format("operator {} is not implemented by onnxc", op_name),
                       "see docs/conformance.md for the supported operators");
      continue;
    }
    if (std::find(def->versions.begin(), def->versions.end(), n.version) == def->versions.end()) {
      diag.unsupported(n.describe(),
                       fmt::format("version {} of {} is not implemented (onnxc has versions {})", n.version, op_name,
                                   fmt::join(def->versions, ", ")),
                       "convert the model to an opset whose version of this operator onnxc implements");
      continue;
    }
    for (Graph* sub : n.subgraphs()) resolve_graph(*sub, diag);
  }
}

void resolve_operators(Model& m) {
  Diagnostics diag;
  resolve_graph(m.graph, diag);
  diag.throw_if_any();
}

}  // namespace onnxc
