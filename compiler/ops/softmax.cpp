// Softmax: before version 13 the input is coerced to 2-D at `axis` (default 1); from 13 it
// is normalised along `axis` alone (default -1).
#include "onnxc/normalization.h"
#include "ops/emitter.h"

namespace onnxc {
namespace {

struct SoftmaxGeometry {
  int64_t outer, n, inner;
};

SoftmaxGeometry geometry(const Node& n) {
  const Shape& s = n.inputs[0]->shape;
  int64_t r = static_cast<int64_t>(s.size());
  int64_t axis = normalize_axis(n, n.attr_int("axis", n.version < 13 ? 1 : -1), r);
  int64_t outer = 1, mid = 1, inner = 1;
  for (int64_t i = 0; i < r; ++i) {
    int64_t d = s[static_cast<std::size_t>(i)];
    if (i < axis) outer *= d;
    else if (i == axis || n.version < 13) mid *= d;
    else inner *= d;
  }
  return {outer, mid, inner};
}

void infer_softmax(Node& n) {
  check_arity(n, 1, 1, 1, 1);
  const Value& x = input(n, 0);
  require_float(n, 0);
  if (x.shape.empty()) fail_invalid(n, "Softmax needs rank >= 1");
  geometry(n);
  set_output(n, 0, x.dtype, x.shape);
}

const OpRegistrar softmax_op([] {
  OpDef d;
  d.op_type = "Softmax";
  d.versions = {1, 11, 13};
  d.infer = infer_softmax;
  d.inplace = true;
  d.emit = [](const Node& n, Emitter& e) {
    e.include("onnxc/normalization.h");
    SoftmaxGeometry g = geometry(n);
    e.linef("rt::softmax({}, {}, {}, {}, {});", e.in(0), e.out(0), g.outer, g.n, g.inner);
  };
  return d;
}());

// BatchNormalization in inference mode: y = (x - mean) / sqrt(var + epsilon) * scale + B.
void infer_batch_norm(Node& n) {
  check_arity(n, 5, 5, 1, 5);
  const Value& x = input(n, 0);
  require_float(n, 0);
  if (n.outputs.size() > 1 && (n.has_output(1) || n.has_output(2) || n.has_output(3) || n.has_output(4)))
    if (n.version >= 14 || n.attr_int("is_test", 0) == 0)
      fail_unsupported(n, "BatchNormalization in training mode (running statistics outputs)",
                       "export the model in eval mode");
  if (n.attr_int("training_mode", 0) != 0) fail_unsupported(n, "BatchNormalization with training_mode=1");
  if (x.shape.size() < 2) fail_invalid(n, "input must have rank >= 2 (N, C, ...)");
  int64_t c = x.shape[1];
  for (std::size_t i = 1; i < 5; ++i)
    if (input(n, i).shape != Shape{c})
      fail_invalid(n, fmt::format("input {} has shape {}; expected [{}]", i, shape_str(n.inputs[i]->shape), c));
  if (n.version < 9 && n.attr_int("spatial", 1) == 0)
    fail_unsupported(n, "spatial=0 (per-activation statistics) is not supported");
  for (std::size_t i = 1; i < 5; ++i)
    if (n.inputs[i]->dtype != x.dtype)
      fail_unsupported(n, "scale, bias, mean and var must have the input's type");
  set_output(n, 0, x.dtype, x.shape);
}

const OpRegistrar batch_norm([] {
  OpDef d;
  d.op_type = "BatchNormalization";
  d.versions = {1, 6, 7, 9, 14, 15};
  d.infer = infer_batch_norm;
  d.inplace = true;
  d.emit = [](const Node& n, Emitter& e) {
    e.include("onnxc/normalization.h");
    const Shape& s = n.inputs[0]->shape;
    int64_t inner = 1;
    for (std::size_t i = 2; i < s.size(); ++i) inner *= s[i];
    e.linef("rt::batch_norm({}, {}, {}, {}, {}, {}, {}, {}, {}, {});", e.in(0), e.in(1), e.in(2), e.in(3), e.in(4),
            float_literal(n.attr_float("epsilon", 1e-5f)), e.out(0), s[0], s[1], inner);
  };
  return d;
}());

}  // namespace
}  // namespace onnxc
