// `onnxc validate --target cortex-m4|cortex-m7|cortex-m55`: the generated code built with
// arm-none-eabi-g++ into a bare-metal image for an emulated board and run under
// qemu-system-arm, with inputs and outputs passed as host files through semihosting.
//
// The image is the generated model, runtime-support/firmware/validate_main.cpp (the program),
// startup.cpp (vector table, reset, stack measurement) and the board's linker script, all
// from runtime-support/firmware/. Nothing else: newlib only contributes memcpy, memset and
// the libm functions kernels call.
#pragma once

#include <string>
#include <vector>

#include "driver/build.h"
#include "passes/pipeline.h"
#include "support/process.h"

namespace onnxc {

// An emulated board for one Cortex-M target.
struct Board {
  std::string target;         // the onnxc --target name, e.g. "cortex-m4"
  std::string machine;        // qemu-system-arm -M, e.g. "mps2-an386"
  std::vector<std::string> cpu_flags;  // arm-none-eabi-g++ flags for the core and its FPU
  std::string linker_script;  // in runtime-support/firmware/
  double clock_hz;            // the processor clock QEMU gives the board's SysTick
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
// step_counts: with a SysTick read at each top-level step of run(), for firmware_step_report.
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
