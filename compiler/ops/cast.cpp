// Cast and CastLike: elementwise conversion between any two numeric or bool types, with the
// rules of rt::convert (cast.h). String and the sub-byte and 8-bit float types are refused.
#include <cctype>

#include "ops/elementwise.h"

namespace onnxc {
namespace {

// Cast-1 names the target type as a string ("FLOAT", "INT64", ...), later versions by number.
DType cast_target(const Node& n) {
  const Attribute* to = n.attr("to");
  if (!to) fail_invalid(n, "the required attribute 'to' is missing");
  if (to->kind == Attribute::Kind::String) {
    for (int v = 1; v <= static_cast<int>(DType::BFloat16); ++v) {
      std::string name = dtype_name(static_cast<DType>(v));
      for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      if (name == to->s) return static_cast<DType>(v);
    }
    fail_invalid(n, fmt::format("attribute 'to' names no ONNX type: '{}'", to->s));
  }
  DType t;
  if (to->kind != Attribute::Kind::Int || !dtype_from_int(static_cast<int32_t>(to->i), &t) || t == DType::Undefined)
    fail_invalid(n, "attribute 'to' is not a TensorProto.DataType value");
  return t;
}

void require_castable(const Node& n, DType t, const char* role) {
  if (t == DType::String)
    fail_unsupported(n, fmt::format("casting {} string is not supported (generated code has no strings)", role),
                     "convert strings outside the model");
  if (dtype_size(t) == 0)
    fail_unsupported(n, fmt::format("casting {} {} is not supported: generated code has no {} type", role,
                                    dtype_name(t), dtype_name(t)),
                     "cast to a type onnxc supports (float, float16, bfloat16, double, integers, bool)");
}

void infer_cast(Node& n, DType to) {
  const Value& x = input(n, 0);
  require_castable(n, x.dtype, "from");
  require_castable(n, to, "to");
  set_output(n, 0, to, x.shape);
}

std::string cast_functor(const Node& n) { return fmt::format("rt::Cast<{}>{{}}", dtype_ctype(n.outputs[0]->dtype)); }

// Both ops convert input 0 to `target(n)`.
OpDef cast_like_op(const char* op_type, std::vector<int> versions, int inputs, DType (*target)(const Node&)) {
  OpDef d;
  d.op_type = op_type;
  d.versions = std::move(versions);
  d.infer = [inputs, target](Node& n) {
    check_arity(n, inputs, inputs, 1, 1);
    infer_cast(n, target(n));
  };
  d.emit = [](const Node& n, Emitter& e) { emit_unary(n, e, cast_functor(n)); };
  // CastLike's input 1 only names the type: it is no operand, but must not be computed at run
  // time for nothing.
  d.elementwise_form = [](const Node& n) -> std::optional<ElementwiseForm> {
    if (n.inputs.size() > 1 && !n.inputs[1]->constant) return std::nullopt;
    return ElementwiseForm{cast_functor(n), 1};
  };
  d.fold = [](const Node& n, std::vector<Tensor>& outs) {
    Tensor& y = fold_output(n, outs);
    const Tensor& x = *n.inputs[0]->constant;
    dispatch_in(n, x.dtype, AllTypes{}, [&](auto from) {
      dispatch_in(n, y.dtype, AllTypes{}, [&](auto to) {
        using From = typename decltype(from)::type;
        using To = typename decltype(to)::type;
        rt::map(x.data<From>(), y.data<To>(), y.numel(), rt::Cast<To>{});
      });
    });
  };
  return d;
}

// Version 19 adds `saturate` and later versions `round_mode`: both only concern the float8
// types, which are refused; the later versions add further 4/2-bit and float8 types (refused
// too). So every version converts the supported types alike.
const OpRegistrar cast(cast_like_op("Cast", {1, 6, 9, 13, 19, 21, 23, 24, 25}, 1, cast_target));
const OpRegistrar cast_like(cast_like_op("CastLike", {15, 19, 21, 23, 24, 25}, 2,
                                         [](const Node& n) { return input(n, 1).dtype; }));

}  // namespace
}  // namespace onnxc
