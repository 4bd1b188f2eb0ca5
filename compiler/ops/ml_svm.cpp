// SVMRegressor and SVMClassifier of ai.onnx.ml (issue #24), lowered into ai.onnx nodes: one
// MatMul of X with the support vectors (the kernel's gamma folded into them), the kernel
// elementwise (LINEAR, POLY, RBF as exp(2g x.sv - g|x|^2 - g|sv|^2), SIGMOID), then one MatMul
// with the coefficients. The classifier's one-vs-one decision values come from a single
// [vectors, pairs] matrix; libsvm's votes are a MatMul of the positive decisions with a +1/-1
// matrix, the label the first class with the most votes (ties to the lower class index).
//
// Where ONNX Runtime 1.30 is the reference it is followed: the binary classifier's scores are
// [-s, s] (s > 0 votes for the first class); the regressor applies no post_transform.
// Not built (refused with a message): multiclass probability calibration (prob_a, prob_b), a binary
// classifier with a post_transform, the regressor's post_transform, linear mode (no support
// vectors) with a kernel other than LINEAR or a binary classifier.
#include <cmath>

#include "ops/ml_lowering.h"

namespace onnxc {
namespace {

using namespace ml;

struct Kernel {
  std::string type;
  float gamma = 0.0f, coef0 = 0.0f, degree = 0.0f;
};

Kernel svm_kernel_of(const Node& n) {
  Kernel k;
  k.type = n.attr_string("kernel_type", "LINEAR");
  if (k.type != "LINEAR" && k.type != "POLY" && k.type != "RBF" && k.type != "SIGMOID")
    fail_invalid(n, fmt::format("kernel_type '{}'", k.type), "use LINEAR, POLY, RBF or SIGMOID");
  const std::vector<float> p = n.attr_floats("kernel_params");
  if (!p.empty() && p.size() != 3)
    fail_invalid(n, fmt::format("kernel_params has {} values; give gamma, coef0, degree", p.size()));
  if (p.size() == 3) {
    k.gamma = p[0];
    k.coef0 = p[1];
    k.degree = p[2];
  }
  return k;
}

// X as float [N, C] (a [C] input becomes one row, as ONNX Runtime reads it).
Value* rows_of(Lowering& l, Node& n, int64_t& c) {
  Value* x = features(l, n);
  c = feature_count(n);
  return n.inputs[0]->shape.size() == 1 ? l.unsqueeze(x, 0) : x;
}

// The kernel of every row of x ([N, C]) with each of the `count` support vectors `sv`: [N, count].
Value* kernel_values(Lowering& l, const Node& n, Value* x, const std::vector<float>& sv, int64_t count, int64_t c) {
  const Kernel k = svm_kernel_of(n);
  // The support vectors transposed, [C, count], times `scale`.
  auto transposed = [&](float scale) {
    std::vector<float> t(sv.size());
    for (int64_t v = 0; v < count; ++v)
      for (int64_t f = 0; f < c; ++f)
        t[static_cast<std::size_t>(f * count + v)] = scale * sv[static_cast<std::size_t>(v * c + f)];
    return l.float_constant("support_vectors", {c, count}, t);
  };
  if (k.type == "LINEAR") return binary(l, "MatMul", x, transposed(1.0f), "kernel");
  if (k.type == "RBF") {
    // -g |x - sv|^2 = 2g x.sv - g|x|^2 - g|sv|^2
    Value* dot = binary(l, "MatMul", x, transposed(2.0f * k.gamma), "dot");
    std::vector<float> norms(static_cast<std::size_t>(count));
    for (int64_t v = 0; v < count; ++v) {
      double s = 0.0;
      for (int64_t f = 0; f < c; ++f) {
        const double e = sv[static_cast<std::size_t>(v * c + f)];
        s += e * e;
      }
      norms[static_cast<std::size_t>(v)] = static_cast<float>(k.gamma * s);
    }
    Value* minus_sv = binary(l, "Sub", dot, l.float_constant("sv_norms", {count}, norms), "minus_sv");
    Value* xx = l.value("x_norms");
    Node& r = l.add("ReduceSumSquare", {x}, {xx});
    r.set_attr_ints("axes", {1});
    r.set_attr_int("keepdims", 1);
    Value* gxx = binary(l, "Mul", xx, l.float_constant("gamma", {}, {k.gamma}), "gamma_x_norms");
    return unary(l, "Exp", binary(l, "Sub", minus_sv, gxx, "exponent"), "kernel");
  }
  Value* s = binary(l, "MatMul", x, transposed(k.gamma), "dot");
  if (k.coef0 != 0.0f) s = binary(l, "Add", s, l.float_constant("coef0", {}, {k.coef0}), "shifted");
  if (k.type == "SIGMOID") return unary(l, "Tanh", s, "kernel");
  return binary(l, "Pow", s, l.float_constant("degree", {}, {k.degree}), "kernel");
}

Nodes lower_svm_regressor(Node& n, Graph& g) {
  Lowering l(n, g, kLoweredOpset);
  int64_t c = 0;
  Value* x = rows_of(l, n, c);
  const std::string transform = n.attr_string("post_transform", "NONE");
  if (transform != "NONE")
    fail_unsupported(n, fmt::format("post_transform {} of SVMRegressor is not supported (ONNX Runtime ignores it)", transform),
                     "export with post_transform NONE and apply the transform after the node");
  const int64_t supports = n.attr_int("n_supports", 0);
  const std::vector<float> coef = n.attr_floats("coefficients");
  const std::vector<float> rho = n.attr_floats("rho");
  if (rho.empty()) fail_invalid(n, "needs rho");
  Value* product = nullptr;
  if (supports > 0) {
    const std::vector<float> sv = n.attr_floats("support_vectors");
    if (supports > static_cast<int64_t>(sv.size()) || static_cast<int64_t>(sv.size()) != supports * c)
      fail_invalid(n, fmt::format("support_vectors has {} values; {} vectors of {} features need {}", sv.size(), supports,
                                  c, supports * c));
    if (static_cast<int64_t>(coef.size()) != supports)
      fail_invalid(n, fmt::format("coefficients has {} values for {} support vectors", coef.size(), supports));
    Value* k = kernel_values(l, n, x, sv, supports, c);
    product = binary(l, "MatMul", k, l.float_constant("coefficients", {supports, 1}, coef), "product");
  } else {
    if (svm_kernel_of(n).type != "LINEAR")
      fail_unsupported(n, "a linear-mode SVMRegressor (n_supports 0) with a kernel other than LINEAR",
                       "use kernel_type LINEAR or give the support vectors");
    if (static_cast<int64_t>(coef.size()) != c)
      fail_invalid(n, fmt::format("coefficients has {} values for {} features", coef.size(), c));
    product = binary(l, "MatMul", x, l.float_constant("coefficients", {c, 1}, coef), "product");
  }
  const bool one_class = n.attr_int("one_class", 0) != 0;
  Value* score = one_class ? l.value("score") : n.outputs[0];
  l.add("Add", {product, l.float_constant("rho", {}, {rho[0]})}, {score});
  if (one_class) {
    Value* positive = binary(l, "Greater", score, l.float_constant("zero", {}, {0.0f}), "positive");
    l.add("Where", {positive, l.float_constant("one", {}, {1.0f}), l.float_constant("minus_one", {}, {-1.0f})},
          {n.outputs[0]});
  }
  return l.take();
}

Nodes lower_svm_classifier(Node& n, Graph& g) {
  Lowering l(n, g, kLoweredOpset);
  int64_t c = 0;
  Value* x = rows_of(l, n, c);
  const ClassLabels labels = class_labels(l, n, "classlabels_ints");
  const int64_t k = labels.count;
  if (k < 2) fail_invalid(n, "needs two or more class labels");
  // Platt's calibration of a binary model: P(first class) = 1 / (1 + exp(A d + B)) of the decision
  // d, the scores [p, 1 - p] (libsvm's sigmoid_predict; ONNX Runtime 1.30 writes the same). The
  // multiclass coupling (an iterative solve) is not built.
  const std::vector<float> prob_a = n.attr_floats("prob_a"), prob_b = n.attr_floats("prob_b");
  const bool platt = !prob_a.empty() || !prob_b.empty();
  if (platt && (k != 2 || prob_a.size() != 1 || prob_b.size() != 1))
    fail_unsupported(n, "probability calibration (prob_a, prob_b) is supported for binary models (one A, one B) only",
                     "export the SVM without probabilities (scikit-learn probability=False)");
  const std::string transform = n.attr_string("post_transform", "NONE");
  const std::vector<float> coef = n.attr_floats("coefficients");
  const std::vector<float> rho = n.attr_floats("rho");
  const std::vector<int64_t> per_class = n.attr_ints("vectors_per_class");
  Value* z = n.has_output(1) ? n.outputs[1] : nullptr;
  if (per_class.empty()) {
    // Linear mode: one row of coefficients a class, rho[0] added to every score.
    if (k == 2)
      fail_unsupported(n, "a binary linear-mode SVMClassifier (no vectors_per_class)",
                       "convert it as a LinearClassifier");
    if (static_cast<int64_t>(coef.size()) != k * c || rho.empty())
      fail_invalid(n, fmt::format("linear mode needs {} x {} coefficients and rho", k, c));
    std::vector<float> wt(coef.size());
    for (int64_t j = 0; j < k; ++j)
      for (int64_t f = 0; f < c; ++f) wt[static_cast<std::size_t>(f * k + j)] = coef[static_cast<std::size_t>(j * c + f)];
    Value* product = binary(l, "MatMul", x, l.float_constant("coefficients", {c, k}, wt), "product");
    Value* scores = binary(l, "Add", product, l.float_constant("rho", {}, {rho[0]}), "scores");
    Value* out = post_transform(l, n, scores, z);
    label_of_best(l, n, out, labels);
    return l.take();
  }
  if (static_cast<int64_t>(per_class.size()) != k)
    fail_invalid(n, fmt::format("vectors_per_class has {} values for {} classes", per_class.size(), k));
  const std::vector<float> sv = n.attr_floats("support_vectors");
  std::vector<int64_t> start(static_cast<std::size_t>(k) + 1, 0);
  for (int64_t i = 0; i < k; ++i) {
    // At most as many vectors as support_vectors has values: the sums below cannot overflow.
    if (per_class[static_cast<std::size_t>(i)] < 0 ||
        per_class[static_cast<std::size_t>(i)] > static_cast<int64_t>(sv.size()))
      fail_invalid(n, fmt::format("vectors_per_class holds {}", per_class[static_cast<std::size_t>(i)]),
                   "give each class's count of support vectors");
    start[static_cast<std::size_t>(i) + 1] = start[static_cast<std::size_t>(i)] + per_class[static_cast<std::size_t>(i)];
  }
  const int64_t count = start.back();
  const int64_t pairs = k * (k - 1) / 2;
  if (count == 0 || static_cast<int64_t>(sv.size()) != count * c)
    fail_invalid(n, fmt::format("support_vectors has {} values; {} vectors of {} features need {}", sv.size(), count, c,
                                count * c));
  if (static_cast<int64_t>(coef.size()) < (k - 1) * count)
    fail_invalid(n, fmt::format("coefficients has {} values; {} classes of {} vectors need {}", coef.size(), k, count,
                                (k - 1) * count));
  if (static_cast<int64_t>(rho.size()) < pairs)
    fail_invalid(n, fmt::format("rho has {} values for {} class pairs", rho.size(), pairs));
  if (k == 2 && transform != "NONE")
    fail_unsupported(n, fmt::format("post_transform {} of a binary SVMClassifier is not supported", transform),
                     platt ? "use NONE (scores [p, 1 - p])" : "use NONE (scores [-s, s])");

  // Decision value of pair (i, j), in libsvm's order: class i's vectors weighted by coefficient
  // row j - 1, class j's by row i; positive votes for i. weights [count, pairs], votes +1 for i
  // and -1 for j of a positive decision, and `base` the votes every negative decision gives j.
  std::vector<float> weights(static_cast<std::size_t>(count * pairs), 0.0f);
  std::vector<float> swing(static_cast<std::size_t>(pairs * k), 0.0f), base(static_cast<std::size_t>(k), 0.0f);
  int64_t p = 0;
  for (int64_t i = 0; i < k - 1; ++i)
    for (int64_t j = i + 1; j < k; ++j, ++p) {
      for (int64_t v = start[i]; v < start[i + 1]; ++v)
        weights[static_cast<std::size_t>(v * pairs + p)] = coef[static_cast<std::size_t>((j - 1) * count + v)];
      for (int64_t v = start[j]; v < start[j + 1]; ++v)
        weights[static_cast<std::size_t>(v * pairs + p)] = coef[static_cast<std::size_t>(i * count + v)];
      swing[static_cast<std::size_t>(p * k + i)] = 1.0f;
      swing[static_cast<std::size_t>(p * k + j)] = -1.0f;
      base[static_cast<std::size_t>(j)] += 1.0f;
    }
  Value* kv = kernel_values(l, n, x, sv, count, c);
  Value* product = binary(l, "MatMul", kv, l.float_constant("pair_weights", {count, pairs}, weights), "product");
  std::vector<float> offsets(rho.begin(), rho.begin() + pairs);
  // Without a transform the scores are the decisions themselves (no copy).
  const bool direct = k > 2 && transform == "NONE" && z;
  Value* decisions = direct ? z : l.value("decisions");
  l.add("Add", {product, l.float_constant("rho", {pairs}, offsets)}, {decisions});
  if (k == 2 && platt) {
    if (z) {
      Value* first = unary(l, "Sigmoid", binary(l, "Add", binary(l, "Mul", decisions, l.float_constant("minus_a", {}, {-prob_a[0]}), "ad"),
                                              l.float_constant("minus_b", {}, {-prob_b[0]}), "logit"), "p");
      Value* second = binary(l, "Sub", l.float_constant("one", {}, {1.0f}), first, "q");
      l.add("Concat", {first, second}, {z}).set_attr_int("axis", 1);
    }
  } else if (k == 2) {
    if (z) l.add("Concat", {unary(l, "Neg", decisions, "negative"), decisions}, {z}).set_attr_int("axis", 1);
  } else if (z && !direct) {
    post_transform(l, n, decisions, z);
  }
  Value* positive = binary(l, "Greater", decisions, l.float_constant("zero", {}, {0.0f}), "positive");
  Value* wins = l.value("wins");
  l.add("Cast", {positive}, {wins}).set_attr_int("to", 1);
  Value* swings = binary(l, "MatMul", wins, l.float_constant("vote_swing", {pairs, k}, swing), "swings");
  Value* votes = binary(l, "Add", swings, l.float_constant("vote_base", {k}, base), "votes");
  label_of_best(l, n, votes, labels);  // the most votes; ties to the lower class
  return l.take();
}

const OpRegistrar svm_regressor(ml_op("SVMRegressor", {1}, lower_svm_regressor));
const OpRegistrar svm_classifier(ml_op("SVMClassifier", {1}, lower_svm_classifier));

}  // namespace
}  // namespace onnxc
