#include "driver/build.h"

#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "backend/target.h"
#include "driver/commands.h"
#include "support/diagnostics.h"
#include "support/names.h"
#include "support/process.h"

namespace fs = std::filesystem;

#ifndef ONNXC_SOURCE_RUNTIME_DIR
#define ONNXC_SOURCE_RUNTIME_DIR ""
#endif

namespace onnxc {


std::string runtime_include_dir() {
  if (const char* env = std::getenv("ONNXC_RUNTIME_INCLUDE")) return env;
  // Installed layout: <prefix>/bin/onnxc and <prefix>/include/onnxc/*.h
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path inc = exe.parent_path().parent_path() / "include";
    if (fs::exists(inc / "onnxc" / "base.h")) return inc.string();
  }
  return ONNXC_SOURCE_RUNTIME_DIR;
}

void print_error(const std::string& file, const CompileError& e) {
  for (const Problem& p : e.problems()) fmt::print(stderr, "{}\n", format_problem(file, p));
  if (e.problems().size() > 1) fmt::print(stderr, "{} errors\n", e.problems().size());
}


std::string default_cxx() {
  const char* env = std::getenv("CXX");
  return env && *env ? env : "c++";
}

std::string make_temp_dir() {
  std::string tmpl = (fs::temp_directory_path() / "onnxc-XXXXXX").string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) throw std::runtime_error("cannot create a temporary directory");
  return buf.data();
}

static void write_text(const fs::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
  if (!f) throw std::runtime_error("cannot write " + p.string());
}

// The harness does not depend on the model, so its object is compiled once per compiler,
// flags and runtime version, and cached (compiling it costs more than most models).
static std::string cached_harness_object(const std::string& cxx, const std::vector<std::string>& flags,
                                         std::string* log) {
  std::string text = template_text("harness.cpp.tmpl");
  std::string base_text;  // the runtime headers the harness includes
  for (const char* header : {"base.h", "parallel.h"}) {
    std::ifstream h(fs::path(runtime_include_dir()) / "onnxc" / header);
    base_text.append(std::istreambuf_iterator<char>(h), std::istreambuf_iterator<char>());
  }
  std::size_t key = std::hash<std::string>{}(fmt::format("{}\n{}\n{}\n{}", cxx, fmt::join(flags, " "), text, base_text));
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  fs::path dir = xdg && *xdg ? fs::path(xdg) / "onnxc" : home && *home ? fs::path(home) / ".cache" / "onnxc"
                                                                          : fs::temp_directory_path() / "onnxc-cache";
  std::error_code ec;
  fs::create_directories(dir, ec);
  fs::path object = dir / fmt::format("harness-{:016x}.o", key);
  if (fs::exists(object)) return object.string();
  // Build under a unique name and rename: parallel validate runs may race here.
  std::string tmp_dir = make_temp_dir();
  fs::path src = fs::path(tmp_dir) / "harness.cpp", tmp_obj = fs::path(tmp_dir) / "harness.o";
  write_text(src, text);
  std::vector<std::string> argv = {cxx, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-pthread"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"-I", runtime_include_dir(), "-c", src.string(), "-o", tmp_obj.string()});
  ProcessResult r = run_process(argv, 600);
  if (r.exit_code != 0) {
    *log = fmt::format("$ {}\n{}", fmt::join(argv, " "), r.output);
    fs::remove_all(tmp_dir, ec);
    return {};
  }
  fs::rename(tmp_obj, object, ec);
  if (ec) fs::copy_file(tmp_obj, object, fs::copy_options::overwrite_existing, ec);
  fs::remove_all(tmp_dir, ec);
  return fs::exists(object) ? object.string() : tmp_obj.string();
}

HostBuild build_harness(const Compilation& c, const CompileOptions& co, const std::string& dir, const std::string& cxx,
                        const std::vector<std::string>& flags) {
  HostBuild b;
  b.dir = dir;
  fs::create_directories(dir);
  std::string harness = cached_harness_object(cxx, flags, &b.log);
  if (harness.empty()) return b;
  GeneratedCode code = emit_code(c, co, "model.h", "model.cpp");
  write_text(fs::path(dir) / "model.h", code.header);
  write_text(fs::path(dir) / "model.cpp", code.source);
  write_text(fs::path(dir) / "glue.cpp",
             render_template("harness_glue.cpp.tmpl", {{"header_name", "model.h"},
                                                        {"ns", sanitize_identifier(co.name)},
                                                        {"generic_forward_args", run_generic_forward_args(c.program)}}));
  b.program = (fs::path(dir) / "harness").string();
  // -pthread: the harness's thread pool (ThreadPool in harness.cpp.tmpl); the model never needs it.
  std::vector<std::string> argv = {cxx, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-pthread"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  // The generated code may need the target's ISA flags; the harness around it never does.
  if (const Target* t = find_target(co.target)) argv.insert(argv.end(), t->cxx_flags.begin(), t->cxx_flags.end());
  argv.insert(argv.end(), {"-I", runtime_include_dir(), "-I", dir, (fs::path(dir) / "model.cpp").string(),
                           (fs::path(dir) / "glue.cpp").string(), harness, "-o", b.program});
  ProcessResult r = run_process(argv, 1800);
  b.ok = r.exit_code == 0;
  if (!b.ok) b.log = fmt::format("$ {}\n{}", fmt::join(argv, " "), r.output);
  return b;
}

}  // namespace onnxc
