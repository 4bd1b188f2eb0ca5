// NegativeLogLikelihoodLoss: the (weighted) negative log-probability of each sample's target
// class, optionally summed or averaged (kernel: onnxc/loss.h).
// SoftmaxCrossEntropyLoss: the same loss on log_softmax(scores) along the class axis 1, which
// is also its optional second output (kernels: onnxc/normalization.h, onnxc/loss.h).
//
// Both read [N, C, d1..dk] scores and [N, d1..dk] targets; versions 12 and 13 differ only in
// element types (bfloat16: SoftmaxCrossEntropyLoss from 13, NegativeLogLikelihoodLoss from 22).
#include "onnxc/loss.h"
#include "onnxc/normalization.h"
#include "ops/elementwise.h"
#include "ops/emitter.h"

namespace onnxc {
namespace {

constexpr std::size_t kScores = 0, kTarget = 1, kWeight = 2;

rt::LossReduction reduction(const Node& n) {
  const std::string r = n.attr_string("reduction", "mean");
  if (r == "none") return rt::LossReduction::none;
  if (r == "sum") return rt::LossReduction::sum;
  if (r == "mean") return rt::LossReduction::mean;
  fail_invalid(n, fmt::format("reduction '{}' is not one of none, sum, mean", r));
}

const char* reduction_cname(rt::LossReduction r) {
  switch (r) {
    case rt::LossReduction::none: return "rt::LossReduction::none";
    case rt::LossReduction::sum: return "rt::LossReduction::sum";
    case rt::LossReduction::mean: return "rt::LossReduction::mean";
  }
  return "";
}

rt::NllLossParams loss_params(const Node& n) {
  const Shape& s = n.inputs[kScores]->shape;
  rt::NllLossParams p{};
  p.batch = static_cast<rt::index_t>(s[0]);
  p.classes = static_cast<rt::index_t>(s[1]);
  p.inner = static_cast<rt::index_t>(shape_numel(Shape(s.begin() + 2, s.end())));
  p.reduction = reduction(n);
  p.has_ignore_index = n.has_attr("ignore_index");
  p.ignore_index = n.attr_int("ignore_index", 0);
  return p;
}

std::string loss_params_literal(const Node& n) {
  const rt::NllLossParams p = loss_params(n);
  return params_literal("rt::NllLossParams", {{"batch", std::to_string(p.batch)},
                                              {"classes", std::to_string(p.classes)},
                                              {"inner", std::to_string(p.inner)},
                                              {"reduction", reduction_cname(p.reduction)},
                                              {"has_ignore_index", p.has_ignore_index ? "true" : "false"},
                                              {"ignore_index", std::to_string(p.ignore_index)}});
}

// Checks scores [N, C, d1..dk], target [N, d1..dk] (int32/int64) and weight [C]; sets the loss
// output: the target's shape for reduction none, a scalar otherwise.
void infer_loss_output(Node& n, int bfloat16_since) {
  std::vector<DType> types = {DType::Float, DType::Double, DType::Float16};
  if (n.version >= bfloat16_since) types.push_back(DType::BFloat16);
  require_input_dtype(n, kScores, types);
  require_input_dtype(n, kTarget, {DType::Int32, DType::Int64});
  const Shape& scores = input(n, kScores).shape;
  const Shape& target = input(n, kTarget).shape;
  if (scores.size() < 2) fail_invalid(n, fmt::format("the scores {} must be [N, C, d1, ..., dk]", shape_str(scores)));
  Shape expected_target = scores;
  expected_target.erase(expected_target.begin() + 1);
  if (target != expected_target)
    fail_invalid(n, fmt::format("the target {} must have the scores' shape {} without the class dim: {}",
                                shape_str(target), shape_str(scores), shape_str(expected_target)));
  if (n.has_input(kWeight)) {
    require_same_dtype(n, kWeight, kScores);
    if (input(n, kWeight).shape != Shape{scores[1]})
      fail_invalid(n, fmt::format("the weight {} must be a vector of the {} classes",
                                  shape_str(input(n, kWeight).shape), scores[1]));
  }
  const DType t = input(n, kScores).dtype;
  set_output(n, 0, t, reduction(n) == rt::LossReduction::none ? target : Shape{});
}

// ---- NegativeLogLikelihoodLoss ----

void infer_nll_loss(Node& n) {
  check_arity(n, 2, 3, 1, 1);
  infer_loss_output(n, 22);
}

void emit_nll_loss(const Node& n, Emitter& e) {
  e.include("onnxc/loss.h");
  e.linef("rt::nll_loss({}, {}, {}, {}, {});", loss_params_literal(n), e.in(kScores), e.in(kTarget),
          e.in_or_null(kWeight, n.inputs[kScores]->dtype), e.out(0));
}

// Calls f(TypeTag<T>, TypeTag<I>) for the scores' element type T and the target's I.
template <class F> void dispatch_loss_types(const Node& n, F&& f) {
  dispatch_in(n, n.inputs[kScores]->dtype, FloatTypes{}, [&](auto t) {
    dispatch_in(n, n.inputs[kTarget]->dtype, TypeList<int32_t, int64_t>{}, [&](auto i) { f(t, i); });
  });
}

void fold_nll_loss(const Node& n, std::vector<Tensor>& outs) {
  Tensor& loss = fold_output(n, outs);
  dispatch_loss_types(n, [&](auto t, auto i) {
    using T = typename decltype(t)::type;
    using I = typename decltype(i)::type;
    rt::nll_loss(loss_params(n), n.inputs[kScores]->constant->data<T>(), n.inputs[kTarget]->constant->data<I>(),
                 const_data_or_null<T>(n, kWeight), loss.data<T>());
  });
}

const OpRegistrar nll_loss_op([] {
  OpDef d;
  d.op_type = "NegativeLogLikelihoodLoss";
  d.versions = {12, 13, 22};
  d.infer = infer_nll_loss;
  d.emit = emit_nll_loss;
  d.fold = fold_nll_loss;
  return d;
}());

// ---- SoftmaxCrossEntropyLoss ----

void infer_softmax_cross_entropy(Node& n) {
  check_arity(n, 2, 3, 1, 2);
  infer_loss_output(n, 13);
  const Value& scores = input(n, kScores);
  if (n.has_output(1)) set_output(n, 1, scores.dtype, scores.shape);
}

// The log-probabilities go to the log_prob output when the model asks for it, else to scratch.
std::size_t softmax_cross_entropy_scratch(const Node& n) {
  return n.has_output(1) ? 0 : n.inputs[kScores]->byte_size();
}

void emit_softmax_cross_entropy(const Node& n, Emitter& e) {
  e.include("onnxc/loss.h");
  e.include("onnxc/normalization.h");
  const rt::NllLossParams p = loss_params(n);
  // An expression, not a local variable: a local could shadow a value of the same name.
  const std::string log_prob = n.has_output(1) ? e.out(1)
                                               : fmt::format("reinterpret_cast<{}*>({})", ctype_of(*n.inputs[kScores]),
                                                             e.scratch());
  e.linef("rt::log_softmax({}, {}, {}, {}, {});", e.in(kScores), log_prob, p.batch, p.classes, p.inner);
  e.linef("rt::nll_loss({}, {}, {}, {}, {});", loss_params_literal(n), log_prob, e.in(kTarget),
          e.in_or_null(kWeight, n.inputs[kScores]->dtype), e.out(0));
}

void fold_softmax_cross_entropy(const Node& n, std::vector<Tensor>& outs) {
  const Value& scores = *n.inputs[kScores];
  outs.emplace_back(n.outputs[0]->dtype, n.outputs[0]->shape);
  outs.emplace_back(scores.dtype, scores.shape);
  Tensor &loss = outs[0], &log_prob = outs[1];
  const rt::NllLossParams p = loss_params(n);
  dispatch_loss_types(n, [&](auto t, auto i) {
    using T = typename decltype(t)::type;
    using I = typename decltype(i)::type;
    rt::log_softmax(scores.constant->data<T>(), log_prob.data<T>(), p.batch, p.classes, p.inner);
    rt::nll_loss(p, log_prob.data<T>(), n.inputs[kTarget]->constant->data<I>(), const_data_or_null<T>(n, kWeight),
                 loss.data<T>());
  });
}

const OpRegistrar softmax_cross_entropy_op([] {
  OpDef d;
  d.op_type = "SoftmaxCrossEntropyLoss";
  d.versions = {12, 13};
  d.infer = infer_softmax_cross_entropy;
  d.emit = emit_softmax_cross_entropy;
  d.fold = fold_softmax_cross_entropy;
  d.scratch_bytes = softmax_cross_entropy_scratch;
  return d;
}());

}  // namespace
}  // namespace onnxc
