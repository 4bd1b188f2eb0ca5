// Activations: Relu and its relatives, sigmoid-like functions, Clip and PRelu. One functor
// per op (eltwise.h, eltwise_math.h).
#include "ops/elementwise.h"
#include "ops/scalar_literal.h"

namespace onnxc {
namespace {

using PReluTypes = ConcatTypes<FloatTypes, TypeList<int32_t, int64_t, uint32_t, uint64_t>>::type;

const OpRegistrar relu(unary_op<SignedTypes>("Relu", {1, 6, 13, 14}, functor<rt::Relu>("rt::Relu")));
const OpRegistrar leaky_relu(
    unary_op<FloatTypes>("LeakyRelu", {1, 6, 16}, functor<rt::LeakyRelu>("rt::LeakyRelu", {{"alpha", 0.01f}})));
const OpRegistrar thresholded_relu(unary_op<FloatTypes>(
    "ThresholdedRelu", {10, 22}, functor<rt::ThresholdedRelu>("rt::ThresholdedRelu", {{"alpha", 1.0f}})));

const OpRegistrar elu(unary_op<FloatTypes>("Elu", {1, 6, 22}, functor<rt::Elu>("rt::Elu", {{"alpha", 1.0f}})));
const OpRegistrar celu(unary_op<FloatTypes>("Celu", {12}, functor<rt::Celu>("rt::Celu", {{"alpha", 1.0f}})));
// Selu-6 made the defaults the exact constants of the paper; Selu-1 rounded them.
const OpRegistrar selu(unary_op<FloatTypes>(
    "Selu", {1, 6, 22},
    functor<rt::Selu>("rt::Selu", {{"alpha", 1.67326319217681884765625f, 6, 1.6732f},
                                   {"gamma", 1.05070102214813232421875f, 6, 1.0507f}})));

const OpRegistrar sigmoid(unary_op<FloatTypes>("Sigmoid", {1, 6, 13}, functor<rt::Sigmoid>("rt::Sigmoid")));
const OpRegistrar hard_sigmoid(unary_op<FloatTypes>(
    "HardSigmoid", {1, 6, 22}, functor<rt::HardSigmoid>("rt::HardSigmoid", {{"alpha", 0.2f}, {"beta", 0.5f}})));
const OpRegistrar hard_swish(unary_op<FloatTypes>("HardSwish", {14, 22}, functor<rt::HardSwish>("rt::HardSwish")));
const OpRegistrar swish(unary_op<FloatTypes>("Swish", {24}, functor<rt::Swish>("rt::Swish", {{"alpha", 1.0f}})));
const OpRegistrar tanh_op(unary_op<FloatTypes>("Tanh", {1, 6, 13}, functor<rt::Tanh>("rt::Tanh")));
const OpRegistrar softplus(unary_op<FloatTypes>("Softplus", {1, 22}, functor<rt::Softplus>("rt::Softplus")));
const OpRegistrar softsign(unary_op<FloatTypes>("Softsign", {1, 22}, functor<rt::Softsign>("rt::Softsign")));
const OpRegistrar mish(unary_op<FloatTypes>("Mish", {18, 22}, functor<rt::Mish>("rt::Mish")));
const OpRegistrar shrink(unary_op<NumericTypes>(
    "Shrink", {9}, functor<rt::Shrink>("rt::Shrink", {{"bias", 0.0f}, {"lambd", 0.5f}})));

// Gelu: the exact form or, with approximate="tanh", the tanh approximation.
struct GeluFunctor {
  template <class Use> void operator()(const Node& n, Use&& use) const {
    const std::string approximate = n.attr_string("approximate", "none");
    if (approximate == "none") return use(rt::Gelu{}, "rt::Gelu{}");
    if (approximate == "tanh") return use(rt::GeluTanh{}, "rt::GeluTanh{}");
    fail_invalid(n, fmt::format("attribute approximate is '{}'", approximate), "use 'none' or 'tanh'");
  }
};
const OpRegistrar gelu(unary_op<FloatTypes>("Gelu", {20}, GeluFunctor{}));

// ---- PRelu ----

// The shape PRelu reads its slope with against X: unidirectional broadcasting since version
// 7; before, one value for all of X, one per channel (axis 1), or one per element.
Shape prelu_slope_shape(const Node& n) {
  const Shape& x = n.inputs[0]->shape;
  const Shape& slope = n.inputs[1]->shape;
  if (n.version >= 7) {
    require_unidirectional(n, slope, x, "slope");
    return slope;
  }
  if (shape_numel(slope) == 1) return {};
  if (slope == x) return slope;
  if (slope.size() == 1 && x.size() >= 2 && slope[0] == x[1]) {
    Shape per_channel(x.size() - 1, 1);
    per_channel[0] = slope[0];
    return per_channel;
  }
  fail_unsupported(n,
                   fmt::format("slope of shape {} for X of shape {}: PRelu-{} defines a single slope, one per "
                               "channel or one per element", shape_str(slope), shape_str(x), n.version),
                   "convert the model to opset 7 or newer (numpy-style slope broadcasting)");
}

constexpr const char* kPReluFunctor = "rt::PRelu{}";

void infer_prelu(Node& n) {
  check_arity(n, 2, 2, 1, 1);
  require_input_dtype<PReluTypes>(n, 0);
  require_same_dtype(n, 1, 0);
  prelu_slope_shape(n);
  set_output(n, 0, n.inputs[0]->dtype, n.inputs[0]->shape);
}

OpDef prelu_op() {
  OpDef d;
  d.op_type = "PRelu";
  d.versions = {1, 6, 7, 9, 16};
  d.inplace = true;
  d.infer = infer_prelu;
  d.emit = [](const Node& n, Emitter& e) {
    const Shape& x = n.inputs[0]->shape;
    EltwiseWriter(e, x).zip({e.in(0), x, "x"}, {e.in(1), prelu_slope_shape(n), "slope"}, e.out(0), kPReluFunctor);
  };
  d.elementwise_form = [](const Node& n) -> std::optional<ElementwiseForm> {
    if (prelu_slope_shape(n) != n.inputs[1]->shape) return std::nullopt;  // PRelu-6's per-channel slope
    return ElementwiseForm{kPReluFunctor, 2};
  };
  d.fold = [](const Node& n, std::vector<Tensor>& outs) {
    Tensor& y = fold_output(n, outs);
    dispatch_in(n, y.dtype, PReluTypes{}, [&](auto tag) {
      using T = typename decltype(tag)::type;
      fold_zip(n.inputs[0]->constant->data<T>(), y.shape, n.inputs[1]->constant->data<T>(), prelu_slope_shape(n),
               y.data<T>(), y.shape, rt::PRelu{});
    });
  };
  return d;
}
const OpRegistrar prelu(prelu_op());

// ---- Clip ----

// One bound of Clip: a float attribute before version 11 (Clip-6 defaults to the float range,
// Clip-1 to none), an optional scalar input (input 1 or 2) since.
struct ClipBound {
  enum class Kind { None, Attribute, Input } kind = Kind::None;
  float value = 0;        // Attribute
  std::size_t input = 0;  // Input
};

ClipBound clip_bound(const Node& n, bool lower) {
  const char* name = lower ? "min" : "max";
  if (n.version >= 11) {
    std::size_t i = lower ? 1 : 2;
    if (!n.has_input(i)) return {};
    return {ClipBound::Kind::Input, 0, i};
  }
  if (n.has_attr(name)) return {ClipBound::Kind::Attribute, n.attr_float(name, 0)};
  if (n.version >= 6) {
    const float range = std::numeric_limits<float>::max();
    return {ClipBound::Kind::Attribute, lower ? -range : range};
  }
  return {};
}

// The compute type of T's C++ name: arithmetic on the 16-bit floats happens in float.
std::string compute_ctype(DType t) {
  if (t == DType::Double) return "double";
  return dtype_is_float(t) ? "float" : dtype_ctype(t);
}

// The text of a bound input's element: read from its buffer, or its constant value.
using BoundInputText = std::function<std::string(std::size_t input)>;

// The bound as a C++ expression of X's compute type.
std::string clip_bound_text(const Node& n, const ClipBound& b, bool lower, const BoundInputText& input_text) {
  const std::string ct = compute_ctype(n.inputs[0]->dtype);
  switch (b.kind) {
    case ClipBound::Kind::Input: return fmt::format("rt::load({})", input_text(b.input));
    case ClipBound::Kind::Attribute:
      return ct == "double" ? double_literal(b.value) : float_literal(b.value);
    case ClipBound::Kind::None: break;
  }
  if (dtype_is_float(n.inputs[0]->dtype))
    return fmt::format("{}std::numeric_limits<{}>::infinity()", lower ? "-" : "", ct);
  return fmt::format("std::numeric_limits<{}>::{}()", ct, lower ? "lowest" : "max");
}

// The bound's value in compute type C, for folding (every input is constant then).
std::string clip_functor(const Node& n, const BoundInputText& input_text) {
  return fmt::format("rt::Clip<{}>{{{}, {}}}", compute_ctype(n.inputs[0]->dtype),
                     clip_bound_text(n, clip_bound(n, true), true, input_text),
                     clip_bound_text(n, clip_bound(n, false), false, input_text));
}

template <class T> rt::compute_t<T> clip_bound_value(const Node& n, const ClipBound& b, bool lower) {
  using C = rt::compute_t<T>;
  switch (b.kind) {
    case ClipBound::Kind::Input: return rt::load(n.inputs[b.input]->constant->data<T>()[0]);
    case ClipBound::Kind::Attribute: return static_cast<C>(b.value);
    case ClipBound::Kind::None: break;
  }
  if (std::numeric_limits<C>::has_infinity)
    return lower ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::infinity();
  return lower ? std::numeric_limits<C>::lowest() : std::numeric_limits<C>::max();
}

void infer_clip(Node& n) {
  check_arity(n, 1, n.version >= 11 ? 3 : 1, 1, 1);
  require_input_dtype<NumericTypes>(n, 0);
  const Value& x = *n.inputs[0];
  for (std::size_t i = 1; i < 3; ++i) {
    if (!n.has_input(i)) continue;
    require_same_dtype(n, i, 0);
    if (n.inputs[i]->numel() != 1) fail_invalid(n, fmt::format("input {} must be a scalar", i));
  }
  set_output(n, 0, x.dtype, x.shape);
}

OpDef clip_op() {
  OpDef d;
  d.op_type = "Clip";
  d.versions = {1, 6, 11, 12, 13};
  d.inplace = true;
  d.infer = infer_clip;
  d.emit = [](const Node& n, Emitter& e) {
    emit_unary(n, e, clip_functor(n, [&](std::size_t i) { return e.in(i) + "[0]"; }));
  };
  // Fusable with constant bounds, written as literals: rt::load of the literal is the value the
  // kernel loads from the constant's array.
  d.elementwise_form = [](const Node& n) -> std::optional<ElementwiseForm> {
    for (std::size_t i = 1; i < n.inputs.size(); ++i)
      if (n.has_input(i) && !n.inputs[i]->constant) return std::nullopt;
    return ElementwiseForm{
        clip_functor(n, [&](std::size_t i) { return scalar_literal(n.inputs[i]->dtype, *n.inputs[i]->constant); }), 1};
  };
  d.fold = [](const Node& n, std::vector<Tensor>& outs) {
    Tensor& y = fold_output(n, outs);
    dispatch_in(n, y.dtype, NumericTypes{}, [&](auto tag) {
      using T = typename decltype(tag)::type;
      rt::Clip<rt::compute_t<T>> clip{clip_bound_value<T>(n, clip_bound(n, true), true),
                                      clip_bound_value<T>(n, clip_bound(n, false), false)};
      rt::map(n.inputs[0]->constant->data<T>(), y.data<T>(), y.numel(), clip);
    });
  };
  return d;
}
const OpRegistrar clip(clip_op());

}  // namespace
}  // namespace onnxc
