// Building generated code with the host compiler (validate, bench).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "passes/pipeline.h"

namespace onnxc {

struct HostBuild {
  std::string dir;      // where model.cpp, model.h, harness.cpp and the program are
  std::string program;  // path of the built harness
  bool ok = false;
  std::string log;      // compiler output when it failed
  std::string firmware_target;  // set when program is a firmware image for QEMU (driver/firmware.h)
  std::vector<std::string> run_prefix;  // the emulator that runs program (a target of another architecture)
};

// The compiler validate and bench build the program with for `target`: user_cxx when given, else the
// target's cross compiler when its code runs emulated here (backend/target.h), else $CXX or c++.
std::string host_cxx(const std::string& target, const std::string& user_cxx);

// The emulator and its arguments that run a program of target t here (t's emulator_cpu as -cpu unless
// QEMU_CPU is set).
struct Target;
std::vector<std::string> emulator_command(const Target& t);

// Writes the generated code and the harness into dir and compiles them into a program. With a pch_cache_dir,
// the runtime headers the model includes are precompiled there once per compiler, flags and header set.
HostBuild build_harness(const Compilation& c, const CompileOptions& co, const std::string& dir, const std::string& cxx,
                        const std::vector<std::string>& flags, const std::string& pch_cache_dir = "");

// Writes model.h, model.cpp and, when the weights format (auto: choose_weights_format) comes out
// as incbin, model.weights.bin into dir. Returns the generated code; *weights_define is the
// compiler flag that tells the assembler where the weights file is ("" for arrays).
GeneratedCode write_model_code(const Compilation& c, const CompileOptions& co, const std::string& dir,
                               std::string* weights_define);

// Writes text to p byte for byte; throws std::runtime_error when it cannot.
void write_text(const std::filesystem::path& p, const std::string& text);

std::string default_cxx();
// onnxc's cache (compiled harness objects, bench --layers' roofline): $XDG_CACHE_HOME/onnxc, else
// ~/.cache/onnxc, else onnxc-cache in the temporary directory; created when missing.
std::string cache_dir();
// A fresh temporary directory.
std::string make_temp_dir();

}  // namespace onnxc
