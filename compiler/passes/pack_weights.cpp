// pack-weights: see kernel_passes.h. A packed Conv weight keeps its shape (only the order of its
// elements changes) and becomes a new value, so a weight another node also reads stays intact.
#include <algorithm>
#include <optional>

#include "onnxc/conv.h"
#include "onnxc/conv_channel_lanes.h"
#include "onnxc/conv_transpose_gemm.h"
#include "onnxc/conv_transpose_phases.h"
#include "onnxc/gemm_packed_b.h"
#include "onnxc/packed_gemm.h"
#include "onnxc/rnn.h"
#include "onnxc/winograd.h"
#include "ops/conv_algorithm.h"
#include "ops/quant_common.h"
#include "ops/recurrent.h"
#include "passes/kernel_passes.h"
#include "passes/passes.h"

namespace onnxc {
namespace {

// Packed for the matrix product (rt::pack_weights) or for rt::conv_direct_packed; a grouped
// Conv's weights group by group, each group's rows as a one-group weight (rt::conv_each_group).
void pack_conv(Graph& g, Node& conv, bool direct) {
  const Tensor& w = *conv.inputs[1]->constant;
  const int64_t groups = conv.attr_int("group", 1);
  const int64_t m = w.shape[0] / groups, k = w.numel() / std::max<int64_t>(w.shape[0], 1);
  Tensor p(w.dtype, w.shape);
  for (int64_t group = 0; group < groups; ++group)
    (direct ? rt::pack_direct_weights : rt::pack_weights)(w.data<float>() + group * m * k, m, k,
                                                           p.data<float>() + group * m * k);
  conv.inputs[1] = add_constant(g, conv.inputs[1]->name + "_packed", std::move(p));
  conv.set_attr_int(kPackedWeightsAttr, 1);
}

// Packed for rt::conv_channel_lanes: group by group into panels of W^T (kPackedBCols output
// channels each, the last zero-padded), as shape [groups x whole panels of rows, C / group, taps...]
// (conv_params_of takes the output channels from the output).
void pack_conv_channel_lanes(Graph& g, Node& conv) {
  const Tensor& w = *conv.inputs[1]->constant;
  const int64_t groups = conv.attr_int("group", 1), m = w.shape[0];
  const int64_t k = w.numel() / std::max<int64_t>(m, 1);
  Shape shape = w.shape;
  shape[0] = rt::channel_lanes_packed_rows(m, groups);
  Tensor p(w.dtype, shape);
  rt::pack_channel_lane_weights(w.data<float>(), m, groups, k, p.data<float>());
  conv.inputs[1] = add_constant(g, conv.inputs[1]->name + "_lanes", std::move(p));
  conv.set_attr_int(kPackedWeightsAttr, 1);
  conv.set_attr_int(kChannelLanesAttr, 1);
}

// Packed for rt::conv_transpose_gemm: each group's weights transposed to [M/g * taps, C/g], in
// packed_gemm.h's panels (the same number of floats, so the shape stays).
void pack_conv_transpose(Graph& g, Node& conv_transpose) {
  const Tensor& w = *conv_transpose.inputs[1]->constant;
  const rt::ConvParams p = conv_transpose_params(conv_transpose);
  Tensor packed(w.dtype, w.shape);
  std::vector<float> t(static_cast<std::size_t>(rt::conv_transpose_gemm_rows(p) * (p.in_channels / p.group)));
  rt::pack_conv_transpose_weights(p, w.data<float>(), t.data(), packed.data<float>());
  conv_transpose.inputs[1] = add_constant(g, conv_transpose.inputs[1]->name + "_packed", std::move(packed));
  conv_transpose.set_attr_int(kPackedWeightsAttr, 1);
}

// Laid out per stride phase for rt::conv_transpose_phases (the same floats, so the shape stays).
void pack_conv_transpose_phases(Graph& g, Node& conv_transpose) {
  const Tensor& w = *conv_transpose.inputs[1]->constant;
  Tensor packed(w.dtype, w.shape);
  rt::pack_conv_transpose_phase_weights(conv_transpose_params(conv_transpose), w.data<float>(), packed.data<float>());
  conv_transpose.inputs[1] = add_constant(g, conv_transpose.inputs[1]->name + "_phases", std::move(packed));
  conv_transpose.set_attr_int(kPackedWeightsAttr, 1);
}

// Transformed for rt::conv_winograd: 16 matrices [M, C], each packed, as shape [M, C, 4, 4]
// (conv_window then takes the kernel as 3 x 3).
void pack_conv_winograd(Graph& g, Node& conv) {
  const Tensor& w = *conv.inputs[1]->constant;
  const int64_t m = w.shape[0], c = w.shape[1];
  Tensor p(w.dtype, {m, c, 4, 4});
  rt::winograd_pack_weights(w.data<float>(), m, c, p.data<float>());
  conv.inputs[1] = add_constant(g, conv.inputs[1]->name + "_winograd", std::move(p));
  conv.set_attr_int(kPackedWeightsAttr, 1);
}

// `values` as n's inputs from `at` on, the inputs before them that are absent (the bias) staying
// absent and those after them (a residual: kResidualInput, kMatMulResidualInput) in place.
void set_packed_inputs(Node& n, std::size_t at, const std::vector<Value*>& values) {
  if (n.inputs.size() < at + values.size()) n.inputs.resize(at + values.size(), nullptr);
  std::copy(values.begin(), values.end(), n.inputs.begin() + static_cast<std::ptrdiff_t>(at));
}

// A QLinearConv's weights in one kernel's layout (pack(conv), none where that kernel does not
// apply) as its input `index`, named after the weights plus `suffix`; the original weights stay.
bool add_weights_input(Graph& g, Node& conv, std::size_t index, const char* suffix,
                       std::optional<Tensor> (*pack)(const Node&)) {
  if (conv.has_input(index)) return false;
  std::optional<Tensor> packed = pack(conv);
  if (!packed) return false;
  set_packed_inputs(conv, index, {add_constant(g, conv.inputs[3]->name + suffix, std::move(*packed))});
  return true;
}

// MatMulInteger / QLinearMatMul through rt::qgemm_packed: b packed and its column terms as two
// more inputs; the original stays for rt::matmul_integer where the code is built without VNNI or AVX2.
bool add_qgemm_packed_b(Graph& g, Node& n) {
  const std::size_t at = n.op_type == "MatMulInteger" ? kQGemmPackedInput : kQLinearQGemmPackedInput;
  if (n.has_input(at)) return false;
  std::optional<std::pair<Tensor, Tensor>> packed = integer_product_packed_b(n);
  if (!packed) return false;
  const std::string name = n.inputs[n.op_type == "MatMulInteger" ? 1 : 3]->name;
  set_packed_inputs(n, at, {add_constant(g, name + "_qgemm", std::move(packed->first)),
                            add_constant(g, name + "_qgemm_terms", std::move(packed->second))});
  return true;
}

// QLinearConv through rt::qconv_vnni (the matrix product takes the original without VNNI); not
// where pack-dot-product-weights gave it rt::qconv_avx2's pairs (a target sure of AVX2 and not
// of VNNI: native on an AVX2 host), which it takes. (Until this round the VNNI weights replaced
// the pairs there, leaving such Convs the im2col or plane kernel built without VNNI.)
bool add_vnni_weights(Graph& g, Node& conv) {
  if (conv.has_input(kAvx2PairsInput)) return false;
  return add_weights_input(g, conv, kVnniWeightsInput, "_vnni", qlinear_conv_vnni_weights);
}

// QLinearConv through rt::qconv_avx2.
bool add_avx2_pairs(Graph& g, Node& conv) {
  return add_weights_input(g, conv, kAvx2PairsInput, "_avx2_pairs", qlinear_conv_avx2_pairs);
}

// Float Gemm with a constant transposed B: store B^T instead and clear transB, so the kernel
// reads B row by row (rt::gemm's fast path); rt::gemm_dots reads B^T in place.
bool untranspose_gemm_weight(Graph& g, Node& gemm) {
  if (matrix_product_kernel(gemm) == "gemm_dots" || gemm.attr_int("transA", 0) != 0 || gemm.attr_int("transB", 0) == 0 || !gemm.inputs[1]->constant ||
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

// Float Gemm through rt::gemm_packed_b: B (or B^T with transB) in column panels, shape
// [panels, K, 16], transB cleared (the panels are B's columns either way).
bool pack_gemm_weight(Graph& g, Node& gemm) {
  if (!gemm_packs_b(gemm)) return false;
  const Tensor& b = *gemm.inputs[1]->constant;
  const bool tb = gemm.attr_int("transB", 0) != 0;
  const int64_t k = tb ? b.shape[1] : b.shape[0], n = tb ? b.shape[0] : b.shape[1];
  Tensor p(DType::Float, {rt::packed_b_panels(n), k, rt::kPackedBCols});
  rt::pack_b_panels(b.data<float>(), k, n, tb ? 1 : n, tb ? k : 1, p.data<float>());
  gemm.inputs[1] = add_constant(g, gemm.inputs[1]->name + "_panels", std::move(p));
  gemm.set_attr_int("transB", 0);
  gemm.set_attr_int(kPackedWeightsAttr, 1);
  return true;
}

// MatMul by a constant 2-D B as a Gemm of all A's rows (matmul_as_gemm): [37, 1, 192] x
// [192, 576] is one product of 37 rows, not 37 products of one row each reading all of B.
int matmuls_as_gemms(Graph& g) {
  std::vector<Node*> matmuls;
  for (auto& node : g.nodes)
    if (matmul_can_be_gemm(*node)) matmuls.push_back(node.get());
  for (Node* mm : matmuls) matmul_as_gemm(g, *mm, nullptr);
  return static_cast<int>(matmuls.size());
}

// QLinearConv through rt::qconv_pointwise: its weights in that kernel's layout as one more input.
bool add_dual_mac_weights(Graph& g, Node& conv, bool helium) {
  if (conv.has_input(kDualMacWeightsInput)) return false;
  std::optional<Tensor> packed = qlinear_conv_dual_mac_weights(conv, helium);
  if (!packed) return false;
  set_packed_inputs(conv, kDualMacWeightsInput, {add_constant(g, conv.inputs[3]->name + "_pairs", std::move(*packed))});
  return true;
}

// QLinearConv through rt::qconv_gemm on the M4 and M7: its weights in rt::qconv_gemm_pairs'
// layout as one more input (the generated code picks the layout its core's kernel reads).
bool add_dual_mac_pairs(Graph& g, Node& conv) {
  return add_weights_input(g, conv, kDualMacPairsInput, "_k_pairs", qlinear_conv_dual_mac_pairs);
}

// Float LSTM with constant W and R: both in rt::pack_recurrent_weights' unit-chunk layout (the
// same number of floats, so the shapes stay), which the SIMD kernels read with vertical
// multiply-adds instead of one horizontal sum per gate row.
bool pack_lstm_weights(Graph& g, Node& lstm) {
  if (!lstm_packs_weights(lstm, true)) return false;
  for (int i : {1, 2}) {
    const Tensor& m = *lstm.inputs[i]->constant;  // [directions, 4 * hidden, cols]
    Tensor p(m.dtype, m.shape);
    rt::pack_recurrent_weights(m.shape[0], 4, m.shape[1] / 4, m.shape[2], m.data<float>(), p.data<float>());
    lstm.inputs[i] = add_constant(g, lstm.inputs[i]->name + "_chunks", std::move(p));
  }
  lstm.set_attr_int(kPackedWeightsAttr, 1);
  return true;
}

// Calls rewrite(g, node) on every node of g and of the graphs nested in its nodes' attributes
// (the kernels of If branches, Loop and Scan bodies read the same layouts); returns the number
// of rewrites that returned true.
template <class Rewrite>
int rewrite_nodes(Graph& g, Rewrite rewrite) {
  int rewritten = 0;
  for (auto& node : g.nodes) rewritten += rewrite(g, *node) ? 1 : 0;
  g.relink();
  for (auto& node : g.nodes)
    for (Graph* sub : node->subgraphs()) rewritten += rewrite_nodes(*sub, rewrite);
  return rewritten;
}

}  // namespace

int pack_dual_mac_weights(Graph& g, bool helium) {
  return rewrite_nodes(g, [helium](Graph& graph, Node& n) {
    if (!n.domain.empty() || n.op_type != "QLinearConv") return false;
    if (!n.has_attr(kDepthwise3x3Attr) && qlinear_conv_depthwise_3x3_applies(n)) {
      n.set_attr_int(kDepthwise3x3Attr, 1);
      if (!helium) n.set_attr_int(kDspScratchAttr, 0);  // (on the stack until fit-scratch finds room)
      return true;
    }
    if (!add_dual_mac_weights(graph, n, helium) && !add_dual_mac_pairs(graph, n)) return false;
    if (!helium) n.set_attr_int(kDspScratchAttr, 0);
    return true;
  });
}

int pack_dot_product_weights(Graph& g, bool vnni, bool byte_permute, bool pairs) {
  return rewrite_nodes(g, [vnni, byte_permute, pairs](Graph& graph, Node& n) {
    if (!n.domain.empty() || n.op_type != "QLinearConv") return false;
    const bool in_place = (byte_permute && qlinear_conv_depthwise_permute_applies(n)) ||
                          (pairs && qlinear_conv_depthwise_avx2_applies(n));
    if (in_place && !n.has_attr(kDepthwiseInPlaceAttr)) {
      n.set_attr_int(kDepthwiseInPlaceAttr, 1);
      return true;
    }
    if (pairs) return add_avx2_pairs(graph, n);
    if (!vnni || !add_vnni_weights(graph, n)) return false;
    n.set_attr_int(kVnniOnlyAttr, 1);
    return true;
  });
}

int pack_weights(Graph& g, bool vnni_layout, bool direct_layout, bool int8_products, int64_t float_lanes) {
  const int products = matmuls_as_gemms(g);
  return products + rewrite_nodes(g, [vnni_layout, direct_layout, int8_products, float_lanes](Graph& graph, Node& n) {
    if (int8_products && n.domain == "onnxc" && n.op_type == "QLinearMatMulBias") return add_qgemm_packed_b(graph, n);
    if (!n.domain.empty() || n.has_attr(kPackedWeightsAttr)) return false;
    if (n.op_type == "Conv" && n.attr_int(kWinogradRowsAttr, 0) > 0) {
      pack_conv_winograd(graph, n);
      return true;
    }
    if (direct_layout && n.op_type == "Conv" && conv_packs_weights(n) &&
        n.attr_int(kChannelLanesAttr, conv_prefers_channel_lanes(n, float_lanes) ? 1 : 0) == 1) {
      pack_conv_channel_lanes(graph, n);
      return true;
    }
    if (n.op_type == "Conv" && conv_packs_weights(n)) {
      pack_conv(graph, n, false);
      return true;
    }
    if (direct_layout && n.op_type == "Conv" && conv_direct_packs_weights(n)) {
      pack_conv(graph, n, true);
      return true;
    }
    if (n.op_type == "ConvTranspose" && n.attr_int(kTransposePhasesAttr, 0) > 0) {
      pack_conv_transpose_phases(graph, n);
      return true;
    }
    if (n.op_type == "ConvTranspose" && conv_transpose_gemm_applies(n)) {
      pack_conv_transpose(graph, n);
      return true;
    }
    if (n.op_type == "Gemm") return pack_gemm_weight(graph, n) || untranspose_gemm_weight(graph, n);
    if (direct_layout && pack_lstm_weights(graph, n)) return true;
    if (int8_products && (n.op_type == "MatMulInteger" || n.op_type == "QLinearMatMul"))
      return add_qgemm_packed_b(graph, n);
    return vnni_layout && n.op_type == "QLinearConv" && add_vnni_weights(graph, n);
  });
}

}  // namespace onnxc
