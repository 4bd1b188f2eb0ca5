// Max, Min, Sum, Mean: any number of inputs, numpy-broadcast together (since version 8; before
// that all shapes must match). The output is accumulated pairwise with the binary kernels:
// y = f(x0, x1), then y = f(y, xi) for each further input; Mean divides at the end.
#include "ops/elementwise.h"

namespace onnxc {
namespace {

template <class Types>
void infer_variadic(Node& n) {
  check_arity(n, 1, -1, 1, 1);
  require_input_dtype<Types>(n, 0);
  const Value& x0 = *n.inputs[0];
  for (std::size_t i = 1; i < n.inputs.size(); ++i) {
    require_same_dtype(n, i, 0);
    if (n.version < 8 && n.inputs[i]->shape != x0.shape)
      fail_invalid(n,
                   fmt::format("input {} has shape {}, input 0 {}; {}-{} does not broadcast", i,
                               shape_str(n.inputs[i]->shape), shape_str(x0.shape), n.op_type, n.version),
                   "convert the model to opset 8 or newer");
  }
  set_output(n, 0, x0.dtype, broadcast_inputs(n));
}

template <class Types, class Source>
OpDef variadic_op(const char* op_type, std::vector<int> versions, Source source, bool mean = false) {
  OpDef d;
  d.op_type = op_type;
  d.versions = std::move(versions);
  d.infer = infer_variadic<Types>;
  d.emit = [source, mean](const Node& n, Emitter& e) {
    std::string functor;
    source(n, [&](auto&&, const std::string& text) { functor = text; });
    const Shape& out = n.outputs[0]->shape;
    const std::string y = e.out(0);
    EltwiseWriter w(e, out);
    auto operand = [&](std::size_t i) { return Operand{e.in(i), n.inputs[i]->shape, fmt::format("x{}", i)}; };
    if (n.inputs.size() == 1) {
      w.map(e.in(0), y, "rt::Identity{}");
    } else {
      w.zip(operand(0), operand(1), y, functor);
      for (std::size_t i = 2; i < n.inputs.size(); ++i) w.zip(Operand{y, out, "y"}, operand(i), y, functor);
    }
    if (mean && n.inputs.size() > 1) w.map(y, y, fmt::format("rt::DivideBy{{{}}}", n.inputs.size()));
  };
  d.fold = [source, mean](const Node& n, std::vector<Tensor>& outs) {
    Tensor& y = fold_output(n, outs);
    source(n, [&](auto f, const std::string&) {
      dispatch_in(n, y.dtype, Types{}, [&](auto tag) {
        using T = typename decltype(tag)::type;
        auto x = [&](std::size_t i) { return n.inputs[i]->constant->data<T>(); };
        auto shape = [&](std::size_t i) -> const Shape& { return n.inputs[i]->shape; };
        if (n.inputs.size() == 1) {
          rt::map(x(0), y.data<T>(), y.numel(), rt::Identity{});
        } else {
          fold_zip(x(0), shape(0), x(1), shape(1), y.data<T>(), y.shape, f);
          for (std::size_t i = 2; i < n.inputs.size(); ++i)
            fold_zip(y.data<T>(), y.shape, x(i), shape(i), y.data<T>(), y.shape, f);
        }
        if (mean && n.inputs.size() > 1)
          rt::map(y.data<T>(), y.data<T>(), y.numel(), rt::DivideBy{static_cast<int>(n.inputs.size())});
      });
    });
  };
  return d;
}

const OpRegistrar max_op(variadic_op<NumericTypes>("Max", {1, 6, 8, 12, 13}, functor<rt::Max>("rt::Max")));
const OpRegistrar min_op(variadic_op<NumericTypes>("Min", {1, 6, 8, 12, 13}, functor<rt::Min>("rt::Min")));
const OpRegistrar sum_op(variadic_op<FloatTypes>("Sum", {1, 6, 8, 13}, functor<rt::Add>("rt::Add")));
const OpRegistrar mean_op(variadic_op<FloatTypes>("Mean", {1, 6, 8, 13}, functor<rt::Add>("rt::Add"), /*mean=*/true));

}  // namespace
}  // namespace onnxc
