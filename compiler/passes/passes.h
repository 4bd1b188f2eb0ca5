// The compiler's passes. Each takes the model (or graph) and rewrites it in place or produces
// the next stage's data; pipeline.cpp lists them in order.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>

#include "ir/ir.h"
#include "passes/program.h"

namespace onnxc {

struct OpDef;

// Checks every node (subgraphs included) against its operator version's signature: input and
// output counts, required attributes, undeclared attributes, attribute types. Reports all at once.
void validate_nodes(const Model& m);
// Resolves each node's operator version and checks onnxc implements it; reports every
// unsupported op at once.
void resolve_operators(Model& m);
// Gives graph inputs static shapes: declared dims, then --shape NAME=AxB, then --dim PARAM=N.
void bind_input_shapes(Graph& g, const std::map<std::string, Shape>& shapes, const std::map<std::string, int64_t>& dims);
// --constant: inputs the caller promises always hold these values become constants (they stay
// in the generated signature, unread).
void bind_input_constants(Graph& g, const std::map<std::string, std::vector<double>>& constants);
// numpy has no bfloat16, so ONNX's test data (and other files written through numpy) store
// bfloat16 tensors as uint16 holding the bits: when `want` is bfloat16, a uint16 tensor is
// relabelled bfloat16 (same bytes). Any other tensor is left as it is.
void take_uint16_as_bfloat16_bits(Tensor& t, DType want);
// --constant NAME=FILE.pb: the same with whole tensors (the dtype and shape must be the input's).
void bind_input_tensors(Graph& g, const std::map<std::string, Tensor>& constants);
// An error of shape inference that asks for values computed from graph inputs (see
// CompileError::inputs_to_pin), completed with the advice to pin those inputs with --constant.
// Only the main graph's inputs can be pinned: a need that traces to a subgraph's input is dropped.
CompileError with_pinning_advice(const Graph& g, const CompileError& e);
// Infers every value's dtype and shape in execution order, folding nodes whose inputs are all
// constant (so shape subgraphs become constants before Reshape & co. need them). Starts at node
// first_node (the nodes before it were inferred already).
void infer_and_fold(Graph& g, bool fold, std::size_t first_node = 0);
// n's outputs become the constants its operator's fold computes (n inferred, every input constant).
void fold_node(Node& n, const OpDef& def);
// Whether every input n has is a constant.
bool inputs_all_constant(const Node& n);
// Folds inference BatchNormalization into a preceding Conv/Gemm with constant weights.
// Returns how many were folded.
int fold_batchnorm(Graph& g);
// Folds Mul, Add, Sub and Div by per-output-channel (or scalar) constants into a preceding
// Conv, Gemm or MatMul with constant weights (a MatMul with a shift becomes a Gemm). Returns how
// many were folded.
int fold_affine(Graph& g);
// Whether matmul_as_gemm can rewrite the node: a MatMul of a float A of rank >= 2 by a constant
// float [K, N] B.
bool matmul_can_be_gemm(const Node& mm);
// Rewrites such a MatMul into a Gemm with C = bias (nullptr: none). When A has rank > 2, Reshape
// views to [M, K] before it and back after it are inserted around it in g.nodes. Returns the
// node that writes the MatMul's output now (the view after it, or the Gemm); relinks g.
Node* matmul_as_gemm(Graph& g, Node& mm, Value* bias);
// A new constant value (named after `hint`, unique) holding `t`: what rewriting passes put in
// place of the weights they change.
Value* add_constant(Graph& g, const std::string& hint, Tensor t);
// Removes nodes whose outputs nobody reads (and folded nodes).
void eliminate_dead_nodes(Graph& g);
// Puts each replacement in its key node's place in g.nodes, drops the `dropped` nodes, relinks g
// (what fusing passes do with the nodes they merge).
void replace_nodes(Graph& g, std::map<const Node*, std::unique_ptr<Node>>& replacement,
                   const std::set<const Node*>& dropped);
// Removes nodes that compute nothing (Identity, inference Dropout, Cast to the same type,
// identity Transpose) and merges Transpose pairs. Returns how many nodes went away.
int simplify(Graph& g);
struct PlanOptions {
  bool in_place = true;         // elementwise ops overwrite an input that dies at their step
  bool concat_in_place = true;  // Concat inputs are written into their slabs of its output
  bool reorder = true;          // the main graph runs in an order that lowers peak memory
  bool overlap = true;          // an output may overlap the input its step reads last (OpDef::overlap_delta)
  // Called with each step's node and its room (Step::room_bytes) once the tensors of its block
  // are placed, before its scratch is: the op's scratch_bytes is read again after it. Nested
  // blocks are planned (and so sized) before the step that runs them, so every room is measured
  // against the nested arenas the final plan will have (fit-scratch).
  std::function<void(const Node&, std::size_t room_bytes)> size_scratch;
};
// Orders steps, decides where each tensor lives and plans the arena.
Program plan_program(const Graph& g, std::size_t alignment, const PlanOptions& options = {});

}  // namespace onnxc
