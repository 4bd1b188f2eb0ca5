// Gemm (Y = alpha * A' * B' + beta * C) and MatMul (numpy matmul with batch broadcasting).
#include "onnxc/gemm.h"
#include "ops/emitter.h"

namespace onnxc {
namespace {

void infer_gemm(Node& n) {
  check_arity(n, 2, 3, 1, 1);
  const Value& a = input(n, 0);
  const Value& b = input(n, 1);
  require_float(n, 0);
  if (a.shape.size() != 2 || b.shape.size() != 2)
    fail_invalid(n, fmt::format("A {} and B {} must be matrices", shape_str(a.shape), shape_str(b.shape)));
  bool ta = n.attr_int("transA", 0), tb = n.attr_int("transB", 0);
  int64_t m = ta ? a.shape[1] : a.shape[0], k = ta ? a.shape[0] : a.shape[1];
  int64_t kb = tb ? b.shape[1] : b.shape[0], nn = tb ? b.shape[0] : b.shape[1];
  if (k != kb) fail_invalid(n, fmt::format("inner dims differ: A gives {}, B gives {}", k, kb));
  if (n.has_input(2)) {
    const Shape& c = n.inputs[2]->shape;
    if (c.size() > 2) fail_invalid(n, fmt::format("C has rank {}; at most 2 allowed", c.size()));
    Shape cc = c;
    while (cc.size() < 2) cc.insert(cc.begin(), 1);
    if ((cc[0] != 1 && cc[0] != m) || (cc[1] != 1 && cc[1] != nn))
      fail_invalid(n, fmt::format("C {} does not broadcast to [{}, {}]", shape_str(c), m, nn));
  }
  set_output(n, 0, a.dtype, {m, nn});
}

void emit_gemm(const Node& n, Emitter& e) {
  e.include("onnxc/gemm.h");
  const Value& a = *n.inputs[0];
  bool ta = n.attr_int("transA", 0), tb = n.attr_int("transB", 0);
  int64_t m = n.outputs[0]->shape[0], nn = n.outputs[0]->shape[1], k = ta ? a.shape[0] : a.shape[1];
  int64_t crs = 0, ccs = 0;
  if (n.has_input(2)) {
    Shape c = n.inputs[2]->shape;
    while (c.size() < 2) c.insert(c.begin(), 1);
    crs = c[0] == 1 ? 0 : c[1];
    ccs = c[1] == 1 ? 0 : 1;
  }
  e.linef("constexpr rt::GemmParams p = {};",
          params_literal("rt::GemmParams", {{"m", fmt::format("{}", m)},
                                            {"n", fmt::format("{}", nn)},
                                            {"k", fmt::format("{}", k)},
                                            {"trans_a", ta ? "true" : "false"},
                                            {"trans_b", tb ? "true" : "false"},
                                            {"alpha", float_literal(n.attr_float("alpha", 1.0f))},
                                            {"beta", float_literal(n.attr_float("beta", 1.0f))},
                                            {"c_row_stride", fmt::format("{}", crs)},
                                            {"c_col_stride", fmt::format("{}", ccs)}}));
  e.linef("rt::gemm(p, {}, {}, {}, {});", e.in(0), e.in(1), e.in_or_null(2, a.dtype), e.out(0));
}

const OpRegistrar gemm_op([] {
  OpDef d;
  d.op_type = "Gemm";
  d.versions = {1, 6, 7, 9, 11, 13};
  d.infer = infer_gemm;
  d.emit = emit_gemm;
  d.macs = [](const Node& n) {
    const Shape& a = n.inputs[0]->shape;
    return n.outputs[0]->numel() * (n.attr_int("transA", 0) ? a[0] : a[1]);
  };
  return d;
}());

// MatMul: 1-D operands are promoted (a: prepend 1, b: append 1) and the added dim removed.
struct MatMulShape {
  Shape out;
  int64_t m, n, k, batches;
  std::vector<int64_t> a_offsets, b_offsets;
};

MatMulShape matmul_shape(const Node& node) {
  Shape a = input(node, 0).shape, b = input(node, 1).shape;
  if (a.empty() || b.empty()) fail_invalid(node, "MatMul inputs must have rank >= 1");
  bool a1 = a.size() == 1, b1 = b.size() == 1;
  if (a1) a.insert(a.begin(), 1);
  if (b1) b.push_back(1);
  MatMulShape r;
  r.m = a[a.size() - 2];
  r.k = a.back();
  r.n = b.back();
  if (b[b.size() - 2] != r.k)
    fail_invalid(node, fmt::format("inner dims differ: {} vs {}", shape_str(input(node, 0).shape),
                                   shape_str(input(node, 1).shape)));
  Shape ab(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
  Shape batch = broadcast_shapes(node, ab, bb);
  r.batches = shape_numel(batch);
  auto as = broadcast_strides(ab, batch), bs = broadcast_strides(bb, batch);
  std::vector<int64_t> idx(batch.size(), 0);
  for (int64_t i = 0; i < r.batches; ++i) {
    int64_t ao = 0, bo = 0;
    for (std::size_t d = 0; d < batch.size(); ++d) {
      ao += idx[d] * as[d];
      bo += idx[d] * bs[d];
    }
    r.a_offsets.push_back(ao * r.m * r.k);
    r.b_offsets.push_back(bo * r.k * r.n);
    for (std::size_t d = batch.size(); d-- > 0;) {
      if (++idx[d] < batch[d]) break;
      idx[d] = 0;
    }
  }
  r.out = batch;
  if (!a1) r.out.push_back(r.m);
  if (!b1) r.out.push_back(r.n);
  return r;
}

void infer_matmul(Node& n) {
  check_arity(n, 2, 2, 1, 1);
  require_float(n, 0);
  if (input(n, 1).dtype != input(n, 0).dtype) fail_invalid(n, "inputs have different types");
  set_output(n, 0, input(n, 0).dtype, matmul_shape(n).out);
}

void emit_matmul(const Node& n, Emitter& e) {
  e.include("onnxc/gemm.h");
  MatMulShape s = matmul_shape(n);
  if (s.batches == 1) {
    e.linef("rt::matmul_2d({}, {}, {}, {}, {}, {});", s.m, s.n, s.k, e.in(0), e.in(1), e.out(0));
    return;
  }
  e.index_array("a_offsets", s.a_offsets);
  e.index_array("b_offsets", s.b_offsets);
  e.linef("rt::matmul({}, a_offsets, b_offsets, {}, {}, {}, {}, {}, {});", s.batches, s.m, s.n, s.k, e.in(0), e.in(1),
          e.out(0));
}

const OpRegistrar matmul_op([] {
  OpDef d;
  d.op_type = "MatMul";
  d.versions = {1, 9, 13};
  d.infer = infer_matmul;
  d.emit = emit_matmul;
  d.macs = [](const Node& n) { return n.outputs[0]->numel() * n.inputs[0]->shape.back(); };
  return d;
}());

}  // namespace
}  // namespace onnxc
