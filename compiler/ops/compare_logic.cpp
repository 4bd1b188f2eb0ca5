// Comparisons (bool results), logical and bitwise binary operators, BitShift. All broadcast
// like numpy (before version 7 with the legacy `broadcast`/`axis` attributes).
#include "ops/elementwise.h"

namespace onnxc {
namespace {

// ---- comparisons ----

const OpRegistrar equal(
    binary_op<AllTypes, BoolOutput>("Equal", {1, 7, 11, 13, 19}, functor<rt::Equal>("rt::Equal")));
const OpRegistrar less(binary_op<NumericTypes, BoolOutput>("Less", {1, 7, 9, 13}, functor<rt::Less>("rt::Less")));
const OpRegistrar greater(
    binary_op<NumericTypes, BoolOutput>("Greater", {1, 7, 9, 13}, functor<rt::Greater>("rt::Greater")));
const OpRegistrar less_or_equal(
    binary_op<NumericTypes, BoolOutput>("LessOrEqual", {12, 16}, functor<rt::LessOrEqual>("rt::LessOrEqual")));
const OpRegistrar greater_or_equal(
    binary_op<NumericTypes, BoolOutput>("GreaterOrEqual", {12, 16}, functor<rt::GreaterOrEqual>("rt::GreaterOrEqual")));

// ---- logic ----

const OpRegistrar and_op(binary_op<BoolTypes>("And", {1, 7}, functor<rt::And>("rt::And")));
const OpRegistrar or_op(binary_op<BoolTypes>("Or", {1, 7}, functor<rt::Or>("rt::Or")));
const OpRegistrar xor_op(binary_op<BoolTypes>("Xor", {1, 7}, functor<rt::Xor>("rt::Xor")));

// ---- bits ----

const OpRegistrar bitwise_and(binary_op<IntTypes>("BitwiseAnd", {18}, functor<rt::BitwiseAnd>("rt::BitwiseAnd")));
const OpRegistrar bitwise_or(binary_op<IntTypes>("BitwiseOr", {18}, functor<rt::BitwiseOr>("rt::BitwiseOr")));
const OpRegistrar bitwise_xor(binary_op<IntTypes>("BitwiseXor", {18}, functor<rt::BitwiseXor>("rt::BitwiseXor")));

// BitShift: the required `direction` attribute picks the functor.
struct BitShiftFunctor {
  template <class Use> void operator()(const Node& n, Use&& use) const {
    const std::string direction = n.attr_string("direction", "");
    if (direction == "LEFT") return use(rt::ShiftLeft{}, "rt::ShiftLeft{}");
    if (direction == "RIGHT") return use(rt::ShiftRight{}, "rt::ShiftRight{}");
    fail_invalid(n, fmt::format("attribute direction is '{}'", direction), "set it to \"LEFT\" or \"RIGHT\"");
  }
};
const OpRegistrar bit_shift(binary_op<UnsignedIntTypes>("BitShift", {11}, BitShiftFunctor{}));

}  // namespace
}  // namespace onnxc
