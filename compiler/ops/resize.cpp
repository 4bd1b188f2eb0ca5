// Resize (versions 10, 11, 13, 18, 19) and its deprecated predecessor Upsample (7, 9).
//
// All the arithmetic of the ONNX definition (coordinate transformation, rounding, filter
// weights, antialiasing, edge handling) happens here, in double precision, once per axis and
// output coordinate; the generated code only applies the resulting tap tables
// (runtime-support/include/onnxc/resize.h).
#include <algorithm>
#include <cmath>

#include "onnxc/quant_resize.h"
#include "onnxc/resize.h"
#include "ops/emitter.h"
#include "ops/quant_common.h"
#include "ops/resize.h"

namespace onnxc {
namespace {

enum class Interp { Nearest, Linear, Cubic };

// Everything that decides the output: attributes, and the constant scales/sizes/roi inputs.
struct ResizeSpec {
  Interp mode = Interp::Nearest;
  std::string coord = "half_pixel";          // coordinate_transformation_mode
  std::string nearest = "round_prefer_floor";  // nearest_mode; "simple" for Resize-10/Upsample
  double cubic_a = -0.75;
  bool exclude_outside = false, antialias = false;
  float extrapolation = 0;
  Shape out;                             // output dims
  std::vector<double> scales;            // per input dim
  std::vector<double> roi_start, roi_end;  // per input dim, tf_crop_and_resize only
};

// The Resize version whose definition applies: onnxc.QLinearResize keeps it in its "opset".
int64_t resize_opset(const Node& n) { return n.domain == "onnxc" ? n.attr_int("opset", 19) : n.version; }
bool is_upsample(const Node& n) { return n.op_type == "Upsample"; }

Interp parse_mode(const Node& n) {
  std::string m = n.attr_string("mode", "nearest");
  if (m == "nearest") return Interp::Nearest;
  if (m == "linear") return Interp::Linear;
  if (m == "cubic" && !is_upsample(n) && resize_opset(n) >= 11) return Interp::Cubic;
  fail_invalid(n, fmt::format("mode '{}' is not one of nearest, linear{}", m,
                              !is_upsample(n) && resize_opset(n) >= 11 ? ", cubic" : ""));
}

void parse_attributes(const Node& n, ResizeSpec& s) {
  s.mode = parse_mode(n);
  if (is_upsample(n) || resize_opset(n) < 11) {
    // Resize-10 and Upsample: asymmetric coordinates; nearest floors when enlarging and
    // rounds up when shrinking (onnxruntime's reading of these versions).
    s.coord = "asymmetric";
    s.nearest = "simple";
    return;
  }
  s.coord = n.attr_string("coordinate_transformation_mode", "half_pixel");
  static const std::vector<std::string> coords = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                                  "tf_half_pixel_for_nn", "tf_crop_and_resize",
                                                  "half_pixel_symmetric"};
  if (std::find(coords.begin(), coords.end(), s.coord) == coords.end() ||
      (s.coord == "half_pixel_symmetric" && resize_opset(n) < 19))
    fail_invalid(n, fmt::format("coordinate_transformation_mode '{}' is not defined in version {}", s.coord,
                                resize_opset(n)));
  s.nearest = n.attr_string("nearest_mode", "round_prefer_floor");
  if (s.nearest != "round_prefer_floor" && s.nearest != "round_prefer_ceil" && s.nearest != "floor" &&
      s.nearest != "ceil")
    fail_invalid(n, fmt::format("nearest_mode '{}' is not round_prefer_floor, round_prefer_ceil, floor or ceil", s.nearest));
  s.cubic_a = n.attr_float("cubic_coeff_a", -0.75f);
  s.exclude_outside = n.attr_int("exclude_outside", 0) != 0;
  s.extrapolation = n.attr_float("extrapolation_value", 0.f);
  if (resize_opset(n) < 18 && (n.has_attr("antialias") || n.has_attr("axes") || n.has_attr("keep_aspect_ratio_policy")))
    fail_invalid(n, "'antialias', 'axes' and 'keep_aspect_ratio_policy' exist from version 18 on");
  s.antialias = n.attr_int("antialias", 0) != 0;
  if (s.antialias && s.mode == Interp::Nearest) fail_invalid(n, "antialias applies to linear and cubic modes only");
}

// A constant float/int input as doubles; empty when omitted or empty (meaning "not given").
std::vector<double> optional_const(const Node& n, std::size_t i, const char* what) {
  if (!n.has_input(i) || input(n, i).numel() == 0) return {};
  const Tensor& t = require_const_input(n, i, what);
  std::vector<double> v;
  for (int64_t j = 0; j < t.numel(); ++j) v.push_back(t.float_at(j));
  return v;
}

// Spreads per-axis values given for `axes` over all `rank` dims, `fill` elsewhere.
std::vector<double> spread(const Node& n, const std::vector<double>& given, const std::vector<int64_t>& axes,
                           std::size_t rank, double fill, const char* what) {
  if (given.size() != axes.size())
    fail_invalid(n, fmt::format("'{}' has {} entries; expected {}", what, given.size(), axes.size()));
  std::vector<double> all(rank, fill);
  for (std::size_t j = 0; j < axes.size(); ++j) all[static_cast<std::size_t>(axes[j])] = given[j];
  return all;
}

void parse_sizes(const Node& n, ResizeSpec& s) {
  const Shape& x = input(n, 0).shape;
  const std::size_t rank = x.size();
  std::vector<int64_t> axes;
  for (int64_t a : n.attr_ints("axes")) axes.push_back(normalize_axis(n, a, static_cast<int64_t>(rank), "axes entry"));
  if (!n.has_attr("axes"))
    for (std::size_t d = 0; d < rank; ++d) axes.push_back(static_cast<int64_t>(d));

  // Where the scales live: attribute (Upsample-7), input 1 (Resize-10, Upsample-9), input 2 (11 on).
  std::vector<double> scales, sizes, roi;
  if (n.op_type == "Upsample" && n.version < 9) {
    for (float f : n.attr_floats("scales")) scales.push_back(f);
  } else if (is_upsample(n) || resize_opset(n) < 11) {
    scales = optional_const(n, 1, "scales");
  } else {
    roi = optional_const(n, 1, "roi");
    scales = optional_const(n, 2, "scales");
    sizes = optional_const(n, 3, "sizes");
  }
  if (n.op_type == "Upsample" && scales.empty()) fail_invalid(n, "'scales' is required");
  if (scales.empty() == sizes.empty()) fail_invalid(n, "give exactly one of 'scales' and 'sizes'");

  for (double r : roi)
    if (!std::isfinite(r)) fail_invalid(n, fmt::format("'roi' has a non-finite entry {}", r));
  s.roi_start.assign(rank, 0.0);
  s.roi_end.assign(rank, 1.0);
  if (s.coord == "tf_crop_and_resize") {
    if (roi.size() != 2 * axes.size())
      fail_invalid(n, fmt::format("tf_crop_and_resize needs 'roi' with {} entries; it has {}", 2 * axes.size(), roi.size()));
    s.roi_start = spread(n, std::vector<double>(roi.begin(), roi.begin() + static_cast<std::ptrdiff_t>(axes.size())), axes, rank, 0.0, "roi");
    s.roi_end = spread(n, std::vector<double>(roi.begin() + static_cast<std::ptrdiff_t>(axes.size()), roi.end()), axes, rank, 1.0, "roi");
  }

  if (!scales.empty()) {
    s.scales = spread(n, scales, axes, rank, 1.0, "scales");
    for (std::size_t d = 0; d < rank; ++d) {
      if (s.scales[d] <= 0) fail_invalid(n, fmt::format("scale {} for dim {} is not positive", s.scales[d], d));
      s.out.push_back(dim_from_double(
          n, std::floor(static_cast<double>(x[d]) * (s.roi_end[d] - s.roi_start[d]) * s.scales[d]),
          fmt::format("output dim {}", d)));
    }
    return;
  }
  std::vector<double> full = spread(n, sizes, axes, rank, 0.0, "sizes");
  for (std::size_t d = 0; d < rank; ++d)
    if (std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) == axes.end()) full[d] = static_cast<double>(x[d]);
  s.scales.assign(rank, 1.0);
  s.out.assign(x.begin(), x.end());
  const std::string policy = n.attr_string("keep_aspect_ratio_policy", "stretch");
  if (policy == "stretch") {
    for (std::size_t d = 0; d < rank; ++d) {
      s.out[d] = dim_from_double(n, full[d], fmt::format("output dim {}", d));
      s.scales[d] = x[d] ? full[d] / static_cast<double>(x[d]) : 1.0;
    }
    return;
  }
  if (policy != "not_larger" && policy != "not_smaller")
    fail_invalid(n, fmt::format("keep_aspect_ratio_policy '{}' is not stretch, not_larger or not_smaller", policy));
  // One scale for all resized axes: the smallest (fits inside sizes) or the largest.
  double scale = policy == "not_larger" ? 1e300 : 0;
  for (int64_t a : axes) {
    const std::size_t d = static_cast<std::size_t>(a);
    const double r = full[d] / static_cast<double>(x[d]);
    scale = policy == "not_larger" ? std::min(scale, r) : std::max(scale, r);
  }
  for (int64_t a : axes) {
    const std::size_t d = static_cast<std::size_t>(a);
    s.scales[d] = scale;
    s.out[d] = dim_from_double(n, scale * static_cast<double>(x[d]) + 0.5, fmt::format("output dim {}", d));  // round half up
  }
}

ResizeSpec resize_spec(const Node& n) {
  ResizeSpec s;
  parse_attributes(n, s);
  parse_sizes(n, s);
  return s;
}

// ---- per-axis tap tables ----

struct Tap {
  int64_t index;  // input coordinate (already clamped into the axis), or -1: outside
  double weight;
};

// The input coordinate output coordinate `o` maps to, per coordinate_transformation_mode.
// length_resized is in * scale, unrounded, as the ONNX reference computes it and the backend
// tests expect (test_resize_downsample_scales_{linear,cubic}_align_corners; onnx/onnx#2462 calls it
// intended). ONNX Runtime, like PyTorch, puts the output's (floored) length there instead, so
// align_corners, pytorch_half_pixel and tf_crop_and_resize with `scales` whose in * scale is not
// an integer differ from ORT (the sweep's resize_linear_align_corners_n1_c64_7x7_x1.5: 7 -> 10,
// 10.5 here, 10 in ORT, outputs up to 1.65 apart); with `sizes` the two agree.
double source_coordinate(const ResizeSpec& s, std::size_t d, int64_t in, int64_t out, int64_t o) {
  const double x = static_cast<double>(o), scale = s.scales[d], n = static_cast<double>(in);
  const double resized = scale * n;
  if (s.coord == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (s.coord == "half_pixel_symmetric") {
    const double offset = n / 2 * (1 - static_cast<double>(out) / resized);
    return offset + (x + 0.5) / scale - 0.5;
  }
  if (s.coord == "pytorch_half_pixel") return resized > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (s.coord == "align_corners") return resized == 1 ? 0.0 : x * (n - 1) / (resized - 1);
  if (s.coord == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  if (s.coord == "tf_crop_and_resize") {
    const double start = s.roi_start[d], end = s.roi_end[d];
    if (resized == 1) return (end - start) * (n - 1) / 2 + start * (n - 1);
    return x * (end - start) * (n - 1) / (resized - 1) + start * (n - 1);
  }
  return x / scale;  // asymmetric
}

int64_t nearest_index(const ResizeSpec& s, double c, double scale) {
  double r;
  if (s.nearest == "simple") r = scale < 1 ? std::ceil(c) : std::floor(c);
  else if (s.nearest == "round_prefer_ceil") r = std::floor(c + 0.5);
  else if (s.nearest == "floor") r = std::floor(c);
  else if (s.nearest == "ceil") r = std::ceil(c);
  else r = std::ceil(c - 0.5);  // round_prefer_floor
  return static_cast<int64_t>(r);
}

// Keys' cubic convolution kernel with coefficient a.
double cubic_kernel(double t, double a) {
  t = std::fabs(t);
  if (t <= 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
  if (t < 2) return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
  return 0;
}

// The taps of one output coordinate. For linear and cubic, the ONNX definition anchors the
// filter at base = ceil(c) - 1 with ratio = c - base in (0, 1]; with antialiasing the filter
// is stretched by 1/scale when shrinking. Taps past the edges repeat the edge element, or
// get weight 0 with exclude_outside (then the weights are renormalised).
std::vector<Tap> coordinate_taps(const ResizeSpec& s, double c, int64_t in, double scale) {
  // A coordinate far past the axis (a large roi) takes the same taps as one 2^40 past it; the
  // clamp keeps the conversions below defined.
  c = std::clamp(c, -0x1p40, 0x1p40);
  auto clamp = [&](int64_t i) { return std::clamp<int64_t>(i, 0, in - 1); };
  if (s.mode == Interp::Nearest) return {{clamp(nearest_index(s, c, scale)), 1.0}};
  const double base = std::ceil(c) - 1, ratio = c - base;
  const double stretch = s.antialias ? std::min(scale, 1.0) : 1.0;
  const double support = s.mode == Interp::Linear ? 1.0 : 2.0;
  const int64_t first = static_cast<int64_t>(std::floor(-support / stretch)) + 1, last = 1 - first;
  std::vector<Tap> taps;
  double sum = 0;
  for (int64_t i = first; i <= last; ++i) {
    const double t = (static_cast<double>(i) - ratio) * stretch;
    double w = s.mode == Interp::Linear ? std::max(0.0, 1 - std::fabs(t)) : cubic_kernel(t, s.cubic_a);
    const int64_t at = static_cast<int64_t>(base) + i;
    if (s.exclude_outside && (at < 0 || at >= in)) w = 0;
    taps.push_back({clamp(at), w});
    sum += w;
  }
  if ((s.antialias || s.exclude_outside) && sum != 0)
    for (Tap& t : taps) t.weight /= sum;
  return taps;
}

// One axis's table: `taps` entries per output coordinate, zero-weight taps dropped (so an
// axis that is only copied costs one tap).
struct AxisTable {
  int64_t taps = 1;
  std::vector<int64_t> src;     // element offsets, -1 outside
  std::vector<float> weight;
};

AxisTable axis_table(const ResizeSpec& s, std::size_t d, int64_t in, int64_t out, int64_t stride) {
  std::vector<std::vector<Tap>> per_coord;
  std::size_t width = 1;
  for (int64_t o = 0; o < out; ++o) {
    const double c = source_coordinate(s, d, in, out, o);
    std::vector<Tap> taps;
    if (s.coord == "tf_crop_and_resize" && (c < 0 || c > static_cast<double>(in - 1))) {
      taps.push_back({-1, 0.0});
    } else {
      for (const Tap& t : coordinate_taps(s, c, in, s.scales[d]))
        if (t.weight != 0 || s.mode == Interp::Nearest) taps.push_back(t);
      if (taps.empty()) taps.push_back({0, 0.0});
    }
    width = std::max(width, taps.size());
    per_coord.push_back(std::move(taps));
  }
  AxisTable t;
  t.taps = static_cast<int64_t>(width);
  for (auto& taps : per_coord) {
    taps.resize(width, Tap{taps[0].index, 0.0});  // pad with weight-0 copies of a valid tap
    for (const Tap& tap : taps) {
      t.src.push_back(tap.index < 0 ? -1 : tap.index * stride);
      t.weight.push_back(static_cast<float>(tap.weight));
    }
  }
  return t;
}

struct ResizeTables {
  std::vector<int64_t> taps, start, src;
  std::vector<float> weight;
};

// Output coordinates per axis up to which the per-axis tables (constant data of the generated
// code, a few taps per coordinate) are built; a longer axis is refused rather than written out.
constexpr int64_t kMaxResizeAxisLength = int64_t{1} << 20;

ResizeTables resize_tables(const Node& n, const ResizeSpec& s) {
  const Shape& x = input(n, 0).shape;
  std::vector<int64_t> strides = contiguous_strides(x);
  ResizeTables r;
  for (std::size_t d = 0; d < x.size(); ++d) {
    AxisTable t = axis_table(s, d, x[d], s.out[d], strides[d]);
    r.taps.push_back(t.taps);
    r.start.push_back(static_cast<int64_t>(r.src.size()));
    r.src.insert(r.src.end(), t.src.begin(), t.src.end());
    r.weight.insert(r.weight.end(), t.weight.begin(), t.weight.end());
  }
  return r;
}

// ---- the operators ----

// Linear and cubic take rt::resize_interpolate_rows (resampled rows kept in scratch) up to this
// much scratch (a row of the output's width per vertical tap: 2 for bilinear); past it, the
// per-element rt::resize_interpolate without scratch.
constexpr int64_t kMaxResizeRowsScratch = int64_t{1} << 20;

// The tasks rt::resize_interpolate_rows cuts the output rows into (range_tasks: one per task's
// share of its work, a multiply-add per tap of every output element, or of the bytes it streams;
// lraspp_mobilenet_v3's last Resize, 21 x 28 x 28 -> 224 x 224 bilinear, took 10 % of the
// model's one-thread time on one thread).
int64_t resize_rows_tasks(const Node& n, const ResizeTables& t) {
  const Value& y = *n.outputs[0];
  int64_t taps = 1;
  for (int64_t k : t.taps) taps *= k;
  return range_tasks(n, y.numel() * taps, y.shape.empty() ? 1 : y.numel() / y.shape.back());
}

// Scratch bytes of rt::resize_interpolate_rows (a slot per task), 0 for nearest or past
// kMaxResizeRowsScratch.
int64_t rows_scratch_bytes(const Node& n, const ResizeSpec& s, const ResizeTables& t) {
  const Value& y = *n.outputs[0];
  if (s.mode == Interp::Nearest || y.numel() == 0) return 0;
  std::vector<rt::index_t> shape(y.shape.begin(), y.shape.end()), taps(t.taps.begin(), t.taps.end());
  int64_t bytes = 0;
  dispatch_dtype(n, y.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    bytes = rt::resize_rows_slot_bytes<T>(static_cast<int>(shape.size()), shape.data(), taps.data());
  });
  return bytes <= kMaxResizeRowsScratch ? bytes * resize_rows_tasks(n, t) : 0;
}

std::size_t resize_scratch_bytes(const Node& n) {
  const Value& y = *n.outputs[0];
  if (parse_mode(n) == Interp::Nearest || y.numel() == 0) return 0;
  ResizeSpec s = resize_spec(n);
  return static_cast<std::size_t>(rows_scratch_bytes(n, s, resize_tables(n, s)));
}

void infer_resize(Node& n) {
  if (n.op_type == "Upsample") check_arity(n, 1, n.version < 9 ? 1 : 2, 1, 1);
  else check_arity(n, n.version < 11 ? 2 : (n.version < 13 ? 3 : 1), n.version < 11 ? 2 : 4, 1, 1);
  const Value& x = input(n, 0);
  if (x.shape.empty() || x.shape.size() > static_cast<std::size_t>(rt::kMaxResizeRank))
    fail_unsupported(n, fmt::format("input rank {} (onnxc resizes ranks 1 to {})", x.shape.size(), rt::kMaxResizeRank));
  if (x.dtype == DType::Bool || x.dtype == DType::String || dtype_size(x.dtype) == 0)
    fail_unsupported(n, fmt::format("element type {}", dtype_name(x.dtype)));
  ResizeSpec s = resize_spec(n);
  for (std::size_t d = 0; d < x.shape.size(); ++d) {
    if (x.shape[d] == 0 && s.out[d] > 0) fail_invalid(n, fmt::format("cannot resize empty dim {} to {}", d, s.out[d]));
    if (s.out[d] > kMaxResizeAxisLength)
      fail_unsupported(n, fmt::format("output dim {} has {} elements; onnxc writes a table of source taps per "
                                      "output coordinate and takes axes of at most {}",
                                      d, s.out[d], kMaxResizeAxisLength),
                       "check the scales or sizes input (a value this large is usually a mistake)");
  }
  set_output(n, 0, x.dtype, s.out);
}

std::string float_list(const std::vector<float>& v) {
  std::vector<std::string> s;
  for (float f : v) s.push_back(float_literal(f));
  return fmt::format("{}", fmt::join(s, ", "));
}

void emit_resize(const Node& n, Emitter& e) {
  const Value& y = *n.outputs[0];
  if (y.numel() == 0) return;
  ResizeSpec s = resize_spec(n);
  ResizeTables t = resize_tables(n, s);
  const std::string extrapolation = fmt::format("rt::store<{}>({})", ctype_of(y),
                                                dtype_is_float(y.dtype) ? float_literal(s.extrapolation)
                                                                        : fmt::format("{}", static_cast<int64_t>(s.extrapolation)));
  e.include("onnxc/resize.h");
  e.index_array("out_shape", y.shape);
  e.index_array("table_start", t.start);
  e.linef("static constexpr rt::index_t src[] = {{{}}};", fmt::join(t.src, ", "));
  if (s.mode == Interp::Nearest) {
    e.linef("rt::resize_nearest({}, {}, {}, out_shape, table_start, src, {});", e.in(0), e.out(0), y.shape.size(),
            extrapolation);
    return;
  }
  e.index_array("taps", t.taps);
  e.linef("static constexpr float weight[] = {{{}}};", float_list(t.weight));
  if (rows_scratch_bytes(n, s, t) > 0) {
    const int64_t tasks = resize_rows_tasks(n, t);
    e.linef("rt::resize_interpolate_rows({}, {}, {}, out_shape, taps, table_start, src, weight, {}, {}{});", e.in(0),
            e.out(0), y.shape.size(), extrapolation, e.scratch(),
            tasks > 1 ? fmt::format(", parallel, {}", tasks) : "");
    return;
  }
  e.linef("rt::resize_interpolate({}, {}, {}, out_shape, taps, table_start, src, weight, {});", e.in(0), e.out(0),
          y.shape.size(), extrapolation);
}

void fold_resize(const Node& n, std::vector<Tensor>& outs) {
  const Value& y = *n.outputs[0];
  outs.emplace_back(y.dtype, y.shape);
  if (y.numel() == 0) return;
  ResizeSpec s = resize_spec(n);
  ResizeTables t = resize_tables(n, s);
  std::vector<rt::index_t> shape(y.shape.begin(), y.shape.end()), start(t.start.begin(), t.start.end()),
      src(t.src.begin(), t.src.end()), taps(t.taps.begin(), t.taps.end());
  dispatch_dtype(n, y.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T extrapolation = rt::store<T>(static_cast<rt::compute_t<T>>(s.extrapolation));
    const T* x = n.inputs[0]->constant->data<T>();
    if (s.mode == Interp::Nearest) {
      rt::resize_nearest(x, outs[0].data<T>(), static_cast<int>(shape.size()), shape.data(), start.data(), src.data(),
                         extrapolation);
    } else {
      rt::resize_interpolate(x, outs[0].data<T>(), static_cast<int>(shape.size()), shape.data(), taps.data(),
                             start.data(), src.data(), t.weight.data(), extrapolation);
    }
  });
}

// Per output element one read (nearest) or one multiply-add per tap: 2 (linear) or 4 (cubic)
// per resized dim. Resize, Upsample and onnxc.QLinearResize.
int64_t resize_macs(const Node& n) {
  const Value& x = *n.inputs[0];
  const Value& y = *n.outputs[0];
  const Interp mode = parse_mode(n);
  int64_t taps = 1;
  for (std::size_t i = 0; i < y.shape.size() && i < x.shape.size() && mode != Interp::Nearest; ++i)
    if (x.shape[i] != y.shape[i]) taps *= mode == Interp::Linear ? 2 : 4;
  return y.numel() * taps;
}

OpDef resize_op(const char* name, std::vector<int> versions) {
  OpDef d;
  d.op_type = name;
  d.versions = std::move(versions);
  d.infer = infer_resize;
  d.emit = emit_resize;
  d.fold = fold_resize;
  d.scratch_bytes = resize_scratch_bytes;
  d.macs = resize_macs;
  return d;
}

const OpRegistrar resize(resize_op("Resize", {10, 11, 13, 18, 19}));
const OpRegistrar upsample(resize_op("Upsample", {7, 9}));

// ---- onnxc.QLinearResize ----
//
// onnxc.QLinearResize(x, roi, scales, sizes, x_scale, x_zero_point, y_scale, y_zero_point), domain
// onnxc, version 1: Q(Resize(DQ(x))) for linear and cubic modes, attributes those of the Resize
// (version "opset"), lower-qdq's form of DequantizeLinear -> Resize -> QuantizeLinear. The same tap
// tables, each axis's weights of a coordinate rounded to integers of `bits` fractional bits that
// sum to 2^bits as the float weights sum to 1; the kernel (onnxc/quant_resize.h) blends in int32
// and requantizes once. The float definition rounds its own sums; the integer one is within a step
// of it: the weights' rounding moves a result by at most half a step (checked here) and exactly
// where the weights are dyadic (scales of 2, 4, 8 with half_pixel or asymmetric coordinates).

struct FixedResizeWeights {
  std::vector<int32_t> weight;  // as the tables' float weights, scaled by 2^bits of their axis
  int shift = 0;                // the bits of every axis together: the accumulator's scale
  std::string refusal;          // why no integer form, empty when there is one
};

// Fractional bits of an axis's weights with two interpolated axes (one alone takes twice as
// many): the most that keep the kernel's int32 sums in range, fewer for cubic's larger weights.
constexpr int kResizeWeightBits = 11, kResizeWeightBitsFewest = 6;

// The weights of `bits` fractional bits per interpolated axis; refusal set when they overflow or
// move a result by more than half a step.
FixedResizeWeights fixed_resize_weights(const ResizeTables& t, const Shape& out, double scale_ratio, int bits_per_axis) {
  FixedResizeWeights f;
  const std::size_t rank = out.size();
  double magnitude = 255, error = 0;  // the largest |acc| and the weights' rounding, in input steps
  f.weight.resize(t.weight.size());
  for (std::size_t d = 0; d < rank; ++d) {
    const int bits = t.taps[d] == 1 ? 0 : bits_per_axis;
    f.shift += bits;
    const double one = std::ldexp(1.0, bits);
    double axis_magnitude = 0, axis_error = 0;
    for (int64_t o = 0; o < out[d]; ++o) {
      const std::size_t first = static_cast<std::size_t>(t.start[d] + o * t.taps[d]);
      const std::size_t end = first + static_cast<std::size_t>(t.taps[d]);
      double sum = 0;
      int64_t fixed_sum = 0;
      std::size_t largest = first;
      for (std::size_t i = first; i < end; ++i) {
        const double w = t.weight[i];
        f.weight[i] = static_cast<int32_t>(std::nearbyint(w * one));
        sum += w;
        fixed_sum += f.weight[i];
        if (std::fabs(w) > std::fabs(t.weight[largest])) largest = i;
      }
      // The integers sum as the weights do (to 2^bits), the difference on the largest weight.
      f.weight[largest] += static_cast<int32_t>(static_cast<int64_t>(std::nearbyint(sum * one)) - fixed_sum);
      double coord_magnitude = 0, coord_error = 0;
      for (std::size_t i = first; i < end; ++i) {
        coord_magnitude += std::fabs(f.weight[i]) / one;
        coord_error += std::fabs(f.weight[i] / one - t.weight[i]);
      }
      axis_magnitude = std::max(axis_magnitude, coord_magnitude);
      axis_error = std::max(axis_error, coord_error);
    }
    // The integers keep the weights' sum, so their rounding errors weigh the values' spread about
    // a common centre: at most half of the largest magnitude.
    error = error * axis_magnitude + axis_error * magnitude / 2;
    magnitude *= axis_magnitude;
  }
  // The sums of raw 8-bit values, and those less x_zero_point 2^shift.
  if ((magnitude + 255) * std::ldexp(1.0, f.shift) >= 2147483647.0)
    f.refusal = "its weights' magnitudes would overflow the integer kernel's int32 sums";
  else if (error * scale_ratio > 0.5)
    f.refusal = fmt::format("its weights in fixed point would move a result by up to {:.2f} steps (at most 0.5 "
                            "keeps it within a step of the float definition)",
                            error * scale_ratio);
  return f;
}

FixedResizeWeights fixed_resize_weights(const ResizeTables& t, const Shape& out, double scale_ratio) {
  const std::size_t rank = out.size();
  int interpolated = 0;
  for (std::size_t d = 0; d < rank; ++d)
    if (t.taps[d] > 1) {
      if (d + 2 < rank) {
        FixedResizeWeights f;
        f.refusal = fmt::format("it blends along axis {}; the integer kernel blends along the last two axes only", d);
        return f;
      }
      ++interpolated;
    }
  const int scale = interpolated == 2 ? 1 : 2;
  FixedResizeWeights f;
  for (int bits = kResizeWeightBits; bits >= kResizeWeightBitsFewest; --bits) {
    f = fixed_resize_weights(t, out, scale_ratio, bits * scale);
    if (f.refusal.empty()) break;
  }
  return f;
}

// Output rows blend this many input rows: the second-to-last axis's taps (1 for rank 1).
int64_t vertical_taps(const ResizeTables& t) { return t.taps.size() >= 2 ? t.taps[t.taps.size() - 2] : 1; }

const Tensor& qresize_param(const Node& n, std::size_t i, const char* what) {
  require_per_tensor(n, i, what);
  return require_const_input(n, i, what);
}

float qresize_scale_ratio(const Node& n) {
  return qresize_param(n, 4, "x_scale").data<float>()[0] / qresize_param(n, 6, "y_scale").data<float>()[0];
}

void infer_qlinear_resize(Node& n) {
  check_arity(n, 1, 8, 1, 1);
  for (std::size_t i : {std::size_t{0}, std::size_t{4}, std::size_t{5}, std::size_t{6}, std::size_t{7}})
    input(n, i);  // required; roi, scales and sizes (1 to 3) are optional as in Resize
  require_dtype(n, 0, {DType::Uint8, DType::Int8});
  require_dtype(n, 4, {DType::Float});
  require_dtype(n, 6, {DType::Float});
  require_same_dtype(n, 5, 0);
  require_same_dtype(n, 7, 0);
  const Value& x = input(n, 0);
  if (x.shape.empty() || x.shape.size() > static_cast<std::size_t>(rt::kMaxQuantResizeRank))
    fail_unsupported(n, fmt::format("input rank {} (onnxc resizes 8-bit ranks 1 to {})", x.shape.size(),
                                    rt::kMaxQuantResizeRank));
  for (std::size_t i : {std::size_t{5}, std::size_t{7}}) qresize_param(n, i, i == 5 ? "x_zero_point" : "y_zero_point");
  ResizeSpec s = resize_spec(n);
  if (s.mode == Interp::Nearest) fail_invalid(n, "QLinearResize blends (linear or cubic); a nearest Resize moves 8-bit values");
  set_output(n, 0, x.dtype, s.out);
  const FixedResizeWeights f = fixed_resize_weights(resize_tables(n, s), s.out, qresize_scale_ratio(n));
  if (!f.refusal.empty()) fail_unsupported(n, f.refusal, "keep this Resize in float (--disable-pass lower-qdq)");
}

std::size_t qlinear_resize_scratch_bytes(const Node& n) {
  const Value& y = *n.outputs[0];
  if (y.numel() == 0) return 0;
  ResizeSpec s = resize_spec(n);
  const ResizeTables t = resize_tables(n, s);
  const int64_t taps_h = vertical_taps(t), out_w = y.shape.back();
  return static_cast<std::size_t>(rt::qresize_scratch_bytes(taps_h, out_w));
}

void emit_qlinear_resize(const Node& n, Emitter& e) {
  const Value& y = *n.outputs[0];
  if (y.numel() == 0) return;
  ResizeSpec s = resize_spec(n);
  const ResizeTables t = resize_tables(n, s);
  const FixedResizeWeights f = fixed_resize_weights(t, s.out, qresize_scale_ratio(n));
  const float x_scale = n.inputs[4]->constant->data<float>()[0], y_scale = n.inputs[6]->constant->data<float>()[0];
  const int64_t x_zero_point = n.inputs[5]->constant->int_at(0), y_zero_point = n.inputs[7]->constant->int_at(0);
  // Equal scales: the exact integer rounding of acc / 2^shift; else the multiplier in float.
  const float multiplier =
      x_scale == y_scale ? 0.0f : static_cast<float>(static_cast<double>(x_scale) / y_scale * std::ldexp(1.0, -f.shift));
  const int64_t lowest = y.dtype == DType::Int8 ? -128 : 0;
  const double extrapolated = std::nearbyint(static_cast<double>(s.extrapolation) / y_scale) + static_cast<double>(y_zero_point);
  const int64_t extrapolation = std::clamp<int64_t>(static_cast<int64_t>(extrapolated), lowest, lowest + 255);
  e.include("onnxc/quant_resize.h");
  e.index_array("out_shape", y.shape);
  e.index_array("taps", t.taps);
  e.index_array("table_start", t.start);
  e.linef("static constexpr rt::index_t src[] = {{{}}};", fmt::join(t.src, ", "));
  e.linef("static constexpr std::int32_t weight[] = {{{}}};", fmt::join(f.weight, ", "));
  e.linef("rt::qresize_interpolate({}, {}, {}, out_shape, taps, table_start, src, weight, {}, {}, {}, {}, {}({}), {});",
          e.in(0), e.out(0), y.shape.size(), f.shift, x_zero_point, float_literal(multiplier), y_zero_point, ctype_of(y),
          extrapolation, e.scratch());
}

OpDef qlinear_resize() {
  OpDef d;
  d.domain = "onnxc";
  d.op_type = "QLinearResize";
  d.versions = {1};
  d.infer = infer_qlinear_resize;
  d.emit = emit_qlinear_resize;
  d.scratch_bytes = qlinear_resize_scratch_bytes;
  d.macs = resize_macs;
  return d;
}
const OpRegistrar qlinear_resize_op(qlinear_resize());

}  // namespace

std::string integer_resize_refusal(const Node& resize, double scale_ratio) {
  if (!is_upsample(resize) && resize.version < 11)
    return "Resize before version 11 and Upsample have no integer form in onnxc (their linear mode as Resize-11 "
           "would have one)";
  if (is_upsample(resize)) return "Upsample has no integer form in onnxc (Resize-11 or later, linear, would have one)";
  if (resize.inputs[0]->shape.empty() || resize.inputs[0]->shape.size() > static_cast<std::size_t>(rt::kMaxQuantResizeRank))
    return "its rank is outside 1 to 8";
  ResizeSpec s = resize_spec(resize);
  if (s.mode == Interp::Nearest) return "";
  return fixed_resize_weights(resize_tables(resize, s), s.out, scale_ratio).refusal;
}

}  // namespace onnxc
