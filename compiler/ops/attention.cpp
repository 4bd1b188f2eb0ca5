// onnxc.Attention (see attention.h): made by fuse-attention after inference and folding, so it
// only infers (to check its attributes) and emits rt::attention.
#include "ops/attention.h"

#include <string>
#include <vector>

#include "ops/emitter.h"

namespace onnxc {
namespace {

constexpr const char* kGeometryAttr = "geometry";  // groups0, groups1, q_rows, k_rows, depth, v_depth
constexpr const char* kScaleAttr = "scale";
constexpr const char* kStridesAttr = "strides";  // q, k, v, mask, out: 4 each

// The element just past the last one the strides reach, for a tensor of `numel` elements.
int64_t reach(const AttentionStrides& s, int64_t g0, int64_t g1, int64_t rows, int64_t cols) {
  return (g0 - 1) * s[0] + (g1 - 1) * s[1] + (rows - 1) * s[2] + (cols - 1) * s[3] + 1;
}

void infer_attention(Node& n) {
  check_arity(n, 3, 4, 1, 1);
  const std::vector<int64_t> geo = n.attr_ints(kGeometryAttr);
  const std::vector<int64_t> strides = n.attr_ints(kStridesAttr);
  if (geo.size() != 6 || strides.size() != 20)
    fail_invalid(n, "no geometry: the node is made by fuse-attention only");
  for (std::size_t i = 0; i < n.inputs.size(); ++i) require_dtype(n, i, {DType::Float});
  const AttentionGeometry g = attention_geometry(n);
  auto check = [&](std::size_t i, const Value& v, const AttentionStrides& s, int64_t rows, int64_t cols) {
    for (int64_t x : s)
      if (x < 0) fail_invalid(n, fmt::format("operand {} has a negative stride", i));
    if (reach(s, g.groups0, g.groups1, rows, cols) > v.numel())
      fail_invalid(n, fmt::format("operand {} ('{}', {} elements) is read past its end", i, v.name, v.numel()));
  };
  check(0, input(n, 0), g.q, g.q_rows, g.depth);
  check(1, input(n, 1), g.k, g.depth, g.k_rows);
  check(2, input(n, 2), g.v, g.k_rows, g.v_depth);
  if (n.has_input(3)) check(3, input(n, 3), g.mask, g.q_rows, g.k_rows);
  const Value& y = *n.outputs[0];
  if (g.groups0 * g.groups1 * g.q_rows * g.v_depth != y.numel())
    fail_invalid(n, fmt::format("the output '{}' has {} elements, not the product's", y.name, y.numel()));
  set_output(n, 0, DType::Float, y.shape);
}

std::string strides_literal(const AttentionStrides& s) {
  return params_literal("rt::AttentionStrides", {{"g0", std::to_string(s[0])},
                                                 {"g1", std::to_string(s[1])},
                                                 {"row", std::to_string(s[2])},
                                                 {"col", std::to_string(s[3])}});
}

void emit_attention(const Node& n, Emitter& e) {
  e.include("onnxc/attention.h");
  const AttentionGeometry g = attention_geometry(n);
  const std::string params = params_literal(
      "rt::AttentionParams", {{"groups0", std::to_string(g.groups0)},
                              {"groups1", std::to_string(g.groups1)},
                              {"q_rows", std::to_string(g.q_rows)},
                              {"k_rows", std::to_string(g.k_rows)},
                              {"depth", std::to_string(g.depth)},
                              {"v_depth", std::to_string(g.v_depth)},
                              {"scale", float_literal(g.scale)},
                              {"q", strides_literal(g.q)},
                              {"k", strides_literal(g.k)},
                              {"v", strides_literal(g.v)},
                              {"mask", strides_literal(g.mask)},
                              {"out", strides_literal(g.out)}});
  e.linef("constexpr rt::AttentionParams p = {};", params);
  e.linef("rt::attention({}, {}, {}, {}, {}, p);", e.in(0), e.in(1), e.in(2), e.in_or_null(3, DType::Float), e.out(0));
}

OpDef attention_op() {
  OpDef d;
  d.domain = kAttentionDomain;
  d.op_type = kAttentionOp;
  d.versions = {1};
  d.infer = infer_attention;
  d.emit = emit_attention;
  // The two products; the exponentials are one per score.
  d.macs = [](const Node& n) {
    const AttentionGeometry g = attention_geometry(n);
    return g.groups0 * g.groups1 * g.q_rows * g.k_rows * (g.depth + g.v_depth);
  };
  return d;
}
const OpRegistrar attention(attention_op());

}  // namespace

void set_attention_geometry(Node& n, const AttentionGeometry& g) {
  n.set_attr_ints(kGeometryAttr, {g.groups0, g.groups1, g.q_rows, g.k_rows, g.depth, g.v_depth});
  n.set_attr_float(kScaleAttr, g.scale);
  std::vector<int64_t> s;
  for (const AttentionStrides* x : {&g.q, &g.k, &g.v, &g.mask, &g.out}) s.insert(s.end(), x->begin(), x->end());
  n.set_attr_ints(kStridesAttr, s);
}

AttentionGeometry attention_geometry(const Node& n) {
  const std::vector<int64_t> geo = n.attr_ints(kGeometryAttr, std::vector<int64_t>(6, 1));
  const std::vector<int64_t> s = n.attr_ints(kStridesAttr, std::vector<int64_t>(20, 0));
  AttentionGeometry g;
  g.groups0 = geo[0], g.groups1 = geo[1], g.q_rows = geo[2], g.k_rows = geo[3], g.depth = geo[4], g.v_depth = geo[5];
  g.scale = n.attr_float(kScaleAttr, 1.0f);
  AttentionStrides* parts[] = {&g.q, &g.k, &g.v, &g.mask, &g.out};
  for (std::size_t k = 0; k < 5; ++k)
    for (std::size_t j = 0; j < 4; ++j) (*parts[k])[j] = s[4 * k + j];
  return g;
}

}  // namespace onnxc
