// Shared machinery for elementwise operators: one functor (in runtime-support/eltwise.h)
// serves both constant folding (called here) and the generated code (named in the text).
#pragma once

#include <string>

#include "onnxc/eltwise.h"
#include "ops/emitter.h"
#include "ops/op.h"

namespace onnxc {

// How a binary op reads its two inputs for a given output shape.
enum class BinaryForm { Same, ScalarB, ScalarA, Broadcast };
BinaryForm binary_form(const Shape& a, const Shape& b, const Shape& out);

// Emits y = f(a, b) with numpy broadcasting; `functor` is the C++ expression of the functor.
void emit_binary(const Node& n, Emitter& e, const std::string& functor);

// Computes y = f(a, b) on constant tensors with the same kernels the generated code uses.
template <class A, class B, class Y, class F>
void fold_binary(const Tensor& a, const Tensor& b, Tensor& y, F f) {
  const A* pa = a.data<A>();
  const B* pb = b.data<B>();
  Y* py = y.data<Y>();
  rt::index_t n = y.numel();
  switch (binary_form(a.shape, b.shape, y.shape)) {
    case BinaryForm::Same: return rt::zip(pa, pb, py, n, f);
    case BinaryForm::ScalarB: return rt::zip_scalar_b(pa, pb, py, n, f);
    case BinaryForm::ScalarA: return rt::zip_scalar_a(pa, pb, py, n, f);
    case BinaryForm::Broadcast: {
      if (y.shape.empty() || n == 0) return;
      auto as = broadcast_strides(a.shape, y.shape), bs = broadcast_strides(b.shape, y.shape);
      std::vector<rt::index_t> ast(as.begin(), as.end()), bst(bs.begin(), bs.end()), sh(y.shape.begin(), y.shape.end());
      return rt::zip_broadcast(pa, ast.data(), pb, bst.data(), py, sh.data(), static_cast<int>(sh.size()), f);
    }
  }
}

// Emits y = f(x) over every element.
void emit_unary(const Node& n, Emitter& e, const std::string& functor);

}  // namespace onnxc
