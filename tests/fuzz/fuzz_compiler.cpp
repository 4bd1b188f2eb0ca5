// libFuzzer target: arbitrary bytes through the whole compiler, what `onnxc model.onnx -o m.cpp`
// runs: load, validate, resolve, bind shapes, infer and fold, then every middle-end pass
// (simplify, fusion, scratch fitting, weight packing, memory planning) and the code generator.
// A model that gets through the front end (a mutated seed model, mostly) thereby also exercises
// the passes that assume a valid, fully inferred graph.
//
// The compiler may refuse an input only with a CompileError; anything else (a crash, a
// sanitizer report, another exception escaping, an absurd allocation) is a finding.
// Built by -DONNXC_FUZZ=ON with clang; tests/fuzz/run_fuzz.sh builds and runs it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "frontend/load.h"
#include "passes/pipeline.h"
#include "support/diagnostics.h"

namespace {

// External data is looked up here: a folder that does not exist, so a fuzzed model can name
// files but never read one.
constexpr const char* kNoDataDir = "/nonexistent/onnxc-fuzz";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  onnxc::LoadOptions load_options;
  load_options.max_tensor_bytes = std::size_t(64) << 20;  // keeps each run's memory small
  onnxc::CompileOptions options;
  options.dims = {{"N", 1}, {"batch", 1}, {"batch_size", 1}};
  try {
    onnxc::Model m = onnxc::load_model_from_bytes(bytes, "fuzz.onnx", kNoDataDir, load_options);
    onnxc::Compilation c = onnxc::compile_loaded_model(std::move(m), options);
    // The same bound for the constants the compiler itself makes (a lowering's tables, folded
    // values): a 195-byte AffineGrid whose size input asks for 16 M positions makes a 192 MiB
    // grid table, legitimately, whose source text takes minutes to render under the sanitizers.
    if (c.program.weights_bytes > load_options.max_tensor_bytes) return 0;
    onnxc::emit_code(c, options, "fuzz.h", "fuzz.cpp");
  } catch (const onnxc::CompileError&) {
    // a refusal with a message: the expected outcome for almost every input
  }
  return 0;
}
