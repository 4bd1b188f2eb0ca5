// Unary math, predicates and logical/bitwise negation: one functor per op (eltwise_math.h).
#include "ops/elementwise.h"

namespace onnxc {
namespace {

// ---- math ----

const OpRegistrar abs_op(unary_op<NumericTypes>("Abs", {1, 6, 13}, functor<rt::Abs>("rt::Abs")));
const OpRegistrar neg_op(unary_op<SignedTypes>("Neg", {1, 6, 13}, functor<rt::Neg>("rt::Neg")));
const OpRegistrar sign_op(unary_op<NumericTypes>("Sign", {9, 13}, functor<rt::Sign>("rt::Sign")));
const OpRegistrar exp_op(unary_op<FloatTypes>("Exp", {1, 6, 13}, functor<rt::Exp>("rt::Exp")));
const OpRegistrar log_op(unary_op<FloatTypes>("Log", {1, 6, 13}, functor<rt::Log>("rt::Log")));
const OpRegistrar sqrt_op(unary_op<FloatTypes>("Sqrt", {1, 6, 13}, functor<rt::Sqrt>("rt::Sqrt")));
const OpRegistrar reciprocal_op(
    unary_op<FloatTypes>("Reciprocal", {1, 6, 13}, functor<rt::Reciprocal>("rt::Reciprocal")));
const OpRegistrar floor_op(unary_op<FloatTypes>("Floor", {1, 6, 13}, functor<rt::Floor>("rt::Floor")));
const OpRegistrar ceil_op(unary_op<FloatTypes>("Ceil", {1, 6, 13}, functor<rt::Ceil>("rt::Ceil")));
const OpRegistrar round_op(unary_op<FloatTypes>("Round", {11, 22}, functor<rt::Round>("rt::Round")));
const OpRegistrar erf_op(unary_op<NumericTypes>("Erf", {9, 13}, functor<rt::Erf>("rt::Erf")));

// Trigonometric (since 7) and hyperbolic (since 9) functions; version 22 adds bfloat16.
const OpRegistrar sin_op(unary_op<FloatTypes>("Sin", {7, 22}, functor<rt::Sin>("rt::Sin")));
const OpRegistrar cos_op(unary_op<FloatTypes>("Cos", {7, 22}, functor<rt::Cos>("rt::Cos")));
const OpRegistrar tan_op(unary_op<FloatTypes>("Tan", {7, 22}, functor<rt::Tan>("rt::Tan")));
const OpRegistrar asin_op(unary_op<FloatTypes>("Asin", {7, 22}, functor<rt::Asin>("rt::Asin")));
const OpRegistrar acos_op(unary_op<FloatTypes>("Acos", {7, 22}, functor<rt::Acos>("rt::Acos")));
const OpRegistrar atan_op(unary_op<FloatTypes>("Atan", {7, 22}, functor<rt::Atan>("rt::Atan")));
const OpRegistrar sinh_op(unary_op<FloatTypes>("Sinh", {9, 22}, functor<rt::Sinh>("rt::Sinh")));
const OpRegistrar cosh_op(unary_op<FloatTypes>("Cosh", {9, 22}, functor<rt::Cosh>("rt::Cosh")));
const OpRegistrar asinh_op(unary_op<FloatTypes>("Asinh", {9, 22}, functor<rt::Asinh>("rt::Asinh")));
const OpRegistrar acosh_op(unary_op<FloatTypes>("Acosh", {9, 22}, functor<rt::Acosh>("rt::Acosh")));
const OpRegistrar atanh_op(unary_op<FloatTypes>("Atanh", {9, 22}, functor<rt::Atanh>("rt::Atanh")));

// ---- predicates ----

const OpRegistrar isnan_op(unary_op<FloatTypes, BoolOutput>("IsNaN", {9, 13, 20}, functor<rt::IsNaN>("rt::IsNaN")));

// IsInf's fields are int attributes used as flags.
const Functor<rt::IsInf> is_inf_functor{
    [](const Node& n) {
      return fmt::format("rt::IsInf{{{}, {}}}", n.attr_int("detect_positive", 1) != 0,
                         n.attr_int("detect_negative", 1) != 0);
    },
    [](const Node& n) {
      return rt::IsInf{n.attr_int("detect_positive", 1) != 0, n.attr_int("detect_negative", 1) != 0};
    }};
const OpRegistrar isinf_op(unary_op<FloatTypes, BoolOutput>("IsInf", {10, 20}, is_inf_functor));

// ---- logical and bitwise negation ----

const OpRegistrar not_op(unary_op<BoolTypes>("Not", {1}, functor<rt::Not>("rt::Not")));
const OpRegistrar bitwise_not_op(unary_op<IntTypes>("BitwiseNot", {18}, functor<rt::BitwiseNot>("rt::BitwiseNot")));

}  // namespace
}  // namespace onnxc
