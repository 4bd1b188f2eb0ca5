// Add, Sub, Mul, Div: numpy-broadcasting arithmetic.
#include "ops/elementwise.h"

namespace onnxc {
namespace {

void infer_arith(Node& n) {
  check_arity(n, 2, 2, 1, 1);
  const Value& a = input(n, 0);
  const Value& b = input(n, 1);
  if (a.dtype != b.dtype)
    fail_invalid(n, fmt::format("inputs have different types ({} and {})", dtype_name(a.dtype), dtype_name(b.dtype)),
                 "insert a Cast so both inputs have the same type");
  if (a.dtype == DType::Bool || a.dtype == DType::String || dtype_size(a.dtype) == 0)
    fail_unsupported(n, fmt::format("element type {} is not supported", dtype_name(a.dtype)));
  Shape out = n.version < 7 && n.attr_int("broadcast", 0) == 0 ? a.shape : broadcast_shapes(n, a.shape, b.shape);
  if (n.version < 7 && n.attr_int("broadcast", 0) == 0 && a.shape != b.shape)
    fail_invalid(n, "shapes differ but the 'broadcast' attribute is 0");
  if (n.version < 7 && n.has_attr("axis"))
    fail_unsupported(n, "legacy broadcasting with 'axis' (opset < 7) is not supported",
                     "convert the model to opset 7 or newer");
  set_output(n, 0, a.dtype, out);
}

template <class F>
OpDef arith(const char* name, const char* functor) {
  OpDef d;
  d.op_type = name;
  d.versions = {1, 6, 7, 13, 14};
  d.infer = infer_arith;
  d.inplace = true;
  d.emit = [functor](const Node& n, Emitter& e) { emit_binary(n, e, functor); };
  d.fold = [](const Node& n, std::vector<Tensor>& outs) {
    const Value& y = *n.outputs[0];
    outs.emplace_back(y.dtype, y.shape);
    dispatch_dtype(n, y.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      fold_binary<T, T, T>(*n.inputs[0]->constant, *n.inputs[1]->constant, outs[0], F{});
    });
  };
  return d;
}

const OpRegistrar add_op(arith<rt::Add>("Add", "rt::Add{}"));
const OpRegistrar sub_op(arith<rt::Sub>("Sub", "rt::Sub{}"));
const OpRegistrar mul_op(arith<rt::Mul>("Mul", "rt::Mul{}"));
const OpRegistrar div_op(arith<rt::Div>("Div", "rt::Div{}"));

}  // namespace
}  // namespace onnxc
