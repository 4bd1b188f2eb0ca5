// Cast and CastLike: elementwise conversion between any two numeric or bool types, with the
// rules of rt::convert (cast.h), and between numbers and strings (onnxc/strings.h): float and
// the integers to text, text to float. The 8-bit floats (version 19) convert to and from every
// numeric type through float (rounded to nearest even; `saturate` chooses what is out of range:
// the largest value, or infinity / NaN); the sub-byte types are refused.
#include <cctype>

#include "onnxc/strings.h"
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

// The types written as text: float as its shortest round-trip decimal, integers in decimal.
// (double, float16 and bfloat16 would need their own shortest-decimal rules.)
using ToStringTypes = ConcatTypes<TypeList<float>, IntTypes>::type;

bool involves_strings(const Node& n) {
  return n.inputs[0]->dtype == DType::String || n.outputs[0]->dtype == DType::String;
}

void require_string_cast(const Node& n, DType from, DType to) {
  if (from == DType::String && to != DType::String && to != DType::Float)
    fail_unsupported(n, fmt::format("casting string to {} is not supported: strings are read as float only",
                                    dtype_name(to)),
                     "cast to float, then from float to the type you need");
  if (to == DType::String && from != DType::String)
    require_input_dtype(n, 0, dtypes_of(ToStringTypes{}));
}

void require_castable(const Node& n, DType t, const char* role) {
  if (dtype_size(t) == 0)
    fail_unsupported(n, fmt::format("casting {} {} is not supported: generated code has no {} type", role,
                                    dtype_name(t), dtype_name(t)),
                     "cast to a type onnxc supports (float, float16, bfloat16, double, integers, bool)");
}

void infer_cast(Node& n, DType to) {
  const Value& x = input(n, 0);
  if (x.dtype == DType::String || to == DType::String) require_string_cast(n, x.dtype, to);
  require_castable(n, x.dtype, "from");
  require_castable(n, to, "to");
  if ((dtype_is_float8(x.dtype) || dtype_is_float8(to)) && (x.dtype == DType::String || to == DType::String))
    fail_unsupported(n, "casting between strings and 8-bit floats is not supported", "cast through float");
  set_output(n, 0, to, x.shape);
  // Numbers need text storage; strings whose text is in their own buffer (the arena reuses it)
  // are copied into as much.
  if (to == DType::String && n.has_output(0))
    n.outputs[0]->text_bytes_per_element = x.dtype == DType::String ? x.text_bytes_per_element : rt::kNumberTextBytes;
}

// Numbers to text (into the output's text storage), text to float, or strings copied.
void emit_string_cast(const Node& n, Emitter& e) {
  e.include("onnxc/strings.h");
  const Value& y = *n.outputs[0];
  const int64_t count = y.numel();
  if (n.inputs[0]->dtype == y.dtype)
    e.linef("rt::copy_strings({}, {}, {}, {}, {});", e.in(0), e.out(0), count,
            y.text_bytes() ? fmt::format("reinterpret_cast<char*>({} + {})", e.out(0), count) : "nullptr",
            y.text_bytes());
  else if (n.outputs[0]->dtype == DType::String)
    e.linef("rt::cast_to_string({}, {}, {}, reinterpret_cast<char*>({} + {}));", e.in(0), e.out(0), count, e.out(0),
            count);
  else
    e.linef("rt::cast_from_string({}, {}, {});", e.in(0), e.out(0), count);
}

void fold_string_cast(const Node& n, Tensor& y) {
  const Tensor& x = *n.inputs[0]->constant;
  const auto count = static_cast<std::size_t>(x.numel());
  if (x.dtype == y.dtype) {
    y.strings = x.strings;
  } else if (y.dtype == DType::String) {
    std::vector<char> text(count * rt::kNumberTextBytes);
    std::vector<rt::cstring> ptrs(count);
    dispatch_in(n, x.dtype, ToStringTypes{}, [&](auto from) {
      using From = typename decltype(from)::type;
      rt::cast_to_string(x.data<From>(), ptrs.data(), static_cast<rt::index_t>(count), text.data());
    });
    for (std::size_t i = 0; i < count; ++i) y.strings[i] = ptrs[i];
  } else {
    std::vector<rt::cstring> ptrs;
    for (const std::string& s : x.strings) ptrs.push_back(s.c_str());
    rt::cast_from_string(ptrs.data(), y.data<float>(), static_cast<rt::index_t>(count));
  }
}

std::string cast_functor(const Node& n) { return fmt::format("rt::Cast<{}>{{}}", dtype_ctype(n.outputs[0]->dtype)); }

// A cast into an 8-bit float with saturate = 0 (the attribute of versions 19 on): its own loop,
// since storing into an 8-bit float saturates.
bool unsaturated_float8(const Node& n) {
  return dtype_is_float8(n.outputs[0]->dtype) && n.version >= 19 && n.attr_int("saturate", 1) == 0;
}

// Both ops convert input 0 to `target(n)`.
OpDef cast_like_op(const char* op_type, std::vector<int> versions, int inputs, DType (*target)(const Node&)) {
  OpDef d;
  d.op_type = op_type;
  d.versions = std::move(versions);
  d.infer = [inputs, target](Node& n) {
    check_arity(n, inputs, inputs, 1, 1);
    infer_cast(n, target(n));
  };
  d.emit = [](const Node& n, Emitter& e) {
    if (involves_strings(n)) {
      emit_string_cast(n, e);
    } else if (unsaturated_float8(n)) {
      e.linef("rt::cast_to_float8_unsaturated({}, {}, {});", e.in(0), e.out(0), n.outputs[0]->numel());
    } else {
      emit_unary(n, e, cast_functor(n));
    }
  };
  // CastLike's input 1 only names the type: it is no operand, but must not be computed at run
  // time for nothing.
  d.elementwise_form = [](const Node& n) -> std::optional<ElementwiseForm> {
    if ((n.inputs.size() > 1 && !n.inputs[1]->constant) || involves_strings(n) || unsaturated_float8(n))
      return std::nullopt;
    return ElementwiseForm{cast_functor(n), 1};
  };
  d.fold = [](const Node& n, std::vector<Tensor>& outs) {
    Tensor& y = fold_output(n, outs);
    if (involves_strings(n)) return fold_string_cast(n, y);
    const Tensor& x = *n.inputs[0]->constant;
    dispatch_in(n, x.dtype, CastTypes{}, [&](auto from) {
      dispatch_in(n, y.dtype, CastTypes{}, [&](auto to) {
        using From = typename decltype(from)::type;
        using To = typename decltype(to)::type;
        if constexpr (std::is_same<rt::compute_t<To>, float>::value && sizeof(To) == 1) {
          if (unsaturated_float8(n)) return rt::cast_to_float8_unsaturated(x.data<From>(), y.data<To>(), y.numel());
        }
        rt::map(x.data<From>(), y.data<To>(), y.numel(), rt::Cast<To>{});
      });
    });
  };
  return d;
}

// Version 19 adds the 8-bit floats and `saturate`; later versions add `round_mode` (for
// float8e8m0) and the 4-bit, 2-bit, float4 and float8e8m0 types, which are refused. So every
// version converts the supported types alike.
const OpRegistrar cast(cast_like_op("Cast", {1, 6, 9, 13, 19, 21, 23, 24, 25}, 1, cast_target));
const OpRegistrar cast_like(cast_like_op("CastLike", {15, 19, 21, 23, 24, 25}, 2,
                                         [](const Node& n) { return input(n, 1).dtype; }));

}  // namespace
}  // namespace onnxc
