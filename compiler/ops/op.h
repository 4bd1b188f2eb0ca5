// What the compiler knows about one operator, kept in one place (compiler/ops/<op>.cpp):
// which versions it implements, how it infers output types and shapes, how it evaluates on
// constant inputs (constant folding) and what code it emits.
//
// Adding an operator: copy ops/TEMPLATE.cpp.txt to ops/<name>.cpp, fill in the hooks, add its
// kernel to runtime-support/ and a test. Registration is by a static OpRegistrar; the build
// globs ops/*.cpp.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ir/ir.h"
#include "support/diagnostics.h"

namespace onnxc {

class Emitter;

// How an elementwise operator computes one output element, for fuse-elementwise: the C++
// expression of the functor its kernel applies (rt::map, rt::zip, rt::zip3 compute
// y = store(f(load(a), load(b), ...))), reading its first `operands` inputs broadcast to the
// output's shape like numpy. Further inputs are compile-time constants the functor text holds
// (Clip's bounds) or only name a type (CastLike's).
struct ElementwiseForm {
  std::string functor;
  std::size_t operands = 0;
};

// Internal attribute: what scratch fit-scratch gave a node and why (see OpDef::scratch_bytes).
constexpr const char* kScratchNoteAttr = "onnxc.scratch_note";

struct OpDef {
  std::string domain;   // "" for ai.onnx
  std::string op_type;
  // Operator versions (since_version) this definition implements. A node whose resolved
  // version is not listed is refused as unsupported.
  std::vector<int> versions;
  // Sets every output's dtype and shape from the inputs and attributes; validates attributes.
  std::function<void(Node&)> infer;
  // Optional: computes the outputs when every input is constant.
  std::function<void(const Node&, std::vector<Tensor>&)> fold;
  // Writes the code that computes the node.
  std::function<void(const Node&, Emitter&)> emit;
  // Optional: bytes of temporary memory the emitted code needs (placed in the arena). Where
  // the kernel's scratch is the compiler's choice, fit-scratch (passes/kernel_passes.h) sizes
  // it and says why in the node's kScratchNoteAttr (string, shown by --report).
  std::function<std::size_t(const Node&)> scratch_bytes;
  // Optional, control flow: whether the node's k-th subgraph (see Node::subgraphs) runs at all
  // (If with a constant condition compiles one branch). Default: every subgraph.
  std::function<bool(const Node&, std::size_t)> uses_subgraph;
  // Optional, for operators on compile-time structures (sequences): replaces the node before
  // inference by the nodes it returns, which are inferred next, in order (none when the node only
  // rearranges a structure). Called instead of `infer`; the node is then deleted.
  std::function<std::vector<std::unique_ptr<Node>>(Node&, Graph&)> lower;
  // Optional, with `lower`: lower only the nodes for which it returns true (it sees the inputs'
  // inferred types and structures); the others are inferred and emitted. Default: every node.
  std::function<bool(const Node&)> lowers_when;
  // Optional, elementwise operators: the node's functor (see ElementwiseForm), the same text its
  // emit hook passes to the kernel, so a fused loop computes bit-identical elements. nullopt
  // when this node cannot be written so (legacy broadcasting, bounds computed at run time).
  std::function<std::optional<ElementwiseForm>(const Node&)> elementwise_form;
  // Optional: multiply-accumulates the node performs (for --report); 0 when not given.
  std::function<int64_t(const Node&)> macs;
  // Optional, overlapped buffers (passes/memory_plan.h, OverlapAllowance): the largest number of
  // bytes output 0 may start after input 0 (negative: before it) when input 0 dies at this step,
  // so that the kernel the node emits has read every input byte before it writes an output byte
  // over it. Proven from that kernel's order of reads and writes (ops/overlap.h), never from the
  // shapes of known models; nullopt (also the default): output 0 never overlaps input 0, as for a
  // kernel that writes before it has read what it needs, or a step split into concurrent tasks.
  std::function<std::optional<int64_t>(const Node&)> overlap_delta;
  // Output 0 is input 0 reinterpreted (same bytes, new shape): Reshape, Flatten, Identity, ...
  bool is_view = false;
  // Output 0 may be computed into input 0's buffer when input 0 dies here (elementwise ops).
  bool inplace = false;
};

// Whether a step's kernel is given the caller's parallel-for (Emitter::parallel), from its work
// (multiply-accumulates, or comparable operations): at least kMinParallelWork. Below it, handing
// the step's tasks to another thread and waiting for them costs more than the second thread saves
// (a hand-off is a few microseconds; a million multiply-accumulates take 10-20 us on one core).
// Steps that stream megabytes of activations gain too: an earlier rule that also asked for 8
// multiply-accumulates per byte of input and output was measured under load (the worker thread
// waiting for a CPU); on the idle machine mobilenet_v2's 1x1 and depthwise layers on 112 x 112 and
// 56 x 56 take 0.47-0.60 of their one-thread time with two threads, and the model 0.61 instead of
// 0.80 with that rule (bench/layer_profile.py --threads 2).
// A step that streams at least kMinParallelBytes of activations (inputs and outputs that are not
// constants) splits too, whatever its work: with two threads the tensors it reads were mostly
// written by split steps, half of them into the other core's cache, and one core pulling it all
// across is slower than the split (squeezenet1_1's 3 x 3 stride-2 MaxPools after the fire
// modules' Concats, 840 and 390 thousand comparisons over 1.5 MB and 750 KB: 33 -> 83 and
// 19 -> 46 us on one of two threads, 32 and 18 split).
// A node's constant inputs count kWeightsFromMemoryFactor times where they come from memory on
// every run (kWeightsFromMemoryAttr: the model's weights exceed a core's cache, so one run's
// weights have left it by the next): efficientnet_b0's squeeze-excite 1x1 Convs on 1 x 1 planes
// read their 75-230 KB of weights at 8-11 GB/s (bench --layers: 9-24 us each), where the split
// steps stream activations from the cache at 40-60; a quarter of the activation threshold of
// weights takes as long. A model whose weights stay in the cache keeps its small weighted steps
// on one thread.
constexpr const char* kWeightsFromMemoryAttr = "onnxc.weights_from_memory";
constexpr int64_t kWeightsFromMemoryFactor = 4;
// The cache one core keeps a model's weights in between runs: the 1-2 MiB L2 of current x86 and
// Arm server cores (the shared last level is shared with everything else the machine runs).
constexpr int64_t kCoreCacheBytes = 2 * 1024 * 1024;
constexpr int64_t kMinParallelWork = 1'000'000;
constexpr int64_t kMinParallelBytes = 512 * 1024;
int64_t streamed_bytes(const Node& n);
inline bool splits_into_tasks(const Node& n, int64_t work) {
  return work >= kMinParallelWork || streamed_bytes(n) >= kMinParallelBytes;
}

// How many tasks (rt::parallel_ranges) a step that splits (splits_into_tasks) cuts its `items`
// independent pieces of equal cost (rows, planes, runs of elements) into: enough that each task
// does at least kMinParallelWork / 4 of the work or streams kMinParallelBytes / 4, at least two,
// at most kMaxRangeTasks and `items`; 1 when the step does not split. A few more tasks than
// threads let the pool even out a thread that starts late; more would lose the cache locality
// of contiguous ranges between consecutive steps.
constexpr int64_t kMaxRangeTasks = 8;
int64_t range_tasks(const Node& n, int64_t work, int64_t items);

// Registry of every operator the compiler implements.
const OpDef* find_op(const std::string& domain, const std::string& op_type);
std::vector<const OpDef*> all_ops();

struct OpRegistrar {
  explicit OpRegistrar(OpDef def);
};

// An operator defined only by its lowering (OpDef::lower): the nodes it is rewritten into carry
// its shapes, folding and code.
inline OpDef lowered_op(std::string domain, std::string op_type, std::vector<int> versions,
                        std::function<std::vector<std::unique_ptr<Node>>(Node&, Graph&)> lower) {
  OpDef d;
  d.domain = std::move(domain);
  d.op_type = std::move(op_type);
  d.versions = std::move(versions);
  d.lower = std::move(lower);
  return d;
}

// ---- helpers for operator implementations ----

[[noreturn]] void fail_invalid(const Node& n, const std::string& what, const std::string& fix = {});
[[noreturn]] void fail_unsupported(const Node& n, const std::string& what, const std::string& fix = {});

// Checks input/output counts against the schema's bounds (max < 0: unbounded).
void check_arity(const Node& n, int min_in, int max_in, int min_out, int max_out);
// The input's value, failing with a clear message when a required input is missing.
const Value& input(const Node& n, std::size_t i);
// The constant data of input i, or nullptr when it is computed at run time.
const Tensor* const_input(const Node& n, std::size_t i);
// Like const_input, but fails (unsupported) when the input is not known at compile time.
const Tensor& require_const_input(const Node& n, std::size_t i, const char* what);
// Fails (unsupported) because the values `needed` are computed at run time but this node needs
// them at compile time. The error records the graph inputs they are computed from (see
// graph_inputs_behind), so the driver can suggest pinning them with --constant.
[[noreturn]] void fail_needs_compile_time_values(const Node& n, const std::vector<const Value*>& needed,
                                                 const std::string& what, const std::string& fix);
// The graph inputs (of any scope) `v` is computed from, when knowing their values would make `v` a
// compile-time constant: every node between them and `v` can be constant-folded. Empty when `v` is
// constant, or when some of it comes from elsewhere (a node that cannot fold, a subgraph).
std::vector<std::string> graph_inputs_behind(const Value& v);
// Refuses (unsupported, naming `what`) a tensor of `shape` larger than onnxc allows for one tensor,
// or with a negative dim: for shapes built from a model's values before anything is allocated.
void require_tensor_fits(const Node& n, const Shape& shape, DType dtype, const std::string& what);
// A dim computed in floating point (a scale times a length, a range's count): refuses NaN, infinity
// and values past what one tensor may hold, which would be undefined behaviour to convert.
int64_t dim_from_double(const Node& n, double v, const std::string& what);
void set_output(Node& n, std::size_t i, DType dtype, Shape shape);
// Sets output i as a bounded tensor (see Value::dynamic_axis): `bound` is its largest shape and
// its extent along `dynamic_axis` is computed at run time (the op's emit reports it through
// Emitter::out_extent). Folding gives such an output its exact shape.
void set_bounded_output(Node& n, std::size_t i, DType dtype, Shape bound, int dynamic_axis);
// For fold hooks: `t`, computed into the bound of bounded output `v` by a kernel that packs the
// tensor in its actual shape, becomes that shape (`extent` along v's dynamic axis).
void shrink_to_extent(Tensor& t, const Value& v, int64_t extent);
// Maps a possibly negative axis into [0, rank); fails naming `what` when out of range.
int64_t normalize_axis(const Node& n, int64_t axis, int64_t rank, const char* what = "axis");
// Fails unless input i has one of the given dtypes.
void require_dtype(const Node& n, std::size_t i, std::initializer_list<DType> allowed);
void require_dtype(const Node& n, std::size_t i, const std::vector<DType>& allowed);
void require_float(const Node& n, std::size_t i);
// numpy-style multidirectional broadcasting of two shapes; fails when they do not broadcast.
Shape broadcast_shapes(const Node& n, const Shape& a, const Shape& b);
// Strides of `in` for reading it broadcast to `out` (0 along broadcast dims), padded to out's rank.
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out);
std::vector<int64_t> contiguous_strides(const Shape& s);

// Runs `f` with the C++ type of `t` (float, double, int32_t, ..., rt::float16, bool).
// Used by fold hooks to call the same templated kernels as the generated code.
template <class F> void dispatch_dtype(const Node& n, DType t, F&& f);

}  // namespace onnxc

#include "ops/op_dispatch.h"
