// Gemm (Y = alpha * A' * B' + beta * C) and MatMul (numpy matmul with batch broadcasting).
#include "onnxc/activation.h"
#include "onnxc/gemm.h"
#include "onnxc/gemm_dots.h"
#include "ops/conv_algorithm.h"
#include "ops/elementwise.h"
#include "ops/emitter.h"
#include "ops/matmul_shape.h"

namespace onnxc {
namespace {

// Element types by version: floats, integers from 9, bfloat16 from 13 (Gemm and MatMul alike).
std::vector<DType> matrix_types(const Node& n) {
  std::vector<DType> t = {DType::Float, DType::Double, DType::Float16};
  if (n.version >= 9) t.insert(t.end(), {DType::Int32, DType::Int64, DType::Uint32, DType::Uint64});
  if (n.version >= 13) t.push_back(DType::BFloat16);
  return t;
}

void require_operand_types(const Node& n) {
  require_dtype(n, 0, matrix_types(n));
  for (std::size_t i = 1; i < n.inputs.size(); ++i)
    if (n.has_input(i)) require_same_dtype(n, i, 0);
}

// Gemm's C: optional from version 11. Versions 1 and 6 broadcast it only with broadcast=1 (C
// must be [M, N] otherwise); from 7 it always broadcasts unidirectionally to [M, N].
void check_gemm_bias(const Node& n, int64_t m, int64_t nn) {
  if (!n.has_input(2)) return;
  const Shape& c = n.inputs[2]->shape;
  if (n.version < 7 && n.attr_int("broadcast", 0) == 0 && c != Shape{m, nn})
    fail_invalid(n, fmt::format("C has shape {}; without broadcast=1 it must be [{}, {}]", shape_str(c), m, nn));
  if (n.version >= 7 && n.has_attr("broadcast")) fail_invalid(n, "'broadcast' was removed in Gemm-7");
  if (c.size() > 2) fail_invalid(n, fmt::format("C has rank {}; at most 2 allowed", c.size()));
  Shape cc = c;
  while (cc.size() < 2) cc.insert(cc.begin(), 1);
  if ((cc[0] != 1 && cc[0] != m) || (cc[1] != 1 && cc[1] != nn))
    fail_invalid(n, fmt::format("C {} does not broadcast to [{}, {}]", shape_str(c), m, nn));
}

void infer_gemm(Node& n) {
  check_arity(n, n.version < 11 ? 3 : 2, 3, 1, 1);
  const Value& a = input(n, 0);
  const Value& b = input(n, 1);
  require_operand_types(n);
  if (a.shape.size() != 2 || b.shape.size() != 2)
    fail_invalid(n, fmt::format("A {} and B {} must be matrices", shape_str(a.shape), shape_str(b.shape)));
  bool ta = n.attr_int("transA", 0), tb = n.attr_int("transB", 0);
  int64_t m = ta ? a.shape[1] : a.shape[0], k = ta ? a.shape[0] : a.shape[1];
  int64_t kb = tb ? b.shape[1] : b.shape[0], nn = tb ? b.shape[0] : b.shape[1];
  if (k != kb) fail_invalid(n, fmt::format("inner dims differ: A gives {}, B gives {}", k, kb));
  check_gemm_bias(n, m, nn);
  set_output(n, 0, a.dtype, {m, nn});
}

rt::GemmParams gemm_params(const Node& n) {
  const Value& a = *n.inputs[0];
  bool ta = n.attr_int("transA", 0), tb = n.attr_int("transB", 0);
  rt::GemmParams p{};
  p.m = n.outputs[0]->shape[0];
  p.n = n.outputs[0]->shape[1];
  p.k = ta ? a.shape[0] : a.shape[1];
  p.trans_a = ta;
  p.trans_b = tb;
  p.alpha = n.attr_float("alpha", 1.0f);
  p.beta = n.attr_float("beta", 1.0f);
  if (n.has_input(2)) {
    Shape c = n.inputs[2]->shape;
    while (c.size() < 2) c.insert(c.begin(), 1);
    p.c_row_stride = c[0] == 1 ? 0 : c[1];
    p.c_col_stride = c[1] == 1 ? 0 : 1;
  }
  return p;
}

// Whether rt::gemm_tiles computes the float Gemm whole: alpha 1 and C absent or a bias per
// column (shape [N] or [1, N], beta 1), which the kernel adds; other Cs take rt::gemm.
bool gemm_tiles_apply(const Node& n) {
  if (n.inputs[0]->dtype != DType::Float || n.outputs[0]->numel() == 0) return false;
  const rt::GemmParams p = gemm_params(n);
  if (p.k == 0 || p.alpha != 1.0f) return false;
  // C [1] or [1, 1] to one column is that column's bias too (its column stride says broadcast).
  return !n.has_input(2) || (p.beta == 1.0f && p.c_row_stride == 0 && (p.c_col_stride == 1 || p.n == 1));
}

// rt::gemm_tiles' call: A strided (transA reads its columns), B packed in panels (pack-weights)
// or, not transposed, read in place; the bias and the activation in the kernel.
void emit_gemm_tiles(const Node& n, Emitter& e) {
  e.include("onnxc/gemm_packed_b.h");
  const rt::GemmParams p = gemm_params(n);
  const std::string b = n.attr_int(kPackedWeightsAttr, 0) ? fmt::format("rt::PackedColumns{{{}, {}}}", e.in(1), p.k)
                                                          : fmt::format("rt::PlainRows{{{}, {}}}", e.in(1), p.n);
  e.linef("rt::gemm_tiles({}, {}, {}, rt::StridedRows{{{}, {}, {}}}, {}, {}, {}, {}, {}, {});", p.m, p.n, p.k, e.in(0),
          p.trans_a ? 1 : p.k, p.trans_a ? p.m : 1, b, n.has_input(2) ? e.in(2) : "nullptr", e.out(0), p.n,
          epilogue_code(n), e.parallel(p.m * p.n * p.k));
}

// Whether rt::gemm_dots computes the float Gemm (its conditions are gemm_tiles_apply's, and A
// not transposed: the dot products run along A's rows): a product of at most kDotsCols columns
// (panels of 16 would waste most of their vectors), or B a runtime input with transB (its rows
// contiguous along K).
bool gemm_dots_apply(const Node& n) {
  if (!gemm_tiles_apply(n) || n.attr_int("transA", 0) || n.attr_int(kPackedWeightsAttr, 0)) return false;
  return n.outputs[0]->shape[1] <= rt::kDotsCols || (n.attr_int("transB", 0) && !n.inputs[1]->constant);
}

// rt::gemm_dots' call: B read in place, transposed or not.
void emit_gemm_dots(const Node& n, Emitter& e) {
  e.include("onnxc/gemm_dots.h");
  const rt::GemmParams p = gemm_params(n);
  e.linef("rt::gemm_dots({}, {}, {}, {}, {}, rt::DotColumns{{{}, {}, {}}}, {}, {}, {}, {}, {});", p.m, p.n, p.k,
          e.in(0), p.k, e.in(1), p.trans_b ? 1 : p.n, p.trans_b ? p.k : 1, n.has_input(2) ? e.in(2) : "nullptr",
          e.out(0), p.n, epilogue_code(n), e.parallel(p.m * p.n * p.k));
}

void emit_gemm(const Node& n, Emitter& e) {
  if (n.outputs[0]->numel() == 0) return;
  const std::string kernel = matrix_product_kernel(n);
  if (kernel == "gemm_dots") return emit_gemm_dots(n, e);
  if (kernel != "gemm") return emit_gemm_tiles(n, e);
  e.include("onnxc/gemm.h");
  rt::GemmParams p = gemm_params(n);
  auto num = [](rt::index_t v) { return fmt::format("{}", v); };
  e.linef("constexpr rt::GemmParams p = {};",
          params_literal("rt::GemmParams", {{"m", num(p.m)},
                                            {"n", num(p.n)},
                                            {"k", num(p.k)},
                                            {"trans_a", p.trans_a ? "true" : "false"},
                                            {"trans_b", p.trans_b ? "true" : "false"},
                                            {"alpha", float_literal(p.alpha)},
                                            {"beta", float_literal(p.beta)},
                                            {"c_row_stride", num(p.c_row_stride)},
                                            {"c_col_stride", num(p.c_col_stride)}}));
  if (n.inputs[0]->dtype == DType::Float && !p.trans_a && !p.trans_b)  // the path that takes a parallel-for
    e.linef("rt::gemm(p, {}, {}, {}, {}, {});", e.in(0), e.in(1), e.in_or_null(2, n.inputs[0]->dtype), e.out(0),
            e.parallel(p.m * p.n * p.k));
  else
    e.linef("rt::gemm(p, {}, {}, {}, {});", e.in(0), e.in(1), e.in_or_null(2, n.inputs[0]->dtype), e.out(0));
  if (n.has_attr(kActivationAttr)) {  // fuse-activation merged it (float only)
    e.include("onnxc/activation.h");
    e.linef("rt::activate_row({}, {}, {});", epilogue_code(n), e.out(0), n.outputs[0]->numel());
  }
}

void fold_gemm(const Node& n, std::vector<Tensor>& outs) {
  const Value& y = *n.outputs[0];
  outs.emplace_back(y.dtype, y.shape);
  if (y.numel() == 0) return;
  rt::GemmParams p = gemm_params(n);
  dispatch_dtype(n, y.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* c = n.has_input(2) ? n.inputs[2]->constant->data<T>() : nullptr;
    rt::gemm(p, n.inputs[0]->constant->data<T>(), n.inputs[1]->constant->data<T>(), c, outs[0].data<T>());
  });
}

const OpRegistrar gemm_op([] {
  OpDef d;
  d.op_type = "Gemm";
  d.versions = {1, 6, 7, 9, 11, 13};
  d.infer = infer_gemm;
  d.emit = emit_gemm;
  d.fold = fold_gemm;
  d.macs = [](const Node& n) {
    const Shape& a = n.inputs[0]->shape;
    return n.outputs[0]->numel() * (n.attr_int("transA", 0) ? a[0] : a[1]);
  };
  return d;
}());

void infer_matmul(Node& n) {
  check_arity(n, 2, 2, 1, 1);
  require_operand_types(n);
  set_output(n, 0, input(n, 0).dtype, product_shape(n, 0, 1).out);
}

void emit_matmul(const Node& n, Emitter& e) {
  if (n.outputs[0]->numel() == 0) return;
  e.include("onnxc/gemm.h");
  ProductShape s = product_shape(n, 0, 1);
  const std::string kernel = matrix_product_kernel(n);
  if (kernel == "matmul_tiles" || kernel == "matmul_dots") {  // two tensors (a constant B makes a Gemm: pack-weights)
    e.include(kernel == "matmul_dots" ? "onnxc/gemm_dots.h" : "onnxc/gemm_packed_b.h");
    e.index_array("a_offsets", s.a_offsets);
    e.index_array("b_offsets", s.b_offsets);
    e.linef("rt::{}({}, a_offsets, b_offsets, {}, {}, {}, {}, {}, {}, {}, {});", kernel, s.batches, s.m, s.n, s.k,
            e.in(0), e.in(1), n.attr_int(kTransposedBAttr, 0) ? "true" : "false", e.out(0),
            e.parallel(s.batches * s.m * s.n * s.k));
    return;
  }
  if (s.batches == 1) {
    e.linef("rt::matmul_2d({}, {}, {}, {}, {}, {});", s.m, s.n, s.k, e.in(0), e.in(1), e.out(0));
    return;
  }
  e.index_array("a_offsets", s.a_offsets);
  e.index_array("b_offsets", s.b_offsets);
  e.linef("rt::matmul({}, a_offsets, b_offsets, {}, {}, {}, {}, {}, {});", s.batches, s.m, s.n, s.k, e.in(0), e.in(1),
          e.out(0));
}

void fold_matmul(const Node& n, std::vector<Tensor>& outs) {
  const Value& y = *n.outputs[0];
  outs.emplace_back(y.dtype, y.shape);
  if (y.numel() == 0) return;
  ProductShape s = product_shape(n, 0, 1);
  std::vector<rt::index_t> a_offsets(s.a_offsets.begin(), s.a_offsets.end()),
      b_offsets(s.b_offsets.begin(), s.b_offsets.end());
  dispatch_dtype(n, y.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* b = n.inputs[1]->constant->data<T>();
    Tensor b_plain(n.inputs[1]->dtype, {});  // B^T given (fold-transpose): each [K, N] matrix laid out again
    if (n.attr_int(kTransposedBAttr, 0)) {
      b_plain = Tensor(n.inputs[1]->dtype, n.inputs[1]->shape);
      T* plain = b_plain.data<T>();
      for (int64_t at = 0; at < n.inputs[1]->numel(); at += s.k * s.n)
        for (int64_t l = 0; l < s.k; ++l)
          for (int64_t j = 0; j < s.n; ++j) plain[at + l * s.n + j] = b[at + j * s.k + l];
      b = plain;
    }
    rt::matmul(s.batches, a_offsets.data(), b_offsets.data(), s.m, s.n, s.k, n.inputs[0]->constant->data<T>(), b,
               outs[0].data<T>());
  });
}

const OpRegistrar matmul_op([] {
  OpDef d;
  d.op_type = "MatMul";
  d.versions = {1, 9, 13};
  d.infer = infer_matmul;
  d.emit = emit_matmul;
  d.fold = fold_matmul;
  d.macs = [](const Node& n) { return n.outputs[0]->numel() * n.inputs[0]->shape.back(); };
  return d;
}());

}  // namespace

bool gemm_packs_b(const Node& n) {
  if (n.op_type != "Gemm" || !n.domain.empty() || n.has_attr(kPackedWeightsAttr)) return false;
  return n.inputs[1]->constant && n.inputs[1]->shape.size() == 2 && gemm_tiles_apply(n) && !gemm_dots_apply(n);
}

std::string matrix_product_kernel(const Node& n) {
  if (n.op_type == "MatMul") {
    if (n.inputs[0]->dtype != DType::Float) return "matmul";
    return n.outputs[0]->numel() > 0 && product_shape(n, 0, 1).n <= rt::kDotsCols ? "matmul_dots" : "matmul_tiles";
  }
  if (n.attr_int(kPackedWeightsAttr, 0)) return "gemm_packed_b";
  if (gemm_dots_apply(n)) return "gemm_dots";
  return gemm_tiles_apply(n) && !n.attr_int("transB", 0) ? "gemm_tiles" : "gemm";
}

}  // namespace onnxc
