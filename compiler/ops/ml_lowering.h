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

// The post_transform of scores ([N, K] or [K]); `out` receives it when given.
inline Value* post_transform(Lowering& l, const Node& n, Value* scores, Value* out) {
  const std::string t = n.attr_string("post_transform", "NONE");
  Value* y = out ? out : l.value("transformed");
  if (t == "NONE") {
    l.add("Identity", {scores}, {y});
  } else if (t == "LOGISTIC") {
    l.add("Sigmoid", {scores}, {y});
  } else if (t == "SOFTMAX") {
    l.add("Softmax", {scores}, {y}).set_attr_int("axis", -1);
  } else if (t == "SOFTMAX_ZERO" || t == "PROBIT") {
    fail_unsupported(n, fmt::format("post_transform {} is not supported", t), "use NONE, LOGISTIC or SOFTMAX");
  } else {
    fail_invalid(n, fmt::format("post_transform '{}'", t), "use NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO or PROBIT");
  }
  return y;
}

// An ai.onnx.ml operator defined by its lowering.
inline OpDef ml_op(const char* name, std::vector<int> versions, std::function<Nodes(Node&, Graph&)> lower) {
  OpDef d;
  d.domain = kMl;
  d.op_type = name;
  d.versions = std::move(versions);
  d.lower = std::move(lower);
  return d;
}

}  // namespace ml
}  // namespace onnxc
