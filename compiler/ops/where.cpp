// Where: y = condition ? x : y, the three inputs broadcast together like numpy.
#include "ops/elementwise.h"

namespace onnxc {
namespace {

constexpr const char* kSelectFunctor = "rt::Select{}";

void infer_where(Node& n) {
  check_arity(n, 3, 3, 1, 1);
  require_input_dtype(n, 0, {DType::Bool});
  require_input_dtype<AllTypes>(n, 1);
  require_same_dtype(n, 2, 1);
  set_output(n, 0, n.inputs[1]->dtype, broadcast_inputs(n));
}

OpDef where_op() {
  OpDef d;
  d.op_type = "Where";
  d.versions = {9, 16};
  d.infer = infer_where;
  d.emit = [](const Node& n, Emitter& e) { emit_ternary(n, e, kSelectFunctor); };
  d.elementwise_form = [](const Node&) -> std::optional<ElementwiseForm> { return ElementwiseForm{kSelectFunctor, 3}; };
  d.fold = [](const Node& n, std::vector<Tensor>& outs) {
    Tensor& out = fold_output(n, outs);
    dispatch_in(n, out.dtype, AllTypes{}, [&](auto tag) {
      using T = typename decltype(tag)::type;
      fold_ternary<bool, T, T, T>(*n.inputs[0]->constant, *n.inputs[1]->constant, *n.inputs[2]->constant, out,
                                  rt::Select{});
    });
  };
  return d;
}
const OpRegistrar where(where_op());

}  // namespace
}  // namespace onnxc
