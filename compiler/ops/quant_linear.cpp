// QuantizeLinear, DequantizeLinear (versions 10 to 25: per tensor, per axis, blocked) and
// DynamicQuantizeLinear (kernels in runtime-support/onnxc/quant.h).
//
// Quantized types: int8 and uint8; int16 and uint16 from version 21; int32 as DequantizeLinear's
// input; the 8-bit floats from version 19 (rt::quantize_linear_float8, with `saturate`).
// int4/uint4 (21), float4 (23), float8e8m0 (24) and int2/uint2 (25) are refused: generated code
// cannot hold them yet (4-bit weights are unpacked when loaded).
#include <algorithm>

#include "ops/elementwise.h"
#include "ops/emitter.h"
#include "ops/quant_common.h"

namespace onnxc {
namespace {

using QuantizedTypes = TypeList<int8_t, uint8_t, int16_t, uint16_t>;
using ScaleTypes = TypeList<float, rt::float16, rt::bfloat16>;
using QuantizeInputTypes = TypeList<float, rt::float16, rt::bfloat16, int32_t>;
using DequantizeInputTypes = ConcatTypes<QuantizedTypes, TypeList<int32_t>>::type;

// The types a version quantizes to: the 8-bit floats from 19, the 16-bit integers from 21.
std::vector<DType> quantized_types(const Node& n) {
  std::vector<DType> t = {DType::Uint8, DType::Int8};
  if (n.version >= 19) {
    const std::vector<DType> f8 = dtypes_of(Float8Types{});
    t.insert(t.end(), f8.begin(), f8.end());
  }
  if (n.version >= 21) t.insert(t.end(), {DType::Uint16, DType::Int16});
  return t;
}

std::vector<DType> scale_types(const Node& n) {
  if (n.version < 19) return {DType::Float};
  return dtypes_of(ScaleTypes{});
}

// Fails for quantized types a version defines but onnxc cannot hold (float8, 4-bit).
void require_quantized_type(const Node& n, DType t, const char* what) {
  const std::vector<DType> ok = quantized_types(n);
  if (std::find(ok.begin(), ok.end(), t) != ok.end()) return;
  fail_dtype(n, what, t, ok);
}

// Where each element's scale and zero point are: per tensor (a one-element scale), per axis (a
// 1-D scale along `axis`, from version 13) or blocked (block_size > 0, from version 21).
rt::QuantLayout quant_layout(const Node& n) {
  const Shape& x = input(n, 0).shape;
  const Shape& scale = input(n, 1).shape;
  const int64_t block = n.attr_int("block_size", 0);
  if (block < 0) fail_invalid(n, fmt::format("block_size is {}", block), "use 0 (no blocks) or a positive size");
  if (block == 0 && is_per_tensor(scale)) return {1, 1, static_cast<rt::index_t>(shape_numel(x)), 1, 0, 0, 0};
  if (n.version < 13)
    fail_invalid(n, fmt::format("scale has shape {}; before version 13 it must be a scalar", shape_str(scale)));
  const int64_t axis = normalize_axis(n, n.attr_int("axis", 1), static_cast<int64_t>(x.size()));
  const int64_t outer = shape_numel(Shape(x.begin(), x.begin() + axis));
  const int64_t len = x[static_cast<std::size_t>(axis)];
  const int64_t inner = shape_numel(Shape(x.begin() + axis + 1, x.end()));
  if (block == 0) {
    if (scale != Shape{len})
      fail_invalid(n, fmt::format("scale has shape {}; per-axis quantization along axis {} needs [{}]", shape_str(scale),
                                  axis, len));
    return {outer, len, inner, 1, 0, 1, 0};
  }
  const int64_t blocks = (len + block - 1) / block;
  Shape expected = x;
  expected[static_cast<std::size_t>(axis)] = blocks;
  if (scale != expected)
    fail_invalid(n, fmt::format("scale has shape {}; blocks of {} along axis {} need {}", shape_str(scale), block, axis,
                                shape_str(expected)));
  return {outer, len, inner, block, blocks * inner, inner, 1};
}

std::string layout_code(const rt::QuantLayout& q) {
  auto num = [](rt::index_t v) { return fmt::format("{}", v); };
  return params_literal("rt::QuantLayout", {{"outer", num(q.outer)},
                                            {"axis", num(q.axis)},
                                            {"inner", num(q.inner)},
                                            {"block", num(q.block)},
                                            {"scale_outer", num(q.scale_outer)},
                                            {"scale_axis", num(q.scale_axis)},
                                            {"scale_inner", num(q.scale_inner)}});
}

// Data pointer of input i when folding, null when the optional input is absent.
template <class T> const T* fold_input(const Node& n, std::size_t i) {
  return n.has_input(i) ? n.inputs[i]->constant->data<T>() : nullptr;
}

// ---- QuantizeLinear ----

// y's type: the zero point's, else output_dtype (version 21), else uint8.
DType quantize_output_type(const Node& n) {
  const int64_t code = n.attr_int("output_dtype", 0);
  DType wanted = DType::Undefined;
  if (code != 0 && !dtype_from_int(static_cast<int32_t>(code), &wanted))
    fail_invalid(n, fmt::format("output_dtype {} is not an ONNX element type", code));
  if (n.has_input(2)) {
    if (wanted != DType::Undefined && wanted != n.inputs[2]->dtype)
      fail_invalid(n, fmt::format("output_dtype is {} but y_zero_point is {}", dtype_name(wanted),
                                  dtype_name(n.inputs[2]->dtype)),
                   "make them agree or drop output_dtype");
    return n.inputs[2]->dtype;
  }
  return wanted == DType::Undefined ? DType::Uint8 : wanted;
}

// Versions 23 to 25 name the type the division or multiplication is done in (QuantizeLinear's
// `precision`) or the output type (DequantizeLinear's `output_dtype`); both default to the
// scale's type, the only one onnxc computes in.
void require_scale_type_attr(const Node& n, const char* attr) {
  const int64_t code = n.attr_int(attr, 0);
  if (code == 0 || n.version < 23) return;
  DType t;
  if (!dtype_from_int(static_cast<int32_t>(code), &t) || t == DType::Undefined)
    fail_invalid(n, fmt::format("{} {} is not an ONNX element type", attr, code));
  if (t != n.inputs[1]->dtype)
    fail_unsupported(n, fmt::format("{} {} differs from the scale's type {}: onnxc computes in the scale's type",
                                    attr, dtype_name(t), dtype_name(n.inputs[1]->dtype)),
                     fmt::format("drop {} or give the scale that type", attr));
}

void infer_quantize(Node& n) {
  check_arity(n, 2, 3, 1, 1);
  require_scale_type_attr(n, "precision");
  std::vector<DType> x_types = {DType::Float, DType::Int32};
  if (n.version >= 19) x_types = dtypes_of(QuantizeInputTypes{});
  require_dtype(n, 0, x_types);
  require_dtype(n, 1, scale_types(n));
  // Version 19 gives x and y_scale one type variable (x int32 then has an int32 scale, which
  // onnxc does not implement); version 21 lets them differ.
  if (n.version >= 19 && n.version < 21 && dtype_is_float(n.inputs[0]->dtype)) require_same_dtype(n, 1, 0);
  const DType y = quantize_output_type(n);
  require_quantized_type(n, y, "quantized type");
  require_zero_point_like_scale(n, 2, 1);
  quant_layout(n);
  set_output(n, 0, y, input(n, 0).shape);
}

// QuantizeLinear's saturate (version 19 on) concerns only the 8-bit floats.
bool quantize_saturates(const Node& n) { return n.version < 19 || n.attr_int("saturate", 1) != 0; }

void emit_quantize(const Node& n, Emitter& e) {
  e.include("onnxc/quant.h");
  e.linef("constexpr rt::QuantLayout q = {};", layout_code(quant_layout(n)));
  if (dtype_is_float8(n.outputs[0]->dtype)) {
    e.linef("rt::quantize_linear_float8(q, {}, {}, {}, {}, {});", e.in(0), e.in(1), e.in_or_null(2, n.outputs[0]->dtype),
            e.out(0), quantize_saturates(n) ? "true" : "false");
    return;
  }
  e.linef("rt::quantize_linear(q, {}, {}, {}, {});", e.in(0), e.in(1), e.in_or_null(2, n.outputs[0]->dtype), e.out(0));
}

void fold_quantize(const Node& n, std::vector<Tensor>& outs) {
  Tensor& y = fold_output(n, outs);
  const rt::QuantLayout q = quant_layout(n);
  if (dtype_is_float8(y.dtype)) {
    dispatch_in(n, n.inputs[0]->dtype, QuantizeInputTypes{}, [&](auto x_tag) {
      dispatch_in(n, n.inputs[1]->dtype, ScaleTypes{}, [&](auto s_tag) {
        dispatch_in(n, y.dtype, Float8Types{}, [&](auto q_tag) {
          using X = typename decltype(x_tag)::type;
          using S = typename decltype(s_tag)::type;
          using Q = typename decltype(q_tag)::type;
          rt::quantize_linear_float8(q, fold_input<X>(n, 0), fold_input<S>(n, 1), fold_input<Q>(n, 2), y.data<Q>(),
                                     quantize_saturates(n));
        });
      });
    });
    return;
  }
  dispatch_in(n, n.inputs[0]->dtype, QuantizeInputTypes{}, [&](auto x_tag) {
    dispatch_in(n, n.inputs[1]->dtype, ScaleTypes{}, [&](auto s_tag) {
      dispatch_in(n, y.dtype, QuantizedTypes{}, [&](auto q_tag) {
        using X = typename decltype(x_tag)::type;
        using S = typename decltype(s_tag)::type;
        using Q = typename decltype(q_tag)::type;
        rt::quantize_linear(q, fold_input<X>(n, 0), fold_input<S>(n, 1), fold_input<Q>(n, 2), y.data<Q>());
      });
    });
  });
}

const OpRegistrar quantize_op([] {
  OpDef d;
  d.op_type = "QuantizeLinear";
  d.versions = {10, 13, 19, 21, 23, 24, 25};
  d.infer = infer_quantize;
  d.emit = emit_quantize;
  d.fold = fold_quantize;
  return d;
}());

// ---- DequantizeLinear ----

void infer_dequantize(Node& n) {
  check_arity(n, 2, 3, 1, 1);
  require_scale_type_attr(n, "output_dtype");
  const DType x = input(n, 0).dtype;
  if (x != DType::Int32) require_quantized_type(n, x, "element type of x");
  require_dtype(n, 1, scale_types(n));
  if (n.has_input(2)) require_same_dtype(n, 2, 0);
  require_zero_point_like_scale(n, 2, 1);
  quant_layout(n);
  set_output(n, 0, input(n, 1).dtype, input(n, 0).shape);
}

void emit_dequantize(const Node& n, Emitter& e) {
  e.include("onnxc/quant.h");
  e.linef("constexpr rt::QuantLayout q = {};", layout_code(quant_layout(n)));
  if (dtype_is_float8(n.inputs[0]->dtype)) {
    e.linef("rt::dequantize_linear_float8(q, {}, {}, {}, {});", e.in(0), e.in(1), e.in_or_null(2, n.inputs[0]->dtype),
            e.out(0));
    return;
  }
  e.linef("rt::dequantize_linear(q, {}, {}, {}, {});", e.in(0), e.in(1), e.in_or_null(2, n.inputs[0]->dtype),
          e.out(0));
}

void fold_dequantize(const Node& n, std::vector<Tensor>& outs) {
  Tensor& y = fold_output(n, outs);
  const rt::QuantLayout q = quant_layout(n);
  if (dtype_is_float8(n.inputs[0]->dtype)) {
    dispatch_in(n, n.inputs[0]->dtype, Float8Types{}, [&](auto q_tag) {
      dispatch_in(n, y.dtype, ScaleTypes{}, [&](auto s_tag) {
        using Q = typename decltype(q_tag)::type;
        using S = typename decltype(s_tag)::type;
        rt::dequantize_linear_float8(q, fold_input<Q>(n, 0), fold_input<S>(n, 1), fold_input<Q>(n, 2), y.data<S>());
      });
    });
    return;
  }
  dispatch_in(n, n.inputs[0]->dtype, DequantizeInputTypes{}, [&](auto q_tag) {
    dispatch_in(n, y.dtype, ScaleTypes{}, [&](auto s_tag) {
      using Q = typename decltype(q_tag)::type;
      using S = typename decltype(s_tag)::type;
      rt::dequantize_linear(q, fold_input<Q>(n, 0), fold_input<S>(n, 1), fold_input<Q>(n, 2), y.data<S>());
    });
  });
}

const OpRegistrar dequantize_op([] {
  OpDef d;
  d.op_type = "DequantizeLinear";
  d.versions = {10, 13, 19, 21, 23, 24, 25};
  d.infer = infer_dequantize;
  d.emit = emit_dequantize;
  d.fold = fold_dequantize;
  return d;
}());

// ---- DynamicQuantizeLinear ----

void infer_dynamic_quantize(Node& n) {
  check_arity(n, 1, 1, 3, 3);
  require_dtype(n, 0, {DType::Float});
  set_output(n, 0, DType::Uint8, input(n, 0).shape);
  set_output(n, 1, DType::Float, {});
  set_output(n, 2, DType::Uint8, {});
}

const OpRegistrar dynamic_quantize_op([] {
  OpDef d;
  d.op_type = "DynamicQuantizeLinear";
  d.versions = {11};
  d.infer = infer_dynamic_quantize;
  d.emit = [](const Node& n, Emitter& e) {
    e.include("onnxc/quant.h");
    e.linef("rt::dynamic_quantize_linear({}, {}, {}, {}, {});", n.inputs[0]->numel(), e.in(0), e.out(0), e.out(1),
            e.out(2));
  };
  d.fold = [](const Node& n, std::vector<Tensor>& outs) {
    for (const Value* v : n.outputs) outs.emplace_back(v->dtype, v->shape);
    rt::dynamic_quantize_linear(n.inputs[0]->numel(), n.inputs[0]->constant->data<float>(),
                                outs[0].data<uint8_t>(), outs[1].data<float>(), outs[2].data<uint8_t>());
  };
  return d;
}());

}  // namespace
}  // namespace onnxc
