// The onnxc command line: compile (default), validate, bench.
#pragma once

#include <string>
#include <vector>

#include "passes/pipeline.h"

namespace onnxc {

struct ValidateOptions {
  std::string target;                // model dir (backend-test layout) or model file
  std::vector<std::string> data_dirs;  // --data: test_data_set dirs (default: found next to the model)
  double rtol = 1e-3, atol = 1e-5;
  std::string cxx;                   // host compiler (default $CXX or c++)
  std::vector<std::string> cxxflags;
  std::string keep_dir;              // --keep: leave the generated files here
  int timeout_s = 600;
  bool quiet = false;
  std::string firmware_target;       // --target cortex-m4|...: build firmware and run it in QEMU
  bool report = false;               // --report: with a Cortex-M --target, the image's flash and RAM use
  // --layers: build with --trace and compare every step's values with DIR/test_data_set_N/layers/*.pb.
  bool layers = false;
  // --pin-shape-inputs: inputs the compilation needs the values of are pinned to each data set's.
  bool pin_shape_inputs = false;
  // --constant NAME (no value): inputs pinned to each data set's value from the start.
  std::vector<std::string> pinned_inputs;
  // --threads N: run through run_parallel with the harness's pool of N threads (0: run()).
  int threads = 0;
  // --pch-cache DIR: precompiled runtime headers shared by many validate runs (host targets).
  std::string pch_cache_dir;
};

struct BenchOptions {
  std::string model;
  int runs = 100;
  std::string cxx;
  std::vector<std::string> cxxflags;
  std::string keep_dir;
  int threads = 0;  // --threads N, as in ValidateOptions
  std::string inputs_dir;  // --inputs DIR: time the model on this data set's inputs
  bool layers = false;          // --layers: each step's time against the roofline (driver/layers.h)
  std::string layers_json;      // --layers-json FILE: the same as JSON (implies --layers)
  bool remeasure = false;       // --remeasure: measure the roofline again instead of reading its cache
  int predict_threads = 0;      // --predict-threads N: --layers with each step's predicted N-thread time
};

int run_validate(const ValidateOptions& v, const CompileOptions& c);
int run_bench(const BenchOptions& b, const CompileOptions& c);

// The directory holding runtime-support's include/ tree.
std::string runtime_include_dir();
// Prints a CompileError for a person (to stderr).
void print_error(const std::string& file, const class CompileError& e);

}  // namespace onnxc
