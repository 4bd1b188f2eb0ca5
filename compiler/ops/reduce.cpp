// ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceLogSum,
// ReduceLogSumExp, ReduceSumSquare.
//
// The versions differ in where the axes come from: the `axes` attribute, or since ReduceSum-13
// and the others' version 18 the optional `axes` input (which onnxc needs at compile time),
// together with `noop_with_empty_axes`. An empty axis list reduces every axis, unless
// noop_with_empty_axes is set: then it reduces none, and each output element is the reduction
// of the single input element at its place (Identity for most, x*x for ReduceSumSquare, ...).
#include "onnxc/reduce.h"
#include "ops/emitter.h"
#include "ops/reduction.h"

namespace onnxc {
namespace {

// What distinguishes one reduction from another, beyond its kernel.
struct ReduceOp {
  std::vector<int> versions;
  int axes_input_since;  // the first version taking axes as an input
  bool is_min_max;       // ReduceMax/ReduceMin accept more element types
};

std::vector<DType> allowed_types(const Node& n, bool is_min_max) {
  std::vector<DType> t = {DType::Float, DType::Double, DType::Float16, DType::Int32,
                          DType::Int64, DType::Uint32, DType::Uint64};
  if (n.version >= 13) t.push_back(DType::BFloat16);
  if (is_min_max && n.version >= 12) t.insert(t.end(), {DType::Int8, DType::Uint8});
  if (is_min_max && n.version >= 20) t.push_back(DType::Bool);
  return t;
}

// The axis list the node names, before the empty-list rule is applied.
std::vector<int64_t> requested_axes(const Node& n, bool axes_from_input) {
  if (!axes_from_input) return n.attr_ints("axes");
  if (n.has_attr("axes")) fail_invalid(n, fmt::format("{}-{} takes axes as an input, not an attribute", n.op_type, n.version));
  if (!n.has_input(1)) return {};
  const Value& axes = *n.inputs[1];
  if (axes.dtype != DType::Int64) fail_invalid(n, "the axes input must be int64");
  if (axes.shape.size() != 1) fail_invalid(n, fmt::format("the axes input has shape {}; expected 1-D", shape_str(axes.shape)));
  if (axes.numel() == 0) return {};  // known without its value
  return require_const_input(n, 1, "reduction axes").to_ints();
}

std::vector<bool> reduced_axes(const Node& n, const ReduceOp& op) {
  bool axes_from_input = n.version >= op.axes_input_since;
  int64_t rank = static_cast<int64_t>(input(n, 0).shape.size());
  std::vector<int64_t> axes = requested_axes(n, axes_from_input);
  if (!axes.empty()) return axes_mask(n, axes, rank);
  bool noop = axes_from_input && n.attr_int("noop_with_empty_axes", 0) != 0;
  return std::vector<bool>(static_cast<std::size_t>(rank), !noop);
}

void infer_reduce(Node& n, const ReduceOp& op) {
  check_arity(n, 1, n.version >= op.axes_input_since ? 2 : 1, 1, 1);
  const Value& x = input(n, 0);
  require_dtype(n, 0, allowed_types(n, op.is_min_max));
  std::vector<bool> reduced = reduced_axes(n, op);
  bool keepdims = n.attr_int("keepdims", 1) != 0;
  Shape out;
  for (std::size_t d = 0; d < x.shape.size(); ++d) {
    if (!reduced[d]) out.push_back(x.shape[d]);
    else if (keepdims) out.push_back(1);
  }
  reduce_params(n, x.shape, reduced);  // checks the rank limit
  set_output(n, 0, x.dtype, out);
}

// `Reducer` is the rt:: reducer named like the operator (rt::ReduceSum for ReduceSum).
template <class Reducer>
OpDef reduce_def(const char* name, const ReduceOp& op) {
  OpDef d;
  d.op_type = name;
  d.versions = op.versions;
  d.infer = [op](Node& n) { infer_reduce(n, op); };
  d.emit = [op](const Node& n, Emitter& e) {
    if (n.outputs[0]->numel() == 0) return;
    e.include("onnxc/reduce.h");
    rt::ReduceParams p = reduce_params(n, n.inputs[0]->shape, reduced_axes(n, op));
    e.linef("constexpr rt::ReduceParams p = {};", reduce_params_literal(p));
    e.linef("rt::reduce<rt::{}>(p, {}, {});", n.op_type, e.in(0), e.out(0));
  };
  d.fold = [op](const Node& n, std::vector<Tensor>& outs) {
    const Value& y = *n.outputs[0];
    outs.emplace_back(y.dtype, y.shape);
    if (y.numel() == 0) return;
    rt::ReduceParams p = reduce_params(n, n.inputs[0]->shape, reduced_axes(n, op));
    dispatch_dtype(n, y.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      rt::reduce<Reducer>(p, n.inputs[0]->constant->data<T>(), outs[0].data<T>());
    });
  };
  return d;
}

const ReduceOp kReduceSum = {{1, 11, 13}, 13, false};
const ReduceOp kReduce = {{1, 11, 13, 18}, 18, false};
const ReduceOp kReduceMinMax = {{1, 11, 12, 13, 18, 20}, 18, true};

const OpRegistrar reduce_sum(reduce_def<rt::ReduceSum>("ReduceSum", kReduceSum));
const OpRegistrar reduce_mean(reduce_def<rt::ReduceMean>("ReduceMean", kReduce));
const OpRegistrar reduce_max(reduce_def<rt::ReduceMax>("ReduceMax", kReduceMinMax));
const OpRegistrar reduce_min(reduce_def<rt::ReduceMin>("ReduceMin", kReduceMinMax));
const OpRegistrar reduce_prod(reduce_def<rt::ReduceProd>("ReduceProd", kReduce));
const OpRegistrar reduce_l1(reduce_def<rt::ReduceL1>("ReduceL1", kReduce));
const OpRegistrar reduce_l2(reduce_def<rt::ReduceL2>("ReduceL2", kReduce));
const OpRegistrar reduce_log_sum(reduce_def<rt::ReduceLogSum>("ReduceLogSum", kReduce));
const OpRegistrar reduce_log_sum_exp(reduce_def<rt::ReduceLogSumExp>("ReduceLogSumExp", kReduce));
const OpRegistrar reduce_sum_square(reduce_def<rt::ReduceSumSquare>("ReduceSumSquare", kReduce));

}  // namespace
}  // namespace onnxc
