// NonMaxSuppression-10/11: per batch and class, the boxes greedy IoU suppression keeps, as
// [k, 3] rows (batch, class, box) (kernel: onnxc/nms.h). k is known only at run time: the output
// is bounded (Value::dynamic_axis) by batches * classes * the boxes kept per class at most:
// max_output_boxes_per_class when it is constant (or pinned), else every box.
#include <algorithm>

#include "onnxc/nms.h"
#include "ops/elementwise.h"
#include "ops/emitter.h"

namespace onnxc {
namespace {

constexpr std::size_t kBoxes = 0, kScores = 1, kMaxPerClass = 2, kIouThreshold = 3, kScoreThreshold = 4;
constexpr int kRows = 0;  // the dynamic axis of the output: one row per kept box

rt::NmsParams nms_params(const Node& n) {
  const Shape& scores = n.inputs[kScores]->shape;
  return {scores[0], scores[1], scores[2], n.attr_int("center_point_box", 0) != 0};
}

void require_scalar(const Node& n, std::size_t i, const char* what) {
  if (n.has_input(i) && input(n, i).numel() != 1)
    fail_invalid(n, fmt::format("{} (input {}) must hold one value, not {}", what, i, shape_str(input(n, i).shape)));
}

// The most boxes one batch and class can keep.
int64_t max_kept_per_class(const Node& n) {
  const int64_t boxes = n.inputs[kBoxes]->shape[1];
  if (!n.has_input(kMaxPerClass)) return 0;  // the default keeps none
  const Tensor* limit = const_input(n, kMaxPerClass);
  return limit ? std::clamp<int64_t>(limit->int_at(0), 0, boxes) : boxes;
}

void infer_nms(Node& n) {
  check_arity(n, 2, 5, 1, 1);
  require_input_dtype(n, kBoxes, {DType::Float});
  require_input_dtype(n, kScores, {DType::Float});
  const Shape& boxes = input(n, kBoxes).shape;
  const Shape& scores = input(n, kScores).shape;
  if (boxes.size() != 3 || boxes[2] != 4)
    fail_invalid(n, fmt::format("boxes {} must be [num_batches, spatial_dimension, 4]", shape_str(boxes)));
  if (scores.size() != 3 || scores[0] != boxes[0] || scores[2] != boxes[1])
    fail_invalid(n, fmt::format("scores {} must be [num_batches, num_classes, spatial_dimension] for boxes {}",
                                shape_str(scores), shape_str(boxes)));
  const int64_t center_point_box = n.attr_int("center_point_box", 0);
  if (center_point_box != 0 && center_point_box != 1)
    fail_invalid(n, fmt::format("center_point_box {} is neither 0 nor 1", center_point_box));
  if (n.has_input(kMaxPerClass)) require_input_dtype(n, kMaxPerClass, {DType::Int64});
  if (n.has_input(kIouThreshold)) require_input_dtype(n, kIouThreshold, {DType::Float});
  if (n.has_input(kScoreThreshold)) require_input_dtype(n, kScoreThreshold, {DType::Float});
  require_scalar(n, kMaxPerClass, "max_output_boxes_per_class");
  require_scalar(n, kIouThreshold, "iou_threshold");
  require_scalar(n, kScoreThreshold, "score_threshold");
  set_bounded_output(n, 0, DType::Int64, {scores[0] * scores[1] * max_kept_per_class(n), 3}, kRows);
}

std::size_t nms_scratch(const Node& n) {
  return 2 * static_cast<std::size_t>(n.inputs[kBoxes]->shape[1]) * sizeof(rt::index_t);
}

void emit_nms(const Node& n, Emitter& e) {
  e.include("onnxc/nms.h");
  const rt::NmsParams p = nms_params(n);
  const std::string params = params_literal("rt::NmsParams", {{"batches", std::to_string(p.batches)},
                                                              {"classes", std::to_string(p.classes)},
                                                              {"boxes", std::to_string(p.boxes)},
                                                              {"center_point_box", p.center_point_box ? "true" : "false"}});
  e.bounded_call(fmt::format("rt::non_max_suppression({}, {}, {}, {}, {}, {}, {}, reinterpret_cast<rt::index_t*>({}))",
                             params, e.in(kBoxes), e.in(kScores), e.in_or_null(kMaxPerClass, DType::Int64),
                             e.in_or_null(kIouThreshold, DType::Float), e.in_or_null(kScoreThreshold, DType::Float),
                             e.out(0), e.scratch()),
                 {0});
}

void fold_nms(const Node& n, std::vector<Tensor>& outs) {
  Tensor& y = fold_output(n, outs);
  std::vector<rt::index_t> scratch(2 * static_cast<std::size_t>(n.inputs[kBoxes]->shape[1]));
  const rt::index_t k = rt::non_max_suppression(
      nms_params(n), n.inputs[kBoxes]->constant->data<float>(), n.inputs[kScores]->constant->data<float>(),
      const_data_or_null<int64_t>(n, kMaxPerClass), const_data_or_null<float>(n, kIouThreshold),
      const_data_or_null<float>(n, kScoreThreshold), y.data<int64_t>(), scratch.data());
  shrink_to_extent(y, *n.outputs[0], k);
}

const OpRegistrar nms_op([] {
  OpDef d;
  d.op_type = "NonMaxSuppression";
  d.versions = {10, 11};
  d.infer = infer_nms;
  d.emit = emit_nms;
  d.fold = fold_nms;
  d.scratch_bytes = nms_scratch;
  return d;
}());

}  // namespace
}  // namespace onnxc
