// The optimizers of the training domain ai.onnx.preview.training (version 1): Adagrad, Adam and
// Momentum, one update step of one or more tensors (kernels: onnxc/optimizer.h).
//
// Their inputs are the scalar learning rate R and update count T, then n tensors to optimize
// and, for each further per-tensor role, n more: Adagrad R, T, X1..Xn, G1..Gn, H1..Hn; Adam
// adds V before H; Momentum has V instead of H. The outputs are the new X1..Xn, then the new
// state tensors in the order of the inputs after the gradients.
#include "onnxc/optimizer.h"
#include "ops/elementwise.h"
#include "ops/emitter.h"

namespace onnxc {
namespace {

constexpr const char* kTrainingDomain = "ai.onnx.preview.training";
constexpr std::size_t kRate = 0, kStep = 1, kFirstTensor = 2;

// The per-tensor roles of one optimizer: input roles (X, G, then the state tensors) and output
// roles (X_new, then the new state tensors). Role 0 is X; role 1 (G) has no output.
struct Roles {
  std::size_t inputs;
  std::size_t outputs() const { return inputs - 1; }
};

// How many tensors the node optimizes.
std::size_t tensor_count(const Node& n, Roles r) { return (n.inputs.size() - kFirstTensor) / r.inputs; }

// Index of the k-th tensor's input of role `role` (0 = X, 1 = G, 2.. = state).
std::size_t tensor_input(const Node& n, Roles r, std::size_t role, std::size_t k) {
  return kFirstTensor + role * tensor_count(n, r) + k;
}

// Index of the k-th tensor's output of role `role` (0 = X_new, 1.. = new state).
std::size_t tensor_output(const Node& n, Roles r, std::size_t role, std::size_t k) {
  return role * tensor_count(n, r) + k;
}

void infer_optimizer(Node& n, Roles r) {
  check_arity(n, static_cast<int>(kFirstTensor + r.inputs), -1, static_cast<int>(r.outputs()), -1);
  const std::size_t tensors = n.inputs.size() - kFirstTensor;
  if (tensors % r.inputs != 0)
    fail_invalid(n, fmt::format("has {} inputs after R and T; expected {} per optimized tensor", tensors, r.inputs));
  const std::size_t count = tensors / r.inputs;
  if (n.outputs.size() != count * r.outputs())
    fail_invalid(n, fmt::format("optimizes {} tensors, so it must have {} outputs ({} per tensor), not {}", count,
                                count * r.outputs(), r.outputs(), n.outputs.size()));
  require_input_dtype(n, kRate, {DType::Float, DType::Double});
  require_input_dtype(n, kStep, {DType::Int64});
  if (input(n, kRate).numel() != 1 || input(n, kStep).numel() != 1)
    fail_invalid(n, fmt::format("R {} and T {} must be scalars", shape_str(input(n, kRate).shape),
                                shape_str(input(n, kStep).shape)));
  for (std::size_t k = 0; k < count; ++k) {
    const std::size_t x = tensor_input(n, r, 0, k);
    require_input_dtype(n, x, {DType::Float, DType::Double});
    for (std::size_t role = 1; role < r.inputs; ++role) {
      const std::size_t i = tensor_input(n, r, role, k);
      require_same_dtype(n, i, x);
      // The specification allows broadcasting G and the state onto X; exporters give them X's
      // shape, and the kernels read them elementwise.
      if (input(n, i).shape != input(n, x).shape)
        fail_unsupported(n,
                         fmt::format("input {} has shape {}, optimized tensor input {} has {}", i,
                                     shape_str(input(n, i).shape), x, shape_str(input(n, x).shape)),
                         "give the gradient and optimizer state tensors the shape of the tensor they belong to");
    }
    for (std::size_t role = 0; role < r.outputs(); ++role)
      set_output(n, tensor_output(n, r, role, k), input(n, x).dtype, input(n, x).shape);
  }
}

// Pointer expressions (emit) or pointers (fold) of the k-th tensor's inputs and outputs.
template <class In, class Out> struct TensorArgs {
  std::vector<In> inputs;    // by input role
  std::vector<Out> outputs;  // by output role
};

TensorArgs<std::string, std::string> tensor_args(const Node& n, const Emitter& e, Roles r, std::size_t k) {
  TensorArgs<std::string, std::string> a;
  for (std::size_t role = 0; role < r.inputs; ++role) a.inputs.push_back(e.in(tensor_input(n, r, role, k)));
  for (std::size_t role = 0; role < r.outputs(); ++role) a.outputs.push_back(e.out(tensor_output(n, r, role, k)));
  return a;
}

template <class T>
TensorArgs<const T*, T*> tensor_args(const Node& n, std::vector<Tensor>& outs, Roles r, std::size_t k) {
  TensorArgs<const T*, T*> a;
  for (std::size_t role = 0; role < r.inputs; ++role)
    a.inputs.push_back(n.inputs[tensor_input(n, r, role, k)]->constant->data<T>());
  for (std::size_t role = 0; role < r.outputs(); ++role) a.outputs.push_back(outs[tensor_output(n, r, role, k)].data<T>());
  return a;
}

// One call per optimized tensor: rt::<kernel>(params, R, T, numel, inputs..., outputs...).
void emit_optimizer(const Node& n, Emitter& e, Roles r, const char* kernel, const std::string& params) {
  e.include("onnxc/optimizer.h");
  for (std::size_t k = 0; k < tensor_count(n, r); ++k) {
    const auto a = tensor_args(n, e, r, k);
    e.linef("rt::{}({}, {}, {}, {}, {}, {});", kernel, params, e.in(kRate), e.in(kStep),
            n.inputs[tensor_input(n, r, 0, k)]->numel(), fmt::join(a.inputs, ", "), fmt::join(a.outputs, ", "));
  }
}

// Folds with the kernels the generated code calls: `call(rate, step, numel, args)` runs one
// tensor's update for element type T and learning-rate type R.
template <class Call> void fold_optimizer(const Node& n, std::vector<Tensor>& outs, Roles r, Call call) {
  for (const Value* v : n.outputs) outs.emplace_back(v->dtype, v->shape);
  const int64_t* step = n.inputs[kStep]->constant->data<int64_t>();
  dispatch_in(n, n.inputs[kRate]->dtype, TypeList<float, double>{}, [&](auto rate_tag) {
    using R = typename decltype(rate_tag)::type;
    const R* rate = n.inputs[kRate]->constant->data<R>();
    for (std::size_t k = 0; k < tensor_count(n, r); ++k) {
      const std::size_t x = tensor_input(n, r, 0, k);
      dispatch_in(n, n.inputs[x]->dtype, TypeList<float, double>{}, [&](auto tag) {
        using T = typename decltype(tag)::type;
        call(rate, step, static_cast<rt::index_t>(n.inputs[x]->numel()), tensor_args<T>(n, outs, r, k));
      });
    }
  });
}

OpDef optimizer_op(const char* op_type, Roles r) {
  OpDef d;
  d.domain = kTrainingDomain;
  d.op_type = op_type;
  d.versions = {1};
  d.infer = [r](Node& n) { infer_optimizer(n, r); };
  return d;
}

// ---- Adagrad: X, G, H -> X_new, H_new ----

constexpr Roles kAdagrad{3};

rt::AdagradParams adagrad_params(const Node& n) {
  return {n.attr_float("decay_factor", 0.0f), n.attr_float("epsilon", 1e-6f), n.attr_float("norm_coefficient", 0.0f)};
}

const OpRegistrar adagrad_op([] {
  OpDef d = optimizer_op("Adagrad", kAdagrad);
  d.emit = [](const Node& n, Emitter& e) {
    const rt::AdagradParams p = adagrad_params(n);
    emit_optimizer(n, e, kAdagrad, "adagrad",
                   params_literal("rt::AdagradParams", {{"decay_factor", float_literal(p.decay_factor)},
                                                        {"epsilon", float_literal(p.epsilon)},
                                                        {"norm_coefficient", float_literal(p.norm_coefficient)}}));
  };
  d.fold = [](const Node& n, std::vector<Tensor>& outs) {
    const rt::AdagradParams p = adagrad_params(n);
    fold_optimizer(n, outs, kAdagrad, [&](auto rate, const int64_t* step, rt::index_t size, const auto& a) {
      rt::adagrad(p, rate, step, size, a.inputs[0], a.inputs[1], a.inputs[2], a.outputs[0], a.outputs[1]);
    });
  };
  return d;
}());

// ---- Adam: X, G, V, H -> X_new, V_new, H_new ----

constexpr Roles kAdam{4};

rt::AdamParams adam_params(const Node& n) {
  return {n.attr_float("alpha", 0.9f), n.attr_float("beta", 0.999f), n.attr_float("epsilon", 1e-6f),
          n.attr_float("norm_coefficient", 0.0f), n.attr_float("norm_coefficient_post", 0.0f)};
}

const OpRegistrar adam_op([] {
  OpDef d = optimizer_op("Adam", kAdam);
  d.emit = [](const Node& n, Emitter& e) {
    const rt::AdamParams p = adam_params(n);
    emit_optimizer(n, e, kAdam, "adam",
                   params_literal("rt::AdamParams", {{"alpha", float_literal(p.alpha)},
                                                     {"beta", float_literal(p.beta)},
                                                     {"epsilon", float_literal(p.epsilon)},
                                                     {"norm_coefficient", float_literal(p.norm_coefficient)},
                                                     {"norm_coefficient_post", float_literal(p.norm_coefficient_post)}}));
  };
  d.fold = [](const Node& n, std::vector<Tensor>& outs) {
    const rt::AdamParams p = adam_params(n);
    fold_optimizer(n, outs, kAdam, [&](auto rate, const int64_t* step, rt::index_t size, const auto& a) {
      rt::adam(p, rate, step, size, a.inputs[0], a.inputs[1], a.inputs[2], a.inputs[3], a.outputs[0], a.outputs[1],
               a.outputs[2]);
    });
  };
  return d;
}());

// ---- Momentum: X, G, V -> X_new, V_new ----
// Every attribute is required (passes/validate_nodes checks that they are present).

constexpr Roles kMomentum{3};

bool is_nesterov(const Node& n) {
  const std::string mode = n.attr_string("mode", "");
  if (mode != "standard" && mode != "nesterov")
    fail_invalid(n, fmt::format("mode '{}' is neither 'standard' nor 'nesterov'", mode));
  return mode == "nesterov";
}

rt::MomentumParams momentum_params(const Node& n) {
  return {n.attr_float("alpha", 0.0f), n.attr_float("beta", 0.0f), n.attr_float("norm_coefficient", 0.0f),
          is_nesterov(n)};
}

const OpRegistrar momentum_op([] {
  OpDef d = optimizer_op("Momentum", kMomentum);
  d.infer = [](Node& n) {
    momentum_params(n);  // validates the attributes
    infer_optimizer(n, kMomentum);
  };
  d.emit = [](const Node& n, Emitter& e) {
    const rt::MomentumParams p = momentum_params(n);
    emit_optimizer(n, e, kMomentum, "momentum",
                   params_literal("rt::MomentumParams", {{"alpha", float_literal(p.alpha)},
                                                         {"beta", float_literal(p.beta)},
                                                         {"norm_coefficient", float_literal(p.norm_coefficient)},
                                                         {"nesterov", p.nesterov ? "true" : "false"}}));
  };
  d.fold = [](const Node& n, std::vector<Tensor>& outs) {
    const rt::MomentumParams p = momentum_params(n);
    fold_optimizer(n, outs, kMomentum, [&](auto rate, const int64_t* step, rt::index_t size, const auto& a) {
      rt::momentum(p, rate, step, size, a.inputs[0], a.inputs[1], a.inputs[2], a.outputs[0], a.outputs[1]);
    });
  };
  return d;
}());

}  // namespace
}  // namespace onnxc
