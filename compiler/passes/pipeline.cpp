#include "passes/pipeline.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backend/target.h"
#include "frontend/load.h"
#include "passes/lower_qdq.h"
#include "passes/qdq_patterns.h"
#include "passes/fuse_elementwise.h"
#include "ops/fused_block.h"
#include "passes/kernel_passes.h"
#include "passes/passes.h"
#include "passes/sequence_io.h"

namespace onnxc {

// String tensors whose text length is unknown at compile time get --string-bytes per element.
static void size_text_storage(Graph& g, std::size_t string_bytes) {
  for (const auto& v : g.values)
    if (v->text_bytes_per_element == Value::kTextBytesFromOption) v->text_bytes_per_element = string_bytes;
}

// Text written at run time lives in the buffer of the string tensor that holds it, which the
// arena reuses after that tensor's last reader. So only operators that copy the text (or read
// it) may read such a tensor: one copying its pointers (Identity, Transpose, Gather, ...) would
// leave them dangling.
static void refuse_dangling_text(const Graph& g) {
  static const std::set<std::string> text_readers = {"Cast", "CastLike", "StringNormalizer"};
  for (const auto& n : g.nodes) {
    if (!n->domain.empty() || text_readers.count(n->op_type)) continue;
    for (const Value* v : n->inputs)
      if (v && v->dtype == DType::String && v->text_bytes_per_element != 0)
        throw CompileError(ErrorKind::Unsupported, n->describe(),
                           fmt::format("reads the string tensor '{}', whose text is computed at run time; onnxc "
                                       "passes such text only through Cast and StringNormalizer",
                                       v->name),
                           "move the string processing out of the model, or apply it before the text is made");
  }
}

namespace {

// What a pass reads besides the graph: the options and the target's traits, worked out once.
struct PassEnv {
  explicit PassEnv(const CompileOptions& o) : options(o), target(find_target(o.target)) {
    const Target* t = target;
    scratch.memory_first = t && t->memory_first;
    scratch.int8_dual_mac = t && t->int8_dual_mac;
    scratch.int8_helium = t && t->int8_helium;
    scratch.simd = t && t->simd;
    scratch.shifted_input = t && t->shifted_input_product;
    scratch.depthwise_stride2 = t && t->depthwise_stride2_in_place;
    scratch.depthwise_channel_lanes = t && t->depthwise_channel_lanes;
    scratch.winograd = t && t->simd && !t->memory_first;
    scratch.float_lanes = t ? t->float_lanes : 1;
    scratch.int8_neon_tiles = t && t->simd && t->arch == "aarch64";
    scratch.policy = o.scratch_policy.value_or(ScratchPolicy::Fit);
    for (const PlanSwitch& s : plan_switches()) plan.*s.member = enabled(s.option);
  }
  bool enabled(const char* option) const { return !options.disabled_passes.count(option); }

  const CompileOptions& options;
  const Target* target;  // nullptr: no such target
  ScratchOptions scratch;
  PlanOptions plan;

  // The planner's optional behaviours (--disable-pass NAME), which are not graph passes.
  struct PlanSwitch {
    const char* option;
    bool PlanOptions::*member;
  };
  static const std::vector<PlanSwitch>& plan_switches() {
    static const std::vector<PlanSwitch> switches = {
        {"in-place", &PlanOptions::in_place},
        {"concat-in-place", &PlanOptions::concat_in_place},
        {"overlap", &PlanOptions::overlap},
        {"reorder", &PlanOptions::reorder},
    };
    return switches;
  }
};

// Which count of the compile summary a pass's result adds to.
enum class Counts { Nothing, Folded, Fused };

// One pass, declared once. `name` is what --time-passes prints and --dump-after takes;
// `option`, when set, is the --disable-pass name that turns it off (several passes may share
// one) and the name validate --layers gives the values the pass took away (its own name
// otherwise); `skippable` false: the pass runs whatever the option and reads env.enabled itself
// (fold-constants turns off folding, not shape inference). `run` returns how many nodes it
// took away or merged (what `counts` adds to).
struct Pass {
  const char* name;
  const char* option;
  bool skippable;
  Counts counts;
  std::int64_t (*run)(Model&, const PassEnv&);
};

// Nodes of the main graph that `f` takes away.
template <class F> std::int64_t nodes_removed(Model& m, F&& f) {
  const auto before = static_cast<std::int64_t>(m.graph.nodes.size());
  f(m.graph);
  return before - static_cast<std::int64_t>(m.graph.nodes.size());
}

// Shape inference's errors, with the --constant advice where pinning an input would help.
template <class F> std::int64_t advising_pinning(Model& m, F&& f) {
  try {
    f();
  } catch (const CompileError& e) {
    throw with_pinning_advice(m.graph, e);
  }
  return 0;
}

// Checking: from the file's nodes to a graph with every shape known and constants folded.
const std::vector<Pass>& front_passes() {
  static const std::vector<Pass> passes = {
      // QGemm has no other form in onnxc: always.
      {"accept-qoperator", nullptr, true, Counts::Nothing, [](Model& m, const PassEnv&) -> std::int64_t { return qdq_accept_qoperator(m); }},
      // Before resolve-operators: spec violations matter whatever onnxc supports.
      {"validate-nodes", nullptr, true, Counts::Nothing, [](Model& m, const PassEnv&) -> std::int64_t { validate_nodes(m); return 0; }},
      {"resolve-operators", nullptr, true, Counts::Nothing, [](Model& m, const PassEnv&) -> std::int64_t { resolve_operators(m); return 0; }},
      {"bind-inputs", nullptr, true, Counts::Nothing, [](Model& m, const PassEnv& env) -> std::int64_t {
         const CompileOptions& o = env.options;
         bind_structured_inputs(m.graph, o.sequence_shapes, o.empty_optionals);
         bind_input_shapes(m.graph, o.input_shapes, o.dims);
         bind_input_constants(m.graph, o.constants);
         bind_input_tensors(m.graph, o.constant_tensors);
         return 0;
       }},
      // Before inference, which would fold the quantized weights of QDQ models into float ones.
      // Canonical forms first, whatever the quantizer wrote; then the integer operators.
      {"qdq-fold-parameters", "lower-qdq", true, Counts::Nothing, [](Model& m, const PassEnv&) -> std::int64_t { return qdq_fold_parameters(m.graph); }},
      {"qdq-activations-to-uint8", "lower-qdq", true, Counts::Nothing, [](Model& m, const PassEnv&) -> std::int64_t { return qdq_activations_to_uint8(m.graph); }},
      {"qdq-move-dequantize", "lower-qdq", true, Counts::Nothing, [](Model& m, const PassEnv&) -> std::int64_t { return qdq_move_dequantize(m.graph); }},
      {"qdq-quantize-float-bias", "lower-qdq", true, Counts::Nothing, [](Model& m, const PassEnv&) -> std::int64_t { return qdq_quantize_float_bias(m.graph); }},
      {"qdq-activation-to-clamp", "lower-qdq", true, Counts::Nothing, [](Model& m, const PassEnv&) -> std::int64_t { return qdq_activation_to_clamp(m.graph); }},
      {"qdq-fold-pairs", "lower-qdq", true, Counts::Nothing, [](Model& m, const PassEnv&) -> std::int64_t { return qdq_fold_pairs(m.graph); }},
      {"lower-qdq", "lower-qdq", true, Counts::Nothing, [](Model& m, const PassEnv&) -> std::int64_t { return lower_qdq(m.graph); }},
      {"infer-and-fold", "fold-constants", false, Counts::Nothing, [](Model& m, const PassEnv& env) -> std::int64_t {
         return advising_pinning(m, [&] { infer_and_fold(m.graph, env.enabled("fold-constants")); });
       }},
      {"expand-structured-outputs", nullptr, true, Counts::Nothing, [](Model& m, const PassEnv& env) -> std::int64_t {
         return advising_pinning(m, [&] {
           expand_structured_outputs(m.graph, m.opsets.count("") ? m.opsets.at("") : 0, env.enabled("fold-constants"));
         });
       }},
      {"size-text-storage", nullptr, true, Counts::Nothing, [](Model& m, const PassEnv& env) -> std::int64_t {
         return advising_pinning(m, [&] {
           size_text_storage(m.graph, env.options.string_bytes);
           refuse_dangling_text(m.graph);
         });
       }},
  };
  return passes;
}

// Compiling: from the checked graph to the steps the planner orders and places.
const std::vector<Pass>& middle_passes() {
  static const std::vector<Pass> passes = {
      {"lower-qdq-pools", "lower-qdq", true, Counts::Folded, [](Model& m, const PassEnv&) { return nodes_removed(m, lower_qdq_pools); }},
      // Also drops folded nodes: always on.
      {"dead-code", nullptr, true, Counts::Folded, [](Model& m, const PassEnv&) { return nodes_removed(m, eliminate_dead_nodes); }},
      {"compose-lookups", "lower-qdq", true, Counts::Folded, [](Model& m, const PassEnv&) { return nodes_removed(m, compose_lookups); }},
      {"simplify", "simplify", true, Counts::Folded, [](Model& m, const PassEnv&) -> std::int64_t { return simplify(m.graph); }},
      // Before fuse-elementwise, which would merge the scalings and the mask's Add.
      {"fuse-attention", "fuse-attention", true, Counts::Fused, [](Model& m, const PassEnv&) -> std::int64_t { return fuse_attention(m.graph); }},
      {"fold-transpose", "fold-transpose", true, Counts::Fused, [](Model& m, const PassEnv&) -> std::int64_t { return fold_transpose(m.graph); }},
      {"fold-batchnorm", "fold-batchnorm", true, Counts::Fused, [](Model& m, const PassEnv&) -> std::int64_t { return fold_batchnorm(m.graph); }},
      {"fold-affine", "fold-affine", true, Counts::Fused, [](Model& m, const PassEnv&) -> std::int64_t { return fold_affine(m.graph); }},
      {"fuse-activation", "fuse-activation", true, Counts::Fused, [](Model& m, const PassEnv&) -> std::int64_t { return fuse_activation(m.graph); }},
      {"fuse-elementwise", "fuse-elementwise", true, Counts::Fused, [](Model& m, const PassEnv&) -> std::int64_t { return fuse_elementwise(m.graph); }},
      // Before the scratch is fitted: these kernels need none. The layout their kernel reads, as below.
      {"pack-dual-mac-weights", nullptr, true, Counts::Nothing, [](Model& m, const PassEnv& env) -> std::int64_t {
         return env.scratch.int8_dual_mac ? pack_dual_mac_weights(m.graph, env.scratch.int8_helium) : 0;
       }},
      // The M4's and M7's store_row looks the table up in registers (Helium's and the hosts'
      // vector stores do not: they keep the lookup's own vector pass).
      {"fuse-output-table", "fuse-output-table", true, Counts::Fused, [](Model& m, const PassEnv& env) -> std::int64_t {
         return env.scratch.int8_dual_mac && !env.scratch.int8_helium ? fuse_output_tables(m.graph) : 0;
       }},
      {"pack-dot-product-weights", nullptr, true, Counts::Nothing, [](Model& m, const PassEnv& env) -> std::int64_t {
         const Target* t = env.target;
         if (t && (t->int8_vnni_sure || t->int8_byte_permute_sure || t->int8_pairs_sure))
           return pack_dot_product_weights(m.graph, t->int8_vnni_sure, t->int8_byte_permute_sure, t->int8_pairs_sure);
         return 0;
       }},
      // Before anything asks splits_into_tasks (fit-scratch's slots, the emitted parallel-for).
      {"mark-weights-from-memory", "mark-weights-from-memory", true, Counts::Nothing, [](Model& m, const PassEnv&) -> std::int64_t { return mark_weights_from_memory(m.graph); }},
      // Off: every kernel its default scratch (the fastest im2col block, one depthwise slot).
      {"fit-scratch", "fit-scratch", true, Counts::Nothing, [](Model& m, const PassEnv& env) -> std::int64_t {
         PlanOptions fit = env.plan;  // overlapped buffers only where --memory-budget asks (pipeline.h)
         fit.overlap = env.plan.overlap && env.options.overlap_before_scratch;
         return fit_scratch(m.graph, env.options.alignment, fit, env.scratch);
       }},
      // Always: the layout the kernels read, not an optimisation to compare against.
      // int8_products: rt::qgemm_packed has SIMD forms for x86 (VNNI, AVX2) and AArch64 (SDOT, SMULL).
      {"pack-weights", nullptr, true, Counts::Nothing, [](Model& m, const PassEnv& env) -> std::int64_t {
         const Target* t = env.target;
         return pack_weights(m.graph, t && t->int8_dot_product, t && t->simd, t && t->simd && (t->arch.empty() || t->arch == "aarch64"),
                             t ? t->float_lanes : 1);
       }},
      {"fuse-block", "fuse-block", true, Counts::Fused, [](Model& m, const PassEnv& env) -> std::int64_t {
         return fuse_block(m.graph, env.scratch.memory_first ? 1 : kFusedBlockTasks);
       }},
  };
  return passes;
}

// Runs a table of passes in order: skips the disabled ones, adds up the counts, times each pass
// (--time-passes), prints the graph after those --dump-after names, and tells `after` which
// name to charge with the values each pass took away.
void run_passes(const std::vector<Pass>& passes, Model& m, const PassEnv& env, Compilation* c,
                const std::function<void(const char*)>& after) {
  const CompileOptions& o = env.options;
  for (const Pass& p : passes) {
    if (p.option && p.skippable && !env.enabled(p.option)) continue;
    const auto start = std::chrono::steady_clock::now();
    const std::int64_t changed = p.run(m, env);
    const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
    if (o.pass_log) o.pass_log(p.name, took.count(), m.graph);
    if (c && p.counts == Counts::Folded) c->folded_nodes = static_cast<std::size_t>(static_cast<std::int64_t>(c->folded_nodes) + changed);
    if (c && p.counts == Counts::Fused) c->fused_nodes = static_cast<std::size_t>(static_cast<std::int64_t>(c->fused_nodes) + changed);
    after(p.option ? p.option : p.name);
  }
}

}  // namespace

const std::set<std::string>& optional_passes() {
  static const std::set<std::string> names = [] {
    std::set<std::string> n;
    for (const auto* table : {&front_passes(), &middle_passes()})
      for (const Pass& p : *table)
        if (p.option) n.insert(p.option);
    for (const PassEnv::PlanSwitch& s : PassEnv::plan_switches()) n.insert(s.option);
    return n;
  }();
  return names;
}

const std::vector<std::string>& pass_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto* table : {&front_passes(), &middle_passes()})
      for (const Pass& p : *table) n.push_back(p.name);
    n.push_back("plan-program");
    return n;
  }();
  return names;
}

void check_loaded_model(Model& m, const CompileOptions& o) { check_loaded_model(m, o, [](const char*) {}); }

void check_loaded_model(Model& m, const CompileOptions& o, const std::function<void(const char*)>& after_pass) {
  run_passes(front_passes(), m, PassEnv(o), nullptr, after_pass);
}
LoadOptions load_options(const CompileOptions& o) {
  LoadOptions l;
  l.strict = o.strict;
  l.warn = o.warn;
  return l;
}

Model check_model(const std::string& path, const CompileOptions& o) {
  Model m = load_model(path, load_options(o));
  check_loaded_model(m, o);
  return m;
}

namespace {

// The passes that lower the arena, for --memory-budget.
const char* const kMemoryPasses[] = {"overlap", "in-place", "concat-in-place", "reorder", "fit-scratch", "fuse-block"};

// The step of the main block where the most bytes are live, and what is live there.
std::string peak_step(const Compilation& c) {
  const Block& b = c.program.main;
  if (b.live_bytes.empty() || b.steps.empty()) return "no step";
  const std::size_t at = static_cast<std::size_t>(
      std::max_element(b.live_bytes.begin(), b.live_bytes.end()) - b.live_bytes.begin());
  if (at >= b.steps.size()) return "the graph's results";
  return fmt::format("step {} ({}): {} B", at, b.steps[at].node->describe(), b.live_bytes[at]);
}

// The options to compile with under --memory-budget: `o` when its plan fits, else `o` with the
// memory passes it turned off turned on when that plan fits; else fails with the smallest arena.
// (Each candidate is compiled here and again by the caller: a Compilation's blocks point into
// its own model, so it does not move.)
CompileOptions options_within_budget(const std::string& path, const CompileOptions& o) {
  const Compilation c = compile_loaded_model(load_model(path, load_options(o)), o);
  if (c.program.arena_bytes <= o.memory_budget) return o;
  CompileOptions least = o;
  std::vector<std::string> turned_on;
  for (const char* pass : kMemoryPasses)
    if (least.disabled_passes.erase(pass)) turned_on.push_back(pass);
  if (least.scratch_policy == ScratchPolicy::Speed) {
    least.scratch_policy = ScratchPolicy::Fit;
    turned_on.push_back("--scratch fit");
  }
  std::size_t arena = c.program.arena_bytes;
  std::string peak = peak_step(c);
  for (int stage = 0; stage < 2; ++stage) {
    if (stage == 1) {  // then the kernels' scratch fitted around the overlapped buffers (slower kernels)
      if (least.overlap_before_scratch) break;
      least.overlap_before_scratch = true;
      turned_on.push_back("scratch fitted after overlap");
    } else if (turned_on.empty()) {
      continue;
    }
    const Compilation smaller = compile_loaded_model(load_model(path, load_options(least)), least);
    if (smaller.program.arena_bytes <= o.memory_budget) {
      fmt::print(stderr, "note: --memory-budget {}: arena {} B with {} (without: {} B)\n", o.memory_budget,
                 smaller.program.arena_bytes, fmt::join(turned_on, ", "), c.program.arena_bytes);
      return least;
    }
    arena = smaller.program.arena_bytes;
    peak = peak_step(smaller);
  }
  throw CompileError(
      ErrorKind::Unsupported, fmt::format("--memory-budget {}", o.memory_budget),
      fmt::format("the smallest arena onnxc reaches for this model is {} B, {} B over the budget (the largest sum of "
                  "tensors and scratch live at one step: {}, less where an output overlaps its input)",
                  arena, arena - o.memory_budget, peak),
      fmt::format("give at least --memory-budget {}; onnxc does not yet compute layers in tiles (issue #26, item 2), "
                  "which would go lower",
                  arena));
}

}  // namespace

Compilation compile_model(const std::string& path, const CompileOptions& o) {
  const CompileOptions chosen = o.memory_budget ? options_within_budget(path, o) : o;
  return compile_loaded_model(load_model(path, load_options(chosen)), chosen);
}

namespace {

// Which pass took away each value of the main graph that some node computed in the file: after
// each pass, the node outputs that were there before and are gone now are that pass's. A node
// dropped as dead code is charged to the pass after which nothing read its output any more (the
// one that moved its readers elsewhere), or to fold-constants when its value is a constant now.
class RemovedValues {
 public:
  RemovedValues(const Graph& g, std::map<std::string, std::string>& removed) : g_(g), removed_(removed) {
    computed_ = node_outputs();
    read_ = read_values();
  }
  void after(const char* pass) {
    std::set<std::string> now = node_outputs(), read = read_values();
    for (const std::string& name : now)
      if (read_.count(name) && !read.count(name)) unread_since_.emplace(name, pass);
    for (const std::string& name : computed_)
      if (!now.count(name)) {
        auto unread = unread_since_.find(name);
        const Value* v = g_.find(name);
        removed_.emplace(name, v && v->constant ? "fold-constants"  // a constant now: its node is dead code
                               : unread == unread_since_.end() ? pass : unread->second);
      }
    // A pass may give a new node an old name: it is computed again.
    for (const std::string& name : now) removed_.erase(name);
    computed_ = std::move(now);
    read_ = std::move(read);
  }

 private:
  std::set<std::string> node_outputs() const {
    std::set<std::string> names;
    for (const auto& n : g_.nodes)
      for (const Value* v : n->outputs)
        if (v && !v->name.empty()) names.insert(v->name);
    return names;
  }
  std::set<std::string> read_values() const {
    std::set<std::string> names;
    for (const auto& n : g_.nodes)
      for (const Value* v : n->inputs)
        if (v) names.insert(v->name);
    for (const Value* v : g_.outputs) names.insert(v->name);
    return names;
  }
  const Graph& g_;
  std::map<std::string, std::string>& removed_;
  std::set<std::string> computed_, read_;
  std::map<std::string, std::string> unread_since_;
};

}  // namespace

Compilation compile_loaded_model(Model model, const CompileOptions& o) {
  Compilation c;
  c.model = std::move(model);
  Graph& g = c.model.graph;
  RemovedValues removed(g, c.removed_values);
  auto after = [&removed](const char* pass) { removed.after(pass); };
  const PassEnv env(o);
  run_passes(front_passes(), c.model, env, nullptr, after);
  c.file_nodes = g.nodes.size();
  run_passes(middle_passes(), c.model, env, &c, after);
  const auto start = std::chrono::steady_clock::now();
  c.program = plan_program(g, o.alignment, env.plan);
  const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
  if (o.pass_log) o.pass_log("plan-program", took.count(), g);
  for (const FloatStep& f : float_steps_between_integers(g))
    fmt::print(stderr, "warning: {} stays float between integer steps: {}\n", f.node->describe(),
               env.enabled("lower-qdq") ? f.why : "lower-qdq is disabled");
  return c;
}

GeneratedCode emit_code(const Compilation& c, const CompileOptions& o, const std::string& header_name,
                        const std::string& source_name, const std::string& weights_file_name) {
  CodegenOptions co;
  co.name = o.name;
  co.header_name = header_name;
  co.source_name = source_name;
  co.model_file = std::filesystem::path(c.model.path).filename().string();
  co.weights_format = o.weights_format;
  co.weights_file_name = weights_file_name;
  if (const Target* t = find_target(o.target)) co.preamble = target_preamble(*t);
  co.weights_section = o.weights_section;
  co.step_hooks = o.step_hooks;
  co.trace = o.trace;
  co.profile = o.profile;
  return generate_code(c.model, c.program, co);
}

}  // namespace onnxc
