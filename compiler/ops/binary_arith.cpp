// Add, Sub, Mul, Div, Mod, Pow: numpy-broadcasting arithmetic (legacy `broadcast`/`axis`
// before version 7) on every numeric type.
#include "ops/elementwise.h"

namespace onnxc {
namespace {

const std::vector<int> kArithVersions = {1, 6, 7, 13, 14};

const OpRegistrar add_op(binary_op<NumericTypes>("Add", kArithVersions, functor<rt::Add>("rt::Add")));
const OpRegistrar sub_op(binary_op<NumericTypes>("Sub", kArithVersions, functor<rt::Sub>("rt::Sub")));
const OpRegistrar mul_op(binary_op<NumericTypes>("Mul", kArithVersions, functor<rt::Mul>("rt::Mul")));
const OpRegistrar div_op(binary_op<NumericTypes>("Div", kArithVersions, functor<rt::Div>("rt::Div")));

// Mod: fmod=0 is the integer remainder with the divisor's sign, fmod=1 C's fmod/% (the
// dividend's sign). ONNX requires fmod=1 for floating types.
struct ModFunctor {
  template <class Use> void operator()(const Node& n, Use&& use) const {
    const int64_t fmod = n.attr_int("fmod", 0);
    if (fmod == 1) return use(rt::FMod{}, "rt::FMod{}");
    if (fmod != 0) fail_invalid(n, fmt::format("attribute fmod is {}", fmod), "set it to 0 or 1");
    if (dtype_is_float(n.inputs[0]->dtype))
      fail_invalid(n, "fmod=0 on a floating type", "set fmod=1: ONNX requires it for floating inputs");
    use(rt::Mod{}, "rt::Mod{}");
  }
};
const OpRegistrar mod_op(binary_op<NumericTypes>("Mod", {10, 13}, ModFunctor{}));

// Pow: the exponent may have another type than the base (since version 12); the result has
// the base's type.
using PowBaseTypes = ConcatTypes<FloatTypes, TypeList<int32_t, int64_t>>::type;

constexpr const char* kPowFunctor = "rt::Pow{}";

void infer_pow(Node& n) {
  check_arity(n, 2, 2, 1, 1);
  require_input_dtype<PowBaseTypes>(n, 0);
  require_input_dtype<NumericTypes>(n, 1);
  set_output(n, 0, n.inputs[0]->dtype, binary_output_shape(n));
}

OpDef pow_op() {
  OpDef d;
  d.op_type = "Pow";
  d.versions = {1, 7, 12, 13, 15};
  d.inplace = true;
  d.infer = infer_pow;
  d.emit = [](const Node& n, Emitter& e) { emit_binary(n, e, kPowFunctor); };
  d.elementwise_form = [](const Node& n) -> std::optional<ElementwiseForm> {
    if (!reads_own_shapes(n)) return std::nullopt;
    return ElementwiseForm{kPowFunctor, 2};
  };
  d.fold = [](const Node& n, std::vector<Tensor>& outs) {
    Tensor& y = fold_output(n, outs);
    dispatch_in(n, n.inputs[0]->dtype, PowBaseTypes{}, [&](auto base) {
      dispatch_in(n, n.inputs[1]->dtype, NumericTypes{}, [&](auto exponent) {
        using A = typename decltype(base)::type;
        using B = typename decltype(exponent)::type;
        fold_binary_node<A, B, A>(n, y, rt::Pow{});
      });
    });
  };
  return d;
}
const OpRegistrar pow_reg(pow_op());

}  // namespace
}  // namespace onnxc
