#include "ops/elementwise.h"

namespace onnxc {

BinaryForm binary_form(const Shape& a, const Shape& b, const Shape& out) {
  if (a == out && b == out) return BinaryForm::Same;
  if (a == out && shape_numel(b) == 1) return BinaryForm::ScalarB;
  if (b == out && shape_numel(a) == 1) return BinaryForm::ScalarA;
  return BinaryForm::Broadcast;
}

void emit_binary(const Node& n, Emitter& e, const std::string& functor) {
  e.include("onnxc/eltwise.h");
  const Value& a = *n.inputs[0];
  const Value& b = *n.inputs[1];
  const Value& y = *n.outputs[0];
  switch (binary_form(a.shape, b.shape, y.shape)) {
    case BinaryForm::Same: e.linef("rt::zip({}, {}, {}, {}, {});", e.in(0), e.in(1), e.out(0), y.numel(), functor); return;
    case BinaryForm::ScalarB:
      e.linef("rt::zip_scalar_b({}, {}, {}, {}, {});", e.in(0), e.in(1), e.out(0), y.numel(), functor);
      return;
    case BinaryForm::ScalarA:
      e.linef("rt::zip_scalar_a({}, {}, {}, {}, {});", e.in(0), e.in(1), e.out(0), y.numel(), functor);
      return;
    case BinaryForm::Broadcast:
      if (y.numel() == 0) return;
      e.index_array("a_strides", broadcast_strides(a.shape, y.shape));
      e.index_array("b_strides", broadcast_strides(b.shape, y.shape));
      e.index_array("shape", y.shape);
      e.linef("rt::zip_broadcast({}, a_strides, {}, b_strides, {}, shape, {}, {});", e.in(0), e.in(1), e.out(0),
              y.shape.size(), functor);
      return;
  }
}

void emit_unary(const Node& n, Emitter& e, const std::string& functor) {
  e.include("onnxc/eltwise.h");
  e.linef("rt::map({}, {}, {}, {});", e.in(0), e.out(0), n.outputs[0]->numel(), functor);
}

}  // namespace onnxc
