// The compiler, start to end: the one place that lists the pipeline in order.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "backend/codegen.h"
#include "frontend/load.h"
#include "ir/ir.h"
#include "passes/kernel_passes.h"
#include "passes/program.h"

namespace onnxc {

struct CompileOptions {
  std::string name = "model";                 // C++ namespace and C prefix of the generated code
  std::map<std::string, Shape> input_shapes;  // --shape NAME=1x3x224x224
  std::map<std::string, int64_t> dims;        // --dim N=1
  std::map<std::string, std::vector<double>> constants;  // --constant sr=16000
  std::map<std::string, Tensor> constant_tensors;        // --constant NAME=FILE.pb, validate's pinned inputs
  std::map<std::string, std::vector<Shape>> sequence_shapes;  // element shapes of sequence inputs (sequence_io.h)
  std::set<std::string> empty_optionals;  // optional inputs compiled as empty (sequence_io.h)
  std::size_t alignment = 16;                 // arena and weight alignment, bytes
  std::set<std::string> disabled_passes;      // --disable-pass NAME
  WeightsFormat weights_format = WeightsFormat::Auto;  // --weights-format (validate and bench: auto)
  std::string target = "generic";             // --target (backend/target.h)
  std::string weights_section;                // --weights-section: the linker section of the weights
  // --string-bytes: text storage reserved per element of a string tensor whose text the model
  // writes when no bound is known at compile time (StringNormalizer's case changes), NUL included.
  std::size_t string_bytes = 64;
  // --scratch fit|speed; none: Fit (every target).
  std::optional<ScratchPolicy> scratch_policy;
  // --memory-budget BYTES (0: none): the most arena the plan may take. Over it, compile_model
  // turns on what this build turned off of the passes that lower the arena (overlap, in-place,
  // concat-in-place, reorder, fit-scratch with --scratch fit, fuse-block), then
  // overlap_before_scratch, and fails with the smallest arena it reaches if that is still over.
  std::size_t memory_budget = 0;
  // Overlapped buffers also in the plan fit-scratch sizes the kernels' scratch on: less room at the
  // steps beside an overlap, so narrower (slower) kernels for a smaller arena. Off: the scratch is
  // sized as without overlap, which then lowers the arena only where that costs no time.
  // --memory-budget turns it on when the arena is over the budget without it.
  bool overlap_before_scratch = false;
  bool strict = false;                            // --strict (LoadOptions::strict)
  std::function<void(const Problem&)> warn;       // the loader's warnings (LoadOptions::warn)
  // `onnxc bench --layers`: the generated code calls the bench harness's step clock around each
  // step (CodegenOptions::step_hooks). No command line of the compiler sets it.
  bool step_hooks = false;
  bool trace = false;    // --trace (CodegenOptions::trace)
  bool profile = false;  // --profile (CodegenOptions::profile)
  // Called after every pass with its name (pass_names()), its time and the graph it left:
  // --time-passes and --dump-after. None: nothing is timed for anyone.
  std::function<void(const char* pass, double milliseconds, const Graph& graph)> pass_log;
};

// How compile_model and check_model load the file under these options.
LoadOptions load_options(const CompileOptions& options);

// Names of the passes --disable-pass accepts.
const std::set<std::string>& optional_passes();
// Every pass in the order it runs (--time-passes prints them, --dump-after takes them).
const std::vector<std::string>& pass_names();

struct Compilation {
  Model model;
  Program program;
  std::size_t file_nodes = 0;    // nodes in the model file's main graph
  std::size_t folded_nodes = 0;  // computed at compile time (constant folding, dead code)
  std::size_t fused_nodes = 0;   // merged into another node (fold-batchnorm, fuse-activation, fuse-elementwise)
  // The values of the file's main graph that no step computes, each with the pass that took its
  // node away ("fold-constants", "fuse-activation", ...): validate --layers lists them.
  std::map<std::string, std::string> removed_values;
};

// Loads, validates, infers shapes, folds, plans. Throws CompileError.
Compilation compile_model(const std::string& path, const CompileOptions& options);
// The same on a model already loaded (e.g. with load_model_from_bytes).
Compilation compile_loaded_model(Model model, const CompileOptions& options);

// Loads, validates and infers shapes only (onnxc --check).
Model check_model(const std::string& path, const CompileOptions& options);
// The same on a model already loaded (e.g. with load_model_from_bytes).
void check_loaded_model(Model& m, const CompileOptions& options);
// The same, calling after_pass(name) after each pass that may take nodes away.
void check_loaded_model(Model& m, const CompileOptions& options, const std::function<void(const char*)>& after_pass);

// weights_file_name: with WeightsFormat::Incbin, the name the source gives its weights file.
GeneratedCode emit_code(const Compilation& c, const CompileOptions& options, const std::string& header_name,
                        const std::string& source_name, const std::string& weights_file_name = {});

}  // namespace onnxc
