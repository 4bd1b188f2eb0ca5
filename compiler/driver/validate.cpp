// onnxc validate: compile a model, build it for the host, run it on test data and compare
// with the expected outputs. onnxc bench: build optimised for the host and time it.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>

#include <fmt/format.h>

#include "driver/build.h"
#include "driver/commands.h"
#include "frontend/load.h"
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

Comparison compare(const Value& out, const std::vector<uint8_t>& got, const Tensor& want, double rtol, double atol) {
  Comparison c;
  if (want.dtype != out.dtype) {
    c.ok = false;
    c.problem = fmt::format("expected type {}, the model produces {}", dtype_name(want.dtype), dtype_name(out.dtype));
    return c;
  }
  if (want.shape != out.shape) {
    c.ok = false;
    c.problem = fmt::format("expected shape {}, the model produces {}", shape_str(want.shape), shape_str(out.shape));
    return c;
  }
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

// Fills --shape from the first data set's inputs for inputs whose dims are not static.
void shapes_from_data(const std::string& model_path, const std::string& data_dir, CompileOptions& co) {
  Model m = load_model(model_path);
  auto files = numbered_files(data_dir, "input");
  for (std::size_t i = 0; i < m.graph.inputs.size() && i < files.size(); ++i) {
    const Value* v = m.graph.inputs[i];
    bool static_dims = v->declared_rank;
    for (const Dim& d : v->declared_dims) static_dims = static_dims && d.value >= 0;
    bool named = false;
    for (const Dim& d : v->declared_dims) named = named || (!d.param.empty() && co.dims.count(d.param));
    if (static_dims || named || co.input_shapes.count(v->name)) continue;
    co.input_shapes[v->name] = load_tensor_file(files[i]).shape;
  }
}

}  // namespace

int run_validate(const ValidateOptions& v, const CompileOptions& c_in) {
  CompileOptions co = c_in;
  fs::path target(v.target);
  fs::path model_path = fs::is_directory(target) ? target / "model.onnx" : target;
  std::vector<std::string> sets = v.data_dirs;
  if (sets.empty()) sets = find_data_sets(fs::is_directory(target) ? target : target.parent_path());
  if (sets.empty()) {
    fmt::print(stderr, "error: {}: no test_data_set_* directories found\n  fix: pass --data DIR\n", v.target);
    return 1;
  }
  std::string dir = v.keep_dir.empty() ? make_temp_dir() : v.keep_dir;
  int status = 0;
  try {
    if (co.input_shapes.empty() && co.dims.empty()) shapes_from_data(model_path.string(), sets[0], co);
    Compilation comp = compile_model(model_path.string(), co);
    std::vector<std::string> flags = v.cxxflags;
    if (flags.empty()) flags = {"-O1"};
    HostBuild build = build_harness(comp, co, dir, v.cxx.empty() ? default_cxx() : v.cxx, flags);
    if (!build.ok) {
      fmt::print(stderr, "error: {}: the generated code did not compile\n{}\n", model_path.string(), build.log);
      status = 1;
    }
    const Graph& g = comp.model.graph;
    for (std::size_t si = 0; status == 0 && si < sets.size(); ++si) {
      const std::string& set = sets[si];
      auto in_files = numbered_files(set, "input");
      auto out_files = numbered_files(set, "output");
      if (in_files.size() != g.inputs.size() || out_files.size() != g.outputs.size()) {
        fmt::print(stderr, "error: {}: has {} inputs and {} outputs; the model has {} and {}\n", set, in_files.size(),
                   out_files.size(), g.inputs.size(), g.outputs.size());
        status = 1;
        break;
      }
      std::vector<std::string> argv = {build.program, "run"};
      for (std::size_t i = 0; i < in_files.size(); ++i) {
        Tensor t = load_tensor_file(in_files[i]);
        const Value* in = g.inputs[i];
        if (t.dtype != in->dtype || t.shape != in->shape) {
          fmt::print(stderr, "error: {}: input '{}' is {} {}; the model expects {} {}\n", in_files[i], in->name,
                     dtype_name(t.dtype), shape_str(t.shape), dtype_name(in->dtype), shape_str(in->shape));
          status = 1;
          break;
        }
        std::string raw = (fs::path(dir) / fmt::format("in_{}_{}.bin", si, i)).string();
        write_raw(raw, t.bytes);
        argv.push_back(raw);
      }
      if (status) break;
      argv.push_back("--");
      std::vector<std::string> outs;
      for (std::size_t i = 0; i < g.outputs.size(); ++i) {
        outs.push_back((fs::path(dir) / fmt::format("out_{}_{}.bin", si, i)).string());
        argv.push_back(outs.back());
      }
      ProcessResult r = run_process(argv, v.timeout_s);
      if (r.exit_code != 0) {
        fmt::print(stderr, "error: {}: the compiled model {} \n{}\n", set,
                   r.timed_out ? "timed out" : r.signal ? fmt::format("crashed (signal {})", r.signal)
                                                        : fmt::format("exited with {}", r.exit_code),
                   r.output);
        status = 1;
        break;
      }
      for (std::size_t i = 0; i < g.outputs.size(); ++i) {
        const Value* out = g.outputs[i];
        Tensor want = load_tensor_file(out_files[i]);
        Comparison cmp = compare(*out, read_raw(outs[i]), want, v.rtol, v.atol);
        std::string set_name = fs::path(set).filename().string();
        if (!cmp.problem.empty()) {
          fmt::print("{} output '{}': FAIL: {}\n", set_name, out->name, cmp.problem);
        } else if (dtype_is_float(out->dtype)) {
          fmt::print("{} output '{}' {} {}: max abs err {:.3g}, max rel err {:.3g}: {}\n", set_name, out->name,
                     dtype_name(out->dtype), shape_str(out->shape), cmp.max_abs, cmp.max_rel,
                     cmp.ok ? "ok" : fmt::format("FAIL ({} of {} elements off, first at {})", cmp.mismatches,
                                                 out->numel(), cmp.first_bad));
        } else {
          fmt::print("{} output '{}' {} {}: exact: {}\n", set_name, out->name, dtype_name(out->dtype),
                     shape_str(out->shape),
                     cmp.ok ? "ok" : fmt::format("FAIL ({} of {} elements differ, first at {})", cmp.mismatches,
                                                 out->numel(), cmp.first_bad));
        }
        if (!cmp.ok) status = 1;
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

int run_bench(const BenchOptions& b, const CompileOptions& co) {
  std::string dir = b.keep_dir.empty() ? make_temp_dir() : b.keep_dir;
  int status = 0;
  try {
    Compilation comp = compile_model(b.model, co);
    std::vector<std::string> flags = b.cxxflags;
    if (flags.empty()) flags = {"-O3", "-march=native", "-DNDEBUG"};
    fmt::print(stderr, "building {} ({} steps, arena {} bytes, weights {} bytes)...\n", b.model, comp.program.main.steps.size(),
               comp.program.arena_bytes, comp.program.weights_bytes);
    HostBuild build = build_harness(comp, co, dir, b.cxx.empty() ? default_cxx() : b.cxx, flags);
    if (!build.ok) {
      fmt::print(stderr, "error: {}: the generated code did not compile\n{}\n", b.model, build.log);
      status = 1;
    } else {
      ProcessResult r = run_process({build.program, "bench", std::to_string(b.runs)});
      fmt::print("{}", r.output);
      if (r.exit_code != 0) status = 1;
    }
  } catch (const CompileError& e) {
    print_error(b.model, e);
    status = 1;
  }
  if (b.keep_dir.empty()) fs::remove_all(dir);
  return status;
}

}  // namespace onnxc
