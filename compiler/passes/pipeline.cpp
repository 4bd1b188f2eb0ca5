#include "passes/pipeline.h"

#include <filesystem>
#include <set>

#include <fmt/format.h>

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

const std::set<std::string>& optional_passes() {
  static const std::set<std::string> names = {"fold-constants", "fold-batchnorm", "fold-affine", "fuse-activation", "fuse-attention", "fold-transpose", "fuse-elementwise", "fuse-block", "fuse-output-table", "fit-scratch", "mark-weights-from-memory", "in-place", "concat-in-place", "reorder",
                                                     "lower-qdq", "simplify"};
  return names;
}

static bool enabled(const CompileOptions& o, const char* pass) { return !o.disabled_passes.count(pass); }

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

void check_loaded_model(Model& m, const CompileOptions& o) { check_loaded_model(m, o, [](const char*) {}); }

void check_loaded_model(Model& m, const CompileOptions& o, const std::function<void(const char*)>& after_pass) {
  qdq_accept_qoperator(m);  // QGemm has no other form in onnxc: always
  validate_nodes(m);  // before resolve_operators: spec violations matter whatever onnxc supports
  resolve_operators(m);
  bind_structured_inputs(m.graph, o.sequence_shapes, o.empty_optionals);
  bind_input_shapes(m.graph, o.input_shapes, o.dims);
  bind_input_constants(m.graph, o.constants);
  bind_input_tensors(m.graph, o.constant_tensors);
  // Before inference, which would fold the quantized weights of QDQ models into float ones.
  if (enabled(o, "lower-qdq")) {
    // Canonical forms first, whatever the quantizer wrote; then the integer operators.
    qdq_activations_to_uint8(m.graph);
    qdq_quantize_float_bias(m.graph);
    qdq_move_dequantize(m.graph);
    qdq_activation_to_clamp(m.graph);
    qdq_fold_pairs(m.graph);
    lower_qdq(m.graph);
    after_pass("lower-qdq");
  }
  try {
    infer_and_fold(m.graph, enabled(o, "fold-constants"));
    after_pass("fold-constants");
    expand_structured_outputs(m.graph, m.opsets.count("") ? m.opsets.at("") : 0, enabled(o, "fold-constants"));
    size_text_storage(m.graph, o.string_bytes);
    refuse_dangling_text(m.graph);
  } catch (const CompileError& e) {
    throw with_pinning_advice(m.graph, e);
  }
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

Compilation compile_model(const std::string& path, const CompileOptions& o) {
  return compile_loaded_model(load_model(path, load_options(o)), o);
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
  check_loaded_model(c.model, o, after);
  c.file_nodes = g.nodes.size();
  if (enabled(o, "lower-qdq")) lower_qdq_pools(g);
  after("lower-qdq");
  eliminate_dead_nodes(g);  // also drops folded nodes: always on
  after("dead-code");
  if (enabled(o, "lower-qdq")) compose_lookups(g);
  after("lower-qdq");
  c.folded_nodes = c.file_nodes - g.nodes.size();
  if (enabled(o, "simplify")) c.folded_nodes += static_cast<std::size_t>(simplify(g));
  after("simplify");
  // Before fuse-elementwise, which would merge the scalings and the mask's Add.
  if (enabled(o, "fuse-attention")) c.fused_nodes += static_cast<std::size_t>(fuse_attention(g));
  after("fuse-attention");
  if (enabled(o, "fold-transpose")) c.fused_nodes += static_cast<std::size_t>(fold_transpose(g));
  after("fold-transpose");
  if (enabled(o, "fold-batchnorm")) c.fused_nodes += static_cast<std::size_t>(fold_batchnorm(g));
  after("fold-batchnorm");
  if (enabled(o, "fold-affine")) c.fused_nodes += static_cast<std::size_t>(fold_affine(g));
  after("fold-affine");
  if (enabled(o, "fuse-activation")) c.fused_nodes += static_cast<std::size_t>(fuse_activation(g));
  after("fuse-activation");
  if (enabled(o, "fuse-elementwise")) c.fused_nodes += static_cast<std::size_t>(fuse_elementwise(g));
  after("fuse-elementwise");
  const Target* target = find_target(o.target);
  ScratchOptions scratch;
  scratch.memory_first = target && target->memory_first;
  scratch.int8_dual_mac = target && target->int8_dual_mac;
  scratch.int8_helium = target && target->int8_helium;
  scratch.simd = target && target->simd;
  scratch.shifted_input = target && target->shifted_input_product;
  scratch.depthwise_stride2 = target && target->depthwise_stride2_in_place;
  scratch.depthwise_channel_lanes = target && target->depthwise_channel_lanes;
  scratch.winograd = target && target->simd && !target->memory_first;
  scratch.float_lanes = target ? target->float_lanes : 1;
  scratch.policy = o.scratch_policy.value_or(ScratchPolicy::Fit);
  PlanOptions plan;
  plan.in_place = enabled(o, "in-place");
  plan.concat_in_place = enabled(o, "concat-in-place");
  plan.reorder = enabled(o, "reorder");
  // Before the scratch is fitted: these kernels need none. The layout their kernel reads, as below.
  if (scratch.int8_dual_mac) pack_dual_mac_weights(g, scratch.int8_helium);
  // The M4's and M7's store_row looks the table up in registers (Helium's and the hosts' vector
  // stores do not: they keep the lookup's own vector pass).
  if (scratch.int8_dual_mac && !scratch.int8_helium && enabled(o, "fuse-output-table"))
    c.fused_nodes += static_cast<std::size_t>(fuse_output_tables(g));
  after("fuse-output-table");
  if (target && (target->int8_vnni_sure || target->int8_byte_permute_sure || target->int8_pairs_sure))
    pack_dot_product_weights(g, target->int8_vnni_sure, target->int8_byte_permute_sure, target->int8_pairs_sure);
  // Before anything asks splits_into_tasks (fit-scratch's slots, the emitted parallel-for).
  if (enabled(o, "mark-weights-from-memory")) mark_weights_from_memory(g);
  // Off: every kernel its default scratch (the fastest im2col block, one depthwise slot).
  if (enabled(o, "fit-scratch")) fit_scratch(g, o.alignment, plan, scratch);
  // int8_products: rt::qgemm_packed has SIMD forms for x86 (VNNI, AVX2) and AArch64 (SDOT, SMULL).
  pack_weights(g, target && target->int8_dot_product, target && target->simd,
               target && target->simd && (target->arch.empty() || target->arch == "aarch64"),
               target ? target->float_lanes : 1);  // always: the layout the kernels read, not an optimisation to compare against
  if (enabled(o, "fuse-block")) c.fused_nodes += static_cast<std::size_t>(fuse_block(g, scratch.memory_first ? 1 : kFusedBlockTasks));
  after("fuse-block");
  c.program = plan_program(g, o.alignment, plan);
  for (const FloatStep& f : float_steps_between_integers(g))
    fmt::print(stderr, "warning: {} stays float between integer steps: {}\n", f.node->describe(),
               enabled(o, "lower-qdq") ? f.why : "lower-qdq is disabled");
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
