// fold-batchnorm and fold-affine: a per-channel affine map y' = a * y + shift applied to the
// output of a Conv, Gemm or MatMul whose weights are constants becomes part of those weights,
// so the producer computes y' directly and the second node goes away.
//
//   fold-batchnorm: an inference BatchNormalization, a = scale / sqrt(var + epsilon) and
//                   shift = B - a * mean (channel axis 1);
//   fold-affine:    Mul, Add, Sub or Div by a constant that varies only along the producer's
//                   output channels (Conv: axis 1; Gemm, MatMul: the last axis), or is a scalar.
//
// Conv: W[m] *= a[m], bias[m] = bias[m] * a[m] + shift[m]. Gemm: B's columns scaled, C becomes
// a * beta * C + shift. MatMul: B's columns scaled; a shift makes it a Gemm with C = shift
// (matmul_as_gemm: a MatMul of rank > 2 reads and writes its tensors through Reshape views,
// which cost nothing; fuse-activation uses it too).
// Everything is computed in double and rounded once.
#include <cmath>
#include <optional>

#include "ops/conv_algorithm.h"
#include "ops/lowering.h"
#include "passes/passes.h"

namespace onnxc {
namespace {

struct Affine {
  std::vector<double> a, shift;
};

bool all_constant(const Node& n, std::size_t from, std::size_t to) {
  for (std::size_t i = from; i < to; ++i)
    if (!n.has_input(i) || !n.inputs[i]->constant) return false;
  return true;
}

// The producer of `x` when an affine map of x may move into it: a Conv, Gemm or MatMul with
// float constant weights whose only reader of x is the map; nullptr otherwise.
Node* linear_producer(const Graph& g, const Value* x) {
  if (!x || x->dtype != DType::Float || !x->producer || x->is_graph_output) return nullptr;
  if (g.consumers(x).size() != 1) return nullptr;
  Node* p = x->producer;
  if (!p->domain.empty() || p->has_attr(kActivationAttr) || p->outputs.size() != 1) return nullptr;
  if (p->op_type == "Conv") return all_constant(*p, 1, p->inputs.size()) && p->inputs[1]->dtype == DType::Float ? p : nullptr;
  if (p->op_type == "Gemm")
    return all_constant(*p, 1, p->inputs.size()) && p->inputs[1]->dtype == DType::Float && x->shape.size() == 2 ? p : nullptr;
  if (p->op_type == "MatMul") return matmul_can_be_gemm(*p) ? p : nullptr;
  return nullptr;
}

// The axis of the producer's output that indexes its output channels, and their count.
std::size_t channel_axis(const Node& p) { return p.op_type == "Conv" ? 1 : p.outputs[0]->shape.size() - 1; }
int64_t channels(const Node& p) { return p.outputs[0]->shape[channel_axis(p)]; }

// A constant's values per channel, when it is a float constant that broadcasts to `out` (not
// beyond it) and varies along `axis` at most: nullopt otherwise.
std::optional<std::vector<double>> per_channel(const Value* c, const Shape& out, std::size_t axis) {
  if (!c || !c->constant || c->dtype != DType::Float || c->shape.size() > out.size()) return std::nullopt;
  const std::size_t lead = out.size() - c->shape.size();  // numpy aligns shapes on the right
  int64_t extent = 1;
  for (std::size_t i = 0; i < c->shape.size(); ++i) {
    const int64_t d = c->shape[i];
    if (i + lead == axis) {
      if (d != 1 && d != out[axis]) return std::nullopt;
      extent = d;
    } else if (d != 1) {
      return std::nullopt;
    }
  }
  std::vector<double> v(static_cast<std::size_t>(out[axis]));
  for (std::size_t m = 0; m < v.size(); ++m) v[m] = c->constant->float_at(extent == 1 ? 0 : static_cast<int64_t>(m));
  return v;
}

// BatchNormalization: a = scale / sqrt(var + epsilon), shift = B - a * mean, per channel (axis 1).
std::optional<Affine> batchnorm_affine(const Node& bn, const Node& producer) {
  if (bn.op_type != "BatchNormalization" || !bn.domain.empty() || !all_constant(bn, 1, 5)) return std::nullopt;
  for (std::size_t i = 1; i < bn.outputs.size(); ++i)
    if (bn.outputs[i]) return std::nullopt;  // training mode: running statistics are outputs
  for (std::size_t i = 1; i < 5; ++i)
    if (bn.inputs[i]->dtype != DType::Float) return std::nullopt;
  if (producer.op_type == "MatMul" || channel_axis(producer) != 1) return std::nullopt;
  const Tensor& scale = *bn.inputs[1]->constant;
  const Tensor& bias = *bn.inputs[2]->constant;
  const Tensor& mean = *bn.inputs[3]->constant;
  const Tensor& var = *bn.inputs[4]->constant;
  const double eps = bn.attr_float("epsilon", 1e-5f);
  Affine f;
  for (int64_t i = 0; i < scale.numel(); ++i) {
    const double a = scale.float_at(i) / std::sqrt(var.float_at(i) + eps);
    f.a.push_back(a);
    f.shift.push_back(bias.float_at(i) - a * mean.float_at(i));
  }
  return f;
}

// Mul, Add, Sub or Div of the producer's output `x` by a per-channel constant.
std::optional<Affine> arithmetic_affine(const Node& n, const Node& producer, const Value* x) {
  const std::string& op = n.op_type;
  if ((op != "Mul" && op != "Add" && op != "Sub" && op != "Div") || !n.domain.empty() || n.inputs.size() != 2 ||
      !n.has_input(0) || !n.has_input(1) || n.inputs[0] == n.inputs[1])
    return std::nullopt;
  if (n.outputs[0]->shape != x->shape) return std::nullopt;  // the constant would broadcast x
  const bool x_first = n.inputs[0] == x;
  auto c = per_channel(n.inputs[x_first ? 1 : 0], x->shape, channel_axis(producer));
  if (!c) return std::nullopt;
  const std::size_t m = c->size();
  Affine f{std::vector<double>(m, 1.0), std::vector<double>(m, 0.0)};
  for (std::size_t i = 0; i < m; ++i) {
    const double v = (*c)[i];
    if (op == "Mul") f.a[i] = v;
    else if (op == "Add") f.shift[i] = v;
    else if (op == "Sub" && x_first) f.shift[i] = -v;
    else if (op == "Sub") f.a[i] = -1.0, f.shift[i] = v;
    else if (x_first && v != 0.0 && std::isfinite(v)) f.a[i] = 1.0 / v;
    else return std::nullopt;  // c / x is not affine; x / 0 keeps its infinities and NaNs
  }
  return f;
}

bool has_shift(const Affine& f) {
  for (double s : f.shift)
    if (s != 0.0) return true;
  return false;
}

// Conv: W[m, ...] *= a[m]; bias[m] = bias[m] * a[m] + shift[m].
void fold_into_conv(Graph& g, Node& conv, const Affine& f) {
  Tensor w = *conv.inputs[1]->constant;
  const std::size_t m_count = f.a.size();
  const int64_t per_channel_weights = w.numel() / static_cast<int64_t>(m_count);
  float* wp = w.data<float>();
  for (std::size_t m = 0; m < m_count; ++m)
    for (int64_t i = 0; i < per_channel_weights; ++i) {
      float& x = wp[static_cast<int64_t>(m) * per_channel_weights + i];
      x = static_cast<float>(x * f.a[m]);
    }
  Tensor b(DType::Float, {static_cast<int64_t>(m_count)});
  for (std::size_t m = 0; m < m_count; ++m) {
    const double old = conv.has_input(2) ? conv.inputs[2]->constant->float_at(static_cast<int64_t>(m)) : 0.0;
    b.data<float>()[m] = static_cast<float>(old * f.a[m] + f.shift[m]);
  }
  conv.inputs[1] = add_constant(g, conv.inputs[1]->name + "_folded", std::move(w));
  if (conv.inputs.size() < 3) conv.inputs.resize(3, nullptr);
  conv.inputs[2] = add_constant(g, conv.name + "_folded_bias", std::move(b));
}

// B's output columns scaled by a: B is [K, N], or [N, K] when transposed.
Tensor scale_columns(const Tensor& b, bool transposed, const std::vector<double>& a) {
  Tensor w = b;
  const int64_t rows = w.shape[0], cols = w.shape[1];
  float* wp = w.data<float>();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      float& x = wp[r * cols + c];
      x = static_cast<float>(x * a[static_cast<std::size_t>(transposed ? r : c)]);
    }
  return w;
}

// Gemm (y = alpha * A' B' + beta * C): scale B's columns of output n by a[n]; C becomes
// a * beta * C + shift, with beta set to 1.
void fold_into_gemm(Graph& g, Node& gemm, const Affine& f) {
  gemm.inputs[1] = add_constant(g, gemm.inputs[1]->name + "_folded",
                                scale_columns(*gemm.inputs[1]->constant, gemm.attr_int("transB", 0) != 0, f.a));
  const Shape& out = gemm.outputs[0]->shape;
  const int64_t m = out[0], n = out[1];
  // The new C: [n] when the old one does not vary along M, else [m, n].
  Shape c_shape = {n};
  std::vector<int64_t> c_strides = {0, 0};
  const double beta = gemm.attr_float("beta", 1.0f);
  if (gemm.has_input(2)) {
    Shape cs = gemm.inputs[2]->shape;
    while (cs.size() < 2) cs.insert(cs.begin(), 1);
    if (cs[0] != 1) c_shape = {m, n};
    c_strides = {cs[0] == 1 ? 0 : cs[1], cs[1] == 1 ? 0 : 1};
  }
  Tensor c(DType::Float, c_shape);
  const int64_t c_rows = c_shape.size() == 2 ? m : 1;
  for (int64_t i = 0; i < c_rows; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const double old =
          gemm.has_input(2) ? gemm.inputs[2]->constant->float_at(i * c_strides[0] + j * c_strides[1]) : 0.0;
      const std::size_t col = static_cast<std::size_t>(j);
      c.data<float>()[i * n + j] = static_cast<float>(f.a[col] * beta * old + f.shift[col]);
    }
  if (gemm.inputs.size() < 3) gemm.inputs.resize(3, nullptr);
  gemm.inputs[2] = add_constant(g, gemm.name + "_folded_bias", std::move(c));
  gemm.set_attr_float("beta", 1.0f);
}

// A new float value of shape s, named after node `near`.
Value* new_value(Graph& g, const Node& near, const Shape& s, const std::string& hint) {
  Value* v = g.add_unique_value(near.name + "/" + hint);
  v->dtype = DType::Float;
  v->shape = s;
  v->has_shape = true;
  return v;
}

// A Reshape node computing y (which has its shape) from x: a view, no code.
std::unique_ptr<Node> reshape_node(Graph& g, const Node& near, Value* x, Value* y, const std::string& hint) {
  Tensor shape(DType::Int64, {static_cast<int64_t>(y->shape.size())});
  for (std::size_t i = 0; i < y->shape.size(); ++i) shape.data<int64_t>()[i] = y->shape[i];
  Value* shape_value = add_constant(g, near.name + "/" + hint + "_shape", std::move(shape));
  return make_onnx_node("Reshape", near.name + "/" + hint, 13, near.index, {x, shape_value}, {y});
}

std::size_t index_of(const Graph& g, const Node* n) {
  std::size_t i = 0;
  while (g.nodes[i].get() != n) ++i;
  return i;
}

// MatMul with B [K, N]: scaling folds into B; a shift makes it a Gemm with C = shift. Returns
// the node that writes the MatMul's output now.
Node* fold_into_matmul(Graph& g, Node& mm, const Affine& f) {
  mm.inputs[1] = add_constant(g, mm.inputs[1]->name + "_folded", scale_columns(*mm.inputs[1]->constant, false, f.a));
  if (!has_shift(f)) return &mm;
  Tensor c(DType::Float, {static_cast<int64_t>(f.shift.size())});
  for (std::size_t i = 0; i < f.shift.size(); ++i) c.data<float>()[i] = static_cast<float>(f.shift[i]);
  return matmul_as_gemm(g, mm, add_constant(g, mm.name + "_folded_bias", std::move(c)));
}

// Folds the affine maps `affine_of` finds into their producers. Returns how many nodes went.
template <class AffineOf>
int fold_maps(Graph& g, AffineOf affine_of) {
  int folded = 0;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = *g.nodes[i];
    if (n.outputs.empty() || !n.outputs[0] || n.outputs[0]->dtype != DType::Float) continue;
    // The map's input from the producer: BatchNormalization's X, either operand of arithmetic.
    Node* producer = nullptr;
    const Value* x = nullptr;
    for (std::size_t k = 0; k < std::min<std::size_t>(n.inputs.size(), n.op_type == "BatchNormalization" ? 1 : 2); ++k)
      if ((producer = linear_producer(g, n.inputs[k]))) {
        x = n.inputs[k];
        break;
      }
    if (!producer) continue;
    std::optional<Affine> f = affine_of(n, *producer, x);
    if (!f || static_cast<int64_t>(f->a.size()) != channels(*producer)) continue;
    std::vector<std::string> merged = producer->attr_strings(kMergedOpsAttr);
    merged.push_back(n.op_type);
    producer->set_attr_strings(kMergedOpsAttr, merged);
    Node* writer = producer;
    if (producer->op_type == "Conv") fold_into_conv(g, *producer, *f);
    else if (producer->op_type == "Gemm") fold_into_gemm(g, *producer, *f);
    else writer = fold_into_matmul(g, *producer, *f);
    // The producer (or the view after it) now writes the map's output; the map goes away. The
    // scan goes on after the writer: a later map of the same chain (Mul, then Add) folds in turn.
    writer->outputs[0] = n.outputs[0];
    g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(index_of(g, &n)));
    g.relink();
    i = index_of(g, writer);
    ++folded;
  }
  return folded;
}

}  // namespace

bool matmul_can_be_gemm(const Node& mm) {
  if (mm.op_type != "MatMul" || !mm.domain.empty() || !mm.has_input(0) || !mm.has_input(1)) return false;
  const Value* a = mm.inputs[0];
  const Value* b = mm.inputs[1];
  return a->dtype == DType::Float && a->shape.size() >= 2 && b->constant && b->dtype == DType::Float &&
         b->shape.size() == 2;
}

Node* matmul_as_gemm(Graph& g, Node& mm, Value* bias) {
  Node* writer = &mm;
  const Shape& a_shape = mm.inputs[0]->shape;
  if (a_shape.size() > 2) {
    const int64_t k = a_shape.back(), n = mm.outputs[0]->shape.back();
    Value* rows = new_value(g, mm, {shape_numel(a_shape) / k, k}, "rows");
    Value* flat = new_value(g, mm, {rows->shape[0], n}, "flat");
    std::unique_ptr<Node> before = reshape_node(g, mm, mm.inputs[0], rows, "rows");
    std::unique_ptr<Node> after = reshape_node(g, mm, flat, mm.outputs[0], "unflat");
    writer = after.get();
    mm.inputs[0] = rows;
    mm.outputs[0] = flat;
    const std::size_t at = index_of(g, &mm);
    g.nodes.insert(g.nodes.begin() + static_cast<std::ptrdiff_t>(at + 1), std::move(after));
    g.nodes.insert(g.nodes.begin() + static_cast<std::ptrdiff_t>(at), std::move(before));
  }
  mm.op_type = "Gemm";
  mm.version = 13;
  if (bias) mm.inputs.push_back(bias);
  g.relink();
  return writer;
}

int fold_batchnorm(Graph& g) {
  return fold_maps(g, [](const Node& n, const Node& p, const Value*) { return batchnorm_affine(n, p); });
}

int fold_affine(Graph& g) { return fold_maps(g, arithmetic_affine); }

}  // namespace onnxc
