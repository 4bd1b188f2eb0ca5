// The linear and elementwise operators of ai.onnx.ml (issue #24), lowered into ai.onnx nodes
// that then compile like any model's: Scaler, Binarizer, Normalizer, LinearRegressor and
// LinearClassifier. Their inputs are [N, C] (or [C]) features; float, double, int64 and int32
// inputs are cast to float first, as the operators compute in float. Class labels int64 or
// strings (ml_lowering.h's class_labels).
//
// Not built (refused with a message): a binary model's post-transforms other than NONE and
// LOGISTIC.
#include <cmath>

#include "ops/ml_lowering.h"

namespace onnxc {
namespace {

using namespace ml;

// A per-feature attribute of 1 or C values, as a constant broadcasting along the features.
Value* per_feature(Lowering& l, const Node& n, const char* name, float fallback, int64_t features) {
  std::vector<float> v = n.attr_floats(name, {fallback});
  if (v.empty()) v = {fallback};
  if (v.size() != 1 && static_cast<int64_t>(v.size()) != features)
    fail_invalid(n, fmt::format("'{}' has {} values for {} features (give 1 or {})", name, v.size(), features, features));
  return l.float_constant(name, {static_cast<int64_t>(v.size())}, v);
}

Nodes lower_scaler(Node& n, Graph& g) {
  Lowering l(n, g, kLoweredOpset);
  Value* x = features(l, n);
  const int64_t c = feature_count(n);
  Value* centred = binary(l, "Sub", x, per_feature(l, n, "offset", 0.0f, c), "centred");
  l.add("Mul", {centred, per_feature(l, n, "scale", 1.0f, c)}, {n.outputs[0]});
  return l.take();
}

Nodes lower_binarizer(Node& n, Graph& g) {
  Lowering l(n, g, kLoweredOpset);
  if (n.inputs.size() != 1 || !n.has_input(0)) fail_invalid(n, "needs one input X");
  Value* x = n.inputs[0];
  if (x->dtype != DType::Float && x->dtype != DType::Double)
    fail_unsupported(n, fmt::format("X is {}; onnxc binarizes float and double", dtype_name(x->dtype)),
                     "cast X to float");
  Tensor threshold(x->dtype, {});
  if (x->dtype == DType::Float)
    threshold.data<float>()[0] = n.attr_float("threshold", 0.0f);
  else
    threshold.data<double>()[0] = n.attr_float("threshold", 0.0f);
  Value* t = l.value("threshold");
  set_constant_output(*t, std::move(threshold));
  Value* above = binary(l, "Greater", x, t, "above");
  l.add("Cast", {above}, {n.outputs[0]}).set_attr_int("to", static_cast<int64_t>(x->dtype));
  return l.take();
}

// Each row divided by its max, its sum of absolute values or its L2 norm; a row whose divisor
// is zero stays as it is.
Nodes lower_normalizer(Node& n, Graph& g) {
  Lowering l(n, g, kLoweredOpset);
  Value* x = features(l, n);
  const int64_t axis = static_cast<int64_t>(n.inputs[0]->shape.size()) - 1;
  feature_count(n);
  const std::string norm = n.attr_string("norm", "MAX");
  const char* reduce = norm == "MAX" ? "ReduceMax" : norm == "L1" ? "ReduceL1" : norm == "L2" ? "ReduceL2" : nullptr;
  if (!reduce) fail_invalid(n, fmt::format("norm '{}'; use MAX, L1 or L2", norm));
  Value* divisor = l.value("divisor");
  Node& r = l.add(reduce, {x}, {divisor});
  r.set_attr_ints("axes", {axis});
  r.set_attr_int("keepdims", 1);
  Value* zero = l.float_constant("zero", {}, {0.0f});
  Value* is_zero = binary(l, "Equal", divisor, zero, "divisor_is_zero");
  Value* safe = l.value("divisor_or_one");
  l.add("Where", {is_zero, l.float_constant("one", {}, {1.0f}), divisor}, {safe});
  l.add("Div", {x, safe}, {n.outputs[0]});
  return l.take();
}

// scores = X W^T + b, W from `coefficients` (`rows` rows of C), b from `intercepts`.
Value* linear_scores(Lowering& l, const Node& n, Value* x, int64_t rows, int64_t c) {
  const std::vector<float> w = n.attr_floats("coefficients");
  if (static_cast<int64_t>(w.size()) != rows * c)
    fail_invalid(n, fmt::format("'coefficients' has {} values; {} x {} features need {}", w.size(), rows, c, rows * c));
  // W^T as [C, rows].
  std::vector<float> wt(w.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < c; ++k) wt[static_cast<std::size_t>(k * rows + r)] = w[static_cast<std::size_t>(r * c + k)];
  Value* product = binary(l, "MatMul", x, l.float_constant("weights", {c, rows}, wt), "product");
  std::vector<float> b = n.attr_floats("intercepts");
  if (b.empty()) return product;
  if (static_cast<int64_t>(b.size()) != rows)
    fail_invalid(n, fmt::format("'intercepts' has {} values for {} outputs", b.size(), rows));
  return binary(l, "Add", product, l.float_constant("intercepts", {rows}, b), "scores");
}

Nodes lower_linear_regressor(Node& n, Graph& g) {
  Lowering l(n, g, kLoweredOpset);
  Value* x = features(l, n);
  const int64_t c = feature_count(n);
  const int64_t targets = n.attr_int("targets", 1);
  if (targets < 1) fail_invalid(n, fmt::format("targets is {}", targets));
  Value* scores = linear_scores(l, n, x, targets, c);
  post_transform(l, n, scores, n.outputs[0]);
  return l.take();
}

// Labels (int64) of the best score, and the transformed scores. With one set of coefficients
// and two labels (a binary model), the scores are [-s, s] (NONE) or [1 - p, p] (LOGISTIC).
Nodes lower_linear_classifier(Node& n, Graph& g) {
  Lowering l(n, g, kLoweredOpset);
  Value* x = features(l, n);
  const int64_t c = feature_count(n);
  const ClassLabels labels = class_labels(l, n, "classlabels_ints");
  const int64_t k = labels.count;
  const std::vector<float> w = n.attr_floats("coefficients");
  if (c == 0 || w.size() % static_cast<std::size_t>(c)) fail_invalid(n, "'coefficients' is not a whole number of rows");
  const int64_t rows = static_cast<int64_t>(w.size()) / c;
  const std::string transform = n.attr_string("post_transform", "NONE");
  Value* scores = linear_scores(l, n, x, rows, c);
  const bool batched = n.inputs[0]->shape.size() == 2;
  Value* z = nullptr;
  if (rows == 1 && k == 2) {
    z = binary_scores(l, n, transform, scores, n.has_output(1) ? n.outputs[1] : nullptr);
  } else {
    if (rows != k) fail_invalid(n, fmt::format("{} rows of coefficients for {} labels", rows, k));
    z = post_transform(l, n, scores, n.has_output(1) ? n.outputs[1] : nullptr);
  }
  label_of_best(l, n, z, labels, batched ? 1 : 0);
  return l.take();
}

const OpRegistrar scaler(ml_op("Scaler", {1}, lower_scaler));
const OpRegistrar binarizer(ml_op("Binarizer", {1}, lower_binarizer));
const OpRegistrar normalizer(ml_op("Normalizer", {1}, lower_normalizer));
const OpRegistrar linear_regressor(ml_op("LinearRegressor", {1}, lower_linear_regressor));
const OpRegistrar linear_classifier(ml_op("LinearClassifier", {1}, lower_linear_classifier));

}  // namespace
}  // namespace onnxc
