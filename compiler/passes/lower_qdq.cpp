#include "passes/lower_qdq.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <utility>

#include "onnxc/quant.h"
#include "ops/op.h"
#include "ops/quant_common.h"
#include "ops/resize.h"
#include "passes/passes.h"
#include "passes/qdq_patterns.h"

namespace onnxc {
namespace {

bool constant_float(const Value* v) { return v && v->constant && v->dtype == DType::Float; }

// A DequantizeLinear feeding the float operator: its quantized data, scale and zero point.
struct Dequantized {
  Value* data = nullptr;
  Value* scale = nullptr;
  Value* zero_point = nullptr;  // null when absent (0 of the data's type)
  int64_t axis = -1;            // the quantization axis; -1 when per tensor
};

// v as the output of a DequantizeLinear with constant float scale and constant zero point (when
// given), not blocked; nullopt otherwise.
std::optional<Dequantized> match_dequantize(const Value* v) {
  const Node* dq = v ? v->producer : nullptr;
  if (!is_op(dq, "DequantizeLinear") || dq->attr_int("block_size", 0) != 0) return std::nullopt;
  Dequantized d;
  d.data = dq->inputs[0];
  d.scale = dq->inputs[1];
  d.zero_point = dq->has_input(2) ? dq->inputs[2] : nullptr;
  if (!constant_float(d.scale) || (d.zero_point && !d.zero_point->constant)) return std::nullopt;
  if (is_per_tensor(d.scale->shape)) return d;
  if (dq->version < 13 || !d.data->constant || d.scale->shape.size() != 1) return std::nullopt;
  const auto rank = static_cast<int64_t>(d.data->shape.size());
  const int64_t axis = dq->attr_int("axis", 1);
  d.axis = axis < 0 ? axis + rank : axis;
  return d;
}

// An activation: quantized at run time, per tensor, with an explicit 8-bit zero point (which
// also tells its type before shape inference).
bool is_activation(const Dequantized& d) {
  return d.axis < 0 && d.zero_point && is_8bit(d.zero_point->dtype);
}

// A constant 8-bit weight quantized per tensor or along `channel_axis`.
bool is_weight(const Dequantized& d, int64_t channel_axis) {
  if (!d.data->constant || !is_8bit(d.data->dtype)) return false;
  if (d.zero_point && d.zero_point->dtype != d.data->dtype) return false;
  return d.axis < 0 || d.axis == channel_axis;
}

// The QuantizeLinear that is y's only reader, possibly through a Relu that it makes redundant.
struct Requantized {
  Node* quantize = nullptr;
  Node* relu = nullptr;  // null when Q reads y directly
};

// Q(relu(x)) == Q(x) exactly when Q's zero point is its type's lowest value: every negative x
// saturates to it, as 0 does.
bool relu_is_redundant(const Tensor& zero_point) {
  const int64_t lowest = zero_point.dtype == DType::Int8 ? -128 : 0;
  return zero_point.int_at(0) == lowest;
}

std::optional<Requantized> match_quantize(const Graph& g, const Value* y) {
  Requantized r;
  Node* reader = g.only_reader(y);
  if (is_op(reader, "Relu")) {
    r.relu = reader;
    reader = g.only_reader(reader->outputs[0]);
  }
  if (!is_op(reader, "QuantizeLinear") || reader->inputs[0] != (r.relu ? r.relu->outputs[0] : y)) return std::nullopt;
  const Value* scale = reader->inputs[1];
  const Value* zp = reader->has_input(2) ? reader->inputs[2] : nullptr;
  if (!constant_float(scale) || !is_per_tensor(scale->shape)) return std::nullopt;
  if (!zp || !zp->constant || !is_8bit(zp->dtype) || !is_per_tensor(zp->shape)) return std::nullopt;
  if (reader->attr_int("output_dtype", 0) != 0 && reader->attr_int("output_dtype", 0) != static_cast<int>(zp->dtype))
    return std::nullopt;
  if (r.relu && !relu_is_redundant(*zp->constant)) return std::nullopt;
  r.quantize = reader;
  return r;
}

// The weight's zero point, made explicit (zeros shaped like the scale) when the DQ omits it.
Value* weight_zero_point(Graph& g, const Dequantized& w) {
  if (w.zero_point) return w.zero_point;
  return add_constant(g, w.data->name + "_zero_point", Tensor(w.data->dtype, w.scale->shape));
}

// A bias DQ(int32 constant) whose scale is x_scale * w_scale (per channel, in float, as
// QLinearConv applies it) and whose zero point is 0: QLinearConv's B.
Value* match_bias(const Value* b, const Dequantized& x, const Dequantized& w) {
  const std::optional<Dequantized> d = match_dequantize(b);
  if (!d || !d->data->constant || d->data->dtype != DType::Int32) return nullptr;
  if (d->zero_point)
    for (int64_t i = 0; i < d->zero_point->constant->numel(); ++i)
      if (d->zero_point->constant->int_at(i) != 0) return nullptr;
  const Tensor& bias_scale = *d->scale->constant;
  const Tensor& w_scale = *w.scale->constant;
  const int64_t channels = d->data->numel();
  // Before inference nothing has checked the scales' sizes yet: a malformed model is left to
  // the operators' own checks rather than read out of bounds here.
  const auto per_tensor_or_channel = [channels](const Tensor& s) { return s.numel() == 1 || s.numel() == channels; };
  if (!per_tensor_or_channel(bias_scale) || !per_tensor_or_channel(w_scale) || x.scale->constant->numel() != 1)
    return nullptr;
  const float x_scale = x.scale->constant->data<float>()[0];
  for (int64_t c = 0; c < channels; ++c) {
    const float expected = x_scale * w_scale.data<float>()[w_scale.numel() == 1 ? 0 : c];
    if (bias_scale.data<float>()[bias_scale.numel() == 1 ? 0 : c] != expected) return nullptr;
  }
  return d->data;
}

// The float operator becomes `op_type` reading the quantized operands and writing Q's output.
void rewrite(Node& op, const char* op_type, std::vector<Value*> inputs, const Requantized& q) {
  op.op_type = op_type;
  op.version = 10;
  op.inputs = std::move(inputs);
  op.outputs = {q.quantize->outputs[0]};
}

// The same for an operator of another domain (ONNX Runtime's com.microsoft or onnxc's own,
// version 1), which takes none of the float operator's attributes.
void rewrite_to_domain(Node& op, const char* domain, const char* op_type, std::vector<Value*> inputs,
                       const Requantized& q) {
  rewrite(op, op_type, std::move(inputs), q);
  op.domain = domain;
  op.version = 1;
  op.attrs.clear();
}

// A constant 8-bit tensor in the other 8-bit type: v + 128 for int8 to uint8, v - 128 back.
// DQ reads the same values when both the data and its zero point are flipped: a constant operand
// quantized as int8 (ONNX Runtime writes its weights so) meets activations made uint8 by
// qdq_activations_to_uint8.
Value* flipped_8bit(Graph& g, const Value& v) {
  Tensor t = *v.constant;
  t.dtype = v.dtype == DType::Int8 ? DType::Uint8 : DType::Int8;
  for (uint8_t& byte : t.bytes) byte ^= 0x80;
  return add_constant(g, v.name + "_flipped", std::move(t));
}

// A constant weight and its zero point as int8: a uint8 weight (ONNX Runtime's weight_type
// QUInt8, symmetric about 128 or not) flipped with its zero point, the same w - z, so the int8
// weights' kernels take it (packed at compile time, no scratch: VNNI, AVX2 pairs, SMLAD).
std::pair<Value*, Value*> int8_weight(Graph& g, const Dequantized& w) {
  Value* zero_point = weight_zero_point(g, w);
  if (w.data->dtype != DType::Uint8 || zero_point->dtype != DType::Uint8) return {w.data, zero_point};
  return {flipped_8bit(g, *w.data), flipped_8bit(g, *zero_point)};
}

// A product's float output that only an Add reads whose other operand is an 8-bit activation, the
// sum quantized: TensorRT's residual `Conv -> Add(DQ(r)) [-> Relu] -> Q` (the operands in either
// order), which gives the product no quantization of its own. A Relu or Clip before the Q is an
// integer Clip after it by now (qdq-activation-to-clamp, exact): taken along as the clamp.
struct Residual {
  Node* add = nullptr;
  Dequantized r;
  Requantized q;
  Node* clamp = nullptr;  // the integer Clip that alone reads Q's output, or null
  int32_t low = 0, high = 0;  // the clamp's bounds, within the output type's range
};

// An integer Clip's constant bound (input i) of 8-bit `type`, or `fallback` when absent; nullopt
// when not constant.
std::optional<int32_t> integer_bound(const Node& clip, std::size_t i, DType type, int32_t fallback) {
  if (!clip.has_input(i)) return fallback;
  const Value* v = clip.inputs[i];
  if (!v->constant || v->constant->numel() != 1 || v->dtype != type) return std::nullopt;
  return static_cast<int32_t>(v->constant->int_at(0));
}

std::optional<Residual> match_residual(const Graph& g, const Value* y) {
  Node* add = g.only_reader(y);
  if (!is_op(add, "Add") || add->inputs.size() != 2 || !add->has_input(0) || !add->has_input(1) ||
      add->inputs[0] == add->inputs[1])
    return std::nullopt;
  const std::optional<Dequantized> r = match_dequantize(add->inputs[0] == y ? add->inputs[1] : add->inputs[0]);
  if (!r || !is_activation(*r) || r->data->constant) return std::nullopt;
  const std::optional<Requantized> q = match_quantize(g, add->outputs[0]);
  if (!q) return std::nullopt;
  Residual res{add, *r, *q};
  const DType type = q->quantize->inputs[2]->dtype;
  res.low = type == DType::Int8 ? -128 : 0;
  res.high = type == DType::Int8 ? 127 : 255;
  Node* clip = g.only_reader(q->quantize->outputs[0]);
  if (is_op(clip, "Clip") && clip->version >= 11 && clip->inputs[0] == q->quantize->outputs[0]) {
    const std::optional<int32_t> lo = integer_bound(*clip, 1, type, res.low), hi = integer_bound(*clip, 2, type, res.high);
    if (lo && hi && *lo <= *hi) {
      res.clamp = clip;
      res.low = std::max(res.low, *lo);
      res.high = std::min(res.high, *hi);
    }
  }
  return res;
}

// QLinearConv with the residual added before its requantization (kResidualInput) and the clamp
// in its attributes; the Add, Q and clamp go away.
// (QLinearConv's input kResidualInput, QLinearMatMul's kMatMulResidualInput: `at`.)
void take_residual(Node& op, std::size_t at, const Residual& res, std::set<const Node*>& removed) {
  op.inputs.resize(at + 3, nullptr);
  op.inputs[at] = res.r.data;
  op.inputs[at + 1] = res.r.scale;
  op.inputs[at + 2] = res.r.zero_point;
  const DType type = res.q.quantize->inputs[2]->dtype;
  if (res.low > (type == DType::Int8 ? -128 : 0)) op.set_attr_int(kResidualLowAttr, res.low);
  if (res.high < (type == DType::Int8 ? 127 : 255)) op.set_attr_int(kResidualHighAttr, res.high);
  removed.insert({res.add, res.q.quantize, res.q.relu, res.clamp});
  if (res.clamp) op.outputs = {res.clamp->outputs[0]};
}

// A product that took a residual runs where the Add did: after the residual's producer, which the
// file may list after the product (TensorRT's exports put a block's shortcut Conv after its main
// branch). Moved right after that producer, every input is written before it and every reader of
// its output (once after the Add) still runs after it.
void run_after_residuals(Graph& g) {
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = *g.nodes[i];
    const bool conv = is_op(&n, "QLinearConv");
    if (!conv && !is_op(&n, "QLinearMatMul") && !(n.domain == "onnxc" && n.op_type == "QLinearMatMulBias")) continue;
    const std::size_t r = conv ? kResidualInput : kMatMulResidualInput;
    const Node* producer = n.has_input(r) ? n.inputs[r]->producer : nullptr;
    if (!producer) continue;
    const auto at = std::find_if(g.nodes.begin() + static_cast<std::ptrdiff_t>(i) + 1, g.nodes.end(),
                                 [producer](const auto& p) { return p.get() == producer; });
    if (at == g.nodes.end()) continue;  // (written before it)
    std::rotate(g.nodes.begin() + static_cast<std::ptrdiff_t>(i), g.nodes.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                at + 1);  // n to just after its residual's producer
    --i;  // (the node now at i has not been looked at)
  }
}

bool lower_conv(Graph& g, Node& conv, std::set<const Node*>& removed) {
  const std::optional<Dequantized> x = match_dequantize(conv.inputs[0]);
  const std::optional<Dequantized> w = match_dequantize(conv.inputs[1]);
  if (!x || !w || !is_activation(*x) || !is_weight(*w, 0)) return false;
  Value* bias = nullptr;
  if (conv.has_input(2) && !(bias = match_bias(conv.inputs[2], *x, *w))) return false;
  std::optional<Requantized> q = match_quantize(g, conv.outputs[0]);
  const std::optional<Residual> residual = q ? std::nullopt : match_residual(g, conv.outputs[0]);
  if (residual) q = residual->q;
  if (!q) return false;
  const auto [weight, weight_zp] = int8_weight(g, *w);
  std::vector<Value*> inputs = {x->data, x->scale, x->zero_point, weight, w->scale, weight_zp,
                                q->quantize->inputs[1], q->quantize->inputs[2]};
  if (bias) inputs.push_back(bias);
  removed.insert({q->quantize, q->relu});
  rewrite(conv, "QLinearConv", std::move(inputs), *q);
  if (residual) take_residual(conv, kResidualInput, *residual, removed);
  return true;
}

bool lower_matmul(Graph& g, Node& matmul, std::set<const Node*>& removed) {
  const std::optional<Dequantized> a = match_dequantize(matmul.inputs[0]);
  const std::optional<Dequantized> b = match_dequantize(matmul.inputs[1]);
  // b a constant per tensor or per column ([K, N] along axis 1), or an activation (attention's
  // products of two run-time tensors).
  if (!a || !b || !is_activation(*a)) return false;
  if (!is_activation(*b) && (!is_weight(*b, 1) || b->data->shape.size() != 2)) return false;
  // A constant B's Linear bias added after the product (MatMul -> Add(DQ(int32 bias [N])) -> Q,
  // TFLite's FullyConnected and PyTorch 2's Linear as exported): QLinearMatMulBias.
  Node* add = is_activation(*b) ? nullptr : g.only_reader(matmul.outputs[0]);
  Value* bias = nullptr;
  if (is_op(add, "Add") && add->inputs.size() == 2) {
    const Value* other = add->inputs[0] == matmul.outputs[0] ? add->inputs[1] : add->inputs[0];
    bias = match_bias(other, *a, *b);
    if (!bias || bias->shape != Shape{b->data->shape[1]}) bias = nullptr;
  }
  const Value* product = bias ? add->outputs[0] : matmul.outputs[0];
  std::optional<Requantized> q = match_quantize(g, product);
  const std::optional<Residual> residual = q ? std::nullopt : match_residual(g, product);
  if (residual) q = residual->q;
  if (!q) return false;
  removed.insert({q->quantize, q->relu});
  const auto [weight, weight_zp] = is_activation(*b) ? std::pair{b->data, weight_zero_point(g, *b)} : int8_weight(g, *b);
  std::vector<Value*> inputs = {a->data, a->scale, a->zero_point, weight, b->scale, weight_zp,
                                q->quantize->inputs[1], q->quantize->inputs[2]};
  if (!bias) {
    rewrite(matmul, "QLinearMatMul", std::move(inputs), *q);
  } else {
    removed.insert(add);
    inputs.push_back(bias);
    rewrite_to_domain(matmul, "onnxc", "QLinearMatMulBias", std::move(inputs), *q);
  }
  if (residual) take_residual(matmul, kMatMulResidualInput, *residual, removed);
  return true;
}

// Gemm (alpha 1, beta 1, A not transposed) is MatMul plus a bias: B [K, N] quantized per
// column, or B' [N, K] per row (transposed here, at compile time).
bool lower_gemm(Graph& g, Node& gemm, std::set<const Node*>& removed) {
  if (gemm.attr_float("alpha", 1.0f) != 1.0f || gemm.attr_float("beta", 1.0f) != 1.0f || gemm.attr_int("transA", 0))
    return false;
  const bool trans_b = gemm.attr_int("transB", 0) != 0;
  const std::optional<Dequantized> a = match_dequantize(gemm.inputs[0]);
  const std::optional<Dequantized> b = match_dequantize(gemm.inputs[1]);
  if (!a || !b || !is_activation(*a) || !is_weight(*b, trans_b ? 0 : 1) || b->data->shape.size() != 2) return false;
  Value* bias = nullptr;
  if (gemm.has_input(2)) {
    bias = match_bias(gemm.inputs[2], *a, *b);
    const int64_t n = b->data->shape[trans_b ? 0 : 1];
    if (!bias || bias->shape != Shape{n}) return false;
  }
  std::optional<Requantized> q = match_quantize(g, gemm.outputs[0]);
  const std::optional<Residual> residual = q ? std::nullopt : match_residual(g, gemm.outputs[0]);
  if (residual) q = residual->q;
  if (!q) return false;
  const auto [weight, weight_zp] = int8_weight(g, *b);
  std::vector<Value*> inputs = {a->data, a->scale, a->zero_point, trans_b ? transposed_8bit(g, *weight) : weight,
                                b->scale, weight_zp, q->quantize->inputs[1], q->quantize->inputs[2]};
  removed.insert({q->quantize, q->relu});
  if (!bias) {
    gemm.attrs.clear();
    rewrite(gemm, "QLinearMatMul", std::move(inputs), *q);
  } else {
    inputs.push_back(bias);
    rewrite_to_domain(gemm, "onnxc", "QLinearMatMulBias", std::move(inputs), *q);
  }
  if (residual) take_residual(gemm, kMatMulResidualInput, *residual, removed);
  return true;
}

// Add or Mul of two activations: QLinearAdd or QLinearMul when both and the result have one
// 8-bit type.
bool lower_binary(Graph& g, Node& op, const char* qlinear_op, std::set<const Node*>& removed) {
  std::optional<Dequantized> a = match_dequantize(op.inputs[0]);
  std::optional<Dequantized> b = match_dequantize(op.inputs[1]);
  if (!a || !b || !is_activation(*a) || !is_activation(*b)) return false;
  const std::optional<Requantized> q = match_quantize(g, op.outputs[0]);
  if (!q) return false;
  const DType type = q->quantize->inputs[2]->dtype;
  for (Dequantized* d : {&*a, &*b})
    if (d->zero_point->dtype != type && !(d->data->constant && (d->data = flipped_8bit(g, *d->data)) &&
                                          (d->zero_point = flipped_8bit(g, *d->zero_point))))
      return false;
  removed.insert({q->quantize, q->relu});
  rewrite_to_domain(op, "com.microsoft", qlinear_op,
                    {a->data, a->scale, a->zero_point, b->data, b->scale, b->zero_point, q->quantize->inputs[1],
                     q->quantize->inputs[2]},
                    *q);
  return true;
}

// Unary elementwise float operators whose quantized form is a table: y = Q(f(DQ(x))) has one value
// per 8-bit x. (Clip qualifies when its bounds are constants.)
bool is_tabulable(const Node& n) {
  static const std::set<std::string> ops = {"Abs",     "Celu",    "Clip",     "Cos",     "Elu",         "Erf",
                                            "Exp",     "Gelu",    "HardSigmoid", "HardSwish", "LeakyRelu", "Log",
                                            "Mish",    "Neg",     "Reciprocal", "Relu",   "Selu",        "Sigmoid",
                                            "Sin",     "Softplus", "Softsign", "Sqrt",    "Tanh",        "ThresholdedRelu"};
  if (!n.domain.empty() || !ops.count(n.op_type)) return false;
  for (std::size_t i = 1; i < n.inputs.size(); ++i)
    if (n.inputs[i] && !n.inputs[i]->constant) return false;
  return true;
}

// A one-element operand of rank 0 or 1 (broadcasting it changes no shape): a float constant, or a
// DequantizeLinear of a constant (a quantizer's quantized scalar), as the float it stands for.
std::optional<float> scalar_operand(const Value* v) {
  if (constant_float(v) && v->constant->numel() == 1 && v->shape.size() <= 1) return v->constant->data<float>()[0];
  const std::optional<Dequantized> d = match_dequantize(v);
  if (!d || !d->data->constant || d->data->constant->numel() != 1 || d->data->shape.size() > 1 || d->axis >= 0)
    return std::nullopt;
  const int64_t zero = d->zero_point ? d->zero_point->constant->int_at(0) : 0;
  return static_cast<float>(d->data->constant->int_at(0) - zero) * d->scale->constant->data<float>()[0];
}

// Add, Sub, Mul, Div or Pow of an activation and a scalar (x / sqrt(2) and 0.5 x of an exported
// GELU, attention's scaling, 1 + erf): a unary function of the activation, so a table. Returns
// the index of the activation operand and the scalar, or nullopt.
std::optional<std::pair<std::size_t, float>> scalar_binary(const Node& n) {
  static const std::set<std::string> ops = {"Add", "Sub", "Mul", "Div", "Pow"};
  if (!n.domain.empty() || !ops.count(n.op_type) || n.inputs.size() != 2 || !n.has_input(0) || !n.has_input(1))
    return std::nullopt;
  for (std::size_t c : {std::size_t{1}, std::size_t{0}})
    if (const std::optional<float> v = scalar_operand(n.inputs[c])) return std::make_pair(1 - c, *v);
  return std::nullopt;
}

// The 256 values of an 8-bit type, lowest first.
Tensor all_values(DType type) {
  Tensor t(type, {256});
  for (int i = 0; i < 256; ++i) t.bytes[static_cast<std::size_t>(i)] = static_cast<uint8_t>(type == DType::Int8 ? i ^ 0x80 : i);
  return t;
}

// The 256 values of x's type dequantized as ONNX defines DQ.
Tensor dequantized_values(const Dequantized& x) {
  const float x_scale = x.scale->constant->data<float>()[0];
  const int64_t x_zero = x.zero_point->constant->int_at(0);
  const Tensor values = all_values(x.zero_point->dtype);
  Tensor dequantized(DType::Float, {256});
  for (int64_t i = 0; i < 256; ++i)
    dequantized.data<float>()[i] = static_cast<float>(values.int_at(i) - x_zero) * x_scale;
  return dequantized;
}

// op folded on a scratch graph, the inputs given in `replaced` (by index) taking the place of
// op's own; the float result, or empty when op cannot be folded or gives no 256 floats.
std::optional<Tensor> fold_replaced(const Node& op, std::vector<std::pair<std::size_t, Tensor>> replaced) {
  const OpDef* def = find_op(op.domain, op.op_type);
  if (!def || !def->fold) return std::nullopt;
  Graph scratch;
  Node f;
  f.name = op.name;
  f.op_type = op.op_type;
  f.domain = op.domain;
  f.opset = op.opset;
  f.version = op.version;
  f.attrs = op.attrs;
  f.inputs = op.inputs;
  for (auto& [index, value] : replaced)
    f.inputs[index] = add_constant(scratch, "in" + std::to_string(index), std::move(value));
  f.outputs = {scratch.add_unique_value("y")};
  def->infer(f);
  std::vector<Tensor> results;
  def->fold(f, results);
  if (results.empty() || results[0].dtype != DType::Float || results[0].numel() != 256) return std::nullopt;
  return std::move(results[0]);
}

// The table of the 256 float results f (one per value of `type`, lowest first) quantized by Q.
Tensor quantized_table(DType type, const Tensor& f, const Node& quantize) {
  const float y_scale = quantize.inputs[1]->constant->data<float>()[0];
  const float y_zero = static_cast<float>(quantize.inputs[2]->constant->int_at(0));
  Tensor table(type, {256});
  for (std::size_t i = 0; i < 256; ++i) {
    const float q = rt::round_half_even(f.data<float>()[i] / y_scale) + y_zero;
    table.bytes[i] = type == DType::Int8 ? static_cast<uint8_t>(rt::saturate_to<int8_t>(q)) : rt::saturate_to<uint8_t>(q);
  }
  return table;
}

// table[v] = Q(f(DQ(v))) for the 256 values v of x's type: DQ and Q as ONNX defines them, f by the
// operator's own fold on a scratch graph, x its input `x_index`, a binary operator's other operand
// the scalar `other` when given. Empty when f cannot be folded.
std::optional<Tensor> tabulate(const Node& op, const Dequantized& x, const Node& quantize, std::size_t x_index,
                               std::optional<float> other) {
  std::vector<std::pair<std::size_t, Tensor>> replaced;
  replaced.emplace_back(x_index, dequantized_values(x));
  if (other) {
    Tensor c(DType::Float, {});
    c.data<float>()[0] = *other;
    replaced.emplace_back(1 - x_index, std::move(c));
  }
  const std::optional<Tensor> f = fold_replaced(op, std::move(replaced));
  if (!f) return std::nullopt;
  return quantized_table(x.zero_point->dtype, *f, quantize);
}

bool lower_lookup(Graph& g, Node& op, std::set<const Node*>& removed) {
  const std::optional<std::pair<std::size_t, float>> binary = scalar_binary(op);
  const std::size_t x_index = binary ? binary->first : 0;
  if (!op.has_input(x_index) || (!binary && !is_tabulable(op))) return false;
  const std::optional<Dequantized> x = match_dequantize(op.inputs[x_index]);
  if (!x || !is_activation(*x)) return false;
  const std::optional<Requantized> q = match_quantize(g, op.outputs[0]);
  if (!q || q->quantize->inputs[2]->dtype != x->zero_point->dtype) return false;
  std::optional<Tensor> table =
      tabulate(op, *x, *q->quantize, x_index, binary ? std::optional<float>(binary->second) : std::nullopt);
  if (!table) return false;
  removed.insert({q->quantize, q->relu});
  Value* table_value = add_constant(g, op.name + "_table", std::move(*table));
  rewrite_to_domain(op, "onnxc", "QLinearLookup", {x->data, table_value}, *q);
  return true;
}

// The DequantizeLinear output (an 8-bit activation's) that v is an elementwise function of, through
// at most `depth` unary or scalar nodes: HardSwish exported at opset 13 as x * HardSigmoid(x),
// SiLU as x * Sigmoid(x).
const Value* function_source(const Value* v, int depth) {
  if (const std::optional<Dequantized> d = match_dequantize(v); d && is_activation(*d)) return v;
  const Node* n = v ? v->producer : nullptr;
  if (!n || depth == 0) return nullptr;
  if (const auto binary = scalar_binary(*n)) return function_source(n->inputs[binary->first], depth - 1);
  return is_tabulable(*n) && n->has_input(0) ? function_source(n->inputs[0], depth - 1) : nullptr;
}

// v's float value for each of the 256 values of `source`'s 8-bit activation (`dequantized`), v
// being `source` or a unary or scalar node of such a value; empty otherwise.
std::optional<Tensor> values_over(const Value* v, const Value* source, const Tensor& dequantized, int depth) {
  if (v == source) return dequantized;
  const Node* n = v->producer;
  if (!n || depth == 0) return std::nullopt;
  const auto binary = scalar_binary(*n);
  if (!binary && !is_tabulable(*n)) return std::nullopt;
  const std::size_t x_index = binary ? binary->first : 0;
  std::optional<Tensor> x = values_over(n->inputs[x_index], source, dequantized, depth - 1);
  if (!x) return std::nullopt;
  std::vector<std::pair<std::size_t, Tensor>> replaced;
  replaced.emplace_back(x_index, std::move(*x));
  if (binary) {
    Tensor c(DType::Float, {});
    c.data<float>()[0] = binary->second;
    replaced.emplace_back(1 - x_index, std::move(c));
  }
  return fold_replaced(*n, std::move(replaced));
}

// Add, Sub, Mul or Div of two elementwise functions of the same 8-bit activation, quantized: a
// function of that activation, so a table (x * HardSigmoid(x), x * Sigmoid(x) between DQ and Q).
// The nodes inside die when nothing else reads them.
bool lower_function_of_one(Graph& g, Node& op, std::set<const Node*>& removed) {
  static const std::set<std::string> ops = {"Add", "Sub", "Mul", "Div"};
  constexpr int kDepth = 3;
  if (!op.domain.empty() || !ops.count(op.op_type) || op.inputs.size() != 2 || !op.has_input(0) || !op.has_input(1))
    return false;
  const Value* source = function_source(op.inputs[0], kDepth);
  if (!source || function_source(op.inputs[1], kDepth) != source) return false;
  if (op.inputs[0]->shape != source->shape || op.inputs[1]->shape != source->shape) return false;
  const std::optional<Dequantized> x = match_dequantize(source);
  const std::optional<Requantized> q = match_quantize(g, op.outputs[0]);
  if (!q || q->quantize->inputs[2]->dtype != x->zero_point->dtype) return false;
  const Tensor dequantized = dequantized_values(*x);
  std::optional<Tensor> a = values_over(op.inputs[0], source, dequantized, kDepth);
  std::optional<Tensor> b = a ? values_over(op.inputs[1], source, dequantized, kDepth) : std::nullopt;
  if (!b) return false;
  std::vector<std::pair<std::size_t, Tensor>> replaced;
  replaced.emplace_back(0, std::move(*a));
  replaced.emplace_back(1, std::move(*b));
  const std::optional<Tensor> f = fold_replaced(op, std::move(replaced));
  if (!f) return false;
  removed.insert({q->quantize, q->relu});
  Value* table_value = add_constant(g, op.name + "_table", quantized_table(x->zero_point->dtype, *f, *q->quantize));
  rewrite_to_domain(op, "onnxc", "QLinearLookup", {x->data, table_value}, *q);
  return true;
}

// Softmax over 8-bit logits whose result is quantized to their type: QLinearSoftmax (a table of
// exp per difference to the row's largest logit, an int32 sum; onnxc/quant_softmax.h), within a
// step of the float definition.
bool lower_softmax(Graph& g, Node& softmax, std::set<const Node*>& removed) {
  if (!is_op(&softmax, "Softmax") || !softmax.has_input(0)) return false;
  const std::optional<Dequantized> x = match_dequantize(softmax.inputs[0]);
  if (!x || !is_activation(*x)) return false;
  const std::optional<Requantized> q = match_quantize(g, softmax.outputs[0]);
  if (!q || q->relu || q->quantize->inputs[2]->dtype != x->zero_point->dtype) return false;
  const int64_t opset = softmax.version;
  const int64_t axis = softmax.attr_int("axis", opset < 13 ? 1 : -1);
  removed.insert(q->quantize);
  rewrite_to_domain(softmax, "com.microsoft", "QLinearSoftmax",
                    {x->data, x->scale, x->zero_point, q->quantize->inputs[1], q->quantize->inputs[2]}, *q);
  softmax.set_attr_int("axis", axis);
  softmax.set_attr_int("opset", opset);
  return true;
}

// An average over each whole plane: GlobalAveragePool, or an AveragePool whose window is the
// plane (no padding, no dilation), as exporters write global pooling.
bool is_global_average(const Node& n) {
  if (!n.has_input(0)) return false;
  if (is_op(&n, "GlobalAveragePool")) return true;
  if (!is_op(&n, "AveragePool")) return false;
  const Shape& x = n.inputs[0]->shape;
  if (x.size() < 3 || n.attr_string("auto_pad", "NOTSET") != "NOTSET") return false;
  const std::vector<int64_t> plane(x.begin() + 2, x.end());
  const auto all = [](const std::vector<int64_t>& v, int64_t value) {
    return std::all_of(v.begin(), v.end(), [value](int64_t d) { return d == value; });
  };
  return n.attr_ints("kernel_shape") == plane && all(n.attr_ints("pads"), 0) && all(n.attr_ints("dilations"), 1);
}

// A ReduceMean's reduced axes, sorted and non-negative; empty when it reduces nothing or its axes
// are not constant. (No axes reduce every axis unless noop_with_empty_axes.)
std::vector<int64_t> mean_axes(const Node& n) {
  if (!is_op(&n, "ReduceMean") || !n.has_input(0) || !n.has_output(0)) return {};
  const auto rank = static_cast<int64_t>(n.inputs[0]->shape.size());
  std::vector<int64_t> axes = n.attr_ints("axes");
  if (n.has_input(1)) {
    const Value* a = n.inputs[1];
    if (!a->constant || a->dtype != DType::Int64) return {};
    axes.clear();
    for (int64_t i = 0; i < a->constant->numel(); ++i) axes.push_back(a->constant->int_at(i));
  }
  if (axes.empty() && !n.attr_int("noop_with_empty_axes", 0))
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  for (int64_t& a : axes) a = a < 0 ? a + rank : a;
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  if (axes.empty() || axes.front() < 0 || axes.back() >= rank) return {};
  return axes;
}

// `from` through a new node of `op_type` (constant int64 `ints` as its second input when given,
// else attribute perm) into a new 8-bit value, inserted after `after`.
Value* insert_move(Graph& g, const Node& like, const Node* after, Value* from, const char* op_type,
                   const std::vector<int64_t>& ints) {
  Value* to = g.add_unique_value(from->name + "_" + op_type);
  std::vector<Value*> inputs = {from};
  if (std::string(op_type) == "Reshape") {
    Tensor shape(DType::Int64, {static_cast<int64_t>(ints.size())});
    std::copy(ints.begin(), ints.end(), shape.data<int64_t>());
    inputs.push_back(add_constant(g, to->name + "_shape", std::move(shape)));
  }
  Node* n = insert_node_after(g, after, make_node(like, std::string("_") + op_type, "", op_type, 14, inputs, {to}));
  if (std::string(op_type) == "Transpose") {
    n->version = 13;
    n->set_attr_ints("perm", ints);
  }
  find_op(n->domain, n->op_type)->infer(*n);
  return to;
}

// DQ -> GlobalAveragePool (or an AveragePool over whole planes) -> Q is QLinearGlobalAveragePool;
// so is DQ -> ReduceMean -> Q over any axes, the 8-bit input viewed as [1, kept, reduced]: a
// Transpose on the 8-bit tensor first when the reduced axes are not the last ones (transformers'
// mean over the tokens), a Reshape after it to the ReduceMean's output shape. PyTorch's
// x.mean([2, 3]) (MnasNet, ShuffleNet) needs no Transpose.
bool lower_global_average(Graph& g, Node& pool, std::set<const Node*>& removed) {
  const std::vector<int64_t> axes = mean_axes(pool);
  if (axes.empty() && !is_global_average(pool)) return false;
  const std::optional<Dequantized> x = match_dequantize(pool.inputs[0]);
  if (!x || !is_activation(*x)) return false;
  const std::optional<Requantized> q = match_quantize(g, pool.outputs[0]);
  if (!q || q->quantize->inputs[2]->dtype != x->zero_point->dtype) return false;
  removed.insert({q->quantize, q->relu});
  Value* in = x->data;
  Value* out = q->quantize->outputs[0];
  const Shape out_shape = out->shape;  // (inferring the pool below writes the pool's own)
  const Shape x_shape = in->shape;
  const auto rank = static_cast<int64_t>(x_shape.size());
  bool planes = !axes.empty() && rank >= 3 && axes.size() == static_cast<std::size_t>(rank - 2) && axes.front() == 2;
  if (!axes.empty() && !planes) {
    std::vector<int64_t> perm, view = {1, 1, 1};
    for (int64_t a = 0; a < rank; ++a)
      if (!std::binary_search(axes.begin(), axes.end(), a)) perm.push_back(a), view[1] *= x_shape[static_cast<std::size_t>(a)];
    for (int64_t a : axes) perm.push_back(a), view[2] *= x_shape[static_cast<std::size_t>(a)];
    const Node* after = pool.inputs[0]->producer;
    bool identity = true;
    for (std::size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
    if (!identity) {
      in = insert_move(g, pool, after, in, "Transpose", perm);
      after = in->producer;
    }
    in = insert_move(g, pool, after, in, "Reshape", view);
  }
  rewrite_to_domain(pool, "com.microsoft", "QLinearGlobalAveragePool",
                    {in, x->scale, x->zero_point, q->quantize->inputs[1], q->quantize->inputs[2]}, *q);
  find_op(pool.domain, pool.op_type)->infer(pool);
  if (axes.empty() || (planes && out_shape == out->shape)) return true;
  out->shape = out_shape;
  // [.., 1, ...] to the shape the ReduceMean wrote: a Reshape of the 8-bit tensor.
  Value* pooled = g.add_unique_value(out->name + "_pooled");
  pool.outputs[0] = pooled;
  pooled->producer = &pool;
  find_op(pool.domain, pool.op_type)->infer(pool);
  Tensor shape(DType::Int64, {static_cast<int64_t>(out_shape.size())});
  std::copy(out_shape.begin(), out_shape.end(), shape.data<int64_t>());
  Node* reshape = insert_node_after(g, &pool, make_node(pool, "_reshape", "", "Reshape", 14,
                                                        {pooled, add_constant(g, out->name + "_shape", std::move(shape))}, {out}));
  find_op(reshape->domain, reshape->op_type)->infer(*reshape);
  return true;
}

// A 2-D AveragePool over windows whose every average divides by the whole window (no padding, or
// count_include_pad; no partial window of ceil_mode; no dilation) is a depthwise convolution with weights 1 of
// scale 1 / window: QLinearConv (padding with the zero point adds 0) reading and writing the 8-bit
// tensors, with each target's depthwise kernel. Its one requantization multiplies the exact
// integer sum by x_scale / (window * y_scale); the float step rounds each tap first, so a value
// on a rounding tie can come out one step apart.
bool lower_average_pool(Graph& g, Node& pool, std::set<const Node*>& removed) {
  if (!is_op(&pool, "AveragePool") || !pool.has_input(0) || is_global_average(pool)) return false;
  const Shape& x_shape = pool.inputs[0]->shape;
  const Shape& y_shape = pool.outputs[0]->shape;
  const std::vector<int64_t> kernel = pool.attr_ints("kernel_shape");
  if (x_shape.size() != 4 || y_shape.size() != 4 || kernel.size() != 2) return false;
  const std::string auto_pad = pool.attr_string("auto_pad", "NOTSET");
  std::vector<int64_t> pads = pool.attr_ints("pads");
  std::vector<int64_t> strides = pool.attr_ints("strides");
  const std::vector<int64_t> dilations = pool.attr_ints("dilations");
  if (strides.empty()) strides = {1, 1};
  if (std::any_of(dilations.begin(), dilations.end(), [](int64_t d) { return d != 1; })) return false;
  if (pads.empty()) pads = {0, 0, 0, 0};
  const bool padded = std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; });
  if (auto_pad != "NOTSET" && auto_pad != "VALID") return false;
  if (padded && !pool.attr_int("count_include_pad", 0)) return false;
  for (std::size_t d = 0; d < 2; ++d) {  // the output floor's division gives: no partial window
    const int64_t span = kernel[d];
    const int64_t in = x_shape[2 + d] + (auto_pad == "VALID" ? 0 : pads[d] + pads[d + 2]);
    if (in < span || (in - span) / strides[d] + 1 != y_shape[2 + d]) return false;
  }
  const std::optional<Dequantized> x = match_dequantize(pool.inputs[0]);
  if (!x || !is_activation(*x)) return false;
  const std::optional<Requantized> q = match_quantize(g, pool.outputs[0]);
  if (!q || q->quantize->inputs[2]->dtype != x->zero_point->dtype) return false;
  const int64_t channels = x_shape[1];
  Tensor ones(DType::Int8, {channels, 1, kernel[0], kernel[1]});
  std::fill(ones.bytes.begin(), ones.bytes.end(), uint8_t{1});
  Tensor scale(DType::Float, {});
  scale.data<float>()[0] = 1.0f / static_cast<float>(kernel[0] * kernel[1]);
  Value* w = add_constant(g, pool.name + "_ones", std::move(ones));
  Value* w_scale = add_constant(g, pool.name + "_ones_scale", std::move(scale));
  Value* w_zero = scalar_constant(g, pool.name + "_ones_zero_point", DType::Int8, 0);
  removed.insert({q->quantize, q->relu});
  rewrite(pool, "QLinearConv",
          {x->data, x->scale, x->zero_point, w, w_scale, w_zero, q->quantize->inputs[1], q->quantize->inputs[2]}, *q);
  pool.attrs.clear();
  pool.set_attr_ints("kernel_shape", kernel);
  pool.set_attr_ints("strides", strides);
  if (auto_pad == "NOTSET") pool.set_attr_ints("pads", pads);
  pool.set_attr_int("group", channels);
  const OpDef* def = find_op(pool.domain, pool.op_type);
  if (def) def->infer(pool);
  return true;
}

// DQ(x) -> Resize (linear or cubic) -> Q of x's 8-bit type: onnxc.QLinearResize, the blend in fixed
// point, within a step of the float definition (compiler/ops/resize.cpp); where its kernel has no
// form (integer_resize_refusal) the Resize stays float and --report says why.
bool lower_resize(Graph& g, Node& resize, std::set<const Node*>& removed) {
  if (!is_op(&resize, "Resize") || !resize.has_input(0) || resize.attr_string("mode", "nearest") == "nearest")
    return false;
  const std::optional<Dequantized> x = match_dequantize(resize.inputs[0]);
  if (!x || !is_activation(*x)) return false;
  const std::optional<Requantized> q = match_quantize(g, resize.outputs[0]);
  if (!q || q->quantize->inputs[2]->dtype != x->zero_point->dtype) return false;
  const double ratio = static_cast<double>(x->scale->constant->data<float>()[0]) /
                       q->quantize->inputs[1]->constant->data<float>()[0];
  if (!integer_resize_refusal(resize, ratio).empty()) return false;
  std::vector<Value*> inputs = {x->data, nullptr, nullptr, nullptr, x->scale, x->zero_point, q->quantize->inputs[1],
                                q->quantize->inputs[2]};
  for (std::size_t i = 1; i < 4; ++i) inputs[i] = resize.has_input(i) ? resize.inputs[i] : nullptr;
  removed.insert({q->quantize, q->relu});
  const int64_t opset = resize.version;
  resize.domain = "onnxc";
  resize.op_type = "QLinearResize";
  resize.version = 1;
  resize.inputs = std::move(inputs);
  resize.outputs = {q->quantize->outputs[0]};
  resize.set_attr_int("opset", opset);
  const OpDef* def = find_op(resize.domain, resize.op_type);
  if (def) def->infer(resize);
  return true;
}

}  // namespace

// One pass over the 8-bit tensor instead of several, the same values.
int compose_lookups(Graph& g) {
  std::set<const Node*> removed;
  for (const auto& n : g.nodes) {
    Node& b = *n;
    if (b.domain != "onnxc" || b.op_type != "QLinearLookup") continue;
    Node* a = b.inputs[0]->producer;
    if (!a || removed.count(a) || a->domain != "onnxc" || a->op_type != "QLinearLookup" || g.only_reader(b.inputs[0]) != &b)
      continue;
    const Tensor& first = *a->inputs[1]->constant;
    const Tensor& second = *b.inputs[1]->constant;
    const uint8_t flip = first.dtype == DType::Int8 ? 0x80 : 0;  // the table index of value v: v less the lowest
    Tensor both(first.dtype, {256});
    for (std::size_t i = 0; i < 256; ++i) both.bytes[i] = second.bytes[static_cast<uint8_t>(first.bytes[i] ^ flip)];
    b.inputs = {a->inputs[0], add_constant(g, b.name + "_composed_table", std::move(both))};
    removed.insert(a);
  }
  erase_nodes(g, removed);
  return static_cast<int>(removed.size());
}


int lower_qdq_pools(Graph& g) {
  int lowered = 0;
  std::set<const Node*> removed;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {  // by index: a lowered ReduceMean inserts a Reshape
    Node* n = g.nodes[i].get();
    if (!removed.count(n) && (lower_global_average(g, *n, removed) || lower_average_pool(g, *n, removed) ||
                              lower_resize(g, *n, removed)))
      ++lowered;
  }
  erase_nodes(g, removed);
  return lowered;
}

int lower_qdq(Graph& g) {
  int lowered = 0;
  std::set<const Node*> removed;
  for (const auto& n : g.nodes) {
    if (removed.count(n.get())) continue;
    if ((is_op(n.get(), "Conv") && lower_conv(g, *n, removed)) ||
        (is_op(n.get(), "MatMul") && lower_matmul(g, *n, removed)) ||
        (is_op(n.get(), "Gemm") && lower_gemm(g, *n, removed)) ||
        (is_op(n.get(), "Add") && lower_binary(g, *n, "QLinearAdd", removed)) ||
        (is_op(n.get(), "Mul") && lower_binary(g, *n, "QLinearMul", removed)) ||
        lower_softmax(g, *n, removed) || lower_lookup(g, *n, removed) ||
        lower_function_of_one(g, *n, removed))
      ++lowered;
  }
  erase_nodes(g, removed);
  run_after_residuals(g);
  return lowered;
}

}  // namespace onnxc
