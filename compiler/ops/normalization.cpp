// BatchNormalization, InstanceNormalization, GroupNormalization, LayerNormalization,
// RMSNormalization, MeanVarianceNormalization, LRN.
#include "onnxc/normalization.h"
#include "ops/elementwise.h"
#include "ops/emitter.h"
#include "ops/reduction.h"

namespace onnxc {
namespace {

// Product of the dims from `from` on (the spatial size of an [N, C, ...] tensor for from = 2).
int64_t trailing_numel(const Shape& s, std::size_t from) {
  int64_t n = 1;
  for (std::size_t i = from; i < s.size(); ++i) n *= s[i];
  return n;
}

std::vector<DType> float_types(bool with_bfloat16) {
  std::vector<DType> t = {DType::Float, DType::Double, DType::Float16};
  if (with_bfloat16) t.push_back(DType::BFloat16);
  return t;
}

void require_input_shape(const Node& n, std::size_t i, const Shape& expected, const char* what) {
  const Shape& s = input(n, i).shape;
  if (s != expected)
    fail_invalid(n, fmt::format("input {} ({}) has shape {}; expected {}", i, what, shape_str(s), shape_str(expected)));
}

// The C++ type statistics are computed in: what stash_type names (only float is supported,
// the one type every stash_type-taking op accepts), or for ops without stash_type float for
// float and the 16-bit types and double for double.
std::string stash_ctype(const Node& n, bool has_stash_type) {
  if (has_stash_type) {
    int64_t stash = n.attr_int("stash_type", 1);
    if (stash != static_cast<int64_t>(DType::Float))
      fail_unsupported(n, fmt::format("stash_type {} (onnxc computes the statistics in float only)", stash),
                       "use stash_type=1");
    return "float";
  }
  return input(n, 0).dtype == DType::Double ? "double" : "float";
}

// ---------------------------------------------------------------------------------------
// BatchNormalization. Inference: y = (x - mean) / sqrt(var + epsilon) * scale + B. Versions
// 14 and 15 also have training_mode, which normalises with the batch's statistics and outputs
// the updated running mean and variance. The training outputs of versions before 14 (saved
// mean and variance, whose meaning the spec leaves open) are not supported.

bool bn_training(const Node& n) { return n.version >= 14 && n.attr_int("training_mode", 0) != 0; }

// Before version 9, spatial=0 gives every activation its own statistics: scale, B, mean and
// var then have shape x.shape[1:], and the channel axis is everything after the batch.
bool bn_per_activation(const Node& n) { return n.version < 9 && n.attr_int("spatial", 1) == 0; }

bool any_output_after_first(const Node& n) {
  for (std::size_t i = 1; i < n.outputs.size(); ++i)
    if (n.has_output(i)) return true;
  return false;
}

void infer_batch_norm(Node& n) {
  check_arity(n, 5, 5, 1, n.version >= 14 ? 3 : 5);
  const Value& x = input(n, 0);
  require_dtype(n, 0, float_types(n.version >= 14));
  if (x.shape.size() < 2) fail_invalid(n, fmt::format("input rank {} is below 2 (N, C, ...)", x.shape.size()));
  if (n.version >= 14 && !bn_training(n) && any_output_after_first(n))
    fail_invalid(n, "running_mean and running_var are outputs only when training_mode=1");
  if (n.version < 14 && any_output_after_first(n))
    fail_unsupported(n, fmt::format("the training-mode outputs of BatchNormalization-{}", n.version),
                     "export the model in inference mode, or with opset 14 or later");
  Shape param_shape = bn_per_activation(n) ? Shape(x.shape.begin() + 1, x.shape.end()) : Shape{x.shape[1]};
  const char* names[] = {"", "scale", "B", "mean", "var"};
  for (std::size_t i = 1; i < 5; ++i) {
    require_input_shape(n, i, param_shape, names[i]);
    require_dtype(n, i, float_types(n.version >= 14));
  }
  // Version 14 lets mean/var differ from x, version 15 also scale/B; before, all match.
  if (n.version < 15) require_same_dtype(n, 1, 0);
  if (n.version < 14) require_same_dtype(n, 3, 0);
  require_same_dtype(n, 2, 1);
  require_same_dtype(n, 4, 3);
  set_output(n, 0, x.dtype, x.shape);
  set_output(n, 1, n.inputs[3]->dtype, param_shape);
  set_output(n, 2, n.inputs[3]->dtype, param_shape);
}

void emit_batch_norm(const Node& n, Emitter& e) {
  e.include("onnxc/normalization.h");
  const Shape& s = n.inputs[0]->shape;
  int64_t channels = bn_per_activation(n) ? trailing_numel(s, 1) : s[1];
  int64_t inner = bn_per_activation(n) ? 1 : trailing_numel(s, 2);
  std::string eps = float_literal(n.attr_float("epsilon", 1e-5f));
  if (!bn_training(n)) {
    // One image splits into ranges of channels (each channel's values do not depend on the cut).
    const int64_t tasks = s[0] == 1 ? e.tasks(n.outputs[0]->numel(), channels) : 1;
    if (tasks < 2)
      return e.linef("rt::batch_norm({}, {}, {}, {}, {}, {}, {}, {}, {}, {});", e.in(0), e.in(1), e.in(2), e.in(3),
                     e.in(4), eps, e.out(0), s[0], channels, inner);
    const std::string at = range_offset(inner);
    e.open_ranges(channels, tasks);
    e.linef("rt::batch_norm({}, {}, {}, {}, {}, {}, {}, 1, r_.end - r_.begin, {});", moved(e.in(0), at),
            moved(e.in(1), "r_.begin"), moved(e.in(2), "r_.begin"), moved(e.in(3), "r_.begin"),
            moved(e.in(4), "r_.begin"), eps, moved(e.out(0), at), inner);
    e.close_ranges();
    return;
  }
  std::string stats_type = dtype_ctype(n.inputs[3]->dtype);
  auto out_or_null = [&](std::size_t i) {
    return n.has_output(i) ? e.out(i) : fmt::format("static_cast<{}*>(nullptr)", stats_type);
  };
  e.linef("rt::batch_norm_training({}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {});", e.in(0), e.in(1), e.in(2),
          e.in(3), e.in(4), eps, float_literal(n.attr_float("momentum", 0.9f)), e.out(0), out_or_null(1),
          out_or_null(2), s[0], channels, inner);
}

const OpRegistrar batch_norm([] {
  OpDef d;
  d.op_type = "BatchNormalization";
  d.versions = {1, 6, 7, 9, 14, 15};
  d.infer = infer_batch_norm;
  d.emit = emit_batch_norm;
  d.inplace = true;
  return d;
}());

// ---------------------------------------------------------------------------------------
// InstanceNormalization and GroupNormalization: statistics per (batch, group of channels);
// InstanceNormalization is the case of one channel per group.

struct GroupGeometry {
  int64_t batch, groups, channels_per_group, spatial;
};

GroupGeometry group_geometry(const Node& n, int64_t groups) {
  const Shape& s = n.inputs[0]->shape;
  return {s[0], groups, s[1] / groups, trailing_numel(s, 2)};
}

void emit_group_norm(const Node& n, Emitter& e, const GroupGeometry& g, const std::string& stash, bool per_group) {
  e.include("onnxc/normalization.h");
  e.linef("rt::group_norm<{}>({}, {}, {}, {}, {}, {}, {}, {}, {}, {});", stash, e.in(0), e.in(1), e.in(2), e.out(0),
          g.batch, g.groups, g.channels_per_group, g.spatial, float_literal(n.attr_float("epsilon", 1e-5f)),
          per_group ? "true" : "false");
}

void infer_channel_norm_input(Node& n, bool with_bfloat16) {
  const Value& x = input(n, 0);
  require_dtype(n, 0, float_types(with_bfloat16));
  if (x.shape.size() < 3) fail_invalid(n, fmt::format("input rank {} is below 3 (N, C, D1, ...)", x.shape.size()));
  for (std::size_t i = 1; i < 3; ++i) require_same_dtype(n, i, 0);
  set_output(n, 0, x.dtype, x.shape);
}

void infer_instance_norm(Node& n) {
  check_arity(n, 3, 3, 1, 1);
  infer_channel_norm_input(n, n.version >= 22);
  int64_t c = n.inputs[0]->shape[1];
  require_input_shape(n, 1, {c}, "scale");
  require_input_shape(n, 2, {c}, "B");
}

const OpRegistrar instance_norm([] {
  OpDef d;
  d.op_type = "InstanceNormalization";
  d.versions = {1, 6, 22};
  d.infer = infer_instance_norm;
  d.emit = [](const Node& n, Emitter& e) {
    emit_group_norm(n, e, group_geometry(n, n.inputs[0]->shape[1]), stash_ctype(n, false), false);
  };
  d.inplace = true;
  return d;
}());

// GroupNormalization-18 has scale and bias per group; 21 fixed that to per channel (and added
// stash_type).
int64_t num_groups(const Node& n) {
  if (!n.has_attr("num_groups")) fail_invalid(n, "required attribute 'num_groups' is missing");
  return n.attr_int("num_groups", 0);
}

void infer_group_norm(Node& n) {
  check_arity(n, 3, 3, 1, 1);
  infer_channel_norm_input(n, true);
  int64_t c = n.inputs[0]->shape[1], groups = num_groups(n);
  if (groups <= 0 || c % groups != 0)
    fail_invalid(n, fmt::format("num_groups {} does not divide the {} channels", groups, c));
  Shape affine = {n.version < 21 ? groups : c};
  require_input_shape(n, 1, affine, "scale");
  require_input_shape(n, 2, affine, "bias");
  stash_ctype(n, n.version >= 21);
}

const OpRegistrar group_norm([] {
  OpDef d;
  d.op_type = "GroupNormalization";
  d.versions = {18, 21};
  d.infer = infer_group_norm;
  d.emit = [](const Node& n, Emitter& e) {
    emit_group_norm(n, e, group_geometry(n, num_groups(n)), stash_ctype(n, n.version >= 21), n.version < 21);
  };
  d.inplace = true;
  return d;
}());

// ---------------------------------------------------------------------------------------
// LayerNormalization and RMSNormalization: statistics over the dims from `axis` on, scale and
// bias broadcast over the normalised dims.

struct RowGeometry {
  std::size_t axis;
  int64_t outer, n;
};

RowGeometry row_geometry(const Node& n) {
  const Shape& s = n.inputs[0]->shape;
  int64_t r = static_cast<int64_t>(s.size());
  int64_t axis = n.attr_int("axis", -1);
  // axis = r is allowed: every element is then normalised on its own.
  if (axis < -r || axis > r)
    fail_invalid(n, fmt::format("axis {} is out of range for rank {}", axis, r), fmt::format("use a value in [{}, {}]", -r, r));
  auto a = static_cast<std::size_t>(axis < 0 ? axis + r : axis);
  return {a, shape_numel(Shape(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(a))), trailing_numel(s, a)};
}

// Number of values input i holds along the normalised dims: n, or 1 to broadcast. Other
// broadcasts (e.g. along some normalised dims only) are not supported.
int64_t affine_extent(const Node& n, std::size_t i, const char* what) {
  const Shape& x = n.inputs[0]->shape;
  const Shape& s = input(n, i).shape;
  RowGeometry g = row_geometry(n);
  Shape normalized(x.begin() + static_cast<std::ptrdiff_t>(g.axis), x.end());
  Shape trimmed = s;
  while (trimmed.size() > normalized.size() && trimmed.front() == 1) trimmed.erase(trimmed.begin());
  while (trimmed.size() < normalized.size()) trimmed.insert(trimmed.begin(), 1);
  if (trimmed == normalized) return g.n;
  if (shape_numel(s) == 1) return 1;
  fail_unsupported(n, fmt::format("{} has shape {}; onnxc needs the normalised shape {} or a single value", what,
                                  shape_str(s), shape_str(normalized)));
}

void infer_layer_norm(Node& n) {
  check_arity(n, 2, 3, 1, 3);
  const Value& x = input(n, 0);
  require_float(n, 0);
  for (std::size_t i = 1; i < 3; ++i)
    if (n.has_input(i)) require_same_dtype(n, i, 0);
  RowGeometry g = row_geometry(n);
  affine_extent(n, 1, "Scale");
  if (n.has_input(2)) affine_extent(n, 2, "B");
  stash_ctype(n, true);
  Shape stats = x.shape;
  for (std::size_t d = g.axis; d < stats.size(); ++d) stats[d] = 1;
  set_output(n, 0, x.dtype, x.shape);
  set_output(n, 1, DType::Float, stats);
  set_output(n, 2, DType::Float, stats);
}

const OpRegistrar layer_norm([] {
  OpDef d;
  d.op_type = "LayerNormalization";
  d.versions = {17};
  d.infer = infer_layer_norm;
  d.emit = [](const Node& n, Emitter& e) {
    e.include("onnxc/normalization.h");
    RowGeometry g = row_geometry(n);
    std::string stash = stash_ctype(n, true);
    auto out_or_null = [&](std::size_t i) {
      return n.has_output(i) ? e.out(i) : fmt::format("static_cast<{}*>(nullptr)", stash);
    };
    // Splits into ranges of rows (each row's values do not depend on the cut).
    const int64_t tasks = e.tasks(4 * n.outputs[0]->numel(), g.outer);
    e.open_ranges(g.outer, tasks);
    const std::string at = tasks > 1 ? range_offset(g.n) : "", row = tasks > 1 ? "r_.begin" : "";
    auto row_of = [&](const std::string& ptr, const std::string& offset) {
      return offset.empty() ? ptr : moved(ptr, offset);
    };
    auto stat_or_null = [&](std::size_t i) { return n.has_output(i) ? row_of(e.out(i), row) : out_or_null(i); };
    e.linef("rt::layer_norm<{}>({}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {});", stash, row_of(e.in(0), at), e.in(1),
            e.in_or_null(2, n.inputs[0]->dtype), row_of(e.out(0), at), stat_or_null(1), stat_or_null(2),
            tasks > 1 ? "r_.end - r_.begin" : std::to_string(g.outer), g.n, affine_extent(n, 1, "Scale"),
            n.has_input(2) ? affine_extent(n, 2, "B") : 0, float_literal(n.attr_float("epsilon", 1e-5f)));
    e.close_ranges();
  };
  d.inplace = true;
  return d;
}());

void infer_rms_norm(Node& n) {
  check_arity(n, 2, 2, 1, 1);
  const Value& x = input(n, 0);
  require_float(n, 0);
  require_same_dtype(n, 1, 0);
  row_geometry(n);
  affine_extent(n, 1, "scale");
  stash_ctype(n, true);
  set_output(n, 0, x.dtype, x.shape);
}

const OpRegistrar rms_norm([] {
  OpDef d;
  d.op_type = "RMSNormalization";
  d.versions = {23};
  d.infer = infer_rms_norm;
  d.emit = [](const Node& n, Emitter& e) {
    e.include("onnxc/normalization.h");
    RowGeometry g = row_geometry(n);
    e.linef("rt::rms_norm<{}>({}, {}, {}, {}, {}, {}, {});", stash_ctype(n, true), e.in(0), e.in(1), e.out(0), g.outer,
            g.n, affine_extent(n, 1, "scale"), float_literal(n.attr_float("epsilon", 1e-5f)));
  };
  d.inplace = true;
  return d;
}());

// ---------------------------------------------------------------------------------------
// MeanVarianceNormalization: (x - mean) / (sqrt(var) + 1e-9) over `axes` (default [0, 2, 3]).

std::vector<bool> mvn_axes(const Node& n) {
  int64_t rank = static_cast<int64_t>(n.inputs[0]->shape.size());
  return axes_mask(n, n.attr_ints("axes", {0, 2, 3}), rank);
}

void infer_mvn(Node& n) {
  check_arity(n, 1, 1, 1, 1);
  const Value& x = input(n, 0);
  require_dtype(n, 0, float_types(n.version >= 13));
  reduce_params(n, x.shape, mvn_axes(n));
  set_output(n, 0, x.dtype, x.shape);
}

const OpRegistrar mvn([] {
  OpDef d;
  d.op_type = "MeanVarianceNormalization";
  d.versions = {9, 13};
  d.infer = infer_mvn;
  d.emit = [](const Node& n, Emitter& e) {
    if (n.outputs[0]->numel() == 0) return;
    e.include("onnxc/normalization.h");
    e.linef("constexpr rt::ReduceParams p = {};", reduce_params_literal(reduce_params(n, n.inputs[0]->shape, mvn_axes(n))));
    e.linef("rt::mean_variance_norm(p, {}, {});", e.in(0), e.out(0));
  };
  d.inplace = true;
  return d;
}());

// ---------------------------------------------------------------------------------------
// LRN: each element divided by a power of the sum of squares over `size` neighbouring channels.

void infer_lrn(Node& n) {
  check_arity(n, 1, 1, 1, 1);
  const Value& x = input(n, 0);
  require_dtype(n, 0, float_types(n.version >= 13));
  if (x.shape.size() < 3) fail_invalid(n, fmt::format("input rank {} is below 3 (N, C, D1, ...)", x.shape.size()));
  if (!n.has_attr("size")) fail_invalid(n, "required attribute 'size' is missing");
  if (n.attr_int("size", 0) <= 0) fail_invalid(n, fmt::format("size {} must be positive", n.attr_int("size", 0)));
  set_output(n, 0, x.dtype, x.shape);
}

const OpRegistrar lrn([] {
  OpDef d;
  d.op_type = "LRN";
  d.versions = {1, 13};
  d.infer = infer_lrn;
  d.emit = [](const Node& n, Emitter& e) {
    e.include("onnxc/normalization.h");
    const Shape& s = n.inputs[0]->shape;
    e.linef("rt::lrn({}, {}, {}, {}, {}, {}, {}, {}, {});", e.in(0), e.out(0), s[0], s[1], trailing_numel(s, 2),
            n.attr_int("size", 0), float_literal(n.attr_float("alpha", 1e-4f)), float_literal(n.attr_float("beta", 0.75f)),
            float_literal(n.attr_float("bias", 1.0f)));
  };
  return d;
}());

}  // namespace
}  // namespace onnxc
