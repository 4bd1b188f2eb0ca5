// Gradient (ai.onnx.preview.training, version 1): the derivatives of the tensor named `y` with
// respect to the tensors named `xs`, differentiated at compile time. The graph is static, so
// reverse-mode differentiation is a rewrite: the lowering appends, for every node between the
// xs and y (last first), the nodes computing its inputs' gradients from its outputs', starting
// from dy/dy = 1 (for a y of several elements: the gradient of their sum). The result is
// ordinary ai.onnx nodes, inferred, folded and emitted like any others.
//
// Differentiated operators: Add, Sub, Mul, Div, Neg, Identity (with broadcasting: a broadcast
// input's gradient is summed over the axes it was broadcast along). Others are refused.
#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include "ops/lowering.h"
#include "ops/op.h"

namespace onnxc {
namespace {

using Nodes = std::vector<std::unique_ptr<Node>>;

// Builds the gradient nodes, accumulating each value's gradient as contributions arrive.
class ReverseMode {
 public:
  ReverseMode(Node& gradient, Graph& g, int onnx_opset) : n_(gradient), l_(gradient, g, onnx_opset) {}

  void seed(Value* y) { grads_[y] = ones_like(*y); }

  // Adds the gradients of fwd's inputs, from its outputs' (when y depends on them).
  void backpropagate(const Node& fwd, const std::set<const Value*>& differentiable) {
    if (std::none_of(fwd.outputs.begin(), fwd.outputs.end(), [&](Value* out) { return gradient_of(out); })) return;
    auto wants = [&](std::size_t i) { return fwd.has_input(i) && differentiable.count(fwd.inputs[i]); };
    bool any = false;
    for (std::size_t i = 0; i < fwd.inputs.size(); ++i) any = any || wants(i);
    if (!any) return;  // no x behind it: a constant as far as the derivative goes
    Value* gy = gradient_of(fwd.outputs[0]);
    const Shape& out = fwd.outputs[0]->shape;
    Value* a = fwd.inputs[0];
    Value* b = fwd.inputs.size() > 1 ? fwd.inputs[1] : nullptr;
    const std::string& op = fwd.op_type;
    if (op == "Identity") {
      if (wants(0)) contribute(a, gy);
    } else if (op == "Neg") {
      if (wants(0)) contribute(a, unary("Neg", gy));
    } else if (op == "Add" || op == "Sub") {
      if (wants(0)) contribute(a, unbroadcast(gy, out, *a));
      if (wants(1)) contribute(b, unbroadcast(op == "Add" ? gy : unary("Neg", gy), out, *b));
    } else if (op == "Mul") {  // d(ab) = b da + a db
      if (wants(0)) contribute(a, unbroadcast(binary("Mul", gy, b), out, *a));
      if (wants(1)) contribute(b, unbroadcast(binary("Mul", gy, a), out, *b));
    } else if (op == "Div") {  // d(a/b) = da / b - (a/b) db / b
      if (wants(0)) contribute(a, unbroadcast(binary("Div", gy, b), out, *a));
      if (wants(1)) {
        Value* quotient_grad = binary("Div", binary("Mul", gy, fwd.outputs[0]), b);
        contribute(b, unbroadcast(unary("Neg", quotient_grad), out, *b));
      }
    } else {
      fail_unsupported(n_,
                       fmt::format("y depends on the xs through {}, which onnxc cannot differentiate", fwd.describe()),
                       "onnxc differentiates Add, Sub, Mul, Div, Neg and Identity");
    }
  }

  // The gradient of x, or zeros when y does not depend on it.
  Value* result(Value* x) {
    if (Value* gx = gradient_of(x)) return gx;
    Tensor zeros(x->dtype, x->shape);
    Value* z = l_.value(x->name + "_zero_gradient");
    set_constant_output(*z, std::move(zeros));
    return z;
  }

  Lowering& lowering() { return l_; }

 private:
  Value* gradient_of(Value* v) const {
    auto it = grads_.find(v);
    return it == grads_.end() ? nullptr : it->second;
  }

  void contribute(Value* v, Value* g) {
    Value*& sum = grads_[v];
    sum = sum ? binary("Add", sum, g) : g;
  }

  Value* unary(const char* op, Value* x) {
    Value* y = l_.value(std::string(op) + "_grad");
    l_.add(op, {x}, {y});
    return y;
  }

  Value* binary(const char* op, Value* a, Value* b) {
    Value* y = l_.value(std::string(op) + "_grad");
    l_.add(op, {a, b}, {y});
    return y;
  }

  // A constant of y's type and shape holding ones.
  Value* ones_like(const Value& y) {
    Tensor ones(y.dtype, y.shape);
    dispatch_dtype(n_, y.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      std::fill(ones.data<T>(), ones.data<T>() + ones.numel(), rt::store<T>(1.0f));
    });
    Value* v = l_.value(y.name + "_seed");
    set_constant_output(*v, std::move(ones));
    return v;
  }

  // `g`, a gradient of the shape `out` an elementwise node broadcast `x` to, summed back to x's
  // shape. (Shapes come from the forward values: the new nodes are inferred only later.)
  Value* unbroadcast(Value* g, const Shape& out, const Value& x) {
    if (out == x.shape) return g;
    const std::size_t lead = out.size() - x.shape.size();
    std::vector<int64_t> axes;
    for (std::size_t d = 0; d < out.size(); ++d)
      if (d < lead || (x.shape[d - lead] == 1 && out[d] != 1)) axes.push_back(static_cast<int64_t>(d));
    Value* summed = l_.value(x.name + "_grad_summed");
    if (l_.version_of("ReduceSum") >= 13) {
      l_.add("ReduceSum", {g, l_.int64_constant("axes", {static_cast<int64_t>(axes.size())}, axes)}, {summed});
    } else {
      l_.add("ReduceSum", {g}, {summed}).set_attr_ints("axes", axes);
    }
    Value* shaped = l_.value(x.name + "_grad");
    l_.add("Reshape", {summed, l_.int64_constant("shape", {static_cast<int64_t>(x.shape.size())}, x.shape)}, {shaped});
    return shaped;
  }

  Node& n_;
  Lowering l_;
  std::map<const Value*, Value*> grads_;
};

// Values computed from the xs by the nodes before the Gradient node (the xs included).
std::set<const Value*> depending_on(const Graph& g, const Node& gradient, const std::vector<Value*>& xs) {
  std::set<const Value*> dep(xs.begin(), xs.end());
  for (const auto& node : g.nodes) {
    if (node.get() == &gradient) break;
    if (std::any_of(node->inputs.begin(), node->inputs.end(), [&](const Value* v) { return v && dep.count(v); }))
      for (Value* out : node->outputs)
        if (out) dep.insert(out);
  }
  return dep;
}

// The model's ai.onnx opset, from the graph's ai.onnx nodes (the Gradient node has its own domain's).
int onnx_opset(const Graph& g, const Node& gradient) {
  for (const auto& node : g.nodes)
    if (node->domain.empty()) return node->opset;
  fail_unsupported(gradient, "the graph has no ai.onnx node, so there is nothing to differentiate");
}

Nodes lower_gradient(Node& n, Graph& g) {
  const std::vector<std::string> xs_names = n.attr("xs") ? n.attr("xs")->strings : std::vector<std::string>{};
  const std::string y_name = n.attr_string("y", "");
  if (xs_names.empty() || y_name.empty()) fail_invalid(n, "the attributes 'xs' and 'y' are required");
  if (n.outputs.size() != xs_names.size())
    fail_invalid(n, fmt::format("has {} outputs for {} xs; expected one gradient per x", n.outputs.size(),
                                xs_names.size()));
  std::vector<Value*> xs;
  for (std::size_t i = 0; i < xs_names.size(); ++i) {
    if (!n.has_input(i) || n.inputs[i]->name != xs_names[i])
      fail_invalid(n, fmt::format("input {} must be xs[{}] '{}'", i, i, xs_names[i]));
    xs.push_back(n.inputs[i]);
  }
  Value* y = g.find(y_name);
  if (!y) fail_invalid(n, fmt::format("y '{}' is not a value of the graph", y_name));
  if (!y->has_shape)
    fail_unsupported(n, fmt::format("y '{}' is computed after the Gradient node", y_name),
                     "place the Gradient node after the nodes that compute y");
  require_float(n, 0);

  const std::set<const Value*> differentiable = depending_on(g, n, xs);
  ReverseMode rm(n, g, onnx_opset(g, n));
  rm.seed(y);
  const auto at = std::find_if(g.nodes.begin(), g.nodes.end(), [&](const auto& p) { return p.get() == &n; });
  for (auto it = std::make_reverse_iterator(at); it != g.nodes.rend(); ++it) rm.backpropagate(**it, differentiable);
  for (std::size_t i = 0; i < xs.size(); ++i)
    if (n.has_output(i)) rm.lowering().add("Identity", {rm.result(xs[i])}, {n.outputs[i]});
  return rm.lowering().take();
}

const OpRegistrar gradient_op(lowered_op("ai.onnx.preview.training", "Gradient", {1}, lower_gradient));

}  // namespace
}  // namespace onnxc
