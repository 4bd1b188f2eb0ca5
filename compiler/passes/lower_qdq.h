// lower-qdq: QDQ models (float operators wrapped in DequantizeLinear / QuantizeLinear) become
// integer operators.
#pragma once

#include "ir/ir.h"

namespace onnxc {

// Rewrites, before shape inference (while the weights are still quantized constants):
//   DQ(x) , DQ(w const) [, DQ(bias int32 const)] -> Conv [-> Relu] -> Q   into QLinearConv
//   DQ(a) , DQ(b const)                          -> MatMul [-> Relu] -> Q into QLinearMatMul
//   DQ(a) , DQ(b const) -> MatMul -> Add(DQ(bias int32 const)) [-> Relu] -> Q
//                                                  into onnxc.QLinearMatMulBias (a Linear's bias)
//   DQ(a) , DQ(b const) [, DQ(bias int32 const)] -> Gemm [-> Relu] -> Q
//        (alpha = beta = 1, A not transposed)      into QLinearMatMul or onnxc.QLinearMatMulBias
//   DQ(a) , DQ(b)                                -> Add/Mul [-> Relu] -> Q into QLinearAdd/QLinearMul
//   DQ(x) -> Sigmoid, Tanh, HardSwish, LeakyRelu, Clip, ... (unary elementwise) -> Q
//                                                  into onnxc.QLinearLookup: a 256-entry table of
//                                                  Q(f(DQ(v))) computed with the op's own fold
//   DQ(x) -> f(x), g(x) -> Add/Sub/Mul/Div -> Q      the same, f and g unary functions of one x
//                                                  (Hardswish at opset 13: x * HardSigmoid(x))
// (Data movement between DQ and Q, Relu/Clip before Q and DQ -> Q pairs are brought to these
// forms first by the passes of qdq_patterns.h.)
// Activations must be quantized per tensor with constant scales and zero points; weights per
// tensor or per output channel. A Relu is dropped only where it changes nothing: when Q's zero
// point is the lowest value of its type. A bias is taken only when its scale is x_scale *
// w_scale and its zero point 0 (what QLinearConv assumes). Anything else stays in float.
// Returns how many operators were lowered; the Q nodes (and Relus) go away, the DQ nodes die
// when nothing else reads them.
int lower_qdq(Graph& g);

// After shape inference, which tells whether an AveragePool covers whole planes and a Resize's
// tap tables:
//   DQ(x) -> GlobalAveragePool, or AveragePool over the whole plane [-> Relu] -> Q
//                                                  into QLinearGlobalAveragePool
//   DQ(x) -> Resize (linear or cubic, blending along the last two axes) -> Q
//                                                  into onnxc.QLinearResize (fixed-point weights)
// QLinearAdd and QLinearGlobalAveragePool are ONNX Runtime's (domain com.microsoft).
int lower_qdq_pools(Graph& g);

// After dead nodes are gone (the DQs lower-qdq left unread): an onnxc.QLinearLookup whose input
// only another one reads becomes one table, table_b[table_a[v]] (the exported GELU's Div, Erf and
// Add; a requantization after an activation). Returns the tables removed.
int compose_lookups(Graph& g);

}  // namespace onnxc
