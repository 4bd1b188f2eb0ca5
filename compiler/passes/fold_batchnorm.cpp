// fold-batchnorm: an inference BatchNormalization right after a Conv or Gemm whose weights
// are constants becomes part of those weights:
//   BN(y) = a * y + (B - a * mean),  a = scale / sqrt(var + epsilon)   (per channel)
// so the producer computes BN's output directly with scaled weights and a new bias.
#include <cmath>

#include "passes/passes.h"

namespace onnxc {
namespace {

bool all_constant(const Node& n, std::size_t from, std::size_t to) {
  for (std::size_t i = from; i < to; ++i)
    if (!n.has_input(i) || !n.inputs[i]->constant) return false;
  return true;
}

// Per-channel factor a and shift (B - a * mean) of a BatchNormalization, in double.
void bn_affine(const Node& bn, std::vector<double>& a, std::vector<double>& shift) {
  const Tensor& scale = *bn.inputs[1]->constant;
  const Tensor& bias = *bn.inputs[2]->constant;
  const Tensor& mean = *bn.inputs[3]->constant;
  const Tensor& var = *bn.inputs[4]->constant;
  double eps = bn.attr_float("epsilon", 1e-5f);
  int64_t c = scale.numel();
  a.resize(static_cast<std::size_t>(c));
  shift.resize(static_cast<std::size_t>(c));
  for (int64_t i = 0; i < c; ++i) {
    a[static_cast<std::size_t>(i)] = scale.float_at(i) / std::sqrt(var.float_at(i) + eps);
    shift[static_cast<std::size_t>(i)] = bias.float_at(i) - a[static_cast<std::size_t>(i)] * mean.float_at(i);
  }
}

// Conv: W[m, ...] *= a[m]; bias[m] = bias[m] * a[m] + shift[m].
void fold_into_conv(Graph& g, Node& conv, const std::vector<double>& a, const std::vector<double>& shift) {
  Tensor w = *conv.inputs[1]->constant;
  int64_t per_channel = w.numel() / static_cast<int64_t>(a.size());
  float* wp = w.data<float>();
  for (std::size_t m = 0; m < a.size(); ++m)
    for (int64_t i = 0; i < per_channel; ++i) {
      float& x = wp[static_cast<int64_t>(m) * per_channel + i];
      x = static_cast<float>(x * a[m]);
    }
  Tensor b(DType::Float, {static_cast<int64_t>(a.size())});
  for (std::size_t m = 0; m < a.size(); ++m) {
    double old = conv.has_input(2) ? conv.inputs[2]->constant->float_at(static_cast<int64_t>(m)) : 0.0;
    b.data<float>()[m] = static_cast<float>(old * a[m] + shift[m]);
  }
  conv.inputs[1] = add_constant(g, conv.inputs[1]->name + "_bn", std::move(w));
  Value* bias = add_constant(g, conv.name + "_bn_bias", std::move(b));
  if (conv.inputs.size() < 3) conv.inputs.resize(3, nullptr);
  conv.inputs[2] = bias;
}

// Gemm (y = alpha * A' B' + beta * C): scale B's columns of output n by a[n]; C becomes
// a * beta * C + shift, with beta set to 1.
void fold_into_gemm(Graph& g, Node& gemm, const std::vector<double>& a, const std::vector<double>& shift) {
  Tensor w = *gemm.inputs[1]->constant;
  bool trans_b = gemm.attr_int("transB", 0) != 0;
  int64_t rows = w.shape[0], cols = w.shape[1];
  float* wp = w.data<float>();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      float& x = wp[r * cols + c];
      x = static_cast<float>(x * a[static_cast<std::size_t>(trans_b ? r : c)]);
    }
  const Shape& out = gemm.outputs[0]->shape;
  int64_t m = out[0], n = out[1];
  // The new C: [n] when the old one does not vary along M, else [m, n].
  Shape c_shape = {n};
  std::vector<int64_t> c_strides = {0, 0};
  double beta = gemm.attr_float("beta", 1.0f);
  if (gemm.has_input(2)) {
    Shape cs = gemm.inputs[2]->shape;
    while (cs.size() < 2) cs.insert(cs.begin(), 1);
    if (cs[0] != 1) c_shape = {m, n};
    c_strides = {cs[0] == 1 ? 0 : cs[1], cs[1] == 1 ? 0 : 1};
  }
  Tensor c(DType::Float, c_shape);
  int64_t c_rows = c_shape.size() == 2 ? m : 1;
  for (int64_t i = 0; i < c_rows; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double old = gemm.has_input(2) ? gemm.inputs[2]->constant->float_at(i * c_strides[0] + j * c_strides[1]) : 0.0;
      c.data<float>()[i * n + j] = static_cast<float>(a[static_cast<std::size_t>(j)] * beta * old + shift[static_cast<std::size_t>(j)]);
    }
  gemm.inputs[1] = add_constant(g, gemm.inputs[1]->name + "_bn", std::move(w));
  if (gemm.inputs.size() < 3) gemm.inputs.resize(3, nullptr);
  gemm.inputs[2] = add_constant(g, gemm.name + "_bn_bias", std::move(c));
  gemm.attrs["beta"].kind = Attribute::Kind::Float;
  gemm.attrs["beta"].f = 1.0f;
}

bool foldable(const Graph& g, const Node& bn) {
  if (bn.op_type != "BatchNormalization" || !bn.domain.empty() || !all_constant(bn, 1, 5)) return false;
  if (bn.outputs.size() > 1)
    for (std::size_t i = 1; i < bn.outputs.size(); ++i)
      if (bn.outputs[i]) return false;
  const Value* x = bn.inputs[0];
  if (!x || x->dtype != DType::Float || !x->producer || x->is_graph_output) return false;
  if (g.consumers(x).size() != 1) return false;
  const Node& p = *x->producer;
  if (!p.domain.empty() || !all_constant(p, 1, p.inputs.size())) return false;
  for (std::size_t i = 1; i < 5; ++i)
    if (bn.inputs[i]->dtype != DType::Float) return false;
  if (p.op_type == "Conv") return p.inputs[1]->dtype == DType::Float;
  if (p.op_type == "Gemm") return x->shape.size() == 2 && p.inputs[1]->dtype == DType::Float;
  return false;
}

}  // namespace

int fold_batchnorm(Graph& g) {
  int folded = 0;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    Node& bn = *g.nodes[i];
    if (!foldable(g, bn)) continue;
    Node& producer = *bn.inputs[0]->producer;
    std::vector<double> a, shift;
    bn_affine(bn, a, shift);
    if (producer.op_type == "Conv") fold_into_conv(g, producer, a, shift);
    else fold_into_gemm(g, producer, a, shift);
    // The producer now writes BN's output; BN goes away.
    producer.outputs[0] = bn.outputs[0];
    g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(i));
    --i;
    ++folded;
  }
  g.relink();
  return folded;
}

}  // namespace onnxc
