// ConvInteger (int32 convolution of 8-bit tensors) and QLinearConv (the same plus an int32 bias,
// requantized to 8 bits), with Conv's geometry: groups, pads, strides, dilations, auto_pad
// (kernel in onnxc/quant.h).
//
// x's zero point and scale are per tensor; w's per tensor or per output channel.
#include <limits>

#include <algorithm>

#include "ops/conv_algorithm.h"
#include "ops/elementwise.h"
#include "ops/emitter.h"
#include "ops/quant_common.h"
#include "ops/spatial.h"

namespace onnxc {
namespace {

// Inputs x and w sit at different positions in the two ops.
struct ConvInputs {
  std::size_t x, x_zero_point, w, w_zero_point;
};
constexpr ConvInputs kConvIntegerInputs = {0, 2, 1, 3};
constexpr ConvInputs kQLinearConvInputs = {0, 2, 3, 5};

Window qconv_window(const Node& n, ConvInputs in) {
  const Value& x = input(n, in.x);
  std::vector<int64_t> spatial(x.shape.begin() + 2, x.shape.end());
  return resolve_window(n, spatial, weight_kernel(n, input(n, in.w)), false);
}

// Checks x and w as Conv does and returns y's shape.
Shape conv_output_shape(const Node& n, ConvInputs in) {
  const Shape& x = input(n, in.x).shape;
  const Shape& w = input(n, in.w).shape;
  if (x.size() < 3 || x.size() > 5)
    fail_unsupported(n, fmt::format("input rank {} (onnxc supports 1 to 3 spatial dims)", x.size()));
  if (w.size() != x.size()) fail_invalid(n, fmt::format("weight rank {} differs from input rank {}", w.size(), x.size()));
  const int64_t group = n.attr_int("group", 1), c = x[1], m = w[0];
  if (group < 1 || c % group != 0 || m % group != 0)
    fail_invalid(n, fmt::format("group {} does not divide the {} input and {} output channels", group, c, m));
  if (w[1] * group != c)
    fail_invalid(n, fmt::format("weight has {} input channels per group; input has {} channels in {} groups", w[1], c,
                                group));
  const Window win = qconv_window(n, in);
  Shape out = {x[0], m};
  out.insert(out.end(), win.out.begin(), win.out.end());
  return out;
}

int64_t out_channels(const Node& n, ConvInputs in) { return input(n, in.w).shape[0]; }

rt::ConvParams integer_conv_params(const Node& n, ConvInputs in) {
  const Shape& x = n.inputs[in.x]->shape;
  return conv_params(qconv_window(n, in), x[0], x[1], out_channels(n, in), n.attr_int("group", 1));
}

int64_t conv_macs(const Node& n, ConvInputs in) {
  const Shape& w = n.inputs[in.w]->shape;
  return n.outputs[0]->numel() * shape_numel(Shape(w.begin() + 1, w.end()));
}

// conv_integer accumulates one output plane at a time in int32 scratch memory, at the start of
// the node's scratch.
std::size_t plane_scratch_bytes(const Node& n) {
  const Shape& y = n.outputs[0]->shape;
  return static_cast<std::size_t>(shape_numel(Shape(y.begin() + 2, y.end()))) * sizeof(int32_t);
}

// The scratch of the kernel emit_conv_call picks: none for depthwise_3x3, depthwise_integer_any's
// (depthwise_integer's padded plane and its accumulators, or conv_integer's plane) or
// conv_integer's plane.
std::size_t direct_scratch_bytes(const Node& n, ConvInputs in) {
  const rt::ConvParams p = integer_conv_params(n, in);
  if (n.has_attr(kDepthwise3x3Attr) && n.attr_int(kDspScratchAttr, 0))  // (the M4's bands)
    return static_cast<std::size_t>(rt::depthwise_3x3_dsp_scratch_bytes(p));
  if (n.has_attr(kDepthwise3x3Attr) || n.has_attr(kDepthwiseInPlaceAttr)) return 0;
  if (rt::depthwise_integer_any_applies(p)) return static_cast<std::size_t>(rt::depthwise_integer_any_scratch_bytes(p));
  return plane_scratch_bytes(n);
}

void emit_conv_call(const Node& n, Emitter& e, ConvInputs in, const std::string& output) {
  const rt::ConvParams p = integer_conv_params(n, in);
  e.line(conv_params_code(p));
  const std::string x = quant_operand_code(n, e, in.x, in.x_zero_point);
  const std::string w = quant_operand_code(n, e, in.w, in.w_zero_point);
  if (n.has_attr(kDepthwise3x3Attr) && n.attr_int(kDspScratchAttr, 0)) {
    e.linef("rt::depthwise_3x3(p, {}, {}, {}, {});", x, w, output, e.scratch());
  } else if (n.has_attr(kDepthwise3x3Attr)) {
    e.linef("rt::depthwise_3x3(p, {}, {}, {});", x, w, output);
  } else if (n.has_attr(kDepthwiseInPlaceAttr)) {  // (no scratch was planned)
    e.linef("rt::depthwise_integer_in_place(p, {}, {}, {});", x, w, output);
  } else if (rt::depthwise_integer_any_applies(p))
    e.linef("rt::depthwise_integer_any(p, {}, {}, {}, {});", x, w, output, e.scratch());
  else
    e.linef("rt::conv_integer(p, {}, {}, {}, reinterpret_cast<std::int32_t*>({}));", x, w, output, e.scratch());
}

// (After a `p` of the node's geometry.)
void emit_conv_direct_call(const Node& n, Emitter& e, ConvInputs in, const std::string& output) {
  const std::string x = quant_operand_code(n, e, in.x, in.x_zero_point);
  const std::string w = quant_operand_code(n, e, in.w, in.w_zero_point);
  e.linef("rt::conv_integer_direct(p, {}, {}, {});", x, w, output);
}

// The widest im2col block rt::qconv_gemm runs fastest with: the plane's columns in whole quanta,
// at most 256.
int64_t qconv_gemm_fastest_cols(const rt::ConvParams& p) {
  const int64_t quantum = rt::kQConvColumnQuantum, columns = p.out_d * p.out_h * p.out_w;
  return std::min<int64_t>(256, (columns + quantum - 1) / quantum * quantum);
}

// Declares the constant weights' row sums (the zero-point correction of the integer matrix-product
// kernels) and then `p`, the node's geometry; returns the row sums' name.
std::string emit_row_sums_and_params(const Node& n, Emitter& e, ConvInputs in) {
  const rt::ConvParams p = integer_conv_params(n, in);
  std::vector<rt::index_t> sums(static_cast<std::size_t>(p.out_channels));
  rt::qconv_weight_row_sums(p, n.inputs[in.w]->constant->data<int8_t>(), sums.data());
  const std::string row_sums = e.index_array("row_sums", std::vector<int64_t>(sums.begin(), sums.end()));
  e.line(conv_params_code(p));
  return row_sums;
}

// ---- ConvInteger ----

void infer_conv_integer(Node& n) {
  check_arity(n, 2, 4, 1, 1);
  const ConvInputs in = kConvIntegerInputs;
  require_dtype(n, in.x, {DType::Uint8, DType::Int8});
  require_dtype(n, in.w, {DType::Uint8, DType::Int8});
  const Shape out = conv_output_shape(n, in);
  if (n.has_input(in.x_zero_point)) {
    require_same_dtype(n, in.x_zero_point, in.x);
    require_per_tensor(n, in.x_zero_point, "x_zero_point");
  }
  if (n.has_input(in.w_zero_point)) {
    require_same_dtype(n, in.w_zero_point, in.w);
    require_per_tensor_or_channel(n, in.w_zero_point, out_channels(n, in), "w_zero_point");
  }
  set_output(n, 0, DType::Int32, out);
}

void fold_conv_integer(const Node& n, std::vector<Tensor>& outs) {
  Tensor& y = fold_output(n, outs);
  const ConvInputs in = kConvIntegerInputs;
  std::vector<int32_t> plane(plane_scratch_bytes(n) / sizeof(int32_t));
  dispatch_8bit_pair(n, in.x, in.w, [&](auto x_tag, auto w_tag) {
    using X = typename decltype(x_tag)::type;
    using W = typename decltype(w_tag)::type;
    rt::conv_integer(integer_conv_params(n, in), fold_quant_operand<X>(n, in.x, in.x_zero_point),
                     fold_quant_operand<W>(n, in.w, in.w_zero_point), rt::StoreInt32{y.data<int32_t>()}, plane.data());
  });
}


// ---- QLinearConv ----

constexpr std::size_t kBias = 8;

// Whether QLinearConv can run as a matrix product (rt::qconv_gemm): one group, uint8 x, constant
// int8 weights with zero point 0 (symmetric, as quantizers write them).
bool qconv_gemm_applies(const Node& n, ConvInputs in = kQLinearConvInputs) {
  const Value& x = *n.inputs[in.x];
  const Value& w = *n.inputs[in.w];
  if (n.attr_int("group", 1) != 1 || x.dtype != DType::Uint8 || w.dtype != DType::Int8 || !w.constant) return false;
  if (!n.has_input(in.w_zero_point)) return true;
  const Value& zw = *n.inputs[in.w_zero_point];
  if (!zw.constant) return false;
  for (int64_t i = 0; i < zw.constant->numel(); ++i)
    if (zw.constant->int_at(i) != 0) return false;
  return true;
}

// ConvInteger as QLinearConv's matrix product (rt::qconv_gemm, the VNNI tile on x86) where that
// kernel applies (uint8 x, constant int8 w of zero point 0: dynamically quantized models), in
// blocks of the widest columns that kernel runs fastest with; the plane kernel otherwise.
int64_t conv_integer_gemm_cols(const Node& n) {
  if (!qconv_gemm_applies(n, kConvIntegerInputs)) return 0;
  return qconv_gemm_fastest_cols(integer_conv_params(n, kConvIntegerInputs));
}

const OpRegistrar conv_integer_op([] {
  OpDef d;
  d.op_type = "ConvInteger";
  d.versions = {10};
  d.infer = infer_conv_integer;
  d.emit = [](const Node& n, Emitter& e) {
    e.include("onnxc/quant.h");
    const ConvInputs in = kConvIntegerInputs;
    const std::string output = fmt::format("rt::StoreInt32{{{}}}", e.out(0));
    const int64_t cols = conv_integer_gemm_cols(n);
    if (cols <= 0) return emit_conv_call(n, e, in, output);
    const std::string row_sums = emit_row_sums_and_params(n, e, in);
    if (n.has_input(in.w_zero_point)) e.linef("static_cast<void>({});  // (all zero)", e.in(in.w_zero_point));
    const std::string x_zero_point = n.has_input(in.x_zero_point) ? e.in(in.x_zero_point) + "[0]" : "0";
    e.linef("rt::qconv_gemm(p, {}, {}, {}, {}, {}, {}, {});", e.in(in.x), x_zero_point, e.in(in.w), row_sums, output,
            cols, e.scratch());
  };
  d.fold = fold_conv_integer;
  d.scratch_bytes = [](const Node& n) {
    const int64_t cols = conv_integer_gemm_cols(n);
    if (cols <= 0) return direct_scratch_bytes(n, kConvIntegerInputs);
    return static_cast<std::size_t>(rt::qconv_gemm_scratch_bytes(integer_conv_params(n, kConvIntegerInputs), cols));
  };
  d.macs = [](const Node& n) { return conv_macs(n, kConvIntegerInputs); };
  return d;
}());

// Whether the node takes rt::qconv_pointwise (pack-dual-mac-weights gave it that kernel's weights).
bool takes_dual_mac_kernel(const Node& n) { return n.has_input(kDualMacWeightsInput); }

// Whether the node takes rt::qconv_vnni wherever it is built (pack-dot-product-weights gave it
// that kernel's weights before fit-scratch; else rt::conv_integer_direct): no scratch.
bool takes_vnni_kernel_only(const Node& n) { return n.has_attr(kVnniOnlyAttr); }

// Whether the node takes rt::qconv_avx2 wherever it is built with AVX2 (pack-dot-product-weights
// gave it that kernel's weights; else rt::conv_integer_direct): no scratch.
bool takes_avx2_kernel(const Node& n) { return n.has_input(kAvx2PairsInput); }

// Whether the node takes the M4's and M7's rt::qconv_pointwise (int16 weight pairs, where
// Helium's are bytes), whose widened block is the node's scratch.
bool takes_dsp_pointwise(const Node& n) {
  return takes_dual_mac_kernel(n) && n.inputs[kDualMacWeightsInput]->dtype != DType::Int8;
}

// Whether the node's kernel needs no scratch whatever the plan (the kernels above; the M4's
// pointwise block is its scratch but does not depend on the plan).
bool takes_kernel_without_scratch(const Node& n) {
  return takes_dual_mac_kernel(n) || takes_vnni_kernel_only(n) || takes_avx2_kernel(n);
}

// Columns per im2col block of the matrix product, or 0 for the plane kernel (rt::conv_integer).
// The memory planner's choice (kIm2colColsAttr) wins; before it chooses, the widest block that
// fits in the memory the plane kernel would take, so that the plan it starts from is the
// plane kernel's.
int64_t qconv_gemm_cols(const Node& n) {
  if (!qconv_gemm_applies(n) || takes_kernel_without_scratch(n)) return 0;
  if (n.has_attr(kIm2colColsAttr)) return n.attr_int(kIm2colColsAttr, 0);
  const Im2colShape shape = qlinear_conv_im2col_shape(n);
  const int64_t fitting = static_cast<int64_t>(plane_scratch_bytes(n)) / shape.bytes_per_column /
                          shape.quantum_cols * shape.quantum_cols;
  return std::min(fitting, shape.fastest_cols);
}

std::size_t qlinear_conv_kernel_scratch(const Node& n) {
  if (takes_dsp_pointwise(n) && n.attr_int(kDspScratchAttr, 0))
    return static_cast<std::size_t>(rt::qconv_pointwise_dsp_scratch_bytes(integer_conv_params(n, kQLinearConvInputs)));
  if (takes_kernel_without_scratch(n)) return 0;
  const int64_t cols = qconv_gemm_cols(n);
  if (cols <= 0) return direct_scratch_bytes(n, kQLinearConvInputs);
  return static_cast<std::size_t>(rt::qconv_gemm_scratch_bytes(integer_conv_params(n, kQLinearConvInputs), cols)) +
         (n.attr_int(kDspScratchAttr, 0) ? qlinear_conv_widened_bytes(n, cols) : 0);
}

void infer_qlinear_conv(Node& n) {
  const bool residual = n.has_input(kResidualInput);
  check_arity(n, 8, residual ? static_cast<int>(kResidualInput + 3) : 9, 1, 1);
  const ConvInputs in = kQLinearConvInputs;
  const DType y = check_qlinear_inputs(n, {DType::Float});
  const Shape out = conv_output_shape(n, in);
  const int64_t m = out_channels(n, in);
  require_per_tensor_or_channel(n, 4, m, "w_scale");
  if (n.has_input(kBias)) {
    require_dtype(n, kBias, {DType::Int32});
    if (n.inputs[kBias]->shape != Shape{m})
      fail_invalid(n, fmt::format("bias B has shape {}; it must be [{}]", shape_str(n.inputs[kBias]->shape), m));
  }
  if (residual) check_residual(n, kResidualInput, out);
  set_output(n, 0, y, out);
}

void fold_qlinear_conv(const Node& n, std::vector<Tensor>& outs) {
  Tensor& y = fold_output(n, outs);
  const ConvInputs in = kQLinearConvInputs;
  const std::vector<rt::Requant> requant = constant_requants(n, kQLinearRequantInputs, out_channels(n, in));
  const auto y_zero_point = static_cast<int32_t>(n.inputs[7]->constant->int_at(0));
  const int32_t* bias = n.has_input(kBias) ? n.inputs[kBias]->constant->data<int32_t>() : nullptr;
  const rt::index_t stride = requant.size() == 1 ? 0 : 1;
  std::vector<int32_t> plane(plane_scratch_bytes(n) / sizeof(int32_t));
  dispatch_8bit_pair(n, in.x, in.w, [&](auto x_tag, auto w_tag) {
    using X = typename decltype(x_tag)::type;
    using W = typename decltype(w_tag)::type;
    dispatch_in(n, y.dtype, EightBitTypes{}, [&](auto y_tag) {
      using Y = typename decltype(y_tag)::type;
      const rt::RequantizeOutput<Y> requantize{y.data<Y>(), bias, requant.data(), stride, y_zero_point};
      if (!n.has_input(kResidualInput))
        return rt::conv_integer(integer_conv_params(n, in), fold_quant_operand<X>(n, in.x, in.x_zero_point),
                                fold_quant_operand<W>(n, in.w, in.w_zero_point), requantize, plane.data());
      const std::pair<int32_t, int32_t> bounds = residual_clamp(n);  // (not a structured binding: the lambda below captures them)
      const int32_t low = bounds.first, high = bounds.second;
      dispatch_in(n, n.inputs[kResidualInput]->dtype, EightBitTypes{}, [&](auto r_tag) {
        using T = typename decltype(r_tag)::type;
        rt::conv_integer(integer_conv_params(n, in), fold_quant_operand<X>(n, in.x, in.x_zero_point),
                         fold_quant_operand<W>(n, in.w, in.w_zero_point),
                         rt::requantize_add(requantize, n.inputs[kResidualInput]->constant->data<T>(),
                                            static_cast<int32_t>(n.inputs[kResidualInput + 2]->constant->int_at(0)),
                                            residual_multiplier(n, kResidualInput), low, high),
                         plane.data());
      });
    });
  });
}

const OpRegistrar qlinear_conv_op([] {
  OpDef d;
  d.op_type = "QLinearConv";
  d.versions = {10};
  d.infer = infer_qlinear_conv;
  d.emit = [](const Node& n, Emitter& e) {
    e.include("onnxc/quant.h");
    const ConvInputs in = kQLinearConvInputs;
    const int64_t m = out_channels(n, in);
    // Scratch: the kernel's (accumulator plane or im2col block), then the multipliers when they
    // are computed at run time.
    const std::string requant_scratch = fmt::format("({} + {})", e.scratch(), qlinear_conv_kernel_scratch(n));
    const std::string output = with_residual(
        n, e, kResidualInput, emit_requantize_output(n, e, kQLinearRequantInputs, m, 7, kBias, requant_scratch, kOutputTableInput));
    const int64_t cols = qconv_gemm_cols(n);
    const bool dual_mac = takes_dual_mac_kernel(n);
    const bool vnni = n.has_input(kVnniWeightsInput);
    // rt::qconv_vnni needs no scratch: it runs whether or not the plan left room for an im2col
    // block; the code built without VNNI takes the block or, without one, the direct kernel.
    if (cols <= 0 && !dual_mac && !vnni && !takes_avx2_kernel(n)) return emit_conv_call(n, e, in, output);
    const rt::ConvParams p = integer_conv_params(n, in);
    const std::string x_zero_point = n.has_input(in.x_zero_point) ? e.in(in.x_zero_point) + "[0]" : "0";
    if (takes_avx2_kernel(n)) {
      e.line(conv_params_code(p));
      e.line("#if defined(ONNXC_QCONV_AVX2)");
      e.linef("static_cast<void>({});", e.in(in.w));
      if (n.has_input(in.w_zero_point)) e.linef("static_cast<void>({});", e.in(in.w_zero_point));  // (all zero)
      e.linef("rt::qconv_avx2(p, {}, {}, {}, {});", e.in(in.x), x_zero_point, e.in(kAvx2PairsInput), output);
      e.line("#else");
      e.linef("static_cast<void>({});  // (built without AVX2: no scratch was planned)", e.in(kAvx2PairsInput));
      emit_conv_direct_call(n, e, in, output);
      e.line("#endif");
      return;
    }
    const std::string row_sums = emit_row_sums_and_params(n, e, in);
    if (dual_mac)  // (the weights' type names the layout: int8 bytes for Helium, SMLAD's int16 pairs)
      return e.linef("rt::qconv_pointwise{}(p, {}, {}, {}, {}, {}{});", takes_dsp_pointwise(n) ? "" : "_s8", e.in(in.x),
                     x_zero_point, e.in(kDualMacWeightsInput), row_sums, output,
                     n.attr_int(kDspScratchAttr, 0) ? ", " + e.scratch() : "");
    // Each branch names the other's weights in a discarded expression: clang's -Wunused-const-variable
    // counts the preprocessed code only.
    if (vnni) e.line("#if defined(ONNXC_QCONV_VNNI)");
    if (vnni) {
      e.linef("static_cast<void>({});", e.in(in.w));
      // The direct kernel of the other branch reads the weights' zero points (all zero here).
      if (takes_vnni_kernel_only(n) && n.has_input(in.w_zero_point))
        e.linef("static_cast<void>({});", e.in(in.w_zero_point));
      e.linef("rt::qconv_vnni(p, {}, {}, {}, {}, {});", e.in(in.x), x_zero_point, e.in(kVnniWeightsInput), row_sums,
              output);
    }
    if (vnni) e.line("#else");
    if (vnni) e.linef("static_cast<void>({});", e.in(kVnniWeightsInput));
    // The M4's and M7's weights widened at compile time (pack-dual-mac-weights), the same blocks.
    const bool pairs = n.has_input(kDualMacPairsInput);
    if (takes_vnni_kernel_only(n)) {
      if (pairs) e.linef("static_cast<void>({});", e.in(kDualMacPairsInput));
      e.linef("static_cast<void>({});  // (built without VNNI: no scratch was planned)", row_sums);
      emit_conv_direct_call(n, e, in, output);
    } else if (cols > 0) {
      if (pairs) {
        e.line("#if defined(ONNXC_QCONV_GEMM_PAIRS)");
        e.linef("static_cast<void>({});", e.in(in.w));
        const std::string widened =
            n.attr_int(kDspScratchAttr, 0)
                ? fmt::format(", ({} + {})", e.scratch(), rt::qconv_gemm_pairs_widened_offset(p, cols))
                : "";
        e.linef("rt::qconv_gemm_pairs(p, {}, {}, {}, {}, {}, {}, {}{});", e.in(in.x), x_zero_point,
                e.in(kDualMacPairsInput), row_sums, output, cols, e.scratch(), widened);
        e.line("#else");
        e.linef("static_cast<void>({});", e.in(kDualMacPairsInput));
      }
      e.linef("rt::qconv_gemm(p, {}, {}, {}, {}, {}, {}, {});", e.in(in.x), x_zero_point, e.in(in.w), row_sums, output,
              cols, e.scratch());
      if (pairs) e.line("#endif");
    } else {
      if (pairs) e.linef("static_cast<void>({});", e.in(kDualMacPairsInput));
      e.line("{  // (its own p)");
      emit_conv_call(n, e, in, output);
      e.line("}");
    }
    if (vnni) e.line("#endif");
  };
  d.fold = fold_qlinear_conv;
  d.scratch_bytes = [](const Node& n) {
    return qlinear_conv_kernel_scratch(n) + requant_scratch_bytes(n, kQLinearRequantInputs, out_channels(n, kQLinearConvInputs));
  };
  d.macs = [](const Node& n) { return conv_macs(n, kQLinearConvInputs); };
  return d;
}());

}  // namespace

std::optional<Tensor> qlinear_conv_vnni_weights(const Node& n) {
  if (!qconv_gemm_applies(n)) return std::nullopt;
  const rt::ConvParams p = integer_conv_params(n, kQLinearConvInputs);
  if (!rt::qconv_vnni_applies(p)) return std::nullopt;
  Tensor packed(DType::Int8, {static_cast<int64_t>(rt::qconv_vnni_weights_bytes(p))});
  rt::qconv_vnni_pack_weights(p, n.inputs[kQLinearConvInputs.w]->constant->data<int8_t>(), packed.data<int8_t>());
  return packed;
}

std::optional<Tensor> qlinear_conv_dual_mac_weights(const Node& n, bool helium) {
  if (!qconv_gemm_applies(n)) return std::nullopt;
  const rt::ConvParams p = integer_conv_params(n, kQLinearConvInputs);
  if (!rt::qconv_pointwise_applies(p)) return std::nullopt;
  if (helium) {
    Tensor bytes(DType::Int8, {static_cast<int64_t>(rt::qconv_pointwise_s8_weight_bytes(p))});
    rt::qconv_pointwise_s8_pack_weights(p, n.inputs[kQLinearConvInputs.w]->constant->data<int8_t>(),
                                        bytes.data<int8_t>());
    return bytes;
  }
  Tensor packed(DType::Int32, {static_cast<int64_t>(rt::qconv_pointwise_weight_words(p))});
  rt::qconv_pointwise_pack_weights(p, n.inputs[kQLinearConvInputs.w]->constant->data<int8_t>(),
                                   packed.data<int32_t>());
  return packed;
}

std::optional<Tensor> qlinear_conv_dual_mac_pairs(const Node& n) {
  if (!qconv_gemm_applies(n) || takes_dual_mac_kernel(n)) return std::nullopt;
  const rt::ConvParams p = integer_conv_params(n, kQLinearConvInputs);
  if (rt::qconv_pointwise_applies(p)) return std::nullopt;
  Tensor packed(DType::Int32, {static_cast<int64_t>(rt::qconv_gemm_pairs_weight_words(p))});
  rt::qconv_gemm_pairs_pack_weights(p, n.inputs[kQLinearConvInputs.w]->constant->data<int8_t>(),
                                    packed.data<int32_t>());
  return packed;
}

std::optional<Tensor> qlinear_conv_avx2_pairs(const Node& n) {
  if (!qconv_gemm_applies(n)) return std::nullopt;
  const rt::ConvParams p = integer_conv_params(n, kQLinearConvInputs);
  if (!rt::qconv_avx2_applies(p)) return std::nullopt;
  Tensor packed(DType::Int32, {static_cast<int64_t>(rt::qconv_avx2_weight_words(p))});
  rt::qconv_avx2_pack_weights(p, n.inputs[kQLinearConvInputs.w]->constant->data<int8_t>(), packed.data<int32_t>());
  return packed;
}

std::size_t qlinear_conv_dsp_block_bytes(const Node& n) {
  if (!n.has_attr(kDspScratchAttr)) return 0;
  const rt::ConvParams p = integer_conv_params(n, kQLinearConvInputs);
  if (takes_dsp_pointwise(n)) return static_cast<std::size_t>(rt::qconv_pointwise_dsp_scratch_bytes(p));
  if (n.has_attr(kDepthwise3x3Attr)) return static_cast<std::size_t>(rt::depthwise_3x3_dsp_scratch_bytes(p));
  return 0;
}

std::size_t qlinear_conv_widened_bytes(const Node& n, int64_t cols) {
  if (!n.has_input(kDualMacPairsInput) || !n.has_attr(kDspScratchAttr) || cols <= 0) return 0;
  const rt::ConvParams p = integer_conv_params(n, kQLinearConvInputs);
  return static_cast<std::size_t>(rt::qconv_gemm_pairs_scratch_bytes(p, cols) - rt::qconv_gemm_scratch_bytes(p, cols));
}

bool qlinear_conv_depthwise_3x3_applies(const Node& n) {
  return rt::depthwise_3x3_applies(integer_conv_params(n, kQLinearConvInputs));
}

bool qlinear_conv_depthwise_avx2_applies(const Node& n) {
  return rt::depthwise_avx2_applies(integer_conv_params(n, kQLinearConvInputs));
}

bool qlinear_conv_depthwise_permute_applies(const Node& n) {
  const rt::ConvParams p = integer_conv_params(n, kQLinearConvInputs);
  return rt::depthwise_integer_any_applies(p) && rt::detail::depthwise_permute_applies(p);
}

Im2colShape qlinear_conv_im2col_shape(const Node& n) {
  if (!qconv_gemm_applies(n) || takes_kernel_without_scratch(n)) return {};
  const rt::ConvParams p = integer_conv_params(n, kQLinearConvInputs);
  const int64_t quantum = rt::kQConvColumnQuantum;
  const int64_t columns = p.out_d * p.out_h * p.out_w;
  return {rt::qconv_gemm_scratch_bytes(p, 1), columns,
          qconv_gemm_fastest_cols(p), quantum, quantum};
}

}  // namespace onnxc
