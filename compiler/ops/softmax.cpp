// Softmax, LogSoftmax, Hardmax. Before version 13 the input is coerced to 2-D at `axis`
// (default 1) and normalised over everything from axis on; from 13 it is normalised along
// `axis` alone (default -1).
#include "ops/softmax.h"

#include "onnxc/normalization.h"
#include "ops/emitter.h"

namespace onnxc {

SoftmaxGeometry softmax_geometry(const Node& n, const Shape& s, int64_t axis, bool coerce_2d) {
  const auto r = static_cast<int64_t>(s.size());
  axis = normalize_axis(n, axis, r);
  SoftmaxGeometry g{1, 1, 1};
  for (int64_t i = 0; i < r; ++i) {
    const int64_t d = s[static_cast<std::size_t>(i)];
    if (i < axis) g.outer *= d;
    else if (i == axis || coerce_2d) g.n *= d;
    else g.inner *= d;
  }
  return g;
}

namespace {

SoftmaxGeometry softmax_geometry(const Node& n) {
  return softmax_geometry(n, n.inputs[0]->shape, n.attr_int("axis", n.version < 13 ? 1 : -1), n.version < 13);
}

void infer_softmax(Node& n) {
  check_arity(n, 1, 1, 1, 1);
  const Value& x = input(n, 0);
  if (n.version >= 13) require_float(n, 0);
  else require_dtype(n, 0, {DType::Float, DType::Double, DType::Float16});
  if (x.shape.empty()) fail_invalid(n, fmt::format("{} needs an input of rank >= 1", n.op_type));
  softmax_geometry(n);  // validates the axis
  set_output(n, 0, x.dtype, x.shape);
}

// `kernel` is the rt:: function for generated code; `fold_kernel` the same for folding.
template <class FoldKernel>
OpDef softmax_like(const char* name, const char* kernel, FoldKernel fold_kernel) {
  OpDef d;
  d.op_type = name;
  d.versions = {1, 11, 13};
  d.infer = infer_softmax;
  d.inplace = true;
  d.emit = [kernel](const Node& n, Emitter& e) {
    e.include("onnxc/normalization.h");
    SoftmaxGeometry g = softmax_geometry(n);
    // Splits into ranges of the outer rows (each row's values do not depend on the cut).
    const int64_t tasks = e.tasks(4 * n.outputs[0]->numel(), g.outer);
    if (tasks < 2) return e.linef("rt::{}({}, {}, {}, {}, {});", kernel, e.in(0), e.out(0), g.outer, g.n, g.inner);
    const std::string at = range_offset(g.n * g.inner);
    e.open_ranges(g.outer, tasks);
    e.linef("rt::{}({}, {}, r_.end - r_.begin, {}, {});", kernel, moved(e.in(0), at), moved(e.out(0), at), g.n, g.inner);
    e.close_ranges();
  };
  d.fold = [fold_kernel](const Node& n, std::vector<Tensor>& outs) {
    const Value& y = *n.outputs[0];
    outs.emplace_back(y.dtype, y.shape);
    SoftmaxGeometry g = softmax_geometry(n);
    dispatch_dtype(n, y.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_floating_point<rt::compute_t<T>>::value)
        fold_kernel(n.inputs[0]->constant->data<T>(), outs[0].data<T>(), g.outer, g.n, g.inner);
    });
  };
  return d;
}

const OpRegistrar softmax_op(softmax_like("Softmax", "softmax", [](auto... a) { rt::softmax(a...); }));
const OpRegistrar log_softmax_op(softmax_like("LogSoftmax", "log_softmax", [](auto... a) { rt::log_softmax(a...); }));
const OpRegistrar hardmax_op(softmax_like("Hardmax", "hardmax", [](auto... a) { rt::hardmax(a...); }));

}  // namespace
}  // namespace onnxc
