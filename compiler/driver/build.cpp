#include "driver/build.h"

#include <algorithm>
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

std::string host_cxx(const std::string& target, const std::string& user_cxx) {
  if (!user_cxx.empty()) return user_cxx;
  const Target* t = find_target(target);
  return t && runs_emulated(*t) ? t->cross_compiler : default_cxx();
}

std::string make_temp_dir() {
  std::string tmpl = (fs::temp_directory_path() / "onnxc-XXXXXX").string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) throw std::runtime_error("cannot create a temporary directory");
  return buf.data();
}

std::string cache_dir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  fs::path dir = xdg && *xdg ? fs::path(xdg) / "onnxc" : home && *home ? fs::path(home) / ".cache" / "onnxc"
                                                                          : fs::temp_directory_path() / "onnxc-cache";
  std::error_code ec;
  fs::create_directories(dir, ec);
  return dir.string();
}

void write_text(const std::filesystem::path& p, const std::string& text) {
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
  for (const char* header : {"base.h", "parallel.h", "thread_pool.h", "trace.h"}) {
    std::ifstream h(fs::path(runtime_include_dir()) / "onnxc" / header);
    base_text.append(std::istreambuf_iterator<char>(h), std::istreambuf_iterator<char>());
  }
  std::size_t key = std::hash<std::string>{}(fmt::format("{}\n{}\n{}\n{}", cxx, fmt::join(flags, " "), text, base_text));
  const fs::path dir = cache_dir();
  std::error_code ec;
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

// The runtime headers a generated model includes, in order: the text of its precompiled header.
static std::string runtime_includes(const GeneratedCode& code) {
  std::string lines;
  for (const std::string* text : {&code.header, &code.source}) {
    std::size_t pos = 0;
    while ((pos = text->find("#include \"onnxc/", pos)) != std::string::npos) {
      std::size_t end = text->find('\n', pos);
      std::string line = text->substr(pos, end - pos) + "\n";
      if (lines.find(line) == std::string::npos) lines += line;
      pos = end;
    }
  }
  return lines;
}

// Every runtime header's text, so a cached precompiled header is never used across runtime changes.
static const std::string& runtime_headers_text() {
  static const std::string text = [] {
    std::vector<fs::path> headers;
    for (const fs::directory_entry& e : fs::directory_iterator(fs::path(runtime_include_dir()) / "onnxc"))
      headers.push_back(e.path());
    std::sort(headers.begin(), headers.end());
    std::string all;
    for (const fs::path& h : headers) {
      std::ifstream f(h, std::ios::binary);
      all += h.filename().string();
      all.append(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    }
    return all;
  }();
  return text;
}

// validate --pch-cache DIR (portable targets): the runtime headers the model includes, precompiled in DIR with
// exactly the compiler and flags of the build (argv: the compile command without sources and output) and reused by
// every model that includes the same headers. Returns the header to pass with -include (the compiler finds
// NAME.h.gch beside it; g++ and clang++ both do), or "" when precompiling failed: the build then parses the headers
// as usual, so a precompiled header only ever saves time, never changes what compiles.
static std::string cached_precompiled_header(const std::vector<std::string>& argv, const std::string& includes,
                                             const std::string& cache_dir) {
  std::size_t key = std::hash<std::string>{}(fmt::format("{}\n{}\n{}", fmt::join(argv, " "), includes,
                                                         runtime_headers_text()));
  std::error_code ec;
  fs::create_directories(cache_dir, ec);
  fs::path header = fs::path(cache_dir) / fmt::format("runtime-{:016x}.h", key);
  fs::path pch = header.string() + ".gch";
  if (fs::exists(pch)) return header.string();
  // clang++ records the header's path in the precompiled file, so it is built from the header at its final
  // name. The header is created once (a hard link never replaces it, so its time stamp, which clang++ also
  // checks, never changes); the precompiled file is written under a unique name and renamed: parallel
  // validate runs may race here.
  std::string tmp_dir = make_temp_dir();
  if (!fs::exists(header)) {
    const fs::path tmp_header = fs::path(tmp_dir) / "runtime.h";
    write_text(tmp_header, includes);
    fs::create_hard_link(tmp_header, header, ec);
    if (ec && !fs::exists(header)) fs::copy_file(tmp_header, header, ec);
  }
  const fs::path tmp_pch = fs::path(cache_dir) / (fs::path(tmp_dir).filename().string() + ".gch");
  std::vector<std::string> cmd = argv;
  cmd.insert(cmd.end(), {"-x", "c++-header", header.string(), "-o", tmp_pch.string()});
  bool ok = run_process(cmd, 600).exit_code == 0;
  if (ok) fs::rename(tmp_pch, pch, ec);
  fs::remove(tmp_pch, ec);
  fs::remove_all(tmp_dir, ec);
  return ok && fs::exists(pch) ? header.string() : "";
}

GeneratedCode write_model_code(const Compilation& c, const CompileOptions& co_in, const std::string& dir,
                               std::string* weights_define) {
  CompileOptions co = co_in;
  co.weights_format = choose_weights_format(co.weights_format, c.program, co.target);
  const bool incbin = co.weights_format == WeightsFormat::Incbin;
  const std::string weights_name = std::string("model") + kWeightsFileSuffix;
  GeneratedCode code = emit_code(c, co, "model.h", "model.cpp", incbin ? weights_name : "");
  write_text(fs::path(dir) / "model.h", code.header);
  write_text(fs::path(dir) / "model.cpp", code.source);
  weights_define->clear();
  if (incbin) {
    const fs::path weights = fs::absolute(fs::path(dir) / weights_name);
    write_text(weights, code.weights_file);
    *weights_define = fmt::format("-DONNXC_WEIGHTS_FILE=\"{}\"", weights.string());
  }
  return code;
}

// After a failed build for a target of another architecture: which cross compiler and emulator it takes.
static std::string cross_toolchain_hint(const std::string& target_name, const std::string& cxx) {
  const Target* t = find_target(target_name);
  if (!t || !runs_emulated(*t) || cxx != t->cross_compiler) return "";
  return fmt::format("\n  note: target {} on this {} machine is built with {} and run under {}\n"
                     "  fix: install them (Debian: apt-get install {})",
                     t->name, host_arch(), t->cross_compiler, t->emulator, t->cross_packages);
}

std::vector<std::string> emulator_command(const Target& t) {
  std::vector<std::string> argv = {t.emulator};
  const char* cpu = std::getenv("QEMU_CPU");  // QEMU's user mode reads it when no -cpu is given
  if (!t.emulator_cpu.empty() && !(cpu && *cpu)) argv.insert(argv.end(), {"-cpu", t.emulator_cpu});
  return argv;
}

HostBuild build_harness(const Compilation& c, const CompileOptions& co, const std::string& dir, const std::string& cxx,
                        const std::vector<std::string>& flags, const std::string& pch_cache_dir) {
  HostBuild b;
  b.dir = dir;
  fs::create_directories(dir);
  // Another architecture's program runs under its emulator, linked statically so that it needs none of
  // that architecture's libraries at run time; its cross compiler may need flags of its own.
  const Target* target = find_target(co.target);
  const bool emulated = target && runs_emulated(*target) && cxx == target->cross_compiler;
  std::vector<std::string> tool_flags = flags;
  if (emulated) tool_flags.insert(tool_flags.begin(), target->cross_flags.begin(), target->cross_flags.end());
  std::string harness = cached_harness_object(cxx, tool_flags, &b.log);
  if (harness.empty()) {
    b.log += cross_toolchain_hint(co.target, cxx);
    return b;
  }
  std::string weights_define;
  GeneratedCode code = write_model_code(c, co, dir, &weights_define);
  write_text(fs::path(dir) / "glue.cpp",
             render_template("harness_glue.cpp.tmpl", {{"header_name", "model.h"},
                                                        {"ns", sanitize_identifier(co.name)},
                                                        {"generic_forward_args", run_generic_forward_args(c.program)}}));
  b.program = (fs::path(dir) / "harness").string();
  // -pthread: the harness's thread pool (onnxc/thread_pool.h); the model never needs it.
  std::vector<std::string> argv = {cxx, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-pthread"};
  argv.insert(argv.end(), tool_flags.begin(), tool_flags.end());
  // The generated code may need the target's ISA flags; the harness around it never does.
  if (target) argv.insert(argv.end(), target->cxx_flags.begin(), target->cxx_flags.end());
  if (target && runs_emulated(*target)) {
    argv.push_back("-static");
    b.run_prefix = emulator_command(*target);
  }
  argv.insert(argv.end(), {"-I", runtime_include_dir()});
  // Not for SIMD targets: their generated source defines ONNXC_SIMD before the runtime headers, which a header
  // precompiled ahead of it would not see (the build would test the portable kernels), and with it defined GCC
  // would drop simd.h's pragmas that silence the AVX-512 intrinsics' maybe-uninitialized warnings (GCC keeps no
  // diagnostic pragmas in a precompiled header). Those builds parse the headers as a user's build does.
  if (!pch_cache_dir.empty() && !(target && target->simd)) {
    std::string header = cached_precompiled_header(argv, runtime_includes(code), pch_cache_dir);
    if (!header.empty()) argv.insert(argv.end(), {"-include", header});
  }
  // One translation unit for the model and its glue: one compiler process instead of two, and model.cpp is
  // compiled exactly as it stands (the glue only follows it).
  write_text(fs::path(dir) / "harness_unit.cpp", "#include \"model.cpp\"\n#include \"glue.cpp\"\n");
  if (!weights_define.empty()) argv.push_back(weights_define);
  argv.insert(argv.end(), {"-I", dir, (fs::path(dir) / "harness_unit.cpp").string(), harness, "-o", b.program});
  ProcessResult r = run_process(argv, 1800);
  b.ok = r.exit_code == 0;
  if (!b.ok) b.log = fmt::format("$ {}\n{}", fmt::join(argv, " "), r.output);
  if (!b.ok) b.log += cross_toolchain_hint(co.target, cxx);
  return b;
}

}  // namespace onnxc
