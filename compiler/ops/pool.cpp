// MaxPool, AveragePool, LpPool and the global pools (GlobalAveragePool, GlobalMaxPool,
// GlobalLpPool); kernels in runtime-support/onnxc/pool.h.
#include "onnxc/pool.h"
#include "ops/emitter.h"
#include "ops/overlap.h"
#include "ops/spatial.h"

namespace onnxc {
namespace {

Window pool_window(const Node& n) {
  const Value& x = input(n, 0);
  if (!n.has_attr("kernel_shape")) fail_invalid(n, "required attribute 'kernel_shape' is missing");
  std::vector<int64_t> in(x.shape.begin() + 2, x.shape.end());
  return resolve_window(n, in, n.attr_ints("kernel_shape"), n.attr_int("ceil_mode", 0) != 0);
}

// The first version of each pool that has `attr`.
int first_version_with(const Node& n, const std::string& attr) {
  if (attr == "storage_order") return 8;
  if (n.op_type == "MaxPool") return 10;  // ceil_mode, dilations
  if (n.op_type == "AveragePool") return attr == "count_include_pad" ? 7 : attr == "ceil_mode" ? 10 : 19;
  return 18;  // LpPool: ceil_mode, dilations
}

void infer_pool(Node& n) {
  bool is_max = n.op_type == "MaxPool";
  check_arity(n, 1, 1, 1, is_max && n.version >= 8 ? 2 : 1);
  const Value& x = input(n, 0);
  if (is_max && n.version >= 12)
    require_dtype(n, 0, {DType::Float, DType::Double, DType::Float16, DType::BFloat16, DType::Int8, DType::Uint8});
  else
    require_float(n, 0);
  if (x.shape.size() < 3 || x.shape.size() > 5)
    fail_unsupported(n, fmt::format("input rank {} (onnxc supports 1 to 3 spatial dims)", x.shape.size()));
  for (const char* attr : {"storage_order", "ceil_mode", "dilations", "count_include_pad"})
    if (n.has_attr(attr) && n.version < first_version_with(n, attr))
      fail_invalid(n, fmt::format("{} has no '{}' before version {}", n.op_type, attr, first_version_with(n, attr)));
  int64_t so = n.attr_int("storage_order", 0);
  if (so != 0 && so != 1) fail_invalid(n, "storage_order must be 0 or 1");
  Window w = pool_window(n);
  Shape out = {x.shape[0], x.shape[1]};
  out.insert(out.end(), w.out.begin(), w.out.end());
  set_output(n, 0, x.dtype, out);
  if (is_max) set_output(n, 1, DType::Int64, out);
}

std::string pool_params(const Node& n) {
  const Value& x = *n.inputs[0];
  Window w = pool_window(n);
  auto in = to_3d(w.in, 1), out = to_3d(w.out, 1), k = to_3d(w.kernel, 1), s = to_3d(w.strides, 1),
       d = to_3d(w.dilations, 1), pb = to_3d(w.pad_begin, 0), pe = to_3d(w.pad_end, 0);
  auto three = [](const std::vector<int64_t>& v) { return fmt::format("{}, {}, {}", v[0], v[1], v[2]); };
  return params_literal("rt::PoolParams", {{"planes", fmt::format("{}", x.shape[0] * x.shape[1])},
                                           {"in_dhw", three(in)},
                                           {"out_dhw", three(out)},
                                           {"kernel_dhw", three(k)},
                                           {"stride_dhw", three(s)},
                                           {"dilation_dhw", three(d)},
                                           {"pad_dhw", three(pb)},
                                           {"pad_end_dhw", three(pe)},
                                           {"count_include_pad", n.attr_int("count_include_pad", 0) ? "true" : "false"}});
}

// LpPool's and GlobalLpPool's norm: a float attribute in version 1, an int since.
float lp_norm(const Node& n) {
  float norm = n.version == 1 ? n.attr_float("p", 2.0f) : static_cast<float>(n.attr_int("p", 2));
  if (!(norm > 0)) fail_invalid(n, fmt::format("p = {} must be positive", norm));
  return norm;
}

// Every pool kernel (pool.h: the general loops, the row kernels, whole planes, global means and
// maxima) walks the (N * C) planes in order, one at a time, and reads only the input plane of the
// output plane it writes (within a plane in any order).
int64_t pool_overlap_delta(const Node& n) {
  const Value& x = *n.inputs[0];
  const Value& y = *n.outputs[0];
  const int64_t planes = x.shape[0] * x.shape[1];
  if (planes == 0) return 0;
  return plane_walk_overlap_delta(planes, static_cast<int64_t>(x.byte_size()) / planes,
                                  static_cast<int64_t>(y.byte_size()) / planes, 1);
}

OpDef pool_op(const char* name, std::vector<int> versions, std::function<void(const Node&, Emitter&)> call) {
  OpDef d;
  d.op_type = name;
  d.versions = std::move(versions);
  d.infer = [](Node& n) {
    infer_pool(n);
    if (n.op_type == "LpPool") lp_norm(n);
  };
  d.emit = [call](const Node& n, Emitter& e) {
    e.include("onnxc/pool.h");
    e.linef("constexpr rt::PoolParams p = {};", pool_params(n));
    call(n, e);
  };
  // One comparison (or addition) per output element and kernel tap.
  d.macs = [](const Node& n) { return n.outputs[0]->numel() * shape_numel(pool_window(n).kernel); };
  d.overlap_delta = [](const Node& n) -> std::optional<int64_t> {
    if (n.has_output(1) || splits_into_tasks(n, n.outputs[0]->numel() * shape_numel(n.attr_ints("kernel_shape"))))
      return std::nullopt;  // MaxPool's indices; a split MaxPool's tasks run at once
    return pool_overlap_delta(n);
  };
  return d;
}

const OpRegistrar max_pool(pool_op("MaxPool", {1, 8, 10, 11, 12, 22}, [](const Node& n, Emitter& e) {
  const int64_t comparisons = n.outputs[0]->numel() * shape_numel(n.attr_ints("kernel_shape"));
  e.linef("rt::max_pool(p, {}, {}, {}, {}, {});", e.in(0), e.out(0),
          n.has_output(1) ? e.out(1) : "static_cast<std::int64_t*>(nullptr)", n.attr_int("storage_order", 0),
          e.parallel(comparisons));
}));

const OpRegistrar average_pool(pool_op("AveragePool", {1, 7, 10, 11, 19, 22}, [](const Node&, Emitter& e) {
  e.linef("rt::average_pool(p, {}, {});", e.in(0), e.out(0));
}));

const OpRegistrar lp_pool(pool_op("LpPool", {1, 2, 11, 18, 22}, [](const Node& n, Emitter& e) {
  e.linef("rt::lp_pool(p, {}, {}, {});", float_literal(lp_norm(n)), e.in(0), e.out(0));
}));

void infer_global(Node& n) {
  check_arity(n, 1, 1, 1, 1);
  const Value& x = input(n, 0);
  require_float(n, 0);
  if (x.shape.size() < 3) fail_invalid(n, fmt::format("input rank {} is below 3", x.shape.size()));
  if (n.op_type == "GlobalLpPool") lp_norm(n);
  Shape out = x.shape;
  for (std::size_t i = 2; i < out.size(); ++i) out[i] = 1;
  set_output(n, 0, x.dtype, out);
}

// Each global pool reduces every (batch, channel) plane to one value.
OpDef global_pool(const char* name, std::vector<int> versions, const char* kernel) {
  OpDef d;
  d.op_type = name;
  d.versions = std::move(versions);
  d.infer = infer_global;
  d.emit = [kernel](const Node& n, Emitter& e) {
    e.include("onnxc/pool.h");
    const Shape& s = n.inputs[0]->shape;
    const int64_t planes = s[0] * s[1], plane = shape_numel(s) / std::max<int64_t>(planes, 1);
    std::string norm = n.op_type == "GlobalLpPool" ? float_literal(lp_norm(n)) + ", " : "";
    // Splits into ranges of planes (each plane's value does not depend on the cut).
    const int64_t tasks = e.tasks(shape_numel(s), planes);
    if (tasks < 2) return e.linef("rt::{}({}, {}, {}{}, {});", kernel, planes, plane, norm, e.in(0), e.out(0));
    e.open_ranges(planes, tasks);
    e.linef("rt::{}(r_.end - r_.begin, {}, {}{}, {});", kernel, plane, norm, moved(e.in(0), range_offset(plane)),
            moved(e.out(0), "r_.begin"));
    e.close_ranges();
  };
  d.macs = [](const Node& n) { return n.inputs[0]->numel(); };
  d.overlap_delta = [](const Node& n) -> std::optional<int64_t> {
    const Shape& s = n.inputs[0]->shape;
    if (range_tasks(n, shape_numel(s), s[0] * s[1]) > 1) return std::nullopt;  // the emit's ranges
    return pool_overlap_delta(n);
  };
  return d;
}

const OpRegistrar global_average_pool(global_pool("GlobalAveragePool", {1, 22}, "global_average_pool"));
const OpRegistrar global_max_pool(global_pool("GlobalMaxPool", {1, 22}, "global_max_pool"));
const OpRegistrar global_lp_pool(global_pool("GlobalLpPool", {1, 2, 22}, "global_lp_pool"));

}  // namespace
}  // namespace onnxc
