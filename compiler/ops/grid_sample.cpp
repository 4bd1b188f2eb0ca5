// GridSample: samples X at the positions a grid gives, in 2 (version 16+) or 3 (version 20+)
// spatial dims, with nearest, (bi/tri)linear or bicubic interpolation and zeros, border or
// reflection padding.
#include "onnxc/grid_sample.h"
#include "ops/emitter.h"

namespace onnxc {
namespace {

rt::GridSampleMode grid_sample_mode(const Node& n) {
  // Version 20 renamed bilinear and bicubic to linear and cubic (they now cover 3-D too).
  const bool v16 = n.version < 20;
  std::string mode = n.attr_string("mode", v16 ? "bilinear" : "linear");
  if (mode == (v16 ? "bilinear" : "linear")) return rt::GridSampleMode::Linear;
  if (mode == "nearest") return rt::GridSampleMode::Nearest;
  if (mode == (v16 ? "bicubic" : "cubic")) return rt::GridSampleMode::Cubic;
  fail_invalid(n, fmt::format("mode '{}' is not one of {} in version {}", mode,
                              v16 ? "bilinear, nearest, bicubic" : "linear, nearest, cubic", n.version));
}

rt::GridSamplePadding grid_sample_padding(const Node& n) {
  std::string padding = n.attr_string("padding_mode", "zeros");
  if (padding == "zeros") return rt::GridSamplePadding::Zeros;
  if (padding == "border") return rt::GridSamplePadding::Border;
  if (padding == "reflection") return rt::GridSamplePadding::Reflection;
  fail_invalid(n, fmt::format("padding_mode '{}' is not one of zeros, border, reflection", padding));
}

void infer_grid_sample(Node& n) {
  check_arity(n, 2, 2, 1, 1);
  const Value& x = input(n, 0);
  const Value& grid = input(n, 1);
  require_float(n, 0);
  require_float(n, 1);
  if (grid.dtype != x.dtype)
    fail_unsupported(n, fmt::format("X is {} but the grid is {}; onnxc samples only with both of one type",
                                    dtype_name(x.dtype), dtype_name(grid.dtype)));
  const std::size_t rank = x.shape.size();
  if (rank != 4 && !(rank == 5 && n.version >= 20))
    fail_unsupported(n, fmt::format("X has rank {}; GridSample-{} samples rank 4{}", rank, n.version,
                                    n.version >= 20 ? " or 5" : ""));
  const int64_t coords = static_cast<int64_t>(rank) - 2;
  if (grid.shape.size() != rank || grid.shape[0] != x.shape[0] || grid.shape.back() != coords)
    fail_invalid(n, fmt::format("grid has shape {}; expected [{}, <output dims>, {}]", shape_str(grid.shape),
                                x.shape[0], coords));
  if (grid_sample_mode(n) == rt::GridSampleMode::Cubic && rank == 5)
    fail_invalid(n, "cubic interpolation is defined for 4-D inputs only");
  grid_sample_padding(n);
  Shape out = {x.shape[0], x.shape[1]};
  out.insert(out.end(), grid.shape.begin() + 1, grid.shape.end() - 1);
  set_output(n, 0, x.dtype, out);
}

std::string enum_literal(rt::GridSampleMode m) {
  switch (m) {
    case rt::GridSampleMode::Linear: return "rt::GridSampleMode::Linear";
    case rt::GridSampleMode::Nearest: return "rt::GridSampleMode::Nearest";
    case rt::GridSampleMode::Cubic: return "rt::GridSampleMode::Cubic";
  }
  return "";
}

std::string enum_literal(rt::GridSamplePadding p) {
  switch (p) {
    case rt::GridSamplePadding::Zeros: return "rt::GridSamplePadding::Zeros";
    case rt::GridSamplePadding::Border: return "rt::GridSamplePadding::Border";
    case rt::GridSamplePadding::Reflection: return "rt::GridSamplePadding::Reflection";
  }
  return "";
}

void emit_grid_sample(const Node& n, Emitter& e) {
  e.include("onnxc/grid_sample.h");
  const Shape& x = n.inputs[0]->shape;
  const Shape& y = n.outputs[0]->shape;
  const bool volumetric = x.size() == 5;
  auto dhw = [&](const Shape& s) {
    return volumetric ? fmt::format("{}, {}, {}", s[2], s[3], s[4]) : fmt::format("1, {}, {}", s[2], s[3]);
  };
  e.linef("constexpr rt::GridSampleParams p = {};",
          params_literal("rt::GridSampleParams", {{"batch", fmt::format("{}", x[0])},
                                                  {"channels", fmt::format("{}", x[1])},
                                                  {"in_dhw", dhw(x)},
                                                  {"out_dhw", dhw(y)},
                                                  {"coords", volumetric ? "3" : "2"},
                                                  {"mode", enum_literal(grid_sample_mode(n))},
                                                  {"padding", enum_literal(grid_sample_padding(n))},
                                                  {"align_corners", n.attr_int("align_corners", 0) ? "true" : "false"}}));
  e.linef("rt::grid_sample(p, {}, {}, {});", e.in(0), e.in(1), e.out(0));
}

const OpRegistrar grid_sample_op([] {
  OpDef d;
  d.op_type = "GridSample";
  d.versions = {16, 20, 22};
  d.infer = infer_grid_sample;
  d.emit = emit_grid_sample;
  return d;
}());

}  // namespace
}  // namespace onnxc
