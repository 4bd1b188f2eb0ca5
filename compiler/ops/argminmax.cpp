// ArgMax and ArgMin: the int64 position of the extreme along one axis. Version 11 allows a
// negative axis, 12 adds select_last_index, 13 bfloat16.
#include "onnxc/reduce.h"
#include "ops/emitter.h"

namespace onnxc {
namespace {

// The input as [outer, n, inner] around the searched axis.
struct ArgGeometry {
  std::size_t axis;
  int64_t outer, n, inner;
};

ArgGeometry arg_geometry(const Node& n) {
  const Shape& s = n.inputs[0]->shape;
  auto axis = static_cast<std::size_t>(normalize_axis(n, n.attr_int("axis", 0), static_cast<int64_t>(s.size())));
  ArgGeometry g{axis, 1, s[axis], 1};
  for (std::size_t d = 0; d < axis; ++d) g.outer *= s[d];
  for (std::size_t d = axis + 1; d < s.size(); ++d) g.inner *= s[d];
  return g;
}

void infer_arg(Node& n) {
  check_arity(n, 1, 1, 1, 1);
  const Value& x = input(n, 0);
  std::vector<DType> types = {DType::Uint8, DType::Uint16, DType::Uint32, DType::Uint64, DType::Int8,  DType::Int16,
                              DType::Int32, DType::Int64,  DType::Float16, DType::Float, DType::Double};
  if (n.version >= 13) types.push_back(DType::BFloat16);
  require_dtype(n, 0, types);
  if (x.shape.empty()) fail_invalid(n, "the input is a scalar; it needs an axis to search along");
  if (n.version < 12 && n.has_attr("select_last_index"))
    fail_invalid(n, fmt::format("{}-{} has no select_last_index (added in version 12)", n.op_type, n.version));
  ArgGeometry g = arg_geometry(n);
  if (g.n == 0 && g.outer * g.inner > 0) fail_invalid(n, "the axis has extent 0: there is no element to choose");
  Shape out = x.shape;
  if (n.attr_int("keepdims", 1) != 0) out[g.axis] = 1;
  else out.erase(out.begin() + static_cast<std::ptrdiff_t>(g.axis));
  set_output(n, 0, DType::Int64, out);
}

template <bool kMax>
OpDef arg_def(const char* name) {
  OpDef d;
  d.op_type = name;
  d.versions = {1, 11, 12, 13};
  d.infer = infer_arg;
  d.emit = [](const Node& n, Emitter& e) {
    if (n.outputs[0]->numel() == 0) return;
    e.include("onnxc/reduce.h");
    ArgGeometry g = arg_geometry(n);
    e.linef("rt::{}({}, {}, {}, {}, {}, {});", kMax ? "arg_max" : "arg_min", e.in(0), e.out(0), g.outer, g.n, g.inner,
            n.attr_int("select_last_index", 0) ? "true" : "false");
  };
  d.fold = [](const Node& n, std::vector<Tensor>& outs) {
    const Value& y = *n.outputs[0];
    outs.emplace_back(y.dtype, y.shape);
    if (y.numel() == 0) return;
    ArgGeometry g = arg_geometry(n);
    bool last = n.attr_int("select_last_index", 0) != 0;
    dispatch_dtype(n, n.inputs[0]->dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      rt::arg_extreme<kMax>(n.inputs[0]->constant->data<T>(), outs[0].data<int64_t>(), g.outer, g.n, g.inner, last);
    });
  };
  return d;
}

const OpRegistrar arg_max(arg_def<true>("ArgMax"));
const OpRegistrar arg_min(arg_def<false>("ArgMin"));

}  // namespace
}  // namespace onnxc
