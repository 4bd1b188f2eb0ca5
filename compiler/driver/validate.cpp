// onnxc validate: compile a model, build it for the host, run it on test data and compare
// with the expected outputs. onnxc bench: build optimised for the host and time it.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "backend/target.h"
#include "driver/build.h"
#include "driver/commands.h"
#include "driver/firmware.h"
#include "driver/layers.h"
#include "frontend/load.h"
#include "onnx.pb.h"
#include "passes/passes.h"
#include "onnxc/base.h"
#include "support/diagnostics.h"
#include "support/process.h"

namespace fs = std::filesystem;

namespace onnxc {
namespace {

struct Comparison {
  bool ok = true;
  double max_abs = 0, max_rel = 0;
  int64_t mismatches = 0;
  int64_t first_bad = -1;
  std::string problem;  // dtype/shape/size mismatch
};

double element_as_double(DType t, const uint8_t* p, int64_t i) {
  switch (t) {
    case DType::Float: return reinterpret_cast<const float*>(p)[i];
    case DType::Double: return reinterpret_cast<const double*>(p)[i];
    case DType::Float16: return rt::half_to_float(reinterpret_cast<const uint16_t*>(p)[i]);
    case DType::BFloat16: return rt::bfloat16_to_float(reinterpret_cast<const uint16_t*>(p)[i]);
    default: return 0;
  }
}

// ---- string tensors: the harness reads and writes their elements' text, each ended by a NUL ----

std::vector<uint8_t> string_file_bytes(const Tensor& t) {
  std::vector<uint8_t> bytes;
  for (const std::string& s : t.strings) {
    bytes.insert(bytes.end(), s.begin(), s.end());
    bytes.push_back(0);
  }
  return bytes;
}

Comparison compare_strings(const Tensor& want, const std::vector<uint8_t>& got) {
  Comparison c;
  std::vector<std::string> strings;
  for (auto at = got.begin(); at != got.end();) {
    auto end = std::find(at, got.end(), uint8_t{0});
    strings.emplace_back(at, end);
    at = end == got.end() ? end : end + 1;
  }
  if (strings.size() != want.strings.size()) {
    c.ok = false;
    c.problem = fmt::format("expected {} strings, got {}", want.strings.size(), strings.size());
    return c;
  }
  for (std::size_t i = 0; i < strings.size(); ++i) {
    if (strings[i] == want.strings[i]) continue;
    if (c.first_bad < 0) c.first_bad = static_cast<int64_t>(i);
    ++c.mismatches;
    c.ok = false;
  }
  return c;
}

// `shape`: the shape the model produced (out's, or what run() reported for a bounded output).
Comparison compare(const Value& out, const Shape& shape, const std::vector<uint8_t>& got, const Tensor& want,
                   double rtol, double atol) {
  Comparison c;
  if (want.dtype != out.dtype) {
    c.ok = false;
    c.problem = fmt::format("expected type {}, the model produces {}", dtype_name(want.dtype), dtype_name(out.dtype));
    return c;
  }
  if (want.shape != shape) {
    c.ok = false;
    c.problem = fmt::format("expected shape {}, the model produces {}", shape_str(want.shape), shape_str(shape));
    return c;
  }
  if (want.dtype == DType::String) return compare_strings(want, got);
  if (got.size() != want.bytes.size()) {
    c.ok = false;
    c.problem = fmt::format("expected {} bytes, got {}", want.bytes.size(), got.size());
    return c;
  }
  int64_t n = want.numel();
  bool is_float = dtype_is_float(want.dtype);
  std::size_t es = dtype_size(want.dtype);
  for (int64_t i = 0; i < n; ++i) {
    bool bad = false;
    if (is_float) {
      double a = element_as_double(want.dtype, got.data(), i), e = element_as_double(want.dtype, want.bytes.data(), i);
      if (std::isnan(e) || std::isnan(a)) {
        bad = std::isnan(e) != std::isnan(a);
      } else if (std::isinf(e) || std::isinf(a)) {
        bad = a != e;
      } else {
        double d = std::fabs(a - e);
        c.max_abs = std::max(c.max_abs, d);
        if (e != 0) c.max_rel = std::max(c.max_rel, d / std::fabs(e));
        bad = d > atol + rtol * std::fabs(e);
      }
    } else {
      bad = std::memcmp(got.data() + i * es, want.bytes.data() + i * es, es) != 0;
    }
    if (bad) {
      if (c.first_bad < 0) c.first_bad = i;
      ++c.mismatches;
      c.ok = false;
    }
  }
  return c;
}

std::vector<std::string> find_data_sets(const fs::path& dir) {
  std::vector<std::string> sets;
  if (!fs::is_directory(dir)) return sets;
  for (auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(e.path().string());
  std::sort(sets.begin(), sets.end());
  return sets;
}

// input_0.pb, input_1.pb, ... in numeric order.
std::vector<std::string> numbered_files(const fs::path& dir, const std::string& prefix) {
  std::vector<std::pair<int, std::string>> found;
  std::regex re(prefix + "_([0-9]+)\\.pb");
  for (auto& e : fs::directory_iterator(dir)) {
    std::smatch m;
    std::string name = e.path().filename().string();
    if (std::regex_match(name, m, re)) found.emplace_back(std::stoi(m[1]), e.path().string());
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(f.second);
  return out;
}

void write_raw(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::vector<uint8_t> read_raw(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// The shape a bounded output had in one run: the harness writes it next to the output's file.
Shape reported_shape(const std::string& output_file) {
  std::ifstream f(output_file + ".shape");
  Shape s;
  for (int64_t d; f >> d;) s.push_back(d);
  return s;
}

// One test data set: input_N.pb and output_N.pb files in numeric order.
struct DataSet {
  std::string dir, name;
  std::vector<std::string> inputs, outputs;
};

DataSet read_data_set(const std::string& dir) {
  return DataSet{dir, fs::path(dir).filename().string(), numbered_files(dir, "input"), numbered_files(dir, "output")};
}

// A test data file holding a value of `v`.
Tensor load_test_tensor(const std::string& path, const Value& v) {
  Tensor t = load_tensor_file(path);
  take_uint16_as_bfloat16_bits(t, v.dtype);
  return t;
}

// Fills --shape from the first data set's inputs for inputs whose dims are not static.
void shapes_from_data(const Model& m, const DataSet& set, CompileOptions& co) {
  for (std::size_t i = 0; i < m.graph.inputs.size() && i < set.inputs.size(); ++i) {
    const Value* v = m.graph.inputs[i];
    if (v->is_sequence || v->is_optional) continue;  // see split_sequence_files
    bool static_dims = v->declared_rank;
    for (const Dim& d : v->declared_dims) static_dims = static_dims && d.value >= 0;
    bool named = false;
    for (const Dim& d : v->declared_dims) named = named || (!d.param.empty() && co.dims.count(d.param));
    if (static_dims || named || co.input_shapes.count(v->name)) continue;
    co.input_shapes[v->name] = load_tensor_file(set.inputs[i]).shape;
  }
}

// ---- sequence and optional inputs and outputs: one file holds a SequenceProto or an
// OptionalProto, the compiled model takes the tensors it holds ----

// The tensors (serialized) a test data file holds for the declared value v.
std::vector<std::string> held_tensors(const Value& v, const std::string& path) {
  if (v.is_optional) return load_optional_file(path).tensors;
  if (v.is_sequence) return sequence_file_elements(path);
  return {};
}

// Replaces each sequence or optional file of `set` (per the model's declared inputs and
// outputs) by one TensorProto file per tensor it holds, written to `dir`, so the files match the
// compiled model's tensor inputs and outputs (passes/sequence_io.h).
DataSet split_sequence_files(const Model& m, const DataSet& set, std::size_t si, const std::string& dir) {
  auto split = [&](const std::vector<Value*>& declared, const std::vector<std::string>& files, const char* role) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < files.size(); ++i) {
      if (i >= declared.size() || (!declared[i]->is_sequence && !declared[i]->is_optional)) {
        out.push_back(files[i]);
        continue;
      }
      std::vector<std::string> elements = held_tensors(*declared[i], files[i]);
      for (std::size_t k = 0; k < elements.size(); ++k) {
        out.push_back((fs::path(dir) / fmt::format("{}_{}_{}_element_{}.pb", role, si, i, k)).string());
        write_raw(out.back(), std::vector<uint8_t>(elements[k].begin(), elements[k].end()));
      }
    }
    return out;
  };
  DataSet flat = set;
  flat.inputs = split(m.graph.inputs, set.inputs, "input");
  flat.outputs = split(m.graph.outputs, set.outputs, "output");
  return flat;
}

// Binds each sequence input's length and element shapes, and whether each optional input is
// present (and holds a sequence), to data set `set`'s.
void sequence_shapes_from_data(const Model& m, const DataSet& set, CompileOptions& co) {
  for (std::size_t i = 0; i < m.graph.inputs.size() && i < set.inputs.size(); ++i) {
    const Value* v = m.graph.inputs[i];
    if ((!v->is_sequence && !v->is_optional) || co.sequence_shapes.count(v->name)) continue;
    std::vector<std::string> elements;
    if (v->is_optional) {
      OptionalFile opt = load_optional_file(set.inputs[i]);
      if (!opt.present) co.empty_optionals.insert(v->name);
      if (!opt.is_sequence) continue;
      elements = opt.tensors;
    } else {
      elements = sequence_file_elements(set.inputs[i]);
    }
    std::vector<Shape>& shapes = co.sequence_shapes[v->name];
    for (const std::string& element : elements) {
      onnx::TensorProto t;
      if (!t.ParseFromString(element))
        throw CompileError(ErrorKind::Invalid, set.inputs[i], "holds an element that is not a TensorProto");
      shapes.emplace_back(t.dims().begin(), t.dims().end());
    }
  }
}

// ---- pinned inputs: graph inputs compiled as constants, their values taken from each data set ----

std::size_t input_index(const Model& m, const std::string& name) {
  for (std::size_t i = 0; i < m.graph.inputs.size(); ++i)
    if (m.graph.inputs[i]->name == name) return i;
  std::vector<std::string> names;
  for (const Value* in : m.graph.inputs) names.push_back(in->name);
  throw CompileError(ErrorKind::Usage, "--constant " + name, "the model has no input of that name",
                     fmt::format("the inputs are: {}", fmt::join(names, ", ")));
}

// The pinned inputs' values in one data set.
std::map<std::string, Tensor> pinned_values(const Model& m, const DataSet& set, const std::vector<std::string>& pinned) {
  std::map<std::string, Tensor> values;
  for (const std::string& name : pinned) {
    std::size_t i = input_index(m, name);
    if (i >= set.inputs.size())
      throw CompileError(ErrorKind::Usage, set.dir, fmt::format("has no input_{}.pb for pinned input '{}'", i, name));
    values[name] = load_test_tensor(set.inputs[i], *m.graph.inputs[i]);
  }
  return values;
}

CompileOptions with_pins(CompileOptions co, const std::map<std::string, Tensor>& values) {
  for (const auto& [name, t] : values) co.constant_tensors[name] = t;
  return co;
}

// Compiles with the `pinned` inputs bound to data set `set`'s values. With `discover`, inputs the
// compilation still needs the values of (CompileError::inputs_to_pin) join `pinned` and it tries
// again; it stops when an error names no new input.
Compilation compile_discovering_pins(const std::string& model_path, const CompileOptions& co, const Model& m,
                                     const DataSet& set, std::vector<std::string>& pinned, bool discover) {
  for (;;) {
    try {
      return compile_model(model_path, with_pins(co, pinned_values(m, set, pinned)));
    } catch (const CompileError& e) {
      bool grew = false;
      for (const std::string& name : discover ? e.inputs_to_pin() : std::vector<std::string>{}) {
        if (std::find(pinned.begin(), pinned.end(), name) != pinned.end()) continue;
        pinned.push_back(name);
        grew = true;
      }
      if (!grew) throw;
    }
  }
}

// Data sets whose pinned inputs hold the same values share one compilation.
struct PinGroup {
  std::map<std::string, Tensor> values;
  std::vector<std::size_t> sets;
};

std::vector<PinGroup> group_by_pinned_values(const Model& m, const std::vector<DataSet>& sets,
                                             const std::vector<std::string>& pinned) {
  std::vector<PinGroup> groups;
  std::map<std::string, std::size_t> group_of_key;
  for (std::size_t si = 0; si < sets.size(); ++si) {
    std::map<std::string, Tensor> values = pinned_values(m, sets[si], pinned);
    std::string key;
    for (const auto& [name, t] : values)
      key += fmt::format("{}:{}:{}:", name, dtype_name(t.dtype), shape_str(t.shape)) +
             std::string(t.bytes.begin(), t.bytes.end());
    auto [it, fresh] = group_of_key.emplace(key, groups.size());
    if (fresh) groups.push_back(PinGroup{std::move(values), {}});
    groups[it->second].sets.push_back(si);
  }
  return groups;
}

// ---- running the compiled model on a data set ----

// The harness's command line up to its mode: with threads, it calls run_parallel with a pool.
// A program for another architecture runs under its emulator.
std::vector<std::string> harness_command(const HostBuild& build, int threads, const char* mode) {
  std::vector<std::string> argv = build.run_prefix;
  argv.push_back(build.program);
  if (threads > 0) argv.insert(argv.end(), {"--threads", std::to_string(threads)});
  argv.push_back(mode);
  return argv;
}

// Writes data set `si`'s inputs as the raw files the harness reads (in dir) and appends their
// paths to argv; false (after saying why) when one does not match the model's input.
bool append_input_files(const Graph& g, const DataSet& set, std::size_t si, const std::string& dir,
                        std::vector<std::string>& argv) {
  for (std::size_t i = 0; i < set.inputs.size(); ++i) {
    const Value* in = g.inputs[i];
    Tensor t = load_test_tensor(set.inputs[i], *in);
    if (t.dtype != in->dtype || t.shape != in->shape) {
      fmt::print(stderr, "error: {}: input '{}' is {} {}; the model expects {} {}\n", set.inputs[i], in->name,
                 dtype_name(t.dtype), shape_str(t.shape), dtype_name(in->dtype), shape_str(in->shape));
      return false;
    }
    std::string raw = (fs::path(dir) / fmt::format("in_{}_{}.bin", si, i)).string();
    write_raw(raw, t.dtype == DType::String ? string_file_bytes(t) : t.bytes);
    argv.push_back(raw);
  }
  return true;
}

// Runs the built program on one data set and compares its outputs; returns 0 when all match.
// With a trace_dir (validate --layers), the program writes the traced values there.
int run_data_set(const Graph& g, const HostBuild& build, const DataSet& set, std::size_t si, const std::string& dir,
                 const ValidateOptions& v, const std::string& trace_dir = "") {
  if (set.inputs.size() != g.inputs.size() || set.outputs.size() != g.outputs.size()) {
    fmt::print(stderr, "error: {}: has {} inputs and {} outputs; the model has {} and {}\n", set.dir, set.inputs.size(),
               set.outputs.size(), g.inputs.size(), g.outputs.size());
    return 1;
  }
  std::vector<std::string> argv = harness_command(build, v.threads, "run");
  if (!append_input_files(g, set, si, dir, argv)) return 1;
  argv.push_back("--");
  std::vector<std::string> outs;
  for (std::size_t i = 0; i < g.outputs.size(); ++i) {
    outs.push_back((fs::path(dir) / fmt::format("out_{}_{}.bin", si, i)).string());
    argv.push_back(outs.back());
  }
  if (!trace_dir.empty()) argv.insert(argv.end(), {"--trace", trace_dir});
  ProcessResult r = build.firmware_target.empty() ? run_process(argv, v.timeout_s)
                                                 : run_firmware(build.firmware_target, argv, v.timeout_s);
  if (r.exit_code != 0) {
    fmt::print(stderr, "error: {}: the compiled model {} \n{}\n", set.dir,
               r.timed_out ? "timed out" : r.signal ? fmt::format("crashed (signal {})", r.signal)
                                                    : fmt::format("exited with {}", r.exit_code),
               r.output);
    return 1;
  }
  if (v.report && !build.firmware_target.empty())
    fmt::print("{}", firmware_size_report(build.firmware_target, build.program, r.output));
  int status = 0;
  for (std::size_t i = 0; i < g.outputs.size(); ++i) {
    const Value* out = g.outputs[i];
    Tensor want = load_test_tensor(set.outputs[i], *out);
    const Shape shape = out->is_bounded() ? reported_shape(outs[i]) : out->shape;
    Comparison cmp = compare(*out, shape, read_raw(outs[i]), want, v.rtol, v.atol);
    if (!cmp.problem.empty()) {
      fmt::print("{} output '{}': FAIL: {}\n", set.name, out->name, cmp.problem);
    } else if (dtype_is_float(out->dtype)) {
      fmt::print("{} output '{}' {} {}: max abs err {:.3g}, max rel err {:.3g}: {}\n", set.name, out->name,
                 dtype_name(out->dtype), shape_str(shape), cmp.max_abs, cmp.max_rel,
                 cmp.ok ? "ok" : fmt::format("FAIL ({} of {} elements off, first at {})", cmp.mismatches,
                                             shape_numel(shape), cmp.first_bad));
    } else {
      fmt::print("{} output '{}' {} {}: exact: {}\n", set.name, out->name, dtype_name(out->dtype), shape_str(shape),
                 cmp.ok ? "ok" : fmt::format("FAIL ({} of {} elements differ, first at {})", cmp.mismatches,
                                             shape_numel(shape), cmp.first_bad));
    }
    if (!cmp.ok) status = 1;
  }
  return status;
}

// bench --inputs DIR: the data set's input files for the harness's bench mode, which times the
// model on them instead of its generated values (a comparison with another runtime must feed
// both the same values: timing can depend on them, e.g. through subnormal floats).
bool append_bench_inputs(const Graph& g, const std::string& set_dir, const std::string& dir,
                         std::vector<std::string>& argv) {
  const DataSet set = read_data_set(set_dir);
  if (set.inputs.size() != g.inputs.size()) {
    fmt::print(stderr, "error: {}: has {} inputs; the model has {}\n  fix: pass a test_data_set_* directory of this model\n",
               set.dir, set.inputs.size(), g.inputs.size());
    return false;
  }
  return append_input_files(g, set, 0, dir, argv);
}

bool has_string_io(const Graph& g) {
  auto is_string = [](const Value* v) { return v->dtype == DType::String; };
  return std::any_of(g.inputs.begin(), g.inputs.end(), is_string) ||
         std::any_of(g.outputs.begin(), g.outputs.end(), is_string);
}

// --report on a firmware target: the instructions of each step of run() on data set si, from a
// second image built with a SysTick read between steps (in dir/steps, so the first image's
// run() count stays that of the model alone).
int report_firmware_steps(const Compilation& comp, const CompileOptions& co, const DataSet& set, std::size_t si,
                          const std::string& dir, const ValidateOptions& v) {
  const std::string steps_dir = (fs::path(dir) / "steps").string();
  HostBuild build = build_firmware(comp, co, steps_dir, v.firmware_target, v.cxxflags, true);
  if (!build.ok) {
    fmt::print(stderr, "error: {}: the model with step counters did not compile\n{}\n", comp.model.path, build.log);
    return 1;
  }
  const Graph& g = comp.model.graph;
  std::vector<std::string> argv = harness_command(build, v.threads, "run");
  if (!append_input_files(g, set, si, steps_dir, argv)) return 1;
  argv.push_back("--");
  for (std::size_t i = 0; i < g.outputs.size(); ++i)
    argv.push_back((fs::path(steps_dir) / fmt::format("out_{}_{}.bin", si, i)).string());
  ProcessResult r = run_firmware(build.firmware_target, argv, v.timeout_s);
  if (r.exit_code != 0) {
    fmt::print(stderr, "error: {}: the model with step counters exited with {}\n{}\n", set.dir, r.exit_code, r.output);
    return 1;
  }
  std::ifstream source(fs::path(steps_dir) / "model.cpp", std::ios::binary);
  std::stringstream text;
  text << source.rdbuf();
  fmt::print("{}", firmware_step_report(build.firmware_target, text.str(), r.output));
  return 0;
}

// ---- validate --layers: every traced value against the reference's ----

// The reference values of a data set: DIR/layers/*.pb, by the name each tensor carries (value
// names hold '/' and other characters file names cannot, so the file names are free).
std::map<std::string, std::string> reference_layer_files(const std::string& set_dir) {
  std::map<std::string, std::string> files;
  const fs::path layers = fs::path(set_dir) / "layers";
  if (!fs::is_directory(layers)) return files;
  std::vector<fs::path> paths;
  for (auto& e : fs::directory_iterator(layers))
    if (e.path().extension() == ".pb") paths.push_back(e.path());
  std::sort(paths.begin(), paths.end());
  for (const fs::path& p : paths) {
    std::string name;
    load_tensor_file(p.string(), &name);
    if (!name.empty()) files.emplace(name, p.string());
  }
  return files;
}

// Compares the values the traced run wrote to trace_dir (STEP_OUTPUT.bin) with the data set's
// layers/ files: one line per step, the first step that diverges, and the file's values no step
// computes, with the pass that took them away. Returns 1 when some step diverges.
int compare_layers(const Compilation& comp, const DataSet& set, const std::string& trace_dir, const ValidateOptions& v) {
  const std::map<std::string, std::string> refs = reference_layer_files(set.dir);
  if (refs.empty()) {
    fmt::print(stderr, "error: {}: no reference values in {}/layers\n  fix: write them with tools/layer-reference "
               "(node tools/layer-reference/write-layers.mjs MODEL.onnx {})\n", set.dir, set.dir, set.dir);
    return 1;
  }
  const Block& main = comp.program.main;
  fmt::print("{} layers: {} steps, {} reference values (rtol {:g}, atol {:g})\n", set.name, main.steps.size(),
             refs.size(), v.rtol, v.atol);
  std::set<std::string> traced;
  std::string first;
  int compared = 0, diverged = 0;
  for (std::size_t si = 0; si < main.steps.size(); ++si) {
    const Node& n = *main.steps[si].node;
    for (std::size_t k = 0; k < n.outputs.size(); ++k) {
      const Value* out = n.outputs[k];
      if (!out || !comp.program.tensors.count(out)) continue;
      traced.insert(out->name);
      const std::string head = fmt::format("  step {} '{}' {} -> '{}' {} {}", si, n.name, n.op_type, out->name,
                                           dtype_name(out->dtype), shape_str(out->shape));
      auto ref = refs.find(out->name);
      if (ref == refs.end()) {
        fmt::print("{}: no reference\n", head);
        continue;
      }
      if (out->is_bounded()) {  // the trace reports its buffer's bound, not the run's size
        fmt::print("{}: its size is known at run time only: not compared\n", head);
        continue;
      }
      const fs::path got = fs::path(trace_dir) / fmt::format("{}_{}.bin", si, k);
      if (!fs::exists(got)) {
        fmt::print("{}: not traced\n", head);
        continue;
      }
      Comparison cmp = compare(*out, out->shape, read_raw(got.string()), load_test_tensor(ref->second, *out), v.rtol,
                               v.atol);
      ++compared;
      std::string verdict;
      if (!cmp.problem.empty()) verdict = "DIVERGES: " + cmp.problem;
      else if (!cmp.ok)
        verdict = fmt::format("DIVERGES ({} of {} elements off, first at {})", cmp.mismatches, out->numel(),
                              cmp.first_bad);
      else verdict = "ok";
      if (dtype_is_float(out->dtype) && cmp.problem.empty())
        fmt::print("{}: max abs err {:.3g}, max rel err {:.3g}: {}\n", head, cmp.max_abs, cmp.max_rel, verdict);
      else
        fmt::print("{}: exact: {}\n", head, verdict);
      if (cmp.ok) continue;
      ++diverged;
      if (first.empty()) first = fmt::format("step {} '{}' ({}), value '{}'", si, n.name, n.op_type, out->name);
    }
  }
  std::vector<std::string> gone;
  for (const auto& [name, pass] : comp.removed_values)
    if (!traced.count(name))
      gone.push_back(fmt::format("  '{}': {}{}", name, pass, refs.count(name) ? "" : " (no reference either)"));
  if (!gone.empty())
    fmt::print("values of the model no step computes (taken away by the pass named):\n{}\n", fmt::join(gone, "\n"));
  if (diverged) {
    fmt::print("{} layers: first divergence at {}; {} of {} compared values diverge\n", set.name, first, diverged,
               compared);
    return 1;
  }
  fmt::print("{} layers: {} values compared, none diverges\n", set.name, compared);
  return 0;
}

// Builds one compilation and runs it on its data sets; returns 0 when all match.
int build_and_run(const Compilation& comp, const CompileOptions& co, const std::vector<DataSet>& sets,
                  const std::vector<std::size_t>& which, const std::string& dir, const ValidateOptions& v) {
  if (!v.firmware_target.empty() && has_string_io(comp.model.graph)) {
    fmt::print(stderr, "error: {}: the {} firmware's validation does not pass string tensors yet\n"
               "  fix: validate this model on the host (drop --target)\n", comp.model.path, v.firmware_target);
    return 1;
  }
  std::vector<std::string> flags = v.cxxflags;
  if (flags.empty()) flags = {"-O1"};
  HostBuild build = v.firmware_target.empty()
                        ? build_harness(comp, co, dir, host_cxx(co.target, v.cxx), flags, v.pch_cache_dir)
                        : build_firmware(comp, co, dir, v.firmware_target, v.cxxflags);
  if (!build.ok) {
    fmt::print(stderr, "error: {}: the generated code did not compile\n{}\n", comp.model.path, build.log);
    return 1;
  }
  for (std::size_t si : which) {
    std::string trace_dir;
    if (v.layers) {
      trace_dir = fs::absolute(fs::path(dir) / fmt::format("trace_{}", si)).string();
      fs::create_directories(trace_dir);
    }
    int status = run_data_set(comp.model.graph, build, sets[si], si, dir, v, trace_dir);
    // The layers also when the outputs are off: they tell where it went wrong.
    if (v.layers && fs::exists(trace_dir) && !fs::is_empty(trace_dir)) {
      status |= compare_layers(comp, sets[si], trace_dir, v);
    } else if (v.layers) {
      fmt::print(stderr, "error: {}: the compiled model traced no value\n", sets[si].dir);
      status = 1;
    }
    if (status) return status;
  }
  if (v.report && !build.firmware_target.empty() && !which.empty()) {
    CompileOptions untraced = co;  // the steps' instructions without the hooks
    untraced.trace = false;
    return report_firmware_steps(comp, untraced, sets[which[0]], which[0], dir, v);
  }
  return 0;
}

}  // namespace

int run_validate(const ValidateOptions& v, const CompileOptions& c_in) {
  fs::path target(v.target);
  fs::path model_path = fs::is_directory(target) ? target / "model.onnx" : target;
  std::vector<std::string> set_dirs = v.data_dirs;
  if (set_dirs.empty()) set_dirs = find_data_sets(fs::is_directory(target) ? target : target.parent_path());
  if (set_dirs.empty()) {
    fmt::print(stderr, "error: {}: no test_data_set_* directories found\n  fix: pass --data DIR\n", v.target);
    return 1;
  }
  if (v.threads > 0 && !v.firmware_target.empty()) {
    fmt::print(stderr, "error: --threads runs the host harness's thread pool; the {} firmware has none\n"
               "  fix: drop --threads, or validate for a host --target\n", v.firmware_target);
    return 1;
  }
  std::vector<DataSet> sets;
  for (const std::string& d : set_dirs) sets.push_back(read_data_set(d));
  std::string dir = v.keep_dir.empty() ? make_temp_dir() : v.keep_dir;
  int status = 0;
  try {
    Model m = load_model(model_path.string(), load_options(c_in));
    CompileOptions co = c_in;
    if (co.input_shapes.empty() && co.dims.empty()) shapes_from_data(m, sets[0], co);
    sequence_shapes_from_data(m, sets[0], co);
    std::vector<std::string> pinned = v.pinned_inputs;
    Compilation first = compile_discovering_pins(model_path.string(), co, m, sets[0], pinned, v.pin_shape_inputs);
    std::vector<PinGroup> groups = group_by_pinned_values(m, sets, pinned);
    // After pinning, which reads the files by the model's declared input positions.
    for (std::size_t si = 0; si < sets.size(); ++si) sets[si] = split_sequence_files(m, sets[si], si, dir);
    if (!pinned.empty())
      fmt::print("pinned inputs (from each data set): {}; {} distinct value{}, one compilation each\n",
                 fmt::join(pinned, ", "), groups.size(), groups.size() == 1 ? "" : "s");
    for (std::size_t gi = 0; status == 0 && gi < groups.size(); ++gi) {
      // Group 0 holds the first data set, whose compilation is done; the others compile with their values.
      // (A Compilation is never moved: its Program points into its Model's graphs.)
      CompileOptions group_co = with_pins(co, groups[gi].values);
      group_co.trace = group_co.trace || v.layers;
      std::string group_dir = groups.size() == 1 ? dir : (fs::path(dir) / fmt::format("pins_{}", gi)).string();
      if (gi == 0) {
        status = build_and_run(first, group_co, sets, groups[gi].sets, group_dir, v);
      } else {
        Compilation comp = compile_model(model_path.string(), group_co);
        status = build_and_run(comp, group_co, sets, groups[gi].sets, group_dir, v);
      }
    }
  } catch (const CompileError& e) {
    print_error(model_path.string(), e);
    status = 1;
  }
  if (v.keep_dir.empty()) fs::remove_all(dir);
  if (status == 0) fmt::print("PASS {}\n", v.target);
  return status;
}

namespace {

// bench --layers: the roofline table (and --layers-json's file) from the harness's `layers` output.
int print_layers(const BenchOptions& b, const CompileOptions& co, const Compilation& comp, const std::string& cxx,
                 const std::vector<std::string>& flags, const std::string& harness_output) {
  double run_median_us = 0;
  const std::map<std::size_t, double> step_us = parse_step_times(harness_output, &run_median_us);
  const std::map<std::size_t, TaskShare> shares = parse_task_shares(harness_output);
  std::string log;
  const std::optional<Roofline> roofline =
      machine_roofline(co.target, std::max(b.threads, 1), cxx, flags, b.remeasure, &log);
  if (!roofline) {
    fmt::print(stderr, "error: cannot measure this machine's FMA peak and memory bandwidth\n{}\n", log);
    return 1;
  }
  const std::vector<LayerRow> rows = layer_rows(comp.program.main, step_us, *roofline, shares);
  fmt::print("{}", layers_text(rows, *roofline, run_median_us));
  if (b.layers_json.empty()) return 0;
  std::ofstream f(b.layers_json, std::ios::binary);
  f << layers_json(rows, *roofline, run_median_us);
  if (f.flush()) return 0;
  fmt::print(stderr, "error: cannot write {}\n", b.layers_json);
  return 1;
}

}  // namespace

int run_bench(const BenchOptions& b, const CompileOptions& co_in) {
  const bool layers = b.layers || !b.layers_json.empty() || b.predict_threads > 0;
  if (b.predict_threads > 0 && b.threads > 0) {
    fmt::print(stderr, "error: --predict-threads runs the model on one thread to predict {} threads; --threads {} "
               "times the pool instead\n  fix: drop one of the two\n", b.predict_threads, b.threads);
    return 1;
  }
  const Target* target = find_target(co_in.target);
  const bool emulated = target && runs_emulated(*target);
  // A microcontroller target (a board, no Linux architecture) cannot run under this machine's OS:
  // timing its code here would time the portable kernels on this CPU and call it the core's.
  if (target && target->arch.empty() && !target->emulator.empty()) {
    fmt::print(stderr, "error: bench times code on this machine; target {} is a microcontroller whose code runs "
               "on a board under {}, where wall-clock time is not the core's\n  fix: `onnxc validate {} --target {} "
               "--report` counts the instructions of run() and of each step on the emulated core\n",
               co_in.target, target->emulator, b.model, co_in.target);
    return 1;
  }
  // Emulated, --layers counts each step's instructions instead (QEMU's times are not the core's);
  // predicting threads from them would mean nothing.
  if (emulated && (b.predict_threads > 0 || !b.layers_json.empty())) {
    fmt::print(stderr, "error: bench --predict-threads and --layers-json time steps on this machine's cores; target {} runs under "
               "{} here, whose times are not an {} core's\n  fix: run them on an {} machine, or use --layers alone "
               "(instructions per step)\n", co_in.target, target->emulator, target->arch, target->arch);
    return 1;
  }
  std::string dir = b.keep_dir.empty() ? make_temp_dir() : b.keep_dir;
  CompileOptions co = co_in;
  co.step_hooks = layers;
  int status = 0;
  try {
    Compilation comp = compile_model(b.model, co);
    std::vector<std::string> flags = b.cxxflags;
    // -march=native is this machine's: not for code of another architecture.
    if (flags.empty()) flags = emulated ? std::vector<std::string>{"-O3", "-DNDEBUG"}
                                        : std::vector<std::string>{"-O3", "-march=native", "-DNDEBUG"};
    if (emulated)
      fmt::print(stderr, "note: target {} runs under {} on this {} machine: times are the emulator's, not an {} "
                 "core's\n", co.target, target->emulator, host_arch(), target->arch);
    fmt::print(stderr, "building {} ({} steps, arena {} bytes, weights {} bytes as {})...\n", b.model,
               comp.program.main.steps.size(), comp.program.arena_bytes, comp.program.weights_bytes,
               weights_format_description(co.weights_format,
                                          choose_weights_format(co.weights_format, comp.program, co.target)));
    const std::string cxx = host_cxx(co.target, b.cxx);
    HostBuild build = build_harness(comp, co, dir, cxx, flags);
    if (!build.ok) {
      fmt::print(stderr, "error: {}: the generated code did not compile\n{}\n", b.model, build.log);
      status = 1;
    } else {
      std::vector<std::string> argv = harness_command(build, b.threads, layers ? "layers" : "bench");
      // Emulated --layers: QEMU counts the instructions between the harness's step marks.
      std::string plugin_log;
      const std::string plugin = emulated && layers ? build_insn_count_plugin(dir, &plugin_log) : "";
      if (emulated && layers && plugin.empty()) {
        fmt::print(stderr, "error: cannot build the instruction-counting QEMU plugin\n{}\n  fix: install a C compiler "
                   "(cc) for this machine\n", plugin_log);
        if (b.keep_dir.empty()) fs::remove_all(dir);
        return 1;
      }
      if (!plugin.empty()) argv.insert(argv.begin() + 1, {"-plugin", plugin, "-E", "ONNXC_STEP_MARKS=1"});
      if (b.predict_threads > 0)
        argv.insert(argv.end() - 1, {"--predict-threads", std::to_string(b.predict_threads)});
      argv.push_back(std::to_string(b.runs));
      if (!b.inputs_dir.empty() && !append_bench_inputs(comp.model.graph, b.inputs_dir, dir, argv)) {
        status = 1;
      } else {
        ProcessResult r = run_process(argv);
        if (r.exit_code != 0) {
          fmt::print("{}", r.output);
          status = 1;
        } else if (emulated && layers) {
          const std::vector<LayerRow> rows =
              layer_rows(comp.program.main, parse_step_instructions(r.output), Roofline{1, 1, "", false});
          fmt::print("{}", layers_instructions_text(rows, co.target));
          std::istringstream lines(r.output);
          for (std::string line; std::getline(lines, line);)
            if (line.rfind("runs", 0) == 0 || line.find("_us") != std::string::npos) fmt::print("{}\n", line);
        } else if (layers) {
          status = print_layers(b, co, comp, cxx, flags, r.output);
          // The whole run's lines (runs, min_us, median_us) as bench prints them.
          std::istringstream lines(r.output);
          for (std::string line; std::getline(lines, line);)
            if (line.rfind("step ", 0) != 0 && line.rfind("share ", 0) != 0) fmt::print("{}\n", line);
        } else {
          fmt::print("{}", r.output);
        }
      }
    }
  } catch (const CompileError& e) {
    print_error(b.model, e);
    status = 1;
  }
  if (b.keep_dir.empty()) fs::remove_all(dir);
  return status;
}

}  // namespace onnxc
