// pack-weights: see kernel_passes.h. A packed Conv weight keeps its shape (only the order of its
// elements changes) and becomes a new value, so a weight another node also reads stays intact.
#include <optional>

#include "onnxc/packed_gemm.h"
#include "ops/conv_algorithm.h"
#include "passes/kernel_passes.h"
#include "passes/passes.h"

namespace onnxc {
namespace {

void pack_conv(Graph& g, Node& conv) {
  const Tensor& w = *conv.inputs[1]->constant;
  const int64_t m = w.shape[0], k = w.numel() / std::max<int64_t>(m, 1);
  Tensor p(w.dtype, w.shape);
  rt::pack_weights(w.data<float>(), m, k, p.data<float>());
  conv.inputs[1] = add_constant(g, conv.inputs[1]->name + "_packed", std::move(p));
  conv.set_attr_int(kPackedWeightsAttr, 1);
}

// QLinearConv through rt::qconv_vnni: its weights in that kernel's layout as one more input; the original
// stays for the matrix product the generated code takes without VNNI.
bool add_vnni_weights(Graph& g, Node& conv) {
  if (conv.has_input(kVnniWeightsInput)) return false;
  std::optional<Tensor> packed = qlinear_conv_vnni_weights(conv);
  if (!packed) return false;
  conv.inputs.resize(kVnniWeightsInput, nullptr);  // an absent bias stays absent
  conv.inputs.push_back(add_constant(g, conv.inputs[3]->name + "_vnni", std::move(*packed)));
  return true;
}

// Float Gemm with a constant transposed B: store B^T instead and clear transB, so the kernel
// reads B row by row (rt::gemm's fast path).
bool untranspose_gemm_weight(Graph& g, Node& gemm) {
  if (gemm.attr_int("transA", 0) != 0 || gemm.attr_int("transB", 0) == 0 || !gemm.inputs[1]->constant ||
      gemm.inputs[1]->dtype != DType::Float)
    return false;
  const Tensor& b = *gemm.inputs[1]->constant;
  const int64_t n = b.shape[0], k = b.shape[1];
  Tensor t(DType::Float, {k, n});
  for (int64_t j = 0; j < n; ++j)
    for (int64_t l = 0; l < k; ++l) t.data<float>()[l * n + j] = b.data<float>()[j * k + l];
  gemm.inputs[1] = add_constant(g, gemm.inputs[1]->name + "_t", std::move(t));
  gemm.set_attr_int("transB", 0);
  return true;
}

}  // namespace

int pack_weights(Graph& g, bool vnni_layout) {
  int packed = 0;
  for (auto& node : g.nodes) {
    Node& n = *node;
    if (!n.domain.empty() || n.has_attr(kPackedWeightsAttr)) continue;
    if (n.op_type == "Conv" && conv_packs_weights(n)) {
      pack_conv(g, n);
      ++packed;
    } else if (n.op_type == "Gemm" && untranspose_gemm_weight(g, n)) {
      ++packed;
    } else if (vnni_layout && n.op_type == "QLinearConv" && add_vnni_weights(g, n)) {
      ++packed;
    }
  }
  g.relink();
  // The kernels of control-flow bodies (If branches, Loop and Scan bodies) read the same layout.
  for (auto& node : g.nodes)
    for (auto& [name, a] : node->attrs) {
      if (a.kind == Attribute::Kind::Graph && a.g) packed += pack_weights(*a.g, vnni_layout);
      for (auto& sub : a.graphs) packed += pack_weights(*sub, vnni_layout);
    }
  return packed;
}

}  // namespace onnxc
