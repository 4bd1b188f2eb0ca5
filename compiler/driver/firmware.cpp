#include "driver/firmware.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include <fmt/format.h>

#include "backend/target.h"
#include "driver/commands.h"
#include "support/diagnostics.h"
#include "support/names.h"

namespace fs = std::filesystem;

namespace onnxc {
namespace {

// A Cortex-M core on an Arm MPS2/MPS3 board: SysTick counts its processor clock.
Board cortex_m(std::string target, std::string machine, std::vector<std::string> cpu_flags, double clock_hz) {
  Board b;
  b.target = std::move(target);
  b.machine = std::move(machine);
  b.cpu_flags = std::move(cpu_flags);
  b.linker_script = b.machine + ".ld";
  b.startup = "startup.cpp";
  b.counter = "SysTick";
  b.clock_hz = clock_hz;
  b.compiler_env = "ONNXC_ARM_CXX";
  return b;
}

// A 32-bit RISC-V core on QEMU's virt board, in machine mode from the start of RAM (-bios none), with
// picolibc. Built by the gcc driver, which links no libstdc++ (there is none for this compiler).
Board riscv32(std::string target, std::vector<std::string> cpu_flags) {
  Board b;
  b.target = std::move(target);
  b.machine = "virt";
  b.cpu_flags = std::move(cpu_flags);
  b.linker_script = "riscv32-virt.ld";
  b.startup = "startup_riscv.cpp";
  b.counter = "instret";
  b.clock_hz = 1e9;
  b.compiler_env = "ONNXC_RISCV_CC";
  b.toolchain_flags = {"--specs=picolibc.specs"};
  b.libraries = {"-lm"};
  b.emulator_flags = {"-bios", "none"};
  b.borrow_cxx_headers = true;
  return b;
}

const std::vector<Board>& boards() {
  static const std::vector<Board> all = {
      cortex_m("cortex-m4", "mps2-an386", {"-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"}, 25e6),
      cortex_m("cortex-m7", "mps2-an500", {"-mcpu=cortex-m7", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv5-d16"}, 25e6),
      // -mcpu=cortex-m55 implies its FPU and the M-profile vector extension (MVE).
      cortex_m("cortex-m55", "mps3-an547", {"-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard"}, 32e6),
      riscv32("riscv32", {"-march=rv32imac", "-mabi=ilp32"}),
      riscv32("riscv32f", {"-march=rv32imafc", "-mabi=ilp32f"}),
  };
  return all;
}

const Target& board_target(const Board& board) { return *find_target(board.target); }

std::string install_hint(const Board& board) {
  const Target& t = board_target(board);
  return fmt::format("install the bare-metal toolchain and QEMU (Debian: apt-get install {}; tools/install-deps.sh "
                     "does), or name the compiler with {}=/path/{}",
                     t.cross_packages, board.compiler_env, t.cross_compiler);
}

// The compiler $compiler_env names, or empty.
std::string compiler_from_environment(const Board& board) {
  const char* env = std::getenv(board.compiler_env.c_str());
  return env ? env : "";
}

// The target's compiler, or the one $compiler_env names; nm and size are its siblings.
std::string firmware_compiler(const Board& board) {
  const std::string named = compiler_from_environment(board);
  return named.empty() ? board_target(board).cross_compiler : named;
}

std::string toolchain_tool(const Board& board, const std::string& tool) {
  std::string cc = firmware_compiler(board);
  std::size_t dash = cc.rfind('-');
  return dash == std::string::npos ? tool : cc.substr(0, dash + 1) + tool;
}

// runtime-support/firmware/ in a checkout, <prefix>/share/onnxc/firmware when installed.
std::string firmware_dir() {
  if (const char* env = std::getenv("ONNXC_FIRMWARE_DIR")) return env;
  fs::path include = runtime_include_dir();
  for (const fs::path& candidate : {include.parent_path() / "firmware", include.parent_path() / "share/onnxc/firmware"})
    if (fs::exists(candidate / "startup.cpp")) return candidate.string();
  throw CompileError(ErrorKind::Usage, "--target", "cannot find onnxc's firmware support files (startup.cpp)",
                     "set ONNXC_FIRMWARE_DIR to the runtime-support/firmware directory");
}

const Board& board_for(const std::string& target) {
  if (const Board* b = find_board(target)) return *b;
  throw CompileError(ErrorKind::Usage, "--target " + target, "no emulated board for this target",
                     fmt::format("validate runs firmware for: {}", fmt::join(board_targets(), ", ")));
}

// Runs a toolchain program; a missing one is reported with how to install it.
ProcessResult run_tool(const Board& board, const std::vector<std::string>& argv, std::string* log) {
  ProcessResult r = run_process(argv, 1800);
  if (r.exit_code == 127)
    *log = fmt::format("cannot run {}\n  fix: {}", argv[0], install_hint(board));
  else if (r.exit_code != 0)
    *log = fmt::format("$ {}\n{}", fmt::join(argv, " "), r.output);
  return r;
}

// -isystem flags for the Arm bare-metal toolchain's C++ standard headers (Board::borrow_cxx_headers):
// its version directory under /usr/include/newlib/c++ and the default multilib's configuration.
// Empty if that toolchain is not installed.
std::vector<std::string> borrowed_cxx_headers() {
  const fs::path root = "/usr/include/newlib/c++";
  std::error_code ec;
  std::vector<fs::path> versions;
  for (const fs::directory_entry& e : fs::directory_iterator(root, ec))
    if (fs::exists(e.path() / "arm-none-eabi" / "bits" / "c++config.h")) versions.push_back(e.path());
  if (versions.empty()) return {};
  const fs::path newest = *std::max_element(versions.begin(), versions.end());
  return {"-isystem", newest.string(), "-isystem", (newest / "arm-none-eabi").string()};
}

std::vector<std::string> compile_command(const Board& board, const std::string& dir, const std::string& ns,
                                         const std::vector<std::string>& flags, const std::string& image) {
  std::string fw = firmware_dir();
  std::vector<std::string> argv = {firmware_compiler(board)};
  argv.insert(argv.end(), board.cpu_flags.begin(), board.cpu_flags.end());
  argv.insert(argv.end(), board.toolchain_flags.begin(), board.toolchain_flags.end());
  if (board.borrow_cxx_headers && compiler_from_environment(board).empty()) {
    const std::vector<std::string> headers = borrowed_cxx_headers();
    argv.insert(argv.end(), headers.begin(), headers.end());
  }
  argv.insert(argv.end(), {"-std=c++17", "-fno-exceptions", "-fno-rtti", "-ffunction-sections", "-fdata-sections",
                           "-Wall", "-Wextra", "-Werror"});
  if (flags.empty()) argv.push_back("-O2");
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"-I", runtime_include_dir(), "-I", fw, "-I", dir, "-DONNXC_MODEL_HEADER=\"model.h\"",
                           "-DONNXC_MODEL_NAMESPACE=" + ns, (fs::path(dir) / "model.cpp").string(),
                           (fs::path(fw) / "validate_main.cpp").string(), (fs::path(fw) / board.startup).string(),
                           "-nostartfiles", "-Wl,--gc-sections", "-L", fw, "-T", board.linker_script, "-o", image});
  argv.insert(argv.end(), board.libraries.begin(), board.libraries.end());
  return argv;
}

// "a,b" -> "a,,b": QEMU option values escape commas by doubling them.
std::string qemu_escape(const std::string& s) {
  std::string out;
  for (char c : s) out += c == ',' ? std::string(",,") : std::string(1, c);
  return out;
}

// Section name -> size in bytes, from `size -A`.
std::map<std::string, std::size_t> section_sizes(const Board& board, const std::string& image) {
  std::string log;
  ProcessResult r = run_tool(board, {toolchain_tool(board, "size"), "-A", "-d", image}, &log);
  std::map<std::string, std::size_t> sizes;
  std::istringstream lines(r.output);
  std::string name;
  std::size_t size = 0;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    if (fields >> name >> size && name[0] == '.') sizes[name] = size;
  }
  return sizes;
}

// Size of the symbol called `name` (demangled), from `nm -S -C`; 0 if absent.
std::size_t symbol_size(const std::string& nm_output, const std::string& name) {
  std::istringstream lines(nm_output);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string address, size, type;
    if (!(fields >> address >> size >> type)) continue;
    std::string rest;
    std::getline(fields, rest);
    if (rest.size() > 1 && rest.substr(1) == name) return std::stoul(size, nullptr, 16);
  }
  return 0;
}

// The number after `label` ("stack_bytes: ", say) in validate_main's output, or -1.
long long reported_count(const std::string& run_output, const std::string& label) {
  std::size_t at = run_output.find(label);
  return at == std::string::npos ? -1 : std::strtoll(run_output.c_str() + at + label.size(), nullptr, 10);
}

// Instructions run() executed, or -1 if the harness could not count them: QEMU runs with -icount
// shift=0 (one nanosecond of virtual time per instruction) and the harness reports the board's
// counter around run() (SysTick cycles of the processor clock, or instret).
long long run_instructions(const Board& board, const std::string& run_output) {
  long long cycles = reported_count(run_output, "run_cycles: ");
  if (cycles < 0) return -1;
  return static_cast<long long>(static_cast<double>(cycles) * (1e9 / board.clock_hz) + 0.5);
}

// The top-level steps' comments of a generated model.cpp ("  // N. 'name' Op-13: ... "), by step
// number: those with the least indentation (nested graphs' steps are indented further).
std::map<int, std::string> step_comments(const std::string& source) {
  std::map<int, std::string> steps;
  std::size_t indent = std::string::npos;
  std::vector<std::pair<std::size_t, std::size_t>> found;  // (indent, line start)
  for (std::size_t at = 0; at < source.size();) {
    std::size_t end = source.find('\n', at);
    if (end == std::string::npos) end = source.size();
    std::size_t first = source.find_first_not_of(' ', at);
    if (first < end && source.compare(first, 3, "// ") == 0 && first + 3 < end &&
        std::isdigit(static_cast<unsigned char>(source[first + 3]))) {
      std::size_t dot = source.find_first_not_of("0123456789", first + 3);
      if (dot < end && source.compare(dot, 3, ". '") == 0) {
        found.push_back({first - at, at});
        indent = std::min(indent, first - at);
      }
    }
    at = end + 1;
  }
  for (const auto& [in, start] : found) {
    if (in != indent) continue;
    std::size_t end = source.find('\n', start);
    if (end == std::string::npos) end = source.size();
    std::string text = source.substr(start + in + 3, end - start - in - 3);
    steps[std::atoi(text.c_str())] = text;
  }
  return steps;
}

}  // namespace

const Board* find_board(const std::string& target) {
  for (const Board& b : boards())
    if (b.target == target) return &b;
  return nullptr;
}

std::vector<std::string> board_targets() {
  std::vector<std::string> names;
  for (const Board& b : boards()) names.push_back(b.target);
  return names;
}

std::vector<std::string> forbidden_symbols(const std::string& nm_output) {
  static const std::map<std::string, std::string> kForbidden = {
      {"malloc", "heap"}, {"calloc", "heap"}, {"realloc", "heap"}, {"free", "heap"}, {"_malloc_r", "heap"},
      {"_free_r", "heap"}, {"_sbrk", "heap"}, {"_sbrk_r", "heap"},
      {"_Znwj", "operator new"}, {"_Znaj", "operator new[]"}, {"_ZdlPv", "operator delete"},
      {"_ZdaPv", "operator delete[]"}, {"_ZdlPvj", "operator delete"},
      {"printf", "stdio"}, {"sprintf", "stdio"}, {"snprintf", "stdio"}, {"puts", "stdio"}, {"fprintf", "stdio"},
      {"fwrite", "stdio"}, {"_vfprintf_r", "stdio"}, {"_svfprintf_r", "stdio"}, {"__sinit", "stdio"},
      {"__cxa_throw", "C++ exceptions"}, {"__cxa_allocate_exception", "C++ exceptions"},
      {"__cxa_begin_catch", "C++ exceptions"}, {"__gxx_personality_v0", "C++ exceptions"},
      {"__cxa_guard_acquire", "thread-safe initialisation of a function-local static"},
      {"__cxa_atexit", "static destructors"}, {"__aeabi_atexit", "static destructors"}, {"atexit", "static destructors"},
      {"__tls_get_addr", "thread-local storage"}, {"__aeabi_read_tp", "thread-local storage"},
      {"_write", "OS system calls"}, {"_read", "OS system calls"}, {"_open", "OS system calls"},
      {"_exit", "OS system calls"},
      // picolibc's names for the same (RISC-V).
      {"sbrk", "heap"}, {"vfprintf", "stdio"}, {"__d_vfprintf", "stdio"}, {"__f_vfprintf", "stdio"},
      {"__i_vfprintf", "stdio"}, {"fputc", "stdio"}, {"write", "OS system calls"}, {"read", "OS system calls"},
      {"open", "OS system calls"}, {"exit", "static destructors"},
  };
  std::set<std::string> found;
  std::istringstream lines(nm_output);
  for (std::string line; std::getline(lines, line);) {
    std::size_t space = line.find_last_of(' ');
    std::string name = space == std::string::npos ? line : line.substr(space + 1);
    auto it = kForbidden.find(name);
    if (it != kForbidden.end()) found.insert(fmt::format("{} ({})", name, it->second));
  }
  return {found.begin(), found.end()};
}

HostBuild build_firmware(const Compilation& c, const CompileOptions& co_in, const std::string& dir,
                         const std::string& target, const std::vector<std::string>& flags, bool step_counts) {
  const Board& board = board_for(target);
  CompileOptions co = co_in;
  co.weights_section = kFirmwareWeightsSection;
  HostBuild b;
  b.dir = dir;
  b.firmware_target = target;
  fs::create_directories(dir);
  if (has_bounded_outputs(c.program)) {
    b.log = "the model has outputs whose size is known only at run time (bounded outputs), which the firmware "
            "validation harness (runtime-support/firmware/validate_main.cpp) does not read yet; validate on the host";
    return b;
  }
  co.profile = co.profile || step_counts;
  std::string weights_define;
  write_model_code(c, co, dir, &weights_define);
  std::vector<std::string> all_flags = flags;
  if (step_counts) {
    // A second image: the code generated with --profile, its counter the board's (firmware.h),
    // and validate_main's onnxc_profile summing each step's count.
    if (all_flags.empty()) all_flags.push_back("-O2");  // (compile_command's default)
    all_flags.insert(all_flags.end(), {"-include", "firmware.h",
                                       "-DONNXC_PROFILE_COUNTER()=static_cast<unsigned long>(onnxc::firmware::cycles_elapsed())",
                                       fmt::format("-DONNXC_STEP_COUNTS={}", std::max<std::size_t>(c.program.main.steps.size(), 1))});
  }
  if (co.trace) {
    // validate --layers: validate_main writes what onnxc_trace receives to host files.
    if (all_flags.empty()) all_flags.push_back("-O2");  // (compile_command's default)
    all_flags.push_back("-DONNXC_TRACE_VALUES");
  }
  b.program = (fs::path(dir) / "model.elf").string();
  std::vector<std::string> argv = compile_command(board, dir, sanitize_identifier(co.name), all_flags, b.program);
  if (!weights_define.empty()) argv.insert(argv.begin() + 1, weights_define);
  if (board.borrow_cxx_headers && compiler_from_environment(board).empty() && borrowed_cxx_headers().empty()) {
    b.log = fmt::format("{} has no C++ standard headers, and the Arm toolchain's (/usr/include/newlib/c++) are not "
                        "installed\n  fix: {}", firmware_compiler(board), install_hint(board));
    return b;
  }
  if (run_tool(board, argv, &b.log).exit_code != 0) return b;
  ProcessResult nm = run_tool(board, {toolchain_tool(board, "nm"), b.program}, &b.log);
  if (nm.exit_code != 0) return b;
  std::vector<std::string> forbidden = forbidden_symbols(nm.output);
  if (!forbidden.empty()) {
    b.log = fmt::format("the firmware image links what firmware must not need: {}", fmt::join(forbidden, ", "));
    return b;
  }
  b.ok = true;
  return b;
}

ProcessResult run_firmware(const std::string& target, const std::vector<std::string>& harness_argv, int timeout_s) {
  const Board& board = board_for(target);
  std::string semihosting = "enable=on,target=native";
  for (std::size_t i = 1; i < harness_argv.size(); ++i) semihosting += ",arg=" + qemu_escape(harness_argv[i]);
  // -icount shift=0: the virtual clock advances 1 ns per instruction, so the counter the harness
  // reads around run() gives its instruction count (firmware_size_report).
  const std::string& emulator = board_target(board).emulator;
  std::vector<std::string> argv = {emulator, "-M", board.machine};
  argv.insert(argv.end(), board.emulator_flags.begin(), board.emulator_flags.end());
  argv.insert(argv.end(), {"-nographic", "-monitor", "none", "-serial", "none", "-icount", "shift=0",
                           "-semihosting-config", semihosting, "-kernel", harness_argv[0]});
  ProcessResult r = run_process(argv, timeout_s);
  if (r.exit_code == 127) r.output = fmt::format("cannot run {}\n  fix: {}", emulator, install_hint(board));
  return r;
}

std::string firmware_size_report(const std::string& target, const std::string& image, const std::string& run_output) {
  const Board& board = board_for(target);
  std::map<std::string, std::size_t> sections = section_sizes(board, image);
  auto size_of = [&](const char* name) { return sections.count(name) ? sections.at(name) : 0; };
  std::string log;
  std::string symbols = run_tool(board, {toolchain_tool(board, "nm"), "-S", "-C", image}, &log).output;
  std::size_t weights = size_of(kFirmwareWeightsSection);
  std::size_t code = size_of(".vectors") + size_of(".text") + size_of(".ARM.exidx") + size_of(".ARM.extab") +
                     size_of(".data");
  std::size_t arena = symbol_size(symbols, "(anonymous namespace)::arena");
  std::size_t io = symbol_size(symbols, "(anonymous namespace)::input_memory") +
                   symbol_size(symbols, "(anonymous namespace)::output_memory") +
                   symbol_size(symbols, "(anonymous namespace)::command_line");
  std::size_t statics = size_of(".data") + size_of(".bss");
  long long measured = reported_count(run_output, "stack_bytes: ");
  long long instructions = run_instructions(board, run_output);
  std::size_t stack = measured < 0 ? 0 : static_cast<std::size_t>(measured);
  return fmt::format(
      "firmware {} ({}):\n"
      "  flash: {} bytes = code {} (model, kernels, startup, validate program, libc/libm) + weights {}\n"
      "  RAM: {} bytes = arena {} + stack {} (measured peak of run()) + I/O buffers and command line {} + other "
      "static data {}\n"
      "  run(): {} instructions (QEMU -icount; a real core adds wait states and stalls)\n",
      target, board.machine, code + weights, code, weights, statics + stack, arena,
      measured < 0 ? std::string("unknown") : std::to_string(stack), io, statics - arena - io,
      instructions < 0 ? fmt::format("more than the {} counter holds", board.counter) : std::to_string(instructions));
}

std::string firmware_step_report(const std::string& target, const std::string& model_source,
                                 const std::string& run_output) {
  const Board& board = board_for(target);
  std::map<int, std::string> steps = step_comments(model_source);
  std::vector<std::pair<long long, int>> counts;  // (instructions, step)
  long long total = 0;
  std::istringstream lines(run_output);
  for (std::string line; std::getline(lines, line);) {
    int step = 0;
    long long cycles = 0;
    if (std::sscanf(line.c_str(), "step_cycles: %d %lld", &step, &cycles) != 2) continue;
    const long long instructions = static_cast<long long>(static_cast<double>(cycles) * (1e9 / board.clock_hz) + 0.5);
    counts.push_back({instructions, step});
    total += instructions;
  }
  std::sort(counts.begin(), counts.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::string out = fmt::format(
      "  run() per step, slowest first ({} instructions in all, from a second build with --profile that reads {} "
      "around each step, counted in steps of {:.0f}):\n",
      total, board.counter, 1e9 / board.clock_hz);
  for (const auto& [instructions, step] : counts) {
    // "N. 'name' Op-V -> ([shape])": the comment without the input shapes.
    std::string text = steps.count(step) ? steps.at(step) : std::to_string(step) + ".";
    const std::size_t inputs = text.find(": ("), arrow = text.rfind(") -> (");
    if (inputs != std::string::npos && arrow != std::string::npos && arrow > inputs)
      text = text.substr(0, inputs) + text.substr(arrow + 1);
    out += fmt::format("  {:>11} {:5.1f} %  {}\n", instructions, total ? 100.0 * instructions / total : 0.0, text);
  }
  return out;
}

}  // namespace onnxc
