// NonZero-9/13: the indices of the non-zero elements as [rank, k] (kernel: onnxc/nonzero.h).
// k is known only at run time: the output is bounded by [rank, numel] (Value::dynamic_axis),
// unless the input is constant and the node folds.
#include "onnxc/nonzero.h"
#include "ops/elementwise.h"
#include "ops/emitter.h"

namespace onnxc {
namespace {

using NonZero9Types = ConcatTypes<TypeList<float, double, rt::float16>, IntTypes, BoolTypes>::type;

constexpr int kColumns = 1;  // the dynamic axis of the output: one column per non-zero element

void infer_nonzero(Node& n) {
  check_arity(n, 1, 1, 1, 1);
  if (input(n, 0).dtype == DType::String)
    fail_unsupported(n, "string tensors are not supported by this operator");
  if (n.version >= 13) require_input_dtype<AllTypes>(n, 0);
  else require_input_dtype<NonZero9Types>(n, 0);
  const Value& x = input(n, 0);
  // A scalar gives [0, k], not numpy's [1, k]: it has no dims to index.
  set_bounded_output(n, 0, DType::Int64, {static_cast<int64_t>(x.shape.size()), x.numel()}, kColumns);
}

void emit_nonzero(const Node& n, Emitter& e) {
  e.include("onnxc/nonzero.h");
  const Value& x = *n.inputs[0];
  const std::string shape = e.index_array("shape", x.shape);
  e.bounded_call(fmt::format("rt::nonzero({}, {}, {}, {}, {})", e.in(0), x.numel(), shape, x.shape.size(), e.out(0)),
                 {0});
}

void fold_nonzero(const Node& n, std::vector<Tensor>& outs) {
  Tensor& y = fold_output(n, outs);
  const Tensor& x = *n.inputs[0]->constant;
  const std::vector<rt::index_t> shape(x.shape.begin(), x.shape.end());
  dispatch_in(n, x.dtype, AllTypes{}, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const rt::index_t k = rt::nonzero(x.data<T>(), x.numel(), shape.data(), static_cast<int>(shape.size()),
                                      y.data<int64_t>());
    shrink_to_extent(y, *n.outputs[0], k);
  });
}

const OpRegistrar nonzero_op([] {
  OpDef d;
  d.op_type = "NonZero";
  d.versions = {9, 13};
  d.infer = infer_nonzero;
  d.emit = emit_nonzero;
  d.fold = fold_nonzero;
  return d;
}());

}  // namespace
}  // namespace onnxc
