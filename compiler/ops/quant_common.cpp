#include "ops/quant_common.h"

#include <limits>

#include "ops/elementwise.h"

namespace onnxc {

bool is_per_tensor(const Shape& s) { return s.size() <= 1 && shape_numel(s) == 1; }

void require_per_tensor(const Node& n, std::size_t i, const char* what) {
  const Shape& s = input(n, i).shape;
  if (!is_per_tensor(s))
    fail_unsupported(n, fmt::format("{} has shape {}; onnxc supports only a per-tensor {} here", what, shape_str(s), what),
                     "quantize this tensor per tensor (a scalar scale and zero point)");
}

void require_per_tensor_or_channel(const Node& n, std::size_t i, int64_t channels, const char* what) {
  const Shape& s = input(n, i).shape;
  if (is_per_tensor(s) || s == Shape{channels}) return;
  fail_unsupported(n, fmt::format("{} has shape {}", what, shape_str(s)),
                   fmt::format("give it one element (per tensor) or {} (one per output channel)", channels));
}

void require_zero_point_like_scale(const Node& n, std::size_t zp, std::size_t scale) {
  if (!n.has_input(zp)) return;
  const Shape& z = n.inputs[zp]->shape;
  const Shape& s = input(n, scale).shape;
  if (z != s && !(is_per_tensor(z) && is_per_tensor(s)))
    fail_invalid(n, fmt::format("zero point shape {} differs from scale shape {}", shape_str(z), shape_str(s)));
}

int64_t channel_stride(const Node& n, std::size_t i) {
  return n.has_input(i) && !is_per_tensor(n.inputs[i]->shape) ? 1 : 0;
}

std::string quant_operand_code(const Node& n, Emitter& e, std::size_t data, std::size_t zp) {
  const Value& v = *n.inputs[data];
  return fmt::format("rt::QuantOperand<{}>{{{}, {}, {}}}", ctype_of(v), e.in(data), e.in_or_null(zp, v.dtype),
                     channel_stride(n, zp));
}

namespace {

int64_t requant_count(const Node& n, RequantInputs in, int64_t channels) {
  return channel_stride(n, in.b_scale) ? channels : 1;
}

bool scales_constant(const Node& n, RequantInputs in) {
  return const_input(n, in.a_scale) && const_input(n, in.b_scale) && const_input(n, in.y_scale);
}

}  // namespace

std::vector<rt::Requant> constant_requants(const Node& n, RequantInputs in, int64_t channels) {
  if (!scales_constant(n, in)) return {};
  const int64_t count = requant_count(n, in, channels);
  std::vector<rt::Requant> r(static_cast<std::size_t>(count));
  dispatch_in(n, n.inputs[in.a_scale]->dtype, FloatTypes{}, [&](auto tag) {
    using S = typename decltype(tag)::type;
    rt::make_requants(count, const_input(n, in.a_scale)->data<S>(), const_input(n, in.b_scale)->data<S>(),
                      count == 1 ? 0 : 1, const_input(n, in.y_scale)->data<S>(), r.data());
  });
  return r;
}

std::size_t requant_scratch_bytes(const Node& n, RequantInputs in, int64_t channels) {
  if (scales_constant(n, in)) return 0;
  return static_cast<std::size_t>(requant_count(n, in, channels)) * sizeof(rt::Requant);
}

std::string emit_requantize_output(const Node& n, Emitter& e, RequantInputs in, int64_t channels,
                                   std::size_t y_zero_point, std::size_t bias, const std::string& scratch,
                                   std::size_t table) {
  const int64_t count = requant_count(n, in, channels);
  const std::vector<rt::Requant> constants = constant_requants(n, in, channels);
  std::string table_type = "rt::Requant";
  if (!constants.empty()) {
    std::vector<std::string> items;
    for (const rt::Requant& r : constants)
      items.push_back(
          fmt::format("rt::requant_constant({}, {}, {})", float_literal(r.multiplier), r.mantissa, r.exponent));
    // static: read from flash, not copied onto the stack on every run; only the fields the
    // target reads are stored.
    table_type = "rt::RequantConstant";
    e.linef("static constexpr rt::RequantConstant requant[] = {{{}}};", fmt::join(items, ", "));
  } else {
    e.linef("rt::Requant* const requant = reinterpret_cast<rt::Requant*>({});", scratch);
    e.linef("rt::make_requants({}, {}, {}, {}, {}, requant);", count, e.in(in.a_scale), e.in(in.b_scale),
            count == 1 ? 0 : 1, e.in(in.y_scale));
  }
  const bool has_bias = bias != std::numeric_limits<std::size_t>::max() && n.has_input(bias);
  const std::string requantize =
      fmt::format("rt::RequantizeOutput<{}, {}>{{{}, {}, requant, {}, static_cast<std::int32_t>(*{})}}",
                  ctype_of(*n.outputs[0]), table_type, e.out(0), has_bias ? e.in(bias) : "nullptr",
                  count == 1 ? 0 : 1, e.in(y_zero_point));
  if (table == std::numeric_limits<std::size_t>::max() || !n.has_input(table)) return requantize;
  return fmt::format("rt::RequantizeLookupOutput<{}, {}>{{{}, {}}}", ctype_of(*n.outputs[0]), table_type, requantize,
                     e.in(table));
}

void check_residual(const Node& n, std::size_t r, const Shape& out) {
  require_dtype(n, r, {DType::Uint8, DType::Int8});
  require_same_dtype(n, r + 2, r);
  require_dtype(n, r + 1, {DType::Float});
  require_per_tensor(n, r + 1, "residual scale");
  require_per_tensor(n, r + 2, "residual zero point");
  require_const_input(n, r + 1, "residual scale");
  require_const_input(n, r + 2, "residual zero point");
  if (n.inputs[r]->shape != out)
    fail_unsupported(n,
                     fmt::format("the residual Add's quantized operand has shape {}, broadcast to the product's {}",
                                 shape_str(n.inputs[r]->shape), shape_str(out)),
                     "give both operands of the Add the same shape, or compile with --disable-pass lower-qdq "
                     "(the product, Add and Q stay float)");
}

float residual_multiplier(const Node& n, std::size_t r) {
  return n.inputs[r + 1]->constant->data<float>()[0] / n.inputs[6]->constant->data<float>()[0];
}

std::pair<int32_t, int32_t> residual_clamp(const Node& n) {
  const bool s8 = n.outputs[0]->dtype == DType::Int8;
  return {static_cast<int32_t>(n.attr_int(kResidualLowAttr, s8 ? -128 : 0)),
          static_cast<int32_t>(n.attr_int(kResidualHighAttr, s8 ? 127 : 255))};
}

std::string with_residual(const Node& n, Emitter& e, std::size_t r, const std::string& requantize) {
  if (!n.has_input(r)) return requantize;
  const auto [low, high] = residual_clamp(n);
  return fmt::format("rt::requantize_add({}, {}, static_cast<std::int32_t>(*{}), {}, {}, {})", requantize, e.in(r),
                     e.in(r + 2), float_literal(residual_multiplier(n, r)), low, high);
}

DType check_qlinear_inputs(const Node& n, const std::vector<DType>& scale_types) {
  const std::vector<DType> eight_bit = {DType::Uint8, DType::Int8};
  require_dtype(n, 0, eight_bit);
  require_dtype(n, 3, eight_bit);
  require_dtype(n, 7, eight_bit);
  require_dtype(n, 1, scale_types);
  for (std::size_t scale : {4, 6}) require_same_dtype(n, scale, 1);
  for (std::size_t zp : {2, 5}) require_same_dtype(n, zp, zp - 2);
  // QLinearConv names its operands x and w, QLinearMatMul a and b.
  const std::string a = n.op_type == "QLinearConv" ? "x" : "a";
  require_per_tensor(n, 1, (a + "_scale").c_str());
  require_per_tensor(n, 2, (a + "_zero_point").c_str());
  require_per_tensor(n, 6, "y_scale");
  require_per_tensor(n, 7, "y_zero_point");
  require_zero_point_like_scale(n, 5, 4);
  return n.inputs[7]->dtype;
}

}  // namespace onnxc
