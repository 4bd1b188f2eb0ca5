// ConvTranspose: the gradient of Conv with respect to its input, 1 to 3 spatial dims, with
// groups, strides, dilations, pads or auto_pad, output_padding and output_shape.
#include <algorithm>

#include "onnxc/conv_transpose.h"
#include "onnxc/conv_transpose_gemm.h"
#include "onnxc/conv_transpose_phases_simd.h"
#include "ops/conv_algorithm.h"
#include "ops/emitter.h"
#include "ops/spatial.h"

namespace onnxc {
namespace {

Window conv_transpose_window(const Node& n) {
  const Value& x = input(n, 0);
  std::vector<int64_t> in(x.shape.begin() + 2, x.shape.end());
  return resolve_transposed_window(n, in, weight_kernel(n, input(n, 1)));
}

// Output channels: the weight is [C, M / group, k...].
int64_t output_channels(const Node& n) { return n.inputs[1]->shape[1] * n.attr_int("group", 1); }

void infer_conv_transpose(Node& n) {
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
  if (group < 1 || x.shape[1] % group != 0)
    fail_invalid(n, fmt::format("group {} does not divide the {} input channels", group, x.shape[1]));
  if (w.shape[0] != x.shape[1])
    fail_invalid(n, fmt::format("weight has {} input channels; X has {}", w.shape[0], x.shape[1]));
  int64_t m = output_channels(n);
  if (n.has_input(2) && n.inputs[2]->shape != Shape{m})
    fail_invalid(n, fmt::format("bias shape {} should be [{}]", shape_str(n.inputs[2]->shape), m));
  if (n.has_input(2) && n.inputs[2]->dtype != x.dtype) fail_invalid(n, "bias and input have different types");
  Window win = conv_transpose_window(n);
  Shape out = {x.shape[0], m};
  out.insert(out.end(), win.out.begin(), win.out.end());
  set_output(n, 0, x.dtype, out);
}

// The columns are computed a block of input rows at a time: the whole image's when they take at
// most 4 MB, else as many rows as fit (one at least). (Capping them at the size of one group's
// output planes cut the products to a few columns each: c32 -> 128 on 7x7, k3 s1, took one row,
// 7 columns, per product, 2.2x ORT; c256 -> 128 on 14x14, k4 s2, 3 rows, 2.6x ORT.)
constexpr int64_t kColumnFloats = int64_t{1} << 20;

int64_t fastest_rows(const rt::ConvParams& p) {
  const int64_t row = rt::conv_transpose_gemm_scratch_floats(p, 1);
  if (row == 0) return 1;
  return std::clamp<int64_t>(kColumnFloats / row, 1, p.in_h);
}

// fit-scratch's choice, or the fastest block.
int64_t block_rows(const Node& n) {
  return n.has_attr(kColumnRowsAttr) ? n.attr_int(kColumnRowsAttr, 1) : fastest_rows(conv_transpose_params(n));
}

std::size_t conv_transpose_scratch_bytes(const Node& n) {
  if (!conv_transpose_gemm_applies(n) || n.attr_int(kTransposeStackedAttr, 0)) return 0;
  return conv_transpose_row_bytes(n) * static_cast<std::size_t>(block_rows(n));
}

void emit_conv_transpose(const Node& n, Emitter& e) {
  const rt::ConvParams p = conv_transpose_params(n);
  e.line(conv_params_code(p));
  if (const int64_t phases = n.attr_int(kTransposePhasesAttr, 0); phases > 0) {
    e.include(phases == 2 ? "onnxc/conv_transpose_phases_simd.h" : "onnxc/conv_transpose_phases.h");
    const std::string args = fmt::format("p, {}, {}, {}, {}, {}", e.in(0), e.in(1), e.in_or_null(2, DType::Float),
                                         e.out(0), epilogue_code(n));
    if (phases == 2)
      e.linef("rt::conv_transpose_phases_simd({}, {});", args, e.parallel(n.outputs[0]->numel() * p.in_channels));
    else
      e.linef("rt::conv_transpose_phases({});", args);
    return;
  }
  if (n.attr_int(kPackedWeightsAttr, 0) && n.attr_int(kTransposeStackedAttr, 0)) {
    e.include("onnxc/conv_transpose_gemm.h");
    e.linef("rt::conv_transpose_gemm_stacked(p, {}, {}, {}, {}, {}, {});", e.in(0), e.in(1),
            e.in_or_null(2, DType::Float), e.out(0), epilogue_code(n), e.parallel(n.outputs[0]->numel() * p.in_channels));
    return;
  }
  if (n.attr_int(kPackedWeightsAttr, 0)) {
    e.include("onnxc/conv_transpose_gemm.h");
    const std::string cols = rt::conv_transpose_gemm_scratch_floats(p, 1) > 0
                                 ? fmt::format("reinterpret_cast<float*>({})", e.scratch())
                                 : std::string("nullptr");
    e.linef("rt::conv_transpose_gemm(p, {}, {}, {}, {}, {}, {}, {}, {});", e.in(0), e.in(1), e.in_or_null(2, DType::Float),
            e.out(0), cols, block_rows(n), epilogue_code(n), e.parallel(n.outputs[0]->numel() * p.in_channels));
    return;
  }
  e.include("onnxc/conv_transpose.h");
  e.linef("rt::conv_transpose(p, {}, {}, {}, {});", e.in(0), e.in(1), e.in_or_null(2, n.inputs[0]->dtype), e.out(0));
  if (n.has_attr(kActivationAttr)) {  // fused while the product was planned (column rows 0 since)
    e.include("onnxc/activation.h");
    e.linef("rt::activate_row({}, {}, {});", epilogue_code(n), e.out(0), n.outputs[0]->numel());
  }
}

const OpRegistrar conv_transpose_op([] {
  OpDef d;
  d.op_type = "ConvTranspose";
  d.versions = {1, 11, 22};
  d.infer = infer_conv_transpose;
  d.emit = emit_conv_transpose;
  d.scratch_bytes = conv_transpose_scratch_bytes;
  // Every input element times its group's output channels times the kernel's taps.
  d.macs = [](const Node& n) {
    return n.inputs[0]->numel() * n.inputs[1]->shape[1] * shape_numel(weight_kernel(n, *n.inputs[1]));
  };
  return d;
}());

}  // namespace

rt::ConvParams conv_transpose_params(const Node& n) {
  const Value& x = *n.inputs[0];
  return conv_params(conv_transpose_window(n), x.shape[0], x.shape[1], output_channels(n), n.attr_int("group", 1));
}

bool conv_transpose_gemm_applies(const Node& n) {
  const Value& x = *n.inputs[0];
  return n.domain.empty() && n.op_type == "ConvTranspose" && x.dtype == DType::Float && x.shape.size() <= 4 &&
         n.inputs[1]->constant && n.outputs[0]->numel() > 0 && x.numel() > 0 && n.attr_int(kColumnRowsAttr, 1) > 0;
}

int conv_transpose_phases_kernel(const Node& n, bool simd) {
  const Value& x = *n.inputs[0];
  if (!n.domain.empty() || n.op_type != "ConvTranspose" || x.dtype != DType::Float || x.shape.size() > 4 ||
      !n.inputs[1]->constant || n.outputs[0]->numel() == 0 || x.numel() == 0)
    return 0;
  const rt::ConvParams p = conv_transpose_params(n);
  if (!rt::conv_transpose_phases_apply(p)) return 0;
  return simd && rt::conv_transpose_phases_simd_apply(p) ? 2 : 1;
}

bool conv_transpose_prefers_stacked(const Node& n, int64_t float_lanes) {
  if (!conv_transpose_gemm_applies(n) || conv_transpose_phases_kernel(n, true) != 2) return false;
  const rt::ConvParams p = conv_transpose_params(n);
  if (!rt::conv_transpose_stack_applies(p)) return false;
  // AVX-512 and AArch64 have 32 vector registers, AVX2 16 (rt::kVectorRegisters).
  const int64_t registers = float_lanes == 8 ? 16 : 32;
  return rt::conv_transpose_stacked_cost(p, float_lanes, registers) <
         rt::conv_transpose_phases_cost(p, float_lanes, registers);
}

int64_t conv_transpose_fastest_rows(const Node& n) { return fastest_rows(conv_transpose_params(n)); }

std::size_t conv_transpose_row_bytes(const Node& n) {
  return static_cast<std::size_t>(rt::conv_transpose_gemm_scratch_floats(conv_transpose_params(n), 1)) * sizeof(float);
}

}  // namespace onnxc
