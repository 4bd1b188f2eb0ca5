// TopK: the k largest (or, from version 11, smallest) elements along an axis and their int64
// positions, best first, ties to the lower position. k is an attribute in version 1 and an
// input (needed at compile time) from 10; 11 adds `largest`, `sorted` and integer types.
#include "onnxc/topk.h"
#include "ops/emitter.h"

namespace onnxc {
namespace {

struct TopKGeometry {
  std::size_t axis;
  int64_t outer, n, inner, k;
};

int64_t requested_k(const Node& n) {
  if (n.version < 10) {
    if (!n.has_attr("k")) fail_invalid(n, "required attribute 'k' is missing");
    return n.attr_int("k", 0);
  }
  const Value& k = input(n, 1);
  if (k.dtype != DType::Int64 || k.numel() != 1)
    fail_invalid(n, fmt::format("K must be a single int64; it is {} {}", dtype_name(k.dtype), shape_str(k.shape)));
  return require_const_input(n, 1, "number of elements K").int_at(0);
}

TopKGeometry topk_geometry(const Node& n) {
  const Shape& s = n.inputs[0]->shape;
  auto axis = static_cast<std::size_t>(normalize_axis(n, n.attr_int("axis", -1), static_cast<int64_t>(s.size())));
  TopKGeometry g{axis, 1, s[axis], 1, requested_k(n)};
  for (std::size_t d = 0; d < axis; ++d) g.outer *= s[d];
  for (std::size_t d = axis + 1; d < s.size(); ++d) g.inner *= s[d];
  return g;
}

void infer_topk(Node& n) {
  check_arity(n, n.version < 10 ? 1 : 2, n.version < 10 ? 1 : 2, 2, 2);
  const Value& x = input(n, 0);
  std::vector<DType> types = {DType::Float, DType::Double, DType::Float16};
  if (n.version >= 11)
    types.insert(types.end(), {DType::Uint8, DType::Uint16, DType::Uint32, DType::Uint64, DType::Int8, DType::Int16,
                               DType::Int32, DType::Int64});
  if (n.version >= 24) types.push_back(DType::BFloat16);
  require_dtype(n, 0, types);
  if (x.shape.empty()) fail_invalid(n, "the input is a scalar; TopK needs an axis");
  if (!n.has_output(0) || !n.has_output(1)) fail_invalid(n, "both outputs, Values and Indices, are required");
  if (n.version < 11 && (n.has_attr("largest") || n.has_attr("sorted")))
    fail_invalid(n, fmt::format("TopK-{} has no 'largest' or 'sorted' (added in version 11)", n.version));
  TopKGeometry g = topk_geometry(n);
  if (g.k < 0 || g.k > g.n) fail_invalid(n, fmt::format("k = {} is outside [0, {}] (the axis extent)", g.k, g.n));
  Shape out = x.shape;
  out[g.axis] = g.k;
  set_output(n, 0, x.dtype, out);
  set_output(n, 1, DType::Int64, out);
}

bool largest(const Node& n) { return n.attr_int("largest", 1) != 0; }

// Scratch: one int64 position per element of a lane.
std::size_t topk_scratch(const Node& n) { return static_cast<std::size_t>(topk_geometry(n).n) * sizeof(int64_t); }

void emit_topk(const Node& n, Emitter& e) {
  TopKGeometry g = topk_geometry(n);
  if (g.k == 0 || g.outer * g.inner == 0) return;
  e.include("onnxc/topk.h");
  e.linef("rt::top_k({}, {}, {}, {}, {}, {}, {}, {}, reinterpret_cast<std::int64_t*>({}));", e.in(0), e.out(0), e.out(1),
          g.outer, g.n, g.inner, g.k, largest(n) ? "true" : "false", e.scratch());
}

void fold_topk(const Node& n, std::vector<Tensor>& outs) {
  TopKGeometry g = topk_geometry(n);
  outs.emplace_back(n.outputs[0]->dtype, n.outputs[0]->shape);
  outs.emplace_back(DType::Int64, n.outputs[0]->shape);
  if (g.k == 0 || g.outer * g.inner == 0) return;
  std::vector<int64_t> order(static_cast<std::size_t>(g.n));
  dispatch_dtype(n, n.inputs[0]->dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    rt::top_k(n.inputs[0]->constant->data<T>(), outs[0].data<T>(), outs[1].data<int64_t>(), g.outer, g.n, g.inner, g.k,
              largest(n), order.data());
  });
}

const OpRegistrar topk_op([] {
  OpDef d;
  d.op_type = "TopK";
  d.versions = {1, 10, 11, 24};
  d.infer = infer_topk;
  d.emit = emit_topk;
  d.fold = fold_topk;
  d.scratch_bytes = topk_scratch;
  return d;
}());

}  // namespace
}  // namespace onnxc
