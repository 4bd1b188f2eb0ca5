// The back end: renders a planned program into the generated header and source, using the
// skeletons in templates/. It knows where tensors live and how to spell C++; operators
// contribute their statements through Emitter.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "backend/weights.h"
#include "ir/ir.h"
#include "passes/program.h"

namespace onnxc {

struct CodegenOptions {
  std::string name = "model";   // C++ namespace and C prefix
  std::string header_name;      // the #include name of the header, e.g. "model.h"
  std::string source_name;      // for the file banner
  std::string model_file;       // for the banner (file name only: output must not depend on paths)
  WeightsFormat weights_format = WeightsFormat::Array;
  std::string weights_file_name;  // Incbin: the weights file, as the source names it by default
  std::string preamble;           // before the kernel includes: the target's macros (backend/target.h)
  std::string weights_section;    // the linker section the weights go to; empty: the compiler's choice
  // `onnxc bench --layers` only: the main block calls onnxc_bench_step(i) (defined by the bench
  // harness) before step i's code and onnxc_bench_step(steps) after the last, so the harness can
  // time each step. Never in code a user compiles.
  bool step_hooks = false;
  // --trace: after each step of the main block, onnxc_trace() (onnxc/trace.h, defined by the
  // user's program) for each of its outputs. --profile: the step's counter ticks to
  // onnxc_profile(). Off: the code is byte for byte what it is without these options.
  bool trace = false;
  bool profile = false;
};

struct GeneratedCode {
  std::string header;
  std::string source;
  std::string weights_file;  // Incbin: the bytes of the weights file (binary)
};

GeneratedCode generate_code(const Model& m, const Program& prog, const CodegenOptions& opts);

// Whether some output of the model is bounded (Value::dynamic_axis): then run() takes a shape
// pointer after each such output, and run_generic an array of them before the arena.
bool has_bounded_outputs(const Program& prog);
// The arguments run_generic forwards its own parameters with: "inputs, outputs, arena", plus
// "output_shapes" before the arena when the model has bounded outputs.
std::string run_generic_forward_args(const Program& prog);

// Renders templates/<name> with fmt named arguments.
std::string render_template(const std::string& name, const std::vector<std::pair<std::string, std::string>>& vars);

// Text of a template in templates/, embedded into the binary at build time.
const char* template_text(const std::string& name);

}  // namespace onnxc
