// MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool.
#include "onnxc/pool.h"
#include "ops/emitter.h"
#include "ops/spatial.h"

namespace onnxc {
namespace {

Window pool_window(const Node& n) {
  const Value& x = input(n, 0);
  if (!n.has_attr("kernel_shape")) fail_invalid(n, "required attribute 'kernel_shape' is missing");
  std::vector<int64_t> in(x.shape.begin() + 2, x.shape.end());
  return resolve_window(n, in, n.attr_ints("kernel_shape"), n.attr_int("ceil_mode", 0) != 0);
}

void infer_pool(Node& n) {
  bool is_max = n.op_type == "MaxPool";
  check_arity(n, 1, 1, 1, is_max ? 2 : 1);
  const Value& x = input(n, 0);
  require_float(n, 0);
  if (x.shape.size() < 3 || x.shape.size() > 5)
    fail_unsupported(n, fmt::format("input rank {} (onnxc supports 1 to 3 spatial dims)", x.shape.size()));
  if (n.op_type == "AveragePool" && n.version < 19 && n.has_attr("dilations"))
    fail_invalid(n, "AveragePool has no 'dilations' before version 19");
  Window w = pool_window(n);
  Shape out = {x.shape[0], x.shape[1]};
  out.insert(out.end(), w.out.begin(), w.out.end());
  set_output(n, 0, x.dtype, out);
  if (is_max) set_output(n, 1, DType::Int64, out);
  int64_t so = n.attr_int("storage_order", 0);
  if (so != 0 && so != 1) fail_invalid(n, "storage_order must be 0 or 1");
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

const OpRegistrar max_pool([] {
  OpDef d;
  d.op_type = "MaxPool";
  d.versions = {1, 8, 10, 11, 12, 22};
  d.infer = infer_pool;
  d.emit = [](const Node& n, Emitter& e) {
    e.include("onnxc/pool.h");
    e.linef("constexpr rt::PoolParams p = {};", pool_params(n));
    e.linef("rt::max_pool(p, {}, {}, {}, {});", e.in(0), e.out(0),
            n.has_output(1) ? e.out(1) : "static_cast<std::int64_t*>(nullptr)", n.attr_int("storage_order", 0));
  };
  return d;
}());

const OpRegistrar average_pool([] {
  OpDef d;
  d.op_type = "AveragePool";
  d.versions = {1, 7, 10, 11, 19, 22};
  d.infer = infer_pool;
  d.emit = [](const Node& n, Emitter& e) {
    e.include("onnxc/pool.h");
    e.linef("constexpr rt::PoolParams p = {};", pool_params(n));
    e.linef("rt::average_pool(p, {}, {});", e.in(0), e.out(0));
  };
  return d;
}());

void infer_global(Node& n) {
  check_arity(n, 1, 1, 1, 1);
  const Value& x = input(n, 0);
  require_float(n, 0);
  if (x.shape.size() < 3) fail_invalid(n, fmt::format("input rank {} is below 3", x.shape.size()));
  Shape out = x.shape;
  for (std::size_t i = 2; i < out.size(); ++i) out[i] = 1;
  set_output(n, 0, x.dtype, out);
}

OpDef global_pool(const char* name, const char* kernel) {
  OpDef d;
  d.op_type = name;
  d.versions = {1, 22};
  d.infer = infer_global;
  d.emit = [kernel](const Node& n, Emitter& e) {
    e.include("onnxc/pool.h");
    const Shape& s = n.inputs[0]->shape;
    int64_t planes = s[0] * s[1];
    e.linef("rt::{}({}, {}, {}, {});", kernel, planes, shape_numel(s) / std::max<int64_t>(planes, 1), e.in(0), e.out(0));
  };
  return d;
}

const OpRegistrar global_average_pool(global_pool("GlobalAveragePool", "global_average_pool"));
const OpRegistrar global_max_pool(global_pool("GlobalMaxPool", "global_max_pool"));

}  // namespace
}  // namespace onnxc
