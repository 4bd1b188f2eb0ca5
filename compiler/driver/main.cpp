// onnxc: compile an ONNX model to self-contained C++.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "driver/commands.h"
#include "passes/pipeline.h"
#include "support/diagnostics.h"
#include "support/version.h"

namespace fs = std::filesystem;
using namespace onnxc;


namespace {

// "1x3x224x224" -> {1, 3, 224, 224}; "" or "scalar" -> {}.
bool parse_dims(const std::string& s, Shape* out) {
  out->clear();
  if (s.empty() || s == "scalar") return true;
  std::size_t pos = 0;
  while (pos <= s.size()) {
    std::size_t x = s.find_first_of("x,", pos);
    std::string part = s.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos || part.size() > 12) return false;
    out->push_back(std::stoll(part));
    if (x == std::string::npos) break;
    pos = x + 1;
  }
  return true;
}

struct Common {
  std::vector<std::string> shapes, dims, disabled;
  std::string name = "model";
};

void add_common(CLI::App* app, Common& c) {
  app->add_option("--shape", c.shapes,
                  "Bind an input's shape: NAME=1x3x224x224 (for inputs with symbolic or unknown dims). Repeatable.")
      ->type_name("NAME=DIMS");
  app->add_option("--dim", c.dims, "Bind a symbolic dim (dim_param) everywhere it appears: N=1. Repeatable.")
      ->type_name("PARAM=VALUE");
  app->add_option("--disable-pass", c.disabled, "Turn off an optional pass (fold-constants).")->type_name("NAME");
}

CompileOptions to_options(const Common& c) {
  CompileOptions o;
  o.name = c.name;
  for (const std::string& s : c.shapes) {
    auto eq = s.rfind('=');
    Shape shape;
    if (eq == std::string::npos || eq == 0 || !parse_dims(s.substr(eq + 1), &shape))
      throw CompileError(ErrorKind::Usage, "--shape " + s, "expected NAME=DIMS, e.g. input=1x3x224x224");
    o.input_shapes[s.substr(0, eq)] = shape;
  }
  for (const std::string& s : c.dims) {
    auto eq = s.find('=');
    Shape v;
    if (eq == std::string::npos || eq == 0 || !parse_dims(s.substr(eq + 1), &v) || v.size() != 1)
      throw CompileError(ErrorKind::Usage, "--dim " + s, "expected PARAM=VALUE, e.g. N=1");
    o.dims[s.substr(0, eq)] = v[0];
  }
  for (const std::string& p : c.disabled) {
    if (!optional_passes().count(p))
      throw CompileError(ErrorKind::Usage, "--disable-pass " + p, "no such optional pass",
                         fmt::format("the optional passes are: {}", fmt::join(optional_passes(), ", ")));
    o.disabled_passes.insert(p);
  }
  return o;
}

bool write_file(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::cout << text;
    return bool(std::cout);
  }
  std::ofstream f(path, std::ios::binary);
  f << text;
  return bool(f);
}

void print_summary(const Compilation& c) {
  std::size_t nodes = c.program.main.steps.size();
  fmt::print(stderr, "{}: {} steps, arena {} bytes (peak live {}), weights {} bytes\n",
             fs::path(c.model.path).filename().string(), nodes, c.program.arena_bytes, c.program.peak_live_bytes,
             c.program.weights_bytes);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "onnxc: compile an ONNX model into self-contained C++ (no heap, no interpreter, one static arena).\n\n"
      "Examples:\n"
      "  onnxc model.onnx -o model.cpp              writes model.cpp and model.h\n"
      "  onnxc model.onnx -o net.cpp --name net     C++ namespace net, C functions net_run(...)\n"
      "  onnxc model.onnx --check --dim N=1         validate and infer shapes only\n"
      "  onnxc validate tests/models/mnist-cnn      compile, build, run on test data, compare\n"
      "  onnxc bench model.onnx --runs 200          build with -O3 -march=native and time it\n"};
  app.set_version_flag("--version", std::string("onnxc ") + kOnnxcVersion);
  app.require_subcommand(0, 1);

  Common common;
  std::string model, output;
  bool check = false;
  app.add_option("model", model, "The ONNX model file to compile.")->type_name("MODEL.onnx");
  app.add_option("-o,--output", output,
                 "The C++ source to write (the header goes beside it, .h instead of .cpp; '-' writes the source to "
                 "stdout). Default: MODEL's name with .cpp, in the current directory.")
      ->type_name("OUT.cpp");
  app.add_option("--name", common.name,
                 "C++ namespace and C function prefix of the generated code (default: model).")
      ->type_name("NS");
  app.add_flag("--check", check, "Only validate the model and infer every shape; generate nothing.");
  add_common(&app, common);

  ValidateOptions vopt;
  Common vcommon;
  CLI::App* validate = app.add_subcommand(
      "validate",
      "Compile a model, build the generated code with the host compiler, run it on test data and compare with the "
      "expected outputs. Exit 0 only if every output matches.\n\n"
      "Examples:\n"
      "  onnxc validate /usr/share/libonnx-testdata/data/node/test_relu\n"
      "  onnxc validate model.onnx --data test_data_set_0 --rtol 1e-4");
  validate->add_option("target", vopt.target,
                       "A model directory (model.onnx + test_data_set_*/input_N.pb, output_N.pb) or a model file.")
      ->required()
      ->type_name("DIR|MODEL.onnx");
  validate->add_option("--data", vopt.data_dirs, "Test data directories (default: test_data_set_* beside the model).");
  validate->add_option("--rtol", vopt.rtol, "Relative tolerance for floats (default 1e-3).");
  validate->add_option("--atol", vopt.atol, "Absolute tolerance for floats (default 1e-5).");
  validate->add_option("--cxx", vopt.cxx, "Host C++ compiler (default: $CXX or c++).");
  validate->add_option("--cxxflags", vopt.cxxflags, "Flags for the host compiler (default: -O1).")->allow_extra_args(false);
  validate->add_option("--keep", vopt.keep_dir, "Keep the generated code, harness and outputs in this directory.");
  validate->add_option("--timeout", vopt.timeout_s, "Seconds the compiled model may run (default 600).");
  add_common(validate, vcommon);

  BenchOptions bopt;
  Common bcommon;
  CLI::App* bench = app.add_subcommand(
      "bench",
      "Build the generated code optimised for this machine (-O3 -march=native), run it on deterministic inputs and "
      "print the median latency as 'median_us: N'.\n\nExample:\n  onnxc bench model.onnx --runs 200");
  bench->add_option("model", bopt.model, "The ONNX model file.")->required()->type_name("MODEL.onnx");
  bench->add_option("--runs", bopt.runs, "Timed runs after 3 warm-up runs (default 100).");
  bench->add_option("--cxx", bopt.cxx, "Host C++ compiler (default: $CXX or c++).");
  bench->add_option("--cxxflags", bopt.cxxflags, "Flags for the host compiler (default: -O3 -march=native).");
  bench->add_option("--keep", bopt.keep_dir, "Keep the generated code and harness in this directory.");
  add_common(bench, bcommon);

  CLI11_PARSE(app, argc, argv);

  try {
    if (*validate) return run_validate(vopt, to_options(vcommon));
    if (*bench) return run_bench(bopt, to_options(bcommon));
    if (model.empty()) {
      fmt::print(stderr, "{}", app.help());
      return 1;
    }
    CompileOptions co = to_options(common);
    if (check) {
      Model m = check_model(model, co);
      fmt::print("{}: ok ({} nodes, opset {})\n", model, m.graph.nodes.size(),
                 m.opsets.count("") ? m.opsets.at("") : 0);
      for (const Value* v : m.graph.outputs)
        fmt::print("  output '{}': {} {}\n", v->name, dtype_name(v->dtype), shape_str(v->shape));
      return 0;
    }
    Compilation c = compile_model(model, co);
    if (output.empty()) output = fs::path(model).stem().string() + ".cpp";
    std::string header_path = output == "-" ? fs::path(model).stem().string() + ".h"
                                            : fs::path(output).replace_extension(".h").string();
    std::string header_name = fs::path(header_path).filename().string();
    GeneratedCode code = emit_code(c, co, header_name, output == "-" ? "-" : fs::path(output).filename().string());
    if (!write_file(header_path, code.header) || !write_file(output, code.source)) {
      fmt::print(stderr, "error: cannot write {} / {}\n", output, header_path);
      return 1;
    }
    print_summary(c);
    fmt::print(stderr, "wrote {} and {}\n", output, header_path);
    return 0;
  } catch (const CompileError& e) {
    print_error(model.empty() ? (vopt.target.empty() ? bopt.model : vopt.target) : model, e);
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
}
