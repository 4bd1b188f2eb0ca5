// RNN, GRU, LSTM: one recurrent layer each, kernels in runtime-support/onnxc/rnn.h.
//
// The three share their inputs' layout (X, W, R, B, sequence_lens, initial_h, then LSTM's
// initial_c and P), their outputs (Y, Y_h, then LSTM's Y_c) and their attributes; they differ in
// the number of gates per hidden unit and of activation functions per direction.
#include <algorithm>
#include <cctype>
#include <limits>

#include "onnxc/rnn.h"
#include "ops/conv_algorithm.h"
#include "ops/emitter.h"
#include "ops/recurrent.h"

namespace onnxc {
namespace {

enum Input { kX, kW, kR, kB, kSeqLens, kInitialH, kInitialC, kPeepholes };
enum Output { kY, kYh, kYc };

bool state_in_outputs(const Node& n) { return n.attr_int(kStateInOutputsAttr, 0) == 1; }
bool projected(const Node& n) { return n.attr_int(kProjectedAttr, 0) == 1; }

}  // namespace

bool lstm_can_keep_state_in_outputs(const Node& n) {
  const DType t = n.inputs[kX]->dtype;
  return n.op_type == "LSTM" && (t == DType::Float || t == DType::Double) && n.has_output(kY) && n.has_output(kYc);
}

namespace {

struct RecurrentOp {
  const char* name;
  const char* kernel;                    // rt::<kernel> in onnxc/rnn.h
  int gates;                             // rows of W and R per hidden unit
  std::vector<const char*> functions;    // default activation per slot (f, g, h)
  int max_inputs, max_outputs;
  rt::index_t (*scratch_elements)(rt::index_t hidden);
};

// The sizes every input and output shape derives from.
struct Dims {
  int64_t seq, batch, input, hidden, directions;
  bool batch_major;
};

int64_t direction_count(const Node& n) {
  std::string dir = n.attr_string("direction", "forward");
  if (dir == "forward" || dir == "reverse") return 1;
  if (dir == "bidirectional") return 2;
  fail_invalid(n, fmt::format("direction '{}' is not one of forward, reverse, bidirectional", dir));
}

bool batch_major(const Node& n) {
  int64_t layout = n.attr_int("layout", 0);
  if (layout != 0 && n.version < 14) fail_invalid(n, fmt::format("'layout' exists from version 14 (this is {})", n.version));
  if (layout != 0 && layout != 1) fail_invalid(n, fmt::format("layout {} is not 0 or 1", layout));
  return layout == 1;
}

void require_optional_shape(const Node& n, std::size_t i, const char* what, const Shape& want) {
  if (!n.has_input(i)) return;
  if (n.inputs[i]->shape != want)
    fail_invalid(n, fmt::format("{} (input {}) has shape {}; expected {}", what, i, shape_str(n.inputs[i]->shape),
                                shape_str(want)));
}

Shape state_shape(const Dims& d) {
  return d.batch_major ? Shape{d.batch, d.directions, d.hidden} : Shape{d.directions, d.batch, d.hidden};
}

// Reads the sizes from X and R and checks every input against them.
Dims recurrent_dims(const Node& n, const RecurrentOp& op) {
  const Value& x = input(n, kX);
  const Value& r = input(n, kR);
  if (x.shape.size() != 3) fail_invalid(n, fmt::format("X has shape {}; expected rank 3", shape_str(x.shape)));
  if (r.shape.size() != 3) fail_invalid(n, fmt::format("R has shape {}; expected rank 3", shape_str(r.shape)));
  Dims d;
  d.batch_major = batch_major(n);
  d.seq = d.batch_major ? x.shape[1] : x.shape[0];
  d.batch = d.batch_major ? x.shape[0] : x.shape[1];
  d.input = x.shape[2];
  d.directions = direction_count(n);
  d.hidden = r.shape[2];
  if (n.has_attr("hidden_size") && n.attr_int("hidden_size", 0) != d.hidden)
    fail_invalid(n, fmt::format("hidden_size {} differs from R's last dim {}", n.attr_int("hidden_size", 0), d.hidden));
  const int64_t rows = op.gates * d.hidden;
  require_optional_shape(n, kW, "W", {d.directions, rows, d.input});
  require_optional_shape(n, kR, "R", {d.directions, rows, d.hidden});
  require_optional_shape(n, kB, "B", {d.directions, 2 * rows});
  require_optional_shape(n, kSeqLens, "sequence_lens", {d.batch});
  require_optional_shape(n, kInitialH, "initial_h", state_shape(d));
  if (op.gates == 4) {
    require_optional_shape(n, kInitialC, "initial_c", state_shape(d));
    require_optional_shape(n, kPeepholes, "P", {d.directions, 3 * d.hidden});
  }
  return d;
}

// ---- activation functions ----

struct ActivationInfo {
  const char* name;
  rt::RnnActivation kind;
  bool uses_alpha, uses_beta;
  float default_alpha, default_beta;  // the defaults of the ONNX operators of the same name
};

const std::vector<ActivationInfo>& activation_table() {
  using K = rt::RnnActivation;
  static const std::vector<ActivationInfo> table = {
      {"Relu", K::Relu, false, false, 0, 0},
      {"Tanh", K::Tanh, false, false, 0, 0},
      {"Sigmoid", K::Sigmoid, false, false, 0, 0},
      {"Affine", K::Affine, true, true, 1.0f, 0.0f},
      {"LeakyRelu", K::LeakyRelu, true, false, 0.01f, 0},
      {"ThresholdedRelu", K::ThresholdedRelu, true, false, 1.0f, 0},
      {"ScaledTanh", K::ScaledTanh, true, true, 1.0f, 1.0f},
      {"HardSigmoid", K::HardSigmoid, true, true, 0.2f, 0.5f},
      {"Elu", K::Elu, true, false, 1.0f, 0},
      {"Softsign", K::Softsign, false, false, 0, 0},
      {"Softplus", K::Softplus, false, false, 0, 0},
  };
  return table;
}

// Activation names compare case-insensitively: exporters write "tanh" as well as "Tanh".
bool same_name(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

const ActivationInfo& activation_info(const Node& n, const std::string& name) {
  for (const ActivationInfo& a : activation_table())
    if (same_name(name, a.name)) return a;
  fail_invalid(n, fmt::format("activation '{}' is not one of Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, "
                              "ScaledTanh, HardSigmoid, Elu, Softsign, Softplus",
                              name));
}

const char* activation_name(rt::RnnActivation k) {
  for (const ActivationInfo& a : activation_table())
    if (a.kind == k) return a.name;
  return "Tanh";
}

// The activation functions of every direction, slot by slot (f, g, h for direction 0, then
// direction 1). activation_alpha and activation_beta are consumed in that order by the
// functions that take them; functions past the end of those lists get their defaults.
std::vector<rt::RnnFunction> activations(const Node& n, const RecurrentOp& op, int64_t directions) {
  const std::size_t per_direction = op.functions.size();
  std::vector<std::string> names;
  if (const Attribute* a = n.attr("activations")) names = a->strings;
  if (names.empty())
    for (int64_t d = 0; d < directions; ++d) names.insert(names.end(), op.functions.begin(), op.functions.end());
  // A bidirectional layer given one direction's functions uses them for both.
  if (directions == 2 && names.size() == per_direction) names.insert(names.end(), names.begin(), names.end());
  if (names.size() != per_direction * static_cast<std::size_t>(directions))
    fail_invalid(n, fmt::format("'activations' has {} functions; {} {} needs {} per direction", names.size(),
                                directions == 2 ? "a bidirectional" : "a one-direction", op.name, per_direction));
  std::vector<float> alphas = n.attr_floats("activation_alpha"), betas = n.attr_floats("activation_beta");
  std::size_t next_alpha = 0, next_beta = 0;
  std::vector<rt::RnnFunction> fns;
  for (const std::string& name : names) {
    const ActivationInfo& info = activation_info(n, name);
    rt::RnnFunction f{info.kind, 0.0f, 0.0f};
    if (info.uses_alpha) f.alpha = next_alpha < alphas.size() ? alphas[next_alpha++] : info.default_alpha;
    if (info.uses_beta) f.beta = next_beta < betas.size() ? betas[next_beta++] : info.default_beta;
    fns.push_back(f);
  }
  return fns;
}

std::string function_literal(const rt::RnnFunction& f) {
  return fmt::format("rt::RnnFunction{{rt::RnnActivation::{}, {}, {}}}", activation_name(f.kind),
                     float_literal(f.alpha), float_literal(f.beta));
}

void infer_recurrent(Node& n, const RecurrentOp& op) {
  check_arity(n, 3, op.max_inputs, 0, op.max_outputs);
  require_float(n, kX);
  DType t = n.inputs[kX]->dtype;
  for (std::size_t i = 1; i < n.inputs.size(); ++i)
    if (n.has_input(i) && i != kSeqLens && n.inputs[i]->dtype != t)
      fail_invalid(n, fmt::format("input {} has element type {}; X has {}", i, dtype_name(n.inputs[i]->dtype),
                                  dtype_name(t)));
  if (n.has_input(kSeqLens)) require_dtype(n, kSeqLens, {DType::Int32});
  if (op.gates == 4 && n.attr_int("input_forget", 0) != 0 && n.attr_int("input_forget", 0) != 1)
    fail_invalid(n, "input_forget must be 0 or 1");
  Dims d = recurrent_dims(n, op);
  activations(n, op, d.directions);  // validates the activation attributes
  Shape y = d.batch_major ? Shape{d.batch, d.seq, d.directions, d.hidden} : Shape{d.seq, d.directions, d.batch, d.hidden};
  set_output(n, kY, t, y);
  set_output(n, kYh, t, state_shape(d));
  set_output(n, kYc, t, state_shape(d));
}

// ---- code generation ----

std::string params_code(const Node& n, const RecurrentOp& op) {
  Dims d = recurrent_dims(n, op);
  std::vector<rt::RnnFunction> fns = activations(n, op, d.directions);
  const std::size_t per_direction = op.functions.size();
  // Slot s of both directions, e.g. "{f0, f1}"; unused slots repeat direction 0 or the first slot.
  auto slot = [&](std::size_t s) {
    std::size_t used = std::min(s, per_direction - 1);
    const rt::RnnFunction& f0 = fns[used];
    const rt::RnnFunction& f1 = d.directions == 2 ? fns[per_direction + used] : f0;
    return fmt::format("{{{}, {}}}", function_literal(f0), function_literal(f1));
  };
  float clip = n.has_attr("clip") ? n.attr_float("clip", 0) : std::numeric_limits<float>::infinity();
  auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
  return params_literal("rt::RnnParams",
                        {{"seq_length", fmt::format("{}", d.seq)},
                         {"batch", fmt::format("{}", d.batch)},
                         {"input_size", fmt::format("{}", d.input)},
                         {"hidden_size", fmt::format("{}", d.hidden)},
                         {"directions", fmt::format("{}", d.directions)},
                         {"reverse", flag(n.attr_string("direction", "forward") == "reverse")},
                         {"batch_major", flag(d.batch_major)},
                         {"clip", float_literal(clip)},
                         {"input_forget", flag(op.gates == 4 && n.attr_int("input_forget", 0) != 0)},
                         {"linear_before_reset", flag(op.gates == 3 && n.attr_int("linear_before_reset", 0) != 0)},
                         {"f", slot(0)},
                         {"g", slot(1)},
                         {"h", slot(2)},
                         {"packed", flag(n.attr_int(kPackedWeightsAttr, 0) != 0)},
                         {"projected", flag(projected(n))}});
}

// Bytes of `elements` values of the kernel's compute type for the node's element type.
std::size_t compute_bytes(const Node& n, int64_t elements) {
  std::size_t size = 0;
  dispatch_dtype(n, n.inputs[kX]->dtype, [&](auto tag) { size = sizeof(rt::compute_t<typename decltype(tag)::type>); });
  return static_cast<std::size_t>(elements) * size;
}

OpDef recurrent_op(const RecurrentOp& op, std::vector<int> versions) {
  OpDef d;
  d.op_type = op.name;
  d.versions = std::move(versions);
  d.infer = [op](Node& n) { infer_recurrent(n, op); };
  d.emit = [op](const Node& n, Emitter& e) {
    e.include("onnxc/rnn.h");
    e.linef("constexpr rt::RnnParams p = {};", params_code(n, op));
    // Omitted optional inputs and outputs are passed as nullptr; T is explicit for that.
    std::vector<std::string> args = {e.in(kX), e.in(kW), e.in(kR), e.in(kB), e.in(kSeqLens), e.in(kInitialH)};
    if (op.gates == 4) args.insert(args.end(), {e.in(kInitialC), e.in(kPeepholes)});
    args.insert(args.end(), {e.out(kY), e.out(kYh)});
    if (op.gates == 4) args.push_back(e.out(kYc));
    if (state_in_outputs(n) && projected(n))
      e.linef("rt::{}_in_outputs<{}>(p, {}, {});", op.kernel, ctype_of(*n.inputs[kX]), fmt::join(args, ", "),
              e.scratch());
    else if (state_in_outputs(n))
      e.linef("rt::{}_in_outputs<{}>(p, {});", op.kernel, ctype_of(*n.inputs[kX]), fmt::join(args, ", "));
    else
      e.linef("rt::{}<{}>(p, {}, {});", op.kernel, ctype_of(*n.inputs[kX]), fmt::join(args, ", "), e.scratch());
  };
  d.scratch_bytes = [op](const Node& n) {
    const std::size_t projections = projected(n) ? lstm_projection_bytes(n) : 0;
    return (state_in_outputs(n) ? 0 : compute_bytes(n, op.scratch_elements(n.inputs[kR]->shape[2]))) + projections;
  };
  // Every time step of every direction and batch entry: gates * hidden rows of W (input
  // columns) and of R (hidden columns), the gates' elementwise work not counted.
  d.macs = [op](const Node& n) {
    Dims dims = recurrent_dims(n, op);
    return dims.directions * dims.seq * dims.batch * op.gates * dims.hidden * (dims.input + dims.hidden);
  };
  return d;
}

}  // namespace

bool lstm_packs_weights(const Node& n, bool simd) {
  return simd && n.op_type == "LSTM" && n.inputs[kX]->dtype == DType::Float && n.inputs[kW]->constant &&
         n.inputs[kR]->constant;
}

std::size_t lstm_gate_scratch_bytes(const Node& n) {
  return compute_bytes(n, rt::lstm_scratch_elements(n.inputs[kR]->shape[2]));
}

// One direction's projections (the directions take turns): a row of 4 * hidden per X row.
std::size_t lstm_projection_bytes(const Node& n) {
  const Shape& x = n.inputs[kX]->shape;
  const int64_t input = x.back(), rows = input > 0 ? shape_numel(x) / input : 0;
  return compute_bytes(n, rt::lstm_projection_elements(rows, 1, n.inputs[kR]->shape[2]));
}

namespace {

const OpRegistrar rnn_op(recurrent_op({"RNN", "rnn", 1, {"Tanh"}, 6, 2, rt::rnn_scratch_elements}, {1, 7, 14, 22}));
const OpRegistrar gru_op(recurrent_op({"GRU", "gru", 3, {"Sigmoid", "Tanh"}, 6, 2, rt::gru_scratch_elements},
                                      {1, 3, 7, 14, 22}));
const OpRegistrar lstm_op(recurrent_op({"LSTM", "lstm", 4, {"Sigmoid", "Tanh", "Tanh"}, 8, 3, rt::lstm_scratch_elements},
                                       {1, 7, 14, 22}));

}  // namespace
}  // namespace onnxc
