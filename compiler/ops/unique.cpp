// Unique-11: the distinct elements, or slices along `axis`, sorted or in order of first
// occurrence, with their first indices, the inverse mapping and their counts (kernel:
// onnxc/unique.h). How many there are is known only at run time: Y, indices and counts are
// bounded by the input's extent (Value::dynamic_axis); inverse_indices has a static shape.
#include "onnxc/unique.h"
#include "ops/elementwise.h"
#include "ops/emitter.h"

namespace onnxc {
namespace {

constexpr std::size_t kY = 0, kIndices = 1, kInverse = 2, kCounts = 3;

// The input as [outer, n, inner] slices along the axis (the flattened tensor without one), and
// the dynamic axis of Y.
struct UniqueLayout {
  rt::UniqueParams params;
  int y_axis;
};

UniqueLayout unique_layout(const Node& n) {
  const Shape& x = n.inputs[0]->shape;
  UniqueLayout l{};
  l.params.sorted = n.attr_int("sorted", 1) != 0;
  if (!n.has_attr("axis")) {
    l.params.outer = l.params.inner = 1;
    l.params.n = shape_numel(x);
    return l;
  }
  const int64_t axis = normalize_axis(n, n.attr_int("axis", 0), static_cast<int64_t>(x.size()));
  l.params.outer = shape_numel(Shape(x.begin(), x.begin() + axis));
  l.params.n = x[static_cast<std::size_t>(axis)];
  l.params.inner = shape_numel(Shape(x.begin() + axis + 1, x.end()));
  l.y_axis = static_cast<int>(axis);
  return l;
}

void infer_unique(Node& n) {
  check_arity(n, 1, 1, 1, 4);
  if (input(n, 0).dtype == DType::String)
    fail_unsupported(n, "string tensors are not supported by this operator");
  require_input_dtype<AllTypes>(n, 0);
  const Value& x = input(n, 0);
  if (n.has_attr("axis") && x.shape.empty()) fail_invalid(n, "a scalar has no axis to take slices along");
  const UniqueLayout l = unique_layout(n);
  set_bounded_output(n, kY, x.dtype, n.has_attr("axis") ? x.shape : Shape{l.params.n}, l.y_axis);
  set_bounded_output(n, kIndices, DType::Int64, {l.params.n}, 0);
  set_output(n, kInverse, DType::Int64, {l.params.n});
  set_bounded_output(n, kCounts, DType::Int64, {l.params.n}, 0);
}

std::size_t unique_scratch(const Node& n) {
  return 5 * static_cast<std::size_t>(unique_layout(n).params.n) * sizeof(rt::index_t);
}

void emit_unique(const Node& n, Emitter& e) {
  e.include("onnxc/unique.h");
  const rt::UniqueParams p = unique_layout(n).params;
  const std::string params = params_literal("rt::UniqueParams", {{"outer", std::to_string(p.outer)},
                                                                 {"n", std::to_string(p.n)},
                                                                 {"inner", std::to_string(p.inner)},
                                                                 {"sorted", p.sorted ? "true" : "false"}});
  e.bounded_call(fmt::format("rt::unique({}, {}, {}, {}, {}, {}, reinterpret_cast<rt::index_t*>({}))", params, e.in(0),
                             e.out(kY), e.out(kIndices), e.out(kInverse), e.out(kCounts), e.scratch()),
                 {kY, kIndices, kCounts});
}

void fold_unique(const Node& n, std::vector<Tensor>& outs) {
  for (const Value* v : n.outputs) outs.emplace_back(v ? v->dtype : DType::Int64, v ? v->shape : Shape{0});
  const rt::UniqueParams p = unique_layout(n).params;
  std::vector<rt::index_t> scratch(5 * static_cast<std::size_t>(p.n));
  auto data_or_null = [&](std::size_t i) { return n.has_output(i) ? outs[i].data<int64_t>() : nullptr; };
  dispatch_in(n, n.inputs[0]->dtype, AllTypes{}, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const rt::index_t k = rt::unique(p, n.inputs[0]->constant->data<T>(), outs[kY].data<T>(), data_or_null(kIndices),
                                     data_or_null(kInverse), data_or_null(kCounts), scratch.data());
    for (std::size_t i : {kY, kIndices, kCounts})
      if (n.has_output(i)) shrink_to_extent(outs[i], *n.outputs[i], k);
  });
}

const OpRegistrar unique_op([] {
  OpDef d;
  d.op_type = "Unique";
  d.versions = {11};
  d.infer = infer_unique;
  d.emit = emit_unique;
  d.fold = fold_unique;
  d.scratch_bytes = unique_scratch;
  return d;
}());

}  // namespace
}  // namespace onnxc
