// CumSum, CumProd and ReverseSequence: operators that walk along one axis.
#include "onnxc/scan.h"
#include "ops/emitter.h"

namespace onnxc {
namespace {

// ---- CumSum, CumProd ----

struct CumSumDims {
  int64_t outer = 1, len = 1, inner = 1;
};

// Dims around a constant axis.
CumSumDims cumsum_dims(const Node& n, const Tensor& axis_t) {
  const Shape& x = input(n, 0).shape;
  const std::size_t axis = static_cast<std::size_t>(normalize_axis(n, axis_t.int_at(0), static_cast<int64_t>(x.size())));
  CumSumDims c;
  for (std::size_t d = 0; d < x.size(); ++d) (d < axis ? c.outer : d == axis ? c.len : c.inner) *= x[d];
  return c;
}

// The axis is a scalar input (int32 or int64): when constant, its dims are fixed at compile
// time; otherwise the generated code reads it (the axis never changes the output's shape).
void infer_cumsum(Node& n) {
  check_arity(n, 2, 2, 1, 1);
  require_dtype(n, 0, {DType::Float, DType::Double, DType::Float16, DType::BFloat16, DType::Int32, DType::Int64,
                       DType::Uint32, DType::Uint64});
  require_dtype(n, 1, {DType::Int32, DType::Int64});
  if (input(n, 1).numel() != 1) fail_invalid(n, "axis must be a scalar");
  if (const Tensor* axis = const_input(n, 1)) cumsum_dims(n, *axis);
  set_output(n, 0, input(n, 0).dtype, input(n, 0).shape);
}

const char* flag(bool b) { return b ? "true" : "false"; }

// CumSum and CumProd: the same walk, `kernel` (rt::cumsum or rt::cumprod) names the combination.
OpDef cumulative_op(const char* op_type, std::vector<int> versions, const char* kernel) {
  OpDef d;
  d.op_type = op_type;
  d.versions = std::move(versions);
  d.infer = infer_cumsum;
  d.inplace = true;  // each element is read before its own position is written
  d.emit = [kernel](const Node& n, Emitter& e) {
    e.include("onnxc/scan.h");
    const bool exclusive = n.attr_int("exclusive", 0) != 0, reverse = n.attr_int("reverse", 0) != 0;
    if (const Tensor* axis = const_input(n, 1)) {
      CumSumDims c = cumsum_dims(n, *axis);
      e.linef("rt::{}({}, {}, {}, {}, {}, {}, {});", kernel, e.in(0), e.out(0), c.outer, c.len, c.inner,
              flag(exclusive), flag(reverse));
      return;
    }
    const Shape& x = input(n, 0).shape;
    std::string dims = e.index_array("dims", x);
    e.linef("rt::{}_along({}, {}, {}, {}, {}[0], {}, {});", kernel, e.in(0), e.out(0), dims, x.size(), e.in(1),
            flag(exclusive), flag(reverse));
  };
  const bool product = std::string(kernel) == "cumprod";
  d.fold = [product](const Node& n, std::vector<Tensor>& outs) {
    const Value& y = *n.outputs[0];
    CumSumDims c = cumsum_dims(n, *n.inputs[1]->constant);
    outs.emplace_back(y.dtype, y.shape);
    const bool exclusive = n.attr_int("exclusive", 0) != 0, reverse = n.attr_int("reverse", 0) != 0;
    dispatch_dtype(n, y.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = n.inputs[0]->constant->data<T>();
      if (product) rt::cumprod(x, outs[0].data<T>(), c.outer, c.len, c.inner, exclusive, reverse);
      else rt::cumsum(x, outs[0].data<T>(), c.outer, c.len, c.inner, exclusive, reverse);
    });
  };
  return d;
}

const OpRegistrar cumsum(cumulative_op("CumSum", {11, 14}, "cumsum"));
const OpRegistrar cumprod(cumulative_op("CumProd", {26}, "cumprod"));

// ---- ReverseSequence ----

struct ReverseDims {
  int64_t time, batch, time_stride, batch_stride, inner;
};

// The time and batch axes are 0 and 1, in either order.
ReverseDims reverse_dims(const Node& n) {
  const Shape& x = input(n, 0).shape;
  if (x.size() < 2) fail_invalid(n, fmt::format("input {} has rank below 2", shape_str(x)));
  const int64_t time_axis = n.attr_int("time_axis", 0), batch_axis = n.attr_int("batch_axis", 1);
  if (!((time_axis == 0 && batch_axis == 1) || (time_axis == 1 && batch_axis == 0)))
    fail_invalid(n, fmt::format("time_axis {} and batch_axis {} must be 0 and 1 in some order", time_axis, batch_axis));
  const int64_t plane = x[0] * x[1], inner = plane != 0 ? shape_numel(x) / plane : 0;
  ReverseDims r;
  r.time = x[static_cast<std::size_t>(time_axis)];
  r.batch = x[static_cast<std::size_t>(batch_axis)];
  r.inner = inner;
  r.time_stride = time_axis == 0 ? r.batch * inner : inner;
  r.batch_stride = time_axis == 0 ? inner : r.time * inner;
  return r;
}

void infer_reverse_sequence(Node& n) {
  check_arity(n, 2, 2, 1, 1);
  ReverseDims r = reverse_dims(n);
  require_dtype(n, 1, {DType::Int64});
  if (input(n, 1).shape != Shape{r.batch})
    fail_invalid(n, fmt::format("sequence_lens has shape {}; expected [{}]", shape_str(input(n, 1).shape), r.batch));
  if (const Tensor* lens = const_input(n, 1))
    for (int64_t b = 0; b < lens->numel(); ++b)
      if (lens->int_at(b) < 0 || lens->int_at(b) > r.time)
        fail_invalid(n, fmt::format("sequence length {} (batch {}) is outside [0, {}]", lens->int_at(b), b, r.time));
  set_output(n, 0, input(n, 0).dtype, input(n, 0).shape);
}

const OpRegistrar reverse_sequence([] {
  OpDef d;
  d.op_type = "ReverseSequence";
  d.versions = {10};
  d.infer = infer_reverse_sequence;
  d.emit = [](const Node& n, Emitter& e) {
    ReverseDims r = reverse_dims(n);
    if (n.outputs[0]->numel() == 0) return;
    e.include("onnxc/scan.h");
    e.linef("rt::reverse_sequence({}, {}, {}, {}, {}, {}, {}, {});", e.in(0), e.out(0), e.in(1), r.time, r.batch,
            r.time_stride, r.batch_stride, r.inner);
  };
  d.fold = [](const Node& n, std::vector<Tensor>& outs) {
    const Value& y = *n.outputs[0];
    ReverseDims r = reverse_dims(n);
    outs.emplace_back(y.dtype, y.shape);
    if (y.numel() == 0) return;
    dispatch_dtype(n, y.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      rt::reverse_sequence(n.inputs[0]->constant->data<T>(), outs[0].data<T>(),
                           n.inputs[1]->constant->data<int64_t>(), r.time, r.batch, r.time_stride, r.batch_stride,
                           r.inner);
    });
  };
  return d;
}());

}  // namespace
}  // namespace onnxc
