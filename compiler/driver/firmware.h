// `onnxc validate --target cortex-m4|cortex-m7|cortex-m55|riscv32|riscv32f`: the generated code
// built with the target's bare-metal compiler (arm-none-eabi-g++, riscv64-unknown-elf-gcc) into
// an image for an emulated board and run under QEMU's system emulator (qemu-system-arm,
// qemu-system-riscv32), with inputs and outputs passed as host files through semihosting.
//
// The image is the generated model, runtime-support/firmware/validate_main.cpp (the program),
// the architecture's startup code (startup.cpp, startup_riscv.cpp) and the board's linker
// script, all from runtime-support/firmware/. Nothing else: the C library (newlib, picolibc)
// only contributes memcpy, memset and the libm functions kernels call.
#pragma once

#include <string>
#include <vector>

#include "driver/build.h"
#include "passes/pipeline.h"
#include "support/process.h"

namespace onnxc {

// An emulated board for one microcontroller target. The compiler, emulator and the Debian packages
// that provide them are the target's (Target::cross_compiler, emulator, cross_packages).
struct Board {
  std::string target;         // the onnxc --target name, e.g. "cortex-m4"
  std::string machine;        // QEMU's -M, e.g. "mps2-an386"
  std::vector<std::string> cpu_flags;  // compiler flags for the core and its FPU
  std::string linker_script;  // in runtime-support/firmware/
  std::string startup;        // the architecture's startup code, in runtime-support/firmware/
  // The counter the harness reads around run() (firmware.h's cycle count), and its rate: SysTick at
  // the processor clock QEMU gives it, or the instret counter, whose 1 per instruction under QEMU's
  // -icount shift=0 (1 ns of virtual time per instruction) is a 1 GHz clock.
  std::string counter;
  double clock_hz;
  std::string compiler_env;   // the environment variable that names another compiler
  std::vector<std::string> toolchain_flags;  // before the sources (a C library's specs, say)
  std::vector<std::string> libraries;        // after them (what the compiler driver does not add)
  std::vector<std::string> emulator_flags;   // QEMU's, after -M
  // The compiler has no C++ standard headers (Debian's riscv64-unknown-elf-gcc): take those of
  // the Arm bare-metal toolchain's libstdc++, which are target-neutral for the header-only parts
  // the generated code uses (type traits, limits, <cmath>'s overloads, algorithms); nothing of
  // libstdc++'s library is linked.
  bool borrow_cxx_headers = false;
};

// The board for a target name, or nullptr if the target has none.
const Board* find_board(const std::string& target);
std::vector<std::string> board_targets();

// The section firmware builds put the weights in (onnxc --weights-section); the linker scripts
// place it.
inline constexpr const char* kFirmwareWeightsSection = ".onnxc_weights";

// Writes the generated code into dir and links it into dir/model.elf for the target's board.
// flags: optimisation and extra compiler flags (default -O2). Fails (ok false, log says why)
// when the code does not compile warning-free, or the image links anything firmware must not
// have (see forbidden_symbols()).
// step_counts: with the board's counter read at each top-level step of run(), for firmware_step_report.
HostBuild build_firmware(const Compilation& c, const CompileOptions& co, const std::string& dir,
                         const std::string& target, const std::vector<std::string>& flags, bool step_counts = false);

// Runs a firmware image under QEMU. harness_argv is what the host harness would get
// ({program, "run", IN..., "--", OUT...}); the program's arguments reach the firmware as its
// semihosting command line.
ProcessResult run_firmware(const std::string& target, const std::vector<std::string>& harness_argv, int timeout_s);

// The symbols among `nm` output (one "ADDRESS TYPE NAME" per line) whose presence means the
// image reaches the heap, stdio, exceptions, static-object lifetime management or
// thread-local storage, each with the reason.
std::vector<std::string> forbidden_symbols(const std::string& nm_output);

// Flash (code, weights) and RAM (arena, I/O buffers, other static data, measured stack) of a
// built image, for people: several lines. run_output: what run_firmware printed.
std::string firmware_size_report(const std::string& target, const std::string& image, const std::string& run_output);

// The instructions of each step of run() ("step_cycles: N C" lines of a step_counts build's
// output), slowest first, each with its step's comment from the generated model.cpp.
std::string firmware_step_report(const std::string& target, const std::string& model_source,
                                 const std::string& run_output);

}  // namespace onnxc
