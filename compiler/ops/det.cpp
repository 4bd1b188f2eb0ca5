// Det: the determinant of each [M, M] matrix in the innermost two dims (version 22 adds
// bfloat16).
#include "onnxc/linalg.h"
#include "ops/emitter.h"

namespace onnxc {
namespace {

struct DetGeometry {
  int64_t batches, m;
};

DetGeometry det_geometry(const Node& n) {
  const Shape& s = n.inputs[0]->shape;
  return {shape_numel(Shape(s.begin(), s.end() - 2)), s.back()};
}

void infer_det(Node& n) {
  check_arity(n, 1, 1, 1, 1);
  const Value& x = input(n, 0);
  std::vector<DType> types = {DType::Float, DType::Double, DType::Float16};
  if (n.version >= 22) types.push_back(DType::BFloat16);
  require_dtype(n, 0, types);
  const Shape& s = x.shape;
  if (s.size() < 2 || s[s.size() - 1] != s[s.size() - 2])
    fail_invalid(n, fmt::format("input {} is not a (batch of) square matrices [*, M, M]", shape_str(s)));
  set_output(n, 0, x.dtype, Shape(s.begin(), s.end() - 2));
}

// Scratch: the LU factors of one matrix, in double.
std::size_t det_scratch(const Node& n) {
  int64_t m = det_geometry(n).m;
  return static_cast<std::size_t>(m * m) * sizeof(double);
}

const OpRegistrar det_op([] {
  OpDef d;
  d.op_type = "Det";
  d.versions = {11, 22};
  d.infer = infer_det;
  d.scratch_bytes = det_scratch;
  d.emit = [](const Node& n, Emitter& e) {
    DetGeometry g = det_geometry(n);
    if (g.batches == 0) return;
    e.include("onnxc/linalg.h");
    e.linef("rt::det({}, {}, {}, {}, reinterpret_cast<double*>({}));", e.in(0), e.out(0), g.batches, g.m, e.scratch());
  };
  d.fold = [](const Node& n, std::vector<Tensor>& outs) {
    const Value& y = *n.outputs[0];
    outs.emplace_back(y.dtype, y.shape);
    DetGeometry g = det_geometry(n);
    std::vector<double> lu(static_cast<std::size_t>(g.m * g.m));
    dispatch_dtype(n, y.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      rt::det(n.inputs[0]->constant->data<T>(), outs[0].data<T>(), g.batches, g.m, lu.data());
    });
  };
  return d;
}());

}  // namespace
}  // namespace onnxc
