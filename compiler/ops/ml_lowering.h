// Shared by the ai.onnx.ml lowerings (ml_linear.cpp, ml_trees.cpp, ml_svm.cpp, ml_features.cpp):
// their [N, C] features as float and the post-transforms of scores.
#pragma once

#include <string>
#include <vector>

#include "ops/lowering.h"
#include "ops/op.h"

namespace onnxc {
namespace ml {

using Nodes = std::vector<std::unique_ptr<Node>>;

// The ai.onnx opset of the nodes these lower into (the model may import no ai.onnx opset).
constexpr int kLoweredOpset = 17;

constexpr const char* kMl = "ai.onnx.ml";

inline Value* unary(Lowering& l, const char* op, Value* x, const std::string& hint) {
  Value* y = l.value(hint);
  l.add(op, {x}, {y});
  return y;
}

inline Value* binary(Lowering& l, const char* op, Value* a, Value* b, const std::string& hint) {
  Value* y = l.value(hint);
  l.add(op, {a, b}, {y});
  return y;
}

// X as float: cast when it is not.
inline Value* features(Lowering& l, Node& n) {
  if (n.inputs.size() != 1 || !n.has_input(0)) fail_invalid(n, "needs one input X");
  Value* x = n.inputs[0];
  switch (x->dtype) {
    case DType::Float: return x;
    case DType::Double:
    case DType::Int64:
    case DType::Int32: {
      Value* f = l.value("x_float");
      l.add("Cast", {x}, {f}).set_attr_int("to", 1);
      return f;
    }
    default:
      fail_unsupported(n, fmt::format("X is {}; {} takes float, double, int64 or int32", dtype_name(x->dtype), n.op_type));
  }
}

inline int64_t feature_count(const Node& n) {
  const Shape& s = n.inputs[0]->shape;
  if (s.empty() || s.size() > 2)
    fail_unsupported(n, fmt::format("X has shape {}; onnxc takes [C] or [N, C] features", shape_str(s)));
  return s.back();
}

// probit(p) = sqrt(2) erfinv(2p - 1), the standard normal quantile: Winitzki's closed form of
// erfinv (within 2e-3) refined by two Newton steps on Erf (float precision for p in [1e-6,
// 1 - 1e-6]).
inline Value* probit(Lowering& l, Value* p, Value* out) {
  auto c = [&](float v) { return l.float_constant("c", {}, {v}); };
  Value* y = binary(l, "Sub", binary(l, "Mul", p, c(2.0f), "p2"), c(1.0f), "y");
  Value* w = unary(l, "Log", binary(l, "Mul", binary(l, "Sub", c(1.0f), y, "one_minus"),
                                    binary(l, "Add", c(1.0f), y, "one_plus"), "one_minus_y2"), "w");
  constexpr float a = 0.147f;
  Value* t = binary(l, "Add", c(2.0f / (3.14159265f * a)), binary(l, "Mul", w, c(0.5f), "half_w"), "t");
  Value* root = unary(l, "Sqrt", binary(l, "Sub", binary(l, "Mul", t, t, "t2"), binary(l, "Mul", w, c(1.0f / a), "w_a"), "disc"), "root");
  Value* x = binary(l, "Mul", unary(l, "Sign", y, "sign"), unary(l, "Sqrt", binary(l, "Sub", root, t, "x2"), "mag"), "x0");
  for (int step = 0; step < 2; ++step) {
    // x -= (erf(x) - y) / (2 / sqrt(pi) exp(-x^2))
    Value* slope = binary(l, "Mul", c(1.12837917f), unary(l, "Exp", unary(l, "Neg", binary(l, "Mul", x, x, "xx"), "neg_xx"), "gauss"), "slope");
    Value* err = binary(l, "Sub", unary(l, "Erf", x, "erf"), y, "err");
    x = binary(l, "Sub", x, binary(l, "Div", err, slope, "newton"), "x");
  }
  Value* z = out ? out : l.value("probit");
  l.add("Mul", {x, c(1.41421356f)}, {z});
  return z;
}

// The post_transform `t` of scores ([N, K] or [K]); `out` receives it when given.
//   SOFTMAX_ZERO: a softmax over the non-zero scores (|s| > 1e-7, as ONNX Runtime tests them),
//   zero scores giving 0.  PROBIT: the normal quantile of each score (probit above).
inline Value* post_transform(Lowering& l, const Node& n, const std::string& t, Value* scores, Value* out) {
  Value* y = out ? out : l.value("transformed");
  if (t == "NONE") {
    l.add("Identity", {scores}, {y});
  } else if (t == "LOGISTIC") {
    l.add("Sigmoid", {scores}, {y});
  } else if (t == "SOFTMAX") {
    l.add("Softmax", {scores}, {y}).set_attr_int("axis", -1);
  } else if (t == "SOFTMAX_ZERO") {
    Value* top = l.value("top");
    l.add("ReduceMax", {scores}, {top}).set_attr_ints("axes", {-1});
    Value* e = unary(l, "Exp", binary(l, "Sub", scores, top, "shifted"), "exp");
    Value* nonzero = binary(l, "Greater", unary(l, "Abs", scores, "magnitude"), l.float_constant("zero_below", {}, {1e-7f}), "nonzero");
    Value* kept = l.value("kept");
    l.add("Where", {nonzero, e, l.float_constant("zero", {}, {0.0f})}, {kept});
    Value* sum = l.value("sum");
    l.add("ReduceSum", {kept, l.int64_constant("axis", {1}, {-1})}, {sum});
    l.add("Div", {kept, sum}, {y});
  } else if (t == "PROBIT") {
    probit(l, scores, y);
  } else {
    fail_invalid(n, fmt::format("post_transform '{}'", t), "use NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO or PROBIT");
  }
  return y;
}

// The node's post_transform attribute (NONE when absent).
inline Value* post_transform(Lowering& l, const Node& n, Value* scores, Value* out) {
  return post_transform(l, n, n.attr_string("post_transform", "NONE"), scores, out);
}

// A binary classifier's two scores from the one score s ([N, 1] or [1]) of its second class, as
// ONNX Runtime 1.30 writes them: [-s, s] (NONE) or [1 - p, p] with p = sigmoid(s) (LOGISTIC).
inline Value* binary_scores(Lowering& l, const Node& n, const std::string& transform, Value* s, Value* out) {
  if (transform != "NONE" && transform != "LOGISTIC")
    fail_unsupported(n, fmt::format("post_transform {} of a binary model is not supported", transform),
                     "use NONE or LOGISTIC");
  Value* positive = post_transform(l, n, transform, s, nullptr);
  Value* negative = transform == "NONE" ? unary(l, "Neg", positive, "negative")
                                        : binary(l, "Sub", l.float_constant("one", {}, {1.0f}), positive, "negative");
  Value* z = out ? out : l.value("z");
  l.add("Concat", {negative, positive}, {z}).set_attr_int("axis", -1);
  return z;
}

// A classifier's labels as a constant table for Gather: `ints_attr` (classlabels_ints or
// classlabels_int64s) as int64, or classlabels_strings as a string tensor (the label output then
// points to the compiled-in strings).
struct ClassLabels {
  int64_t count = 0;
  Value* table = nullptr;
};

inline ClassLabels class_labels(Lowering& l, const Node& n, const char* ints_attr) {
  ClassLabels out;
  if (n.has_attr("classlabels_strings")) {
    const std::vector<std::string> strings = n.attr_strings("classlabels_strings");
    for (const std::string& s : strings)
      if (s.find('\0') != std::string::npos) fail_unsupported(n, "a class label holds a NUL character");
    out.count = static_cast<int64_t>(strings.size());
    Tensor t(DType::String, {out.count});
    t.strings = strings;
    out.table = l.value("labels");
    set_constant_output(*out.table, std::move(t));
  } else {
    const std::vector<int64_t> ints = n.attr_ints(ints_attr);
    out.count = static_cast<int64_t>(ints.size());
    out.table = l.int64_constant("labels", {out.count}, ints);
  }
  if (out.count == 0) fail_invalid(n, fmt::format("needs {} or classlabels_strings", ints_attr));
  return out;
}

// Output 0 of classifier n (when it has one): the label of the best of `scores` along `axis`
// (ArgMax: the first of equal scores) from the labels' table.
inline void label_of_best(Lowering& l, const Node& n, Value* scores, const ClassLabels& labels, int64_t axis = 1) {
  if (!n.has_output(0)) return;
  Value* best = l.value("best");
  Node& am = l.add("ArgMax", {scores}, {best});
  am.set_attr_int("axis", axis);
  am.set_attr_int("keepdims", 0);
  l.add("Gather", {labels.table, best}, {n.outputs[0]}).set_attr_int("axis", 0);
}

// An ai.onnx.ml operator defined by its lowering.
inline OpDef ml_op(const char* name, std::vector<int> versions, std::function<Nodes(Node&, Graph&)> lower) {
  return lowered_op(kMl, name, std::move(versions), std::move(lower));
}

}  // namespace ml
}  // namespace onnxc
