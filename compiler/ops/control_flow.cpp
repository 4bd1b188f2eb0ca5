// If, Loop and Scan: control flow compiled to plain C++ (an `if`, a `for` loop) around the
// code of their subgraphs. Shapes must be static: a loop-carried value keeps its shape, and
// scan outputs need an iteration count known at compile time.
//
// Sequences and optionals are compile-time structures (see ops/sequence.cpp), so control flow
// over them is resolved at compile time where C++ control flow cannot hold them:
//   If returning them   -> with a constant condition, the taken branch inlined; otherwise the If
//                          returns the tensors they hold (both branches must hold the same ones)
//   Loop carrying them  -> unrolled, one copy of the body per iteration (the structure may
//                          change from one iteration to the next, e.g. a sequence grows); so is
//                          a Loop whose body needs its iteration number as a constant
#include <algorithm>

#include "onnxc/control.h"
#include "ops/emitter.h"
#include "ops/inline_graph.h"
#include "ops/sequence.h"
#include "passes/passes.h"
#include "passes/program.h"

namespace onnxc {
namespace {

std::size_t align16(std::size_t v) { return (v + 15) / 16 * 16; }

// Lays out named buffers in a node's scratch memory.
class ScratchLayout {
 public:
  std::size_t add(std::size_t bytes) {
    std::size_t off = size_;
    size_ = align16(size_ + std::max<std::size_t>(bytes, 1));
    return off;
  }
  std::size_t size() const { return size_; }

 private:
  std::size_t size_ = 0;
};

Graph& graph_attr(Node& n, const char* name) {
  const Attribute* a = n.attr(name);
  if (!a || a->kind != Attribute::Kind::Graph || !a->g) fail_invalid(n, fmt::format("graph attribute '{}' is missing", name));
  return *a->g;
}

bool is_structure(const Value* v) { return v && (v->is_sequence || v->is_optional); }

// Gives a subgraph input the type the parent passes in.
void bind_input(const Node& n, Value& in, DType dtype, const Shape& shape) {
  if (is_structure(&in))
    fail_unsupported(n, fmt::format("subgraph input '{}' is a {}; {} passes only tensors into its body", in.name,
                                    in.is_sequence ? "sequence" : "optional", n.op_type));
  if (in.dtype != DType::Undefined && in.dtype != dtype)
    fail_invalid(n, fmt::format("subgraph input '{}' is declared {} but receives {}", in.name, dtype_name(in.dtype),
                                dtype_name(dtype)));
  in.dtype = dtype;
  in.shape = shape;
  in.has_shape = true;
}

// A value of `sub` holding a copy of `outside` (a value of an enclosing graph), made by an
// Identity of `sub` reading it through an import.
Value* local_copy(const Node& n, Graph& sub, Value* outside) {
  Value* import = sub.add_unique_value(outside->name);
  import->outer = outside;
  Value* copy = sub.add_unique_value(outside->name + "_copy");
  sub.add_node(make_onnx_node("Identity", copy->name, n.opset, n.index, {import}, {copy}));
  return copy;
}

// A subgraph's output that names a value of an enclosing graph (not computed by the subgraph)
// becomes a copy of it made in the subgraph, so that it is typed and written like any other.
void copy_outer_outputs(const Node& n, Graph& g) {
  for (Value*& out : g.outputs)
    if (out->outer && !out->constant) {
      out->is_graph_output = false;
      out = local_copy(n, g, out->outer);
      out->is_graph_output = true;
    }
  g.relink();
}

void infer_subgraph(const Node& n, Graph& g) {
  copy_outer_outputs(n, g);
  infer_and_fold(g, true);
  eliminate_dead_nodes(g);
}

std::string typed(const Value& v) { return dtype_ctype(v.dtype); }

// ---------------------------------------------------------------- If

// Infers one branch of an If whose condition is computed at run time. Both branches are then
// compiled, and a branch meant for other inputs may not fit these shapes (silero-vad's 8 kHz
// branch, given a 16 kHz chunk): its errors say so, and name the graph inputs behind the
// condition, so the driver suggests pinning them (--constant) to compile only the branch taken.
void infer_runtime_branch(const Node& n, Graph& branch, const char* which) {
  try {
    infer_subgraph(n, branch);
  } catch (const CompileError& e) {
    const std::vector<std::string> behind_cond = graph_inputs_behind(*n.inputs[0]);
    std::vector<Problem> problems = e.problems();
    for (Problem& p : problems) {
      p.what += fmt::format(" (in the {} of If '{}': its condition is computed at run time, so both branches are "
                            "compiled)", which, n.name);
      if (p.inputs_to_pin.empty()) p.inputs_to_pin = behind_cond;
    }
    throw CompileError(std::move(problems), e.file);
  }
}

void infer_if(Node& n) {
  check_arity(n, 1, 1, 1, -1);
  const Value& cond = input(n, 0);
  if (cond.dtype != DType::Bool || cond.numel() != 1) fail_invalid(n, "'cond' must be a single bool");
  Graph& then_g = graph_attr(n, "then_branch");
  Graph& else_g = graph_attr(n, "else_branch");
  if (!then_g.inputs.empty() || !else_g.inputs.empty()) fail_invalid(n, "If branches must not have inputs");
  if (then_g.outputs.size() != n.outputs.size() || else_g.outputs.size() != n.outputs.size())
    fail_invalid(n, fmt::format("the node has {} outputs but the branches {} and {}", n.outputs.size(),
                                then_g.outputs.size(), else_g.outputs.size()));
  const Tensor* c = const_input(n, 0);
  if (c) {  // only the branch that runs is compiled (the other may not even fit these shapes)
    Graph& taken = c->int_at(0) ? then_g : else_g;
    infer_subgraph(n, taken);
    for (std::size_t i = 0; i < n.outputs.size(); ++i)
      set_output(n, i, taken.outputs[i]->dtype, taken.outputs[i]->shape);
    return;
  }
  infer_runtime_branch(n, then_g, "then_branch");
  infer_runtime_branch(n, else_g, "else_branch");
  for (std::size_t i = 0; i < n.outputs.size(); ++i) {
    if (is_structure(then_g.outputs[i]) || is_structure(else_g.outputs[i]))
      fail_unsupported(n, fmt::format("output {} is a sequence or optional in a branch", i),
                       "declare the If's outputs (or the branches') as sequences or optionals in the model");
    const Value& t = *then_g.outputs[i];
    const Value& e = *else_g.outputs[i];
    if (t.dtype != e.dtype)
      fail_invalid(n, fmt::format("output {} is {} in then_branch but {} in else_branch", i, dtype_name(t.dtype),
                                  dtype_name(e.dtype)));
    if (t.shape != e.shape && !c)
      fail_unsupported(n, fmt::format("output {} has shape {} in then_branch but {} in else_branch; onnxc needs one "
                                      "static shape", i, shape_str(t.shape), shape_str(e.shape)),
                       "make both branches produce the same shape, or make 'cond' a constant");
    const Value& chosen = c ? (c->int_at(0) ? t : e) : t;
    set_output(n, i, chosen.dtype, chosen.shape);
  }
}

void emit_if(const Node& n, Emitter& e) {
  e.include("onnxc/layout.h");
  // Node::subgraphs orders by attribute name: 0 = else_branch, 1 = then_branch.
  std::vector<std::string> outs;
  for (std::size_t i = 0; i < n.outputs.size(); ++i) outs.push_back(e.out(i));
  const Tensor* c = const_input(n, 0);
  if (c) {
    e.linef("// 'cond' is the constant {}: only that branch is compiled", c->int_at(0) ? "true" : "false");
    e.lines_indented(e.subgraph(c->int_at(0) ? 1 : 0, {}, outs), 0);
    return;
  }
  e.linef("if ({}[0]) {{", e.in(0));
  e.lines_indented(e.subgraph(1, {}, outs));
  e.line("} else {");
  e.lines_indented(e.subgraph(0, {}, outs));
  e.line("}");
}

// ---- If returning sequences or optionals

// What a subgraph's output stands for: the value itself, or (an output naming a value of an
// enclosing graph) that value.
Value* through_outer(Value* v) {
  while (v->outer) v = v->outer;
  return v;
}

// Whether a value is, or will be once lowered, a sequence or optional: declared so, or made by
// a sequence or optional operator.
bool makes_structure(const Value* v) {
  if (v) v = through_outer(const_cast<Value*>(v));
  if (is_structure(v)) return true;
  if (!v || !v->producer) return false;
  const OpDef* def = find_op(v->producer->domain, v->producer->op_type);
  return def && def->lower && !def->lowers_when;  // the structure operators
}

bool returns_structure(const Node& n) {
  for (const Value* out : n.outputs)
    if (is_structure(out)) return true;
  for (const char* branch : {"then_branch", "else_branch"})
    if (const Attribute* a = n.attr(branch); a && a->g)
      for (const Value* out : a->g->outputs)
        if (makes_structure(out)) return true;
  return false;
}

using Nodes = std::vector<std::unique_ptr<Node>>;

// A constant condition: the taken branch's nodes replace the If.
Nodes inline_taken_branch(Node& n, Graph& g, const Graph& taken) {
  Lowering l(n, g);
  const std::vector<Value*> results = inline_graph(l, taken, {}, "_" + n.name);
  for (std::size_t i = 0; i < n.outputs.size(); ++i)
    if (n.outputs[i]) l.add("Identity", {as_declared(l, results[i], *n.outputs[i])}, {n.outputs[i]});
  return l.take();
}

// "a sequence of 2 tensors", "an empty optional", "a tensor", for messages.
std::string structure_str(const Value& v) {
  if (v.is_sequence)
    return fmt::format("a sequence of {} tensor{}", v.elements.size(), v.elements.size() == 1 ? "" : "s");
  if (v.is_optional) return v.elements.empty() ? "an empty optional" : "an optional of " + structure_str(*v.elements[0]);
  return "a tensor";
}

bool same_structure(const Value& a, const Value& b) {
  if (a.is_sequence != b.is_sequence || a.is_optional != b.is_optional || a.elements.size() != b.elements.size())
    return false;
  for (std::size_t k = 0; k < a.elements.size(); ++k)
    if (!same_structure(*a.elements[k], *b.elements[k])) return false;
  return true;
}

// A structure like `like` in the graph `l` lowers into, holding the next of `tensors`.
void mirror_structure(Lowering& l, const Value& like, Value& out, std::vector<Value*>::const_iterator& tensors) {
  out.is_sequence = like.is_sequence;
  out.is_optional = like.is_optional;
  out.dtype = like.dtype;
  out.elements.clear();
  for (const Value* e : like.elements) {
    if (is_structure(e)) {
      Value* inner = l.value(e->name);
      mirror_structure(l, *e, *inner, tensors);
      out.elements.push_back(inner);
    } else {
      out.elements.push_back(*tensors++);
    }
  }
}

// `tensors` as outputs of `branch`: a tensor of an enclosing graph (a branch may return a
// structure it reads from outside) is copied into the branch.
std::vector<Value*> branch_values(const Node& n, Graph& branch, const std::vector<Value*>& tensors) {
  std::vector<Value*> outputs;
  for (Value* t : tensors) {
    if (branch.find(t->name) != t) t = local_copy(n, branch, t);
    t->is_graph_output = true;
    outputs.push_back(t);
  }
  branch.relink();
  return outputs;
}

// A run-time condition: both branches must hold the same tensors; the If then returns those
// tensors (computed by whichever branch runs) and its outputs are structures over them.
Nodes flatten_structure_outputs(Node& n, Graph& g, Graph& then_g, Graph& else_g) {
  // Not infer_subgraph: dead-node elimination would drop the nodes computing the structures'
  // tensors, which become outputs only below (infer_if runs it once they are).
  copy_outer_outputs(n, then_g);
  copy_outer_outputs(n, else_g);
  infer_and_fold(then_g, true);
  infer_and_fold(else_g, true);
  Lowering l(n, g);
  auto flat = std::make_unique<Node>(n);
  flat->outputs.clear();
  std::vector<Value*> then_outs, else_outs;
  for (std::size_t i = 0; i < n.outputs.size(); ++i) {
    Value& t = *through_outer(then_g.outputs[i]);
    Value& e = *through_outer(else_g.outputs[i]);
    if (!same_structure(t, e))
      fail_needs_compile_time_values(
          n, {n.inputs[0]},
          fmt::format("output {} is {} in then_branch but {} in else_branch, so which one the If returns must be "
                      "known at compile time",
                      i, structure_str(t), structure_str(e)),
          "make 'cond' a constant, or make both branches return the same structure");
    collect_tensors(t, then_outs);
    collect_tensors(e, else_outs);
    if (!is_structure(&t)) {
      flat->outputs.push_back(n.outputs[i]);
      continue;
    }
    std::vector<Value*> tensors;
    for (std::size_t k = flat->outputs.size(); k < then_outs.size(); ++k) {
      tensors.push_back(l.value(fmt::format("{}_{}", n.outputs[i] ? n.outputs[i]->name : "unused", tensors.size())));
      flat->outputs.push_back(tensors.back());
    }
    auto next = std::cbegin(tensors);
    if (n.outputs[i]) mirror_structure(l, t, *n.outputs[i], next);
  }
  then_g.outputs = branch_values(n, then_g, then_outs);
  else_g.outputs = branch_values(n, else_g, else_outs);
  Nodes nodes;
  nodes.push_back(std::move(flat));
  return nodes;
}

Nodes lower_if_returning_structures(Node& n, Graph& g) {
  check_arity(n, 1, 1, 1, -1);
  Graph& then_g = graph_attr(n, "then_branch");
  Graph& else_g = graph_attr(n, "else_branch");
  if (then_g.outputs.size() != n.outputs.size() || else_g.outputs.size() != n.outputs.size())
    fail_invalid(n, fmt::format("the node has {} outputs but the branches {} and {}", n.outputs.size(),
                                then_g.outputs.size(), else_g.outputs.size()));
  if (const Tensor* c = const_input(n, 0)) return inline_taken_branch(n, g, c->int_at(0) ? then_g : else_g);
  return flatten_structure_outputs(n, g, then_g, else_g);
}

const OpRegistrar if_op([] {
  OpDef d;
  d.op_type = "If";
  d.lower = lower_if_returning_structures;
  d.lowers_when = returns_structure;
  d.versions = {1, 11, 13, 16, 19, 21, 23, 24, 25};
  d.infer = infer_if;
  d.emit = emit_if;
  d.uses_subgraph = [](const Node& n, std::size_t k) {  // k: 0 = else_branch, 1 = then_branch
    const Tensor* c = const_input(n, 0);
    return !c || (c->int_at(0) != 0) == (k == 1);
  };
  return d;
}());

// ---------------------------------------------------------------- Loop

// True when the body's cond_out is always its cond_in (through Identity) or constant true.
bool condition_never_changes(const Graph& body) {
  const Value* v = body.outputs[0];
  while (v->producer && v->producer->op_type == "Identity") v = v->producer->inputs[0];
  if (v->constant) return v->constant->int_at(0) != 0;
  return v == body.inputs[1];
}

struct LoopShape {
  std::size_t carried = 0, scans = 0;
  bool has_trip_count = false;
  int64_t trip_count = -1;  // when constant
};

LoopShape loop_shape(const Node& n) {
  LoopShape s;
  s.carried = n.inputs.size() - 2;
  s.scans = n.outputs.size() - s.carried;
  s.has_trip_count = n.has_input(0);
  if (const Tensor* m = const_input(n, 0)) s.trip_count = m->int_at(0);
  return s;
}

// Scratch: iteration number, cond in/out, and two buffers per carried value.
struct LoopScratch {
  std::size_t iter, cond_in, cond_out;
  std::vector<std::size_t> state, next;
  std::size_t size;
};

LoopScratch loop_scratch(const Node& n) {
  ScratchLayout l;
  LoopScratch s;
  s.iter = l.add(8);
  s.cond_in = l.add(1);
  s.cond_out = l.add(1);
  for (std::size_t i = 2; i < n.inputs.size(); ++i) {
    s.state.push_back(l.add(n.inputs[i]->byte_size()));
    s.next.push_back(l.add(n.inputs[i]->byte_size()));
  }
  s.size = l.size();
  return s;
}

// The body's inputs: iteration number, condition, then the carried values as the node gets them.
void bind_body_inputs(const Node& n, Graph& body, std::size_t carried) {
  Value& iteration = *body.inputs[0];
  Value& cond = *body.inputs[1];
  const bool scalar_iteration = iteration.declared_rank && iteration.declared_dims.empty();
  bind_input(n, iteration, DType::Int64, scalar_iteration ? Shape{} : Shape{1});
  if (!iteration.declared_rank) iteration.shape = {};
  bind_input(n, cond, DType::Bool, cond.declared_rank && cond.declared_dims.size() == 1 ? Shape{1} : Shape{});
  for (std::size_t i = 0; i < carried; ++i)
    bind_input(n, *body.inputs[i + 2], n.inputs[i + 2]->dtype, n.inputs[i + 2]->shape);
}

void infer_loop(Node& n) {
  check_arity(n, 0, -1, 0, -1);  // M and cond are optional but their slots must exist
  if (n.inputs.size() < 2) fail_invalid(n, "Loop needs at least the inputs M and cond (either may be empty)");
  Graph& body = graph_attr(n, "body");
  LoopShape s = loop_shape(n);
  if (n.outputs.size() < s.carried) fail_invalid(n, "fewer outputs than loop-carried inputs");
  if (body.inputs.size() != s.carried + 2 || body.outputs.size() != s.carried + s.scans + 1)
    fail_invalid(n, fmt::format("the body has {} inputs and {} outputs; expected {} and {}", body.inputs.size(),
                                body.outputs.size(), s.carried + 2, s.carried + s.scans + 1));
  if (n.has_input(0) && (input(n, 0).dtype != DType::Int64 || input(n, 0).numel() != 1))
    fail_invalid(n, "'M' must be a single int64");
  if (n.has_input(1) && (input(n, 1).dtype != DType::Bool || input(n, 1).numel() != 1))
    fail_invalid(n, "'cond' must be a single bool");
  for (std::size_t i = 0; i < s.carried; ++i)
    if (!n.has_input(i + 2)) fail_invalid(n, fmt::format("loop-carried input {} is missing", i + 2));
  bind_body_inputs(n, body, s.carried);
  infer_subgraph(n, body);
  for (std::size_t i = 0; i < s.carried; ++i) {
    const Value& out = *body.outputs[i + 1];
    const Value& in = *n.inputs[i + 2];
    if (out.dtype != in.dtype || out.shape != in.shape)
      fail_unsupported(n, fmt::format("loop-carried value {} changes from {} {} to {} {} in the body; onnxc needs "
                                      "static shapes", i, dtype_name(in.dtype), shape_str(in.shape),
                                      dtype_name(out.dtype), shape_str(out.shape)));
    set_output(n, i, in.dtype, in.shape);
  }
  if (s.scans > 0) {
    bool fixed = s.trip_count >= 0 && (!n.has_input(1) || const_input(n, 1)) && condition_never_changes(body);
    if (const Tensor* c = const_input(n, 1))
      if (!c->int_at(0)) fixed = s.trip_count >= 0;
    if (!fixed) {
      const char* what = "the number of iterations is only known at run time, so the scan outputs have no static shape";
      const char* fix = "make the trip count 'M' a constant and the loop condition constant true";
      // With a body that keeps the condition, constant M and cond fix the count: say where they come from.
      if (s.has_trip_count && condition_never_changes(body)) {
        std::vector<const Value*> needed = {n.inputs[0]};
        if (n.has_input(1)) needed.push_back(n.inputs[1]);
        fail_needs_compile_time_values(n, needed, what, fix);
      }
      fail_unsupported(n, what, fix);
    }
    int64_t iterations = s.trip_count;
    if (const Tensor* c = const_input(n, 1))
      if (!c->int_at(0)) iterations = 0;
    for (std::size_t k = 0; k < s.scans; ++k) {
      const Value& slice = *body.outputs[1 + s.carried + k];
      Shape shape = {iterations};
      shape.insert(shape.end(), slice.shape.begin(), slice.shape.end());
      set_output(n, s.carried + k, slice.dtype, shape);
    }
  }
}

void emit_loop(const Node& n, Emitter& e) {
  e.include("onnxc/layout.h");
  LoopShape s = loop_shape(n);
  LoopScratch sc = loop_scratch(n);
  const Graph& body = *n.attr("body")->g;
  e.linef("std::int64_t* const iteration = reinterpret_cast<std::int64_t*>({} + {});", e.scratch(), sc.iter);
  e.linef("bool* const cond_in = reinterpret_cast<bool*>({} + {});", e.scratch(), sc.cond_in);
  e.linef("bool* const cond_out = reinterpret_cast<bool*>({} + {});", e.scratch(), sc.cond_out);
  std::vector<std::string> body_in = {"iteration", "cond_in"}, body_out = {"cond_out"};
  for (std::size_t i = 0; i < s.carried; ++i) {
    const Value& v = *n.inputs[i + 2];
    e.linef("{}* const state_{} = reinterpret_cast<{}*>({} + {});", typed(v), i, typed(v), e.scratch(), sc.state[i]);
    e.linef("{}* const next_{} = reinterpret_cast<{}*>({} + {});", typed(v), i, typed(v), e.scratch(), sc.next[i]);
    e.linef("rt::copy({}, state_{}, {});", e.in(i + 2), i, v.numel());
    body_in.push_back(fmt::format("state_{}", i));
    body_out.push_back(fmt::format("next_{}", i));
  }
  for (std::size_t k = 0; k < s.scans; ++k)
    body_out.push_back(fmt::format("{} + i * {}", e.out(s.carried + k), body.outputs[1 + s.carried + k]->numel()));
  e.linef("const std::int64_t trip_count = {};", s.has_trip_count ? e.in(0) + "[0]" : "std::numeric_limits<std::int64_t>::max()");
  e.linef("bool keep_going = {};", n.has_input(1) ? e.in(1) + "[0]" : "true");
  e.line("for (std::int64_t i = 0; i < trip_count && keep_going; ++i) {");
  e.line("  iteration[0] = i;");
  e.line("  cond_in[0] = keep_going;");
  e.line("  {");
  e.lines_indented(e.subgraph(0, body_in, body_out), 2);
  e.line("  }");
  e.line("  keep_going = cond_out[0];");
  for (std::size_t i = 0; i < s.carried; ++i) e.linef("  rt::copy(next_{}, state_{}, {});", i, i, n.inputs[i + 2]->numel());
  e.line("}");
  for (std::size_t i = 0; i < s.carried; ++i) e.linef("rt::copy(state_{}, {}, {});", i, e.out(i), n.inputs[i + 2]->numel());
}

// ---- Loop unrolled: carrying sequences or optionals, or needing constant iteration numbers
//
// Lowering peels one iteration at a time: a copy of the body for iteration i, then the Loop of
// the iterations left (marked with the internal attribute below). Inference runs the copy before
// the rest is peeled, so the body's condition may depend on what the body computes, as long as
// it is known at compile time. The peeled Loop takes the scan outputs' slices computed so far as
// extra inputs after its carried values; the last one concatenates them.

constexpr const char* kPeeledIterations = "onnxc.peeled_iterations";
constexpr int64_t kMaxUnrolledIterations = 4096;  // a Loop with neither trip count nor a false condition

bool carries_structure(const Node& n) {
  if (n.has_attr(kPeeledIterations)) return true;
  for (std::size_t i = 2; i < n.inputs.size(); ++i)
    if (is_structure(n.inputs[i])) return true;
  for (const Value* out : n.outputs)
    if (is_structure(out)) return true;
  if (const Attribute* body = n.attr("body"); body && body->g)
    for (const Value* v : body->g->inputs)
      if (is_structure(v)) return true;
  return false;
}

// Whether the body needs its iteration number at compile time (a Slice starting at it, say):
// inference of a copy of the body, with the iteration number a run-time value, says so.
bool body_needs_constant_iteration(const Node& n) {
  const Attribute* a = n.attr("body");
  if (!a || !a->g || a->g->inputs.size() < 2 || n.inputs.size() < a->g->inputs.size()) return false;
  const Graph& body = *a->g;
  if (body.consumers(body.inputs[0]).empty()) return false;
  for (std::size_t i = 2; i < body.inputs.size(); ++i)
    if (!n.has_input(i)) return false;
  std::shared_ptr<Graph> trial = copy_graph(body);
  try {
    bind_body_inputs(n, *trial, body.inputs.size() - 2);
    infer_subgraph(n, *trial);
  } catch (const CompileError& e) {
    const std::vector<std::string> pins = e.inputs_to_pin();
    return std::find(pins.begin(), pins.end(), body.inputs[0]->name) != pins.end();
  }
  return false;
}

// Loops unrolled at compile time: those carrying sequences or optionals, and those whose body
// needs the iteration number as a constant.
bool unrolls(const Node& n) {
  return carries_structure(n) || body_needs_constant_iteration(n);
}

// Whether iteration `i` of an unrolled Loop runs: M and cond must be known at compile time.
bool unrolled_iteration_runs(const Node& n, int64_t i) {
  const char* why = "the Loop is unrolled at compile time (it carries a sequence or optional, or its body needs the "
                    "iteration number as a constant)";
  const char* fix = "make the trip count 'M' and the loop condition constants";
  if (n.has_input(0)) {
    const Tensor* m = const_input(n, 0);
    if (!m)
      fail_needs_compile_time_values(n, {n.inputs[0]}, fmt::format("{}, so it needs its trip count 'M'", why), fix);
    if (i >= m->int_at(0)) return false;
  }
  if (n.has_input(1)) {
    const Tensor* c = const_input(n, 1);
    if (!c)
      fail_needs_compile_time_values(n, {n.inputs[1]},
                                     fmt::format("{}, so it needs its condition before iteration {}", why, i), fix);
    if (!c->int_at(0)) return false;
  }
  if (i >= kMaxUnrolledIterations)
    fail_unsupported(n, fmt::format("{}, and has not stopped after {} iterations", why, kMaxUnrolledIterations), fix);
  return true;
}

// A scalar, or a 1-element 1-D tensor where the body declares that rank (iteration number, cond).
Shape declared_scalar_shape(const Value& v) {
  return v.declared_rank && v.declared_dims.size() == 1 ? Shape{1} : Shape{};
}

// After the last iteration: the carried values become the outputs, the slices the scan outputs.
Nodes finish_unrolled_loop(Node& n, Graph& g, std::size_t carried, std::size_t scans,
                           const std::vector<Value*>& slices) {
  Lowering l(n, g);
  for (std::size_t j = 0; j < carried; ++j)
    if (n.has_output(j)) l.add("Identity", {as_declared(l, n.inputs[2 + j], *n.outputs[j])}, {n.outputs[j]});
  const std::size_t iterations = scans ? slices.size() / scans : 0;
  for (std::size_t k = 0; k < scans; ++k) {
    if (!n.has_output(carried + k)) continue;
    if (iterations == 0)
      fail_unsupported(n,
                       fmt::format("the unrolled Loop runs no iteration, so its scan output {} has no known shape", k),
                       "give the Loop at least one iteration");
    std::vector<Value*> parts;
    for (std::size_t i = 0; i < iterations; ++i) parts.push_back(l.unsqueeze(slices[i * scans + k], 0));
    l.add("Concat", parts, {n.outputs[carried + k]}).set_attr_int("axis", 0);
  }
  return l.take();
}

Nodes peel_loop_iteration(Node& n, Graph& g) {
  const Graph& body = graph_attr(n, "body");
  if (body.inputs.size() < 2 || body.outputs.empty() || n.inputs.size() < body.inputs.size())
    fail_invalid(n, fmt::format("the body has {} inputs and {} outputs for a Loop with {} inputs", body.inputs.size(),
                                body.outputs.size(), n.inputs.size()));
  const std::size_t carried = body.inputs.size() - 2;
  if (body.outputs.size() < 1 + carried || n.outputs.size() != body.outputs.size() - 1)
    fail_invalid(n, fmt::format("the body has {} outputs; expected the condition, {} carried values and one per scan "
                                "output of the node's {}",
                                body.outputs.size(), carried, n.outputs.size()));
  const std::size_t scans = body.outputs.size() - 1 - carried;
  const int64_t i = n.attr_int(kPeeledIterations, 0);
  const std::vector<Value*> slices(n.inputs.begin() + static_cast<std::ptrdiff_t>(2 + carried), n.inputs.end());
  if (!unrolled_iteration_runs(n, i)) return finish_unrolled_loop(n, g, carried, scans, slices);

  Lowering l(n, g);
  std::vector<Value*> args = {
      l.int64_constant("iteration", declared_scalar_shape(*body.inputs[0]), {i}),
      n.has_input(1) ? n.inputs[1] : l.bool_constant("cond", declared_scalar_shape(*body.inputs[1]), true)};
  for (std::size_t j = 0; j < carried; ++j) args.push_back(as_declared(l, n.inputs[2 + j], *body.inputs[2 + j]));
  const std::vector<Value*> results = inline_graph(l, body, args, fmt::format("_{}_{}", n.name, i));

  auto rest = std::make_unique<Node>(n);
  // Without a condition input the Loop is a for loop: the body's condition is ignored.
  rest->inputs = {n.inputs[0], n.has_input(1) ? results[0] : nullptr};
  const auto carried_end = results.begin() + static_cast<std::ptrdiff_t>(1 + carried);
  rest->inputs.insert(rest->inputs.end(), results.begin() + 1, carried_end);  // carried values
  rest->inputs.insert(rest->inputs.end(), slices.begin(), slices.end());      // earlier scan slices
  rest->inputs.insert(rest->inputs.end(), carried_end, results.end());        // this iteration's
  rest->set_attr_int(kPeeledIterations, i + 1);
  Nodes nodes = l.take();
  nodes.push_back(std::move(rest));
  return nodes;
}

const OpRegistrar loop_op([] {
  OpDef d;
  d.op_type = "Loop";
  d.lower = peel_loop_iteration;
  d.lowers_when = unrolls;
  d.versions = {1, 11, 13, 16, 19, 21, 23, 24, 25};
  d.infer = infer_loop;
  d.emit = emit_loop;
  d.scratch_bytes = [](const Node& n) { return loop_scratch(n).size; };
  return d;
}());

// ---------------------------------------------------------------- Scan
//
// Version 8 differs from 9 and later by a batch: its states and scan inputs have a leading batch
// dim (scan axis 1), an optional first input sequence_lens, and `directions` for the scan
// inputs. It compiles as the later form run once per batch entry, on that entry's part of every
// operand. Shapes below are per batch entry.

struct ScanShape {
  std::size_t first = 0;  // the first state input (1 in version 8, after sequence_lens)
  int64_t batch = 1;      // version 8: the batch size; the loop runs once per entry
  bool batched = false;   // version 8
  std::size_t states = 0, scan_inputs = 0, scan_outputs = 0;
  int64_t length = 0;
  std::vector<int64_t> in_axes, in_dirs, out_axes, out_dirs;

  // An operand's shape within one batch entry.
  Shape entry_shape(const Shape& full) const { return batched ? Shape(full.begin() + 1, full.end()) : full; }
};

// Version 8 runs every sequence to its full length: sequence_lens, when given, must be constant
// and say so.
void check_full_length_sequences(const Node& n, const ScanShape& s) {
  if (!n.has_input(0)) return;
  const Tensor* lens = const_input(n, 0);
  bool full = lens && lens->numel() == s.batch;
  for (int64_t b = 0; full && b < s.batch; ++b) full = lens->int_at(b) == s.length;
  if (!full)
    fail_unsupported(n, fmt::format("sequence_lens must be constant and all {} (the scan length)", s.length),
                     "omit sequence_lens, or pad every sequence to the same length");
}

ScanShape scan_shape(const Node& n) {
  ScanShape s;
  s.batched = n.version < 9;
  s.first = s.batched ? 1 : 0;
  int64_t m = n.attr_int("num_scan_inputs", -1);
  if (m < 1 || static_cast<std::size_t>(m) + s.first > n.inputs.size())
    fail_invalid(n, "'num_scan_inputs' is missing or out of range");
  s.scan_inputs = static_cast<std::size_t>(m);
  s.states = n.inputs.size() - s.first - s.scan_inputs;
  if (n.outputs.size() < s.states) fail_invalid(n, "fewer outputs than state inputs");
  s.scan_outputs = n.outputs.size() - s.states;
  if (s.batched) {
    const Shape& x0 = input(n, s.first).shape;
    if (x0.empty()) fail_invalid(n, "version 8 operands need a leading batch dim");
    s.batch = x0[0];
    for (std::size_t i = s.first; i < n.inputs.size(); ++i) {
      const Shape& shape = input(n, i).shape;
      const std::size_t min_rank = i < s.first + s.states ? 1 : 2;  // scan inputs: [batch, length, ...]
      if (shape.size() < min_rank || shape[0] != s.batch)
        fail_invalid(n, fmt::format("input {} {} must have the batch size {} as its first dim", i, shape_str(shape),
                                    s.batch));
    }
  }
  // Version 8 scans every input along axis 1 of the batched shape (0 of an entry's) and writes
  // the outputs forward; later versions have an axis per operand and directions for the outputs.
  s.in_axes = n.attr_ints("scan_input_axes", std::vector<int64_t>(s.scan_inputs, 0));
  s.in_dirs = n.attr_ints(s.batched ? "directions" : "scan_input_directions", std::vector<int64_t>(s.scan_inputs, 0));
  s.out_axes = n.attr_ints("scan_output_axes", std::vector<int64_t>(s.scan_outputs, 0));
  s.out_dirs = n.attr_ints("scan_output_directions", std::vector<int64_t>(s.scan_outputs, 0));
  if (s.in_axes.size() != s.scan_inputs || s.in_dirs.size() != s.scan_inputs || s.out_axes.size() != s.scan_outputs ||
      s.out_dirs.size() != s.scan_outputs)
    fail_invalid(n, "scan axes/directions attributes have the wrong length");
  for (std::size_t j = 0; j < s.scan_inputs; ++j) {
    const Shape x = s.entry_shape(input(n, s.first + s.states + j).shape);
    s.in_axes[j] = normalize_axis(n, s.in_axes[j], static_cast<int64_t>(x.size()), "scan_input_axes");
    int64_t len = x[static_cast<std::size_t>(s.in_axes[j])];
    if (j == 0) s.length = len;
    else if (len != s.length) fail_invalid(n, fmt::format("scan inputs have different lengths ({} and {})", s.length, len));
  }
  return s;
}

// [outer, len, inner] view of a tensor around `axis`.
struct AxisView {
  int64_t outer = 1, len = 1, inner = 1;
};

AxisView axis_view(const Shape& shape, int64_t axis) {
  AxisView v;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (static_cast<int64_t>(d) < axis) v.outer *= shape[d];
    else if (static_cast<int64_t>(d) == axis) v.len = shape[d];
    else v.inner *= shape[d];
  }
  return v;
}

struct ScanScratch {
  std::vector<std::size_t> state, next, in_slice, out_slice;
  std::size_t size;
};

ScanScratch scan_scratch(const Node& n) {
  ScanShape s = scan_shape(n);
  const Graph& body = *n.attr("body")->g;
  ScratchLayout l;
  ScanScratch sc;
  const auto entry_bytes = [&](const Value& v) {
    return v.byte_size() / static_cast<std::size_t>(std::max<int64_t>(s.batch, 1));
  };
  for (std::size_t i = 0; i < s.states; ++i) {
    sc.state.push_back(l.add(entry_bytes(*n.inputs[s.first + i])));
    sc.next.push_back(l.add(entry_bytes(*n.inputs[s.first + i])));
  }
  for (std::size_t j = 0; j < s.scan_inputs; ++j) {
    const Value& x = *n.inputs[s.first + s.states + j];
    sc.in_slice.push_back(l.add(entry_bytes(x) / static_cast<std::size_t>(std::max<int64_t>(s.length, 1))));
  }
  for (std::size_t k = 0; k < s.scan_outputs; ++k) sc.out_slice.push_back(l.add(body.outputs[s.states + k]->byte_size()));
  sc.size = l.size();
  return sc;
}

void infer_scan(Node& n) {
  check_arity(n, n.version < 9 ? 0 : 1, -1, 1, -1);  // version 8's first input, sequence_lens, is optional
  Graph& body = graph_attr(n, "body");
  ScanShape s = scan_shape(n);
  if (s.batched) check_full_length_sequences(n, s);
  if (body.inputs.size() != s.states + s.scan_inputs || body.outputs.size() != s.states + s.scan_outputs)
    fail_invalid(n, "the body's inputs/outputs do not match the node's");
  for (std::size_t i = 0; i < s.states; ++i) {
    const Value& state = input(n, s.first + i);
    bind_input(n, *body.inputs[i], state.dtype, s.entry_shape(state.shape));
  }
  for (std::size_t j = 0; j < s.scan_inputs; ++j) {
    const Value& x = *n.inputs[s.first + s.states + j];
    Shape slice = s.entry_shape(x.shape);
    slice.erase(slice.begin() + s.in_axes[j]);
    bind_input(n, *body.inputs[s.states + j], x.dtype, slice);
  }
  infer_subgraph(n, body);
  for (std::size_t i = 0; i < s.states; ++i) {
    const Value& out = *body.outputs[i];
    const Value& state = *n.inputs[s.first + i];
    if (out.shape != s.entry_shape(state.shape) || out.dtype != state.dtype)
      fail_unsupported(n, fmt::format("state {} changes shape or type in the body", i));
    set_output(n, i, out.dtype, state.shape);
  }
  for (std::size_t k = 0; k < s.scan_outputs; ++k) {
    const Value& slice = *body.outputs[s.states + k];
    int64_t axis = s.out_axes[k];
    int64_t r = static_cast<int64_t>(slice.shape.size()) + 1;
    axis = normalize_axis(n, axis, r, "scan_output_axes");
    Shape shape = slice.shape;
    shape.insert(shape.begin() + axis, s.length);
    if (s.batched) shape.insert(shape.begin(), s.batch);
    set_output(n, s.states + k, slice.dtype, shape);
  }
}

void emit_scan(const Node& n, Emitter& e) {
  e.include("onnxc/layout.h");
  e.include("onnxc/control.h");
  ScanShape s = scan_shape(n);
  ScanScratch sc = scan_scratch(n);
  const Graph& body = *n.attr("body")->g;
  // Operands as this batch entry sees them (version 8 runs the scan once per entry).
  auto entry = [&](const std::string& ptr, const Value& v) {
    return s.batched ? fmt::format("({} + batch_entry * {})", ptr, v.numel() / std::max<int64_t>(s.batch, 1)) : ptr;
  };
  auto in = [&](std::size_t i) { return entry(e.in(i), *n.inputs[i]); };
  auto out = [&](std::size_t i) { return entry(e.out(i), *n.outputs[i]); };
  const auto entry_numel = [&](const Value& v) { return shape_numel(s.entry_shape(v.shape)); };
  if (s.batched) e.linef("for (rt::index_t batch_entry = 0; batch_entry < {}; ++batch_entry) {{", s.batch);
  const std::string pad = s.batched ? "  " : "";  // the batch loop's body
  std::vector<std::string> body_in, body_out;
  for (std::size_t i = 0; i < s.states; ++i) {
    const Value& v = *n.inputs[s.first + i];
    e.linef("{}{}* const state_{} = reinterpret_cast<{}*>({} + {});", pad, typed(v), i, typed(v), e.scratch(),
            sc.state[i]);
    e.linef("{}{}* const next_{} = reinterpret_cast<{}*>({} + {});", pad, typed(v), i, typed(v), e.scratch(),
            sc.next[i]);
    e.linef("{}rt::copy({}, state_{}, {});", pad, in(s.first + i), i, entry_numel(v));
    body_in.push_back(fmt::format("state_{}", i));
    body_out.push_back(fmt::format("next_{}", i));
  }
  for (std::size_t j = 0; j < s.scan_inputs; ++j) {
    const Value& x = *n.inputs[s.first + s.states + j];
    e.linef("{}{}* const slice_in_{} = reinterpret_cast<{}*>({} + {});", pad, typed(x), j, typed(x), e.scratch(),
            sc.in_slice[j]);
    body_in.push_back(fmt::format("slice_in_{}", j));
  }
  for (std::size_t k = 0; k < s.scan_outputs; ++k) {
    const Value& y = *body.outputs[s.states + k];
    e.linef("{}{}* const slice_out_{} = reinterpret_cast<{}*>({} + {});", pad, typed(y), k, typed(y), e.scratch(),
            sc.out_slice[k]);
    body_out.push_back(fmt::format("slice_out_{}", k));
  }
  e.linef("{}for (rt::index_t t = 0; t < {}; ++t) {{", pad, s.length);
  for (std::size_t j = 0; j < s.scan_inputs; ++j) {
    const std::size_t i = s.first + s.states + j;
    AxisView v = axis_view(s.entry_shape(n.inputs[i]->shape), s.in_axes[j]);
    e.linef("{}  rt::take_slice({}, slice_in_{}, {}, {}, {}, {});", pad, in(i), j, v.outer, v.len, v.inner,
            s.in_dirs[j] ? fmt::format("{} - t", s.length - 1) : "t");
  }
  e.linef("{}  {{", pad);
  e.lines_indented(e.subgraph(0, body_in, body_out), s.batched ? 3 : 2);
  e.linef("{}  }}", pad);
  for (std::size_t i = 0; i < s.states; ++i)
    e.linef("{}  rt::copy(next_{}, state_{}, {});", pad, i, i, entry_numel(*n.inputs[s.first + i]));
  for (std::size_t k = 0; k < s.scan_outputs; ++k) {
    const Shape y = s.entry_shape(n.outputs[s.states + k]->shape);
    int64_t axis = s.out_axes[k] < 0 ? s.out_axes[k] + static_cast<int64_t>(y.size()) : s.out_axes[k];
    AxisView v = axis_view(y, axis);
    e.linef("{}  rt::put_slice(slice_out_{}, {}, {}, {}, {}, {});", pad, k, out(s.states + k), v.outer, v.len,
            v.inner, s.out_dirs[k] ? fmt::format("{} - t", s.length - 1) : "t");
  }
  e.linef("{}}}", pad);
  for (std::size_t i = 0; i < s.states; ++i)
    e.linef("{}rt::copy(state_{}, {}, {});", pad, i, out(i), entry_numel(*n.inputs[s.first + i]));
  if (s.batched) e.line("}");
}

const OpRegistrar scan_op([] {
  OpDef d;
  d.op_type = "Scan";
  d.versions = {8, 9, 11, 16, 19, 21, 23, 24, 25};
  d.infer = infer_scan;
  d.emit = emit_scan;
  d.scratch_bytes = [](const Node& n) { return scan_scratch(n).size; };
  return d;
}());

}  // namespace
}  // namespace onnxc
