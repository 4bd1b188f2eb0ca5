// RoiAlign (versions 10, 16, 22): bilinear region pooling, as in Mask R-CNN.
#include "onnxc/roi_align.h"
#include "ops/emitter.h"

namespace onnxc {
namespace {

// Version 16 added coordinate_transformation_mode, defaulting to half_pixel; version 10 behaves
// as output_half_pixel.
bool half_pixel(const Node& n) {
  if (n.version < 16) return false;
  std::string mode = n.attr_string("coordinate_transformation_mode", "half_pixel");
  if (mode != "half_pixel" && mode != "output_half_pixel")
    fail_invalid(n, fmt::format("coordinate_transformation_mode '{}' is not half_pixel or output_half_pixel", mode));
  return mode == "half_pixel";
}

bool max_mode(const Node& n) {
  std::string mode = n.attr_string("mode", "avg");
  if (mode != "avg" && mode != "max") fail_invalid(n, fmt::format("mode '{}' is not avg or max", mode));
  return mode == "max";
}

void infer_roi_align(Node& n) {
  check_arity(n, 3, 3, 1, 1);
  const Value& x = input(n, 0);
  const Value& rois = input(n, 1);
  const Value& batch_indices = input(n, 2);
  require_float(n, 0);
  if (rois.dtype != x.dtype) fail_invalid(n, "rois and X have different types");
  require_dtype(n, 2, {DType::Int64});
  if (x.shape.size() != 4) fail_invalid(n, fmt::format("X has shape {}; expected [N, C, H, W]", shape_str(x.shape)));
  if (rois.shape.size() != 2 || rois.shape[1] != 4)
    fail_invalid(n, fmt::format("rois has shape {}; expected [num_rois, 4]", shape_str(rois.shape)));
  if (batch_indices.shape != Shape{rois.shape[0]})
    fail_invalid(n, fmt::format("batch_indices has shape {}; expected [{}]", shape_str(batch_indices.shape), rois.shape[0]));
  int64_t out_h = n.attr_int("output_height", 1), out_w = n.attr_int("output_width", 1);
  if (out_h < 1 || out_w < 1) fail_invalid(n, "output_height and output_width must be positive");
  if (n.attr_int("sampling_ratio", 0) < 0) fail_invalid(n, "sampling_ratio must not be negative");
  half_pixel(n);
  max_mode(n);
  set_output(n, 0, x.dtype, {rois.shape[0], x.shape[1], out_h, out_w});
}

void emit_roi_align(const Node& n, Emitter& e) {
  e.include("onnxc/roi_align.h");
  const Shape& x = n.inputs[0]->shape;
  const Shape& y = n.outputs[0]->shape;
  auto num = [](int64_t v) { return fmt::format("{}", v); };
  e.linef("constexpr rt::RoiAlignParams p = {};",
          params_literal("rt::RoiAlignParams", {{"batch", num(x[0])},
                                                {"channels", num(x[1])},
                                                {"height", num(x[2])},
                                                {"width", num(x[3])},
                                                {"rois", num(y[0])},
                                                {"out_h", num(y[2])},
                                                {"out_w", num(y[3])},
                                                {"sampling_ratio", num(n.attr_int("sampling_ratio", 0))},
                                                {"spatial_scale", float_literal(n.attr_float("spatial_scale", 1.0f))},
                                                {"half_pixel", half_pixel(n) ? "true" : "false"},
                                                {"max_mode", max_mode(n) ? "true" : "false"}}));
  e.linef("rt::roi_align(p, {}, {}, {}, {});", e.in(0), e.in(1), e.in(2), e.out(0));
}

const OpRegistrar roi_align_op([] {
  OpDef d;
  d.op_type = "RoiAlign";
  d.versions = {10, 16, 22};
  d.infer = infer_roi_align;
  d.emit = emit_roi_align;
  return d;
}());

}  // namespace
}  // namespace onnxc
