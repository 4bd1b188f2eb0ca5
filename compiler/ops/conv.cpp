// Conv: N-d convolution (1 to 3 spatial dims) with groups, pads, strides, dilations, auto_pad.
#include <algorithm>
#include <optional>

#include "onnxc/conv.h"
#include "onnxc/conv_band_simd.h"
#include "onnxc/conv_gemm_stacked.h"
#include "onnxc/conv_grouped.h"
#include "onnxc/winograd.h"
#include "ops/conv_algorithm.h"
#include "ops/emitter.h"
#include "ops/spatial.h"

namespace onnxc {

bool conv_groups_run_one_group_kernels(const Node& n) {
  const int64_t group = n.attr_int("group", 1);
  if (group == 1) return true;
  // One input channel per group is the depthwise kernels' (and the generic direct loops' with a
  // channel multiplier).
  return n.inputs[0]->shape[1] / group >= kMinGroupWidthForProduct;
}

bool conv_packs_weights(const Node& n) {
  return n.inputs[0]->dtype == DType::Float && conv_groups_run_one_group_kernels(n) && n.inputs[1]->constant &&
         n.attr_int(kIm2colColsAttr, -1) != 0;
}

bool conv_fits_direct_packed(const Node& n) {
  return n.inputs[0]->dtype == DType::Float && conv_groups_run_one_group_kernels(n) && n.inputs[1]->constant &&
         n.inputs[0]->shape.size() <= 4;
}

bool conv_direct_packs_weights(const Node& n) {
  return conv_fits_direct_packed(n) && n.attr_int(kIm2colColsAttr, -1) == 0;
}

namespace {

bool conv_shifted_input(const Node& n) { return conv_packs_weights(n) && n.attr_int(kShiftedInputAttr, 0) == 1; }

bool conv_winograd(const Node& n) { return n.attr_int(kWinogradRowsAttr, 0) > 0; }

bool conv_stacked_im2col(const Node& n) { return conv_packs_weights(n) && n.attr_int(kStackedIm2colAttr, 0) == 1; }

}  // namespace

ConvAlgorithm conv_algorithm(const Node& n) {
  if (conv_winograd(n)) return ConvAlgorithm::Winograd;
  if (n.attr_int(kPackedWeightsAttr, 0) == 1) {
    if (conv_shifted_input(n)) return ConvAlgorithm::Shifted;
    if (conv_stacked_im2col(n)) return ConvAlgorithm::Stacked;
    if (conv_packs_weights(n)) return n.attr_int(kChannelLanesAttr, 0) == 1 ? ConvAlgorithm::ChannelLanes : ConvAlgorithm::Gemm;
    return n.attr_int(kBandAttr, 0) == 1 ? ConvAlgorithm::Band : ConvAlgorithm::DirectPacked;
  }
  const Shape& x = n.inputs[0]->shape;
  const Shape& w = n.inputs[1]->shape;
  bool one_channel_per_group = n.attr_int("group", 1) == x[1] && w[0] == x[1] && w[1] == 1;
  const bool kernel_rows_fit = x.size() < 4 || w[2] <= rt::depthwise_detail::kMaxKernelRows;
  if (n.inputs[0]->dtype == DType::Float && one_channel_per_group && x.size() <= 4 && kernel_rows_fit)
    return ConvAlgorithm::Depthwise;
  return ConvAlgorithm::Direct;
}

std::string epilogue_code(const Node& n) {
  static const std::map<std::string, std::string> kinds = {
      {"", "None"},          {"Relu", "Relu"},       {"Clip", "Clip"},           {"LeakyRelu", "LeakyRelu"},
      {"Sigmoid", "Sigmoid"}, {"HardSigmoid", "HardSigmoid"}, {"HardSwish", "HardSwish"}, {"Tanh", "Tanh"},
      {"Gelu", "Gelu"},       {"GeluTanh", "GeluTanh"}, {"Silu", "Silu"}};
  auto kind = kinds.find(n.attr_string(kActivationAttr, ""));
  if (kind == kinds.end()) fail_unsupported(n, "fused activation " + n.attr_string(kActivationAttr, ""));
  return fmt::format("rt::Epilogue{{rt::Activation::{}, {}, {}}}", kind->second,
                     float_literal(n.attr_float(kActivationAlphaAttr, 0.0f)),
                     float_literal(n.attr_float(kActivationBetaAttr, 0.0f)));
}

namespace {

// The kernel's spatial dims: the weight's, except for weights pack-weights transformed for
// rt::conv_winograd (4 x 4 per channel pair, from 3 x 3).
std::vector<int64_t> conv_kernel(const Node& n) {
  if (conv_winograd(n) && n.attr_int(kPackedWeightsAttr, 0) == 1) return {3, 3};
  return weight_kernel(n, input(n, 1));
}

Window conv_window(const Node& n) {
  const Value& x = input(n, 0);
  std::vector<int64_t> in(x.shape.begin() + 2, x.shape.end());
  return resolve_window(n, in, conv_kernel(n), false);
}

void infer_conv(Node& n) {
  check_arity(n, 2, 3, 1, 1);
  const Value& x = input(n, 0);
  const Value& w = input(n, 1);
  require_float(n, 0);
  if (x.shape.size() < 3 || x.shape.size() > 5)
    fail_unsupported(n, fmt::format("input rank {} (onnxc supports 1 to 3 spatial dims)", x.shape.size()));
  if (w.shape.size() != x.shape.size())
    fail_invalid(n, fmt::format("weight rank {} differs from input rank {}", w.shape.size(), x.shape.size()));
  if (w.dtype != x.dtype) fail_invalid(n, "weight and input have different types");
  int64_t group = n.attr_int("group", 1);
  int64_t c = x.shape[1], m = w.shape[0];
  if (group < 1 || c % group != 0 || m % group != 0)
    fail_invalid(n, fmt::format("group {} does not divide the {} input and {} output channels", group, c, m));
  if (w.shape[1] * group != c)
    fail_invalid(n, fmt::format("weight has {} input channels per group; input has {} channels in {} groups",
                                w.shape[1], c, group));
  if (n.has_input(2) && n.inputs[2]->shape != Shape{m})
    fail_invalid(n, fmt::format("bias shape {} should be [{}]", shape_str(n.inputs[2]->shape), m));
  if (n.has_input(2) && n.inputs[2]->dtype != x.dtype) fail_invalid(n, "bias and input have different types");
  Window win = conv_window(n);
  Shape out = {x.shape[0], m};
  out.insert(out.end(), win.out.begin(), win.out.end());
  set_output(n, 0, x.dtype, out);
}

rt::ConvParams conv_params_of(const Node& n) {
  const Value& x = *n.inputs[0];
  // The output's channels: weights packed for rt::conv_channel_lanes have whole panels of rows.
  return conv_params(conv_window(n), x.shape[0], x.shape[1], n.outputs[0]->shape[1], n.attr_int("group", 1));
}

// What the one-group kernels compute: the whole Conv, or one group of one image of a grouped one
// (rt::conv_each_group). The kernel choice and its scratch are made on these.
rt::ConvParams group_params_of(const Node& n) { return rt::conv_group_params(conv_params_of(n)); }

}  // namespace

namespace {

// The Conv's geometry where rt::conv_band can compute it (float, constant weights, 2-d).
std::optional<rt::ConvParams> band_params(const Node& n) {
  if (!conv_fits_direct_packed(n) || n.inputs[0]->shape.size() != 4) return std::nullopt;
  const rt::ConvParams p = conv_params_of(n);
  if (!rt::band_detail::applies(p)) return std::nullopt;
  return p;
}

}  // namespace

bool conv_band_preferred(const Node& n) {
  const auto p = band_params(n);
  if (!p) return false;
  if (p->group == 1)
    return p->in_channels <= kBandMaxInChannels && p->k_h * p->k_w >= kBandMinFirstLayerTaps &&
           p->out_w >= kBandMinFirstLayerWidth;
  return p->in_channels / p->group <= kBandMaxNarrowWidth;
}

bool conv_band_without_scratch(const Node& n) {
  const auto p = band_params(n);
  if (!p) return false;
  if (p->group == 1) return p->in_channels <= kBandMaxInChannels;
  return p->in_channels / p->group <= kBandMaxGroupWidth && p->out_h * p->out_w >= kBandMinGroupedColumns;
}

Im2colShape conv_im2col_shape(const Node& n) {
  const rt::ConvParams p = group_params_of(n);
  if (n.inputs[0]->dtype != DType::Float || !conv_groups_run_one_group_kernels(n) || rt::conv_reads_input_as_matrix(p))
    return {};
  const int64_t k = rt::conv_gemm_k(p);
  // Any block is correct; one of a few columns is still whole 4 x 4 tiles without SIMD, and
  // partial vectors with it, far fewer loads than the direct kernel's.
  return {k * static_cast<int64_t>(sizeof(float)), rt::conv_gemm_n(p), rt::packed_gemm_block_cols(k),
          rt::kBlockColsQuantum, rt::packed_gemm_detail::kScalarTileCols};
}

bool conv_fits_shifted_input(const Node& n) {
  return conv_packs_weights(n) && n.inputs[0]->shape.size() <= 4 && rt::conv_shape_reads_shifted_input(group_params_of(n));
}

bool conv_prefers_stacked_im2col(const Node& n, int64_t float_lanes) {
  if (!conv_fits_direct_packed(n)) return false;
  const rt::ConvParams p = group_params_of(n);
  if (rt::conv_reads_input_as_matrix(p)) return false;
  // AVX-512 and AArch64 have 32 vector registers, AVX2 16 (rt::kVectorRegisters).
  const int64_t registers = float_lanes == 8 ? 16 : 32;
  return rt::conv_gemm_stacked_preferred(p, float_lanes, registers);
}

bool conv_gemm_reads_padded_input(const Node& n, int64_t im2col_cols) {
  return rt::conv_gemm_reads_padded_input(group_params_of(n), im2col_cols);
}

int64_t conv_depth(const Node& n) { return rt::conv_gemm_k(group_params_of(n)); }

int64_t direct_packed_max_columns(int64_t float_lanes) {
  return float_lanes >= 8 ? kDirectPackedMaxVectors * float_lanes : kDirectPackedMaxColumns;
}

bool conv_prefers_channel_lanes(const Node& n, int64_t lanes) {
  if (lanes < 4 || !conv_packs_weights(n) || conv_shifted_input(n) || conv_winograd(n) || n.inputs[0]->shape.size() > 5)
    return false;
  const rt::ConvParams p = group_params_of(n);
  const int64_t k = rt::conv_gemm_k(p), positions = rt::conv_gemm_n(p), channels = p.out_channels;
  auto filled = [lanes](int64_t count) {  // the share of lanes whole vectors of `count` fill
    return static_cast<double>(count) / static_cast<double>((count + lanes - 1) / lanes * lanes);
  };
  double channel_cost = (1.0 + static_cast<double>(kChannelLanesStoreMacs) / static_cast<double>(k)) / filled(channels);
  if (lanes < 16) {
    const bool avx2_in_place = lanes == 8 && rt::conv_reads_input_as_matrix(p);
    channel_cost *= static_cast<double>(avx2_in_place ? kChannelLanesAvx2InPlacePercent : kChannelLanesSmallTilePercent) / 100.0;
  }
  if (!rt::conv_reads_input_as_matrix(p)) {
    // conv_gemm's choice on the AVX-512 targets (rt::kShiftedInputProduct there; the compiler
    // itself is built without it): the input in place, or over its phase planes or a padded copy;
    // else im2col, which both orientations pay.
    const int64_t cols = conv_im2col_cols(n);
    const bool avx512 = lanes == 16;
    const bool in_place = (avx512 && k >= rt::kShiftedMinDepth && rt::conv_shape_reads_shifted_input(p)) ||
                          (avx512 && k >= rt::kPhaseMinDepth && rt::conv_shape_reads_phase_planes(p) &&
                           rt::conv_gemm_scratch_floats(p, cols) >= rt::conv_phase_floats(p)) ||
                          conv_gemm_reads_padded_input(n, cols);
    if (in_place)  // a copied float costs about kCopyCostInMacs multiply-adds
      channel_cost += static_cast<double>(rt::kCopyCostInMacs) / static_cast<double>(channels);
  }
  return channel_cost < 1.0 / filled(positions);
}

rt::ConvParams conv_geometry(const Node& n) { return conv_params_of(n); }

int64_t conv_phase_planes_cols(const Node& n) {
  if (!conv_packs_weights(n) || n.inputs[0]->shape.size() != 4) return 0;
  const rt::ConvParams p = group_params_of(n);
  const int64_t k = rt::conv_gemm_k(p), floats = rt::conv_phase_floats(p);
  if (k < rt::kPhaseMinDepth || !rt::conv_shape_reads_phase_planes(p) || k * rt::conv_gemm_n(p) < floats) return 0;
  return (floats + k - 1) / k;
}

int64_t conv_im2col_cols(const Node& n) {
  return n.attr_int(kIm2colColsAttr, rt::packed_gemm_block_cols(rt::conv_gemm_k(group_params_of(n))));
}

namespace {

std::size_t float_bytes(rt::index_t floats) { return static_cast<std::size_t>(floats) * sizeof(float); }

}  // namespace

int64_t float_conv_macs(const Node& n) {
  return n.outputs[0]->numel() * n.inputs[1]->shape[1] * shape_numel(conv_kernel(n));
}

int64_t conv_parallel_work(const Node& n) {
  const int64_t group = n.attr_int("group", 1);
  const bool depthwise = group > 1 && n.inputs[1]->shape[1] == 1 && n.outputs[0]->shape[1] == group;
  return float_conv_macs(n) * (depthwise ? kDepthwiseWorkPerMac : 1);
}

int64_t conv_group_slots_wanted(const Node& n) {
  const int64_t pairs = n.inputs[0]->shape[0] * n.attr_int("group", 1);
  if (pairs < kMinGroupTasks || !splits_into_tasks(n, conv_parallel_work(n))) return 1;
  return std::min(pairs, kGroupParallelSlots);
}

bool conv_fits_winograd(const Node& n) {
  if (n.inputs[0]->dtype != DType::Float || n.attr_int("group", 1) != 1 || !n.inputs[1]->constant ||
      n.inputs[0]->shape.size() != 4)
    return false;
  const rt::ConvParams p = conv_params_of(n);
  return rt::conv_fits_winograd(p) && p.out_h * p.out_w >= kWinogradMinOutputs &&
         p.out_channels >= kWinogradMinOutChannels && p.in_channels >= kWinogradMinInChannels;
}

int64_t winograd_preferred_rows(const Node& n) {
  const rt::ConvParams p = conv_params_of(n);
  const int64_t tw = rt::winograd_tiles_w(p);
  const int64_t most = std::clamp<int64_t>(kWinogradBlockFloats / (rt::kWinogradPoints * tw * p.in_channels), 1,
                                           rt::winograd_tiles_h(p));
  // The block's tiles are the products' columns: the most rows whose tiles fill whole vectors
  // (no partial tile), else the most rows.
  for (int64_t rows = most; rows >= 1; --rows)
    if (rows * tw % 16 == 0) return rows;
  return most;
}

int64_t winograd_group_rows(const Node& n, int64_t rows, bool avx512) {
  const rt::ConvParams p = conv_params_of(n);
  return avx512 && p.out_channels >= rt::kWinogradNarrowRows && rt::winograd_block_is_narrow(rows * rt::winograd_tiles_w(p))
             ? rt::kWinogradNarrowRows
             : rt::kPanelRows;
}

std::size_t winograd_scratch_bytes(const Node& n, int64_t rows, int64_t slots, int64_t group_rows) {
  return static_cast<std::size_t>(rt::winograd_scratch_floats(conv_params_of(n), rows, slots, group_rows)) *
         sizeof(float);
}

bool depthwise_needs_no_scratch(const Node& n, bool simd, bool stride2_in_place, int64_t channel_lanes) {
  const rt::ConvParams p = conv_params_of(n);
  if (channel_lanes > 0 && rt::depthwise_channels_detail::prefers_lanes(p, channel_lanes)) return false;
  return (simd && rt::depthwise_in_place_detail::depthwise_shape_is_flat_plane(p)) ||
         (stride2_in_place && rt::depthwise_in_place_detail::depthwise_shape_is_3x3_stride2(p));
}

std::size_t depthwise_slot_bytes(const Node& n) { return float_bytes(rt::conv_depthwise_scratch_floats(conv_params_of(n))); }

namespace {

// The scratch copies (kParallelSlotsAttr) of a depthwise Conv, or the product buffers of a Winograd one.
int64_t parallel_slots(const Node& n) { return n.attr_int(kParallelSlotsAttr, 1); }

// The im2col slots of a grouped Conv through the matrix product (kGroupSlotsAttr).
int64_t group_slots(const Node& n) { return n.attr_int(kGroupSlotsAttr, 1); }

// What the kernel the Conv gets needs: also asked before pack-weights (by fit-scratch, while
// planning), when a Conv the matrix product will compute does not have its packed weights yet.
std::size_t conv_scratch_bytes(const Node& n) {
  if (conv_winograd(n))
    return winograd_scratch_bytes(n, n.attr_int(kWinogradRowsAttr, 1), parallel_slots(n),
                                  n.attr_int(kWinogradGroupRowsAttr, rt::kPanelRows));
  if (conv_shifted_input(n) || conv_stacked_im2col(n)) return 0;
  if (conv_packs_weights(n))
    return float_bytes(rt::conv_gemm_scratch_floats(group_params_of(n), conv_im2col_cols(n))) *
           static_cast<std::size_t>(group_slots(n));
  switch (conv_algorithm(n)) {
    case ConvAlgorithm::Gemm:
    case ConvAlgorithm::ChannelLanes: return float_bytes(rt::conv_gemm_scratch_floats(group_params_of(n), conv_im2col_cols(n)));
    case ConvAlgorithm::Depthwise:
      return static_cast<std::size_t>(parallel_slots(n)) * depthwise_slot_bytes(n);
    case ConvAlgorithm::Winograd:
    case ConvAlgorithm::Shifted:
    case ConvAlgorithm::Stacked:
    case ConvAlgorithm::Band:
    case ConvAlgorithm::DirectPacked:
    case ConvAlgorithm::Direct: return 0;
  }
  return 0;
}

// The direct kernels leave a fused activation to rt::activate_row, whose literal epilogue links
// only that activation's math into firmware.
void emit_separate_activation(const Node& n, Emitter& e) {
  if (n.has_attr(kActivationAttr))
    e.linef("rt::activate_row({}, {}, {});", epilogue_code(n), e.out(0), n.outputs[0]->numel());
}

// A one-group kernel's call: on the whole Conv, or per group through rt::conv_each_group (the
// groups then split over the parallel-for when the kernel uses no scratch, else the kernel's own
// tasks split each group).
void emit_one_group_kernel(const Node& n, Emitter& e, const std::string& kernel, const std::string& rest,
                           bool groups_split) {
  const std::string bias = e.in_or_null(2, n.inputs[0]->dtype);
  if (n.attr_int("group", 1) == 1) {
    e.linef("rt::{}(p, {}, {}, {}, {}{});", kernel, e.in(0), e.in(1), bias, e.out(0), rest);
    return;
  }
  e.include("onnxc/conv_grouped.h");
  e.linef("rt::conv_each_group(p, {}, {}, {}, {},", e.in(0), e.in(1), bias, e.out(0));
  e.line("    [&](const rt::ConvParams& q, const float* xg, const float* wg, const float* bg, float* yg) {");
  e.linef("      rt::{}(q, xg, wg, bg, yg{});", kernel, rest);
  e.linef("    }}{});", groups_split ? ", " + e.parallel(conv_parallel_work(n)) : "");
}

// A grouped Conv through the matrix product whose (image, group) pairs are the tasks
// (kGroupSlotsAttr > 1): each task's groups run serially in the task's im2col slot.
void emit_groups_in_slots(const Node& n, Emitter& e) {
  e.include("onnxc/conv_grouped.h");
  const int64_t slot_floats = rt::conv_gemm_scratch_floats(group_params_of(n), conv_im2col_cols(n));
  e.linef("rt::conv_each_group_in_slots(p, {}, {}, {}, {}, {},", e.in(0), e.in(1), e.in_or_null(2, n.inputs[0]->dtype),
          e.out(0), group_slots(n));
  e.line("    [&](const rt::ConvParams& q, const float* xg, const float* wg, const float* bg, float* yg, rt::index_t slot) {");
  e.linef("      rt::conv_gemm(q, xg, wg, bg, yg, reinterpret_cast<float*>({}) + slot * {}, {}, {});", e.scratch(),
          slot_floats, conv_im2col_cols(n), epilogue_code(n));
  e.linef("    }}, {});", e.parallel(conv_parallel_work(n)));
}

void emit_conv(const Node& n, Emitter& e) {
  e.include("onnxc/conv.h");
  const std::string parallel = e.parallel(conv_parallel_work(n));
  const bool grouped = n.attr_int("group", 1) != 1;
  const Value& x = *n.inputs[0];
  e.line(conv_params_code(conv_params_of(n)));
  std::string bias = e.in_or_null(2, x.dtype);
  switch (conv_algorithm(n)) {
    case ConvAlgorithm::Gemm:
      if (group_slots(n) > 1) return emit_groups_in_slots(n, e);
      emit_one_group_kernel(n, e, "conv_gemm",
                            fmt::format(", {}, {}, {}, {}",
                                        conv_scratch_bytes(n) ? fmt::format("reinterpret_cast<float*>({})", e.scratch())
                                                              : "static_cast<float*>(nullptr)",
                                        conv_im2col_cols(n), epilogue_code(n), parallel),
                            false);
      return;
    case ConvAlgorithm::ChannelLanes:
      e.include("onnxc/conv_channel_lanes.h");
      e.linef("rt::conv_channel_lanes(p, {}, {}, {}, {}, {}, {}, {}, {});", e.in(0), e.in(1), bias, e.out(0),
              conv_scratch_bytes(n) ? fmt::format("reinterpret_cast<float*>({})", e.scratch())
                                    : "static_cast<float*>(nullptr)",
              conv_im2col_cols(n), epilogue_code(n), parallel);
      return;
    case ConvAlgorithm::Winograd:
      e.include("onnxc/winograd.h");
      e.linef("rt::conv_winograd(p, {}, {}, {}, {}, reinterpret_cast<float*>({}), {}, {}, {}, {}, {});", e.in(0),
              e.in(1), bias, e.out(0), e.scratch(), n.attr_int(kWinogradRowsAttr, 1), parallel_slots(n),
              epilogue_code(n), parallel, n.attr_int(kWinogradGroupRowsAttr, rt::kPanelRows));
      return;
    case ConvAlgorithm::Shifted:
      e.line("static_assert(rt::kShiftedInputProduct, \"generated for a target with AVX-512 (rt::conv_shifted): \"");
      e.line("              \"compile with it, or generate for this one\");");
      emit_one_group_kernel(n, e, "conv_shifted",
                            fmt::format(", {}{}", epilogue_code(n), grouped ? "" : ", " + parallel), true);
      return;
    case ConvAlgorithm::Stacked:
      e.include("onnxc/conv_gemm_stacked.h");
      emit_one_group_kernel(n, e, "conv_gemm_stacked",
                            fmt::format(", {}{}", epilogue_code(n), grouped ? "" : ", " + parallel), true);
      return;
    case ConvAlgorithm::Depthwise:
      if (parallel_slots(n) == 0)  // no room for the padded rows: the kernel that needs none
        e.linef("rt::conv_depthwise_in_place(p, {}, {}, {}, {}, {}, {});", e.in(0), e.in(1), bias, e.out(0),
                epilogue_code(n), parallel);
      else
        e.linef("rt::conv_depthwise(p, {}, {}, {}, {}, reinterpret_cast<float*>({}), {}, {}, {});", e.in(0),
                e.in(1), bias, e.out(0), e.scratch(), epilogue_code(n), parallel, parallel_slots(n));
      return;
    case ConvAlgorithm::Band:
      e.include("onnxc/conv_band_simd.h");
      e.linef("rt::conv_band(p, {}, {}, {}, {}, {}, {});", e.in(0), e.in(1), bias, e.out(0), epilogue_code(n), parallel);
      return;
    case ConvAlgorithm::DirectPacked:
      emit_one_group_kernel(n, e, "conv_direct_packed", grouped ? "" : ", " + parallel, true);
      emit_separate_activation(n, e);
      return;
    case ConvAlgorithm::Direct:
      e.linef("rt::{}(p, {}, {}, {}, {});", x.dtype == DType::Float && x.shape.size() <= 4 ? "conv_direct" : "conv",
              e.in(0), e.in(1), bias, e.out(0));
      emit_separate_activation(n, e);
      return;
  }
}

const OpRegistrar conv_op([] {
  OpDef d;
  d.op_type = "Conv";
  d.versions = {1, 11, 22};
  d.infer = infer_conv;
  d.emit = emit_conv;
  d.scratch_bytes = conv_scratch_bytes;
  d.macs = float_conv_macs;
  return d;
}());

}  // namespace
}  // namespace onnxc
