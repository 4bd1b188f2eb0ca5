// onnxc bench --layers: a roofline profile of the model, one row per step. Each step's median
// time (the bench harness reads a clock between steps) is set against its work and traffic
// (ops/cost.h) and against this machine's two bounds: the FMA peak and the memory bandwidth, both
// measured once per target, CPU model and thread count and cached (machine_roofline).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "passes/program.h"

namespace onnxc {

// This machine's bounds for one target and thread count.
struct Roofline {
  double peak_gflops = 0;     // FLOP/s of independent FMAs in registers (2 FLOPs per MAC)
  double bandwidth_gbps = 0;  // a streaming triad over buffers far larger than the last-level cache
  std::string cache_file;     // where they are cached
  bool measured_now = false;  // false: read from cache_file
};

// The bounds, from the cache file for (target, CPU model, threads, compiler and flags) or, when
// there is none or `remeasure`, measured by building and running templates/roofline.cpp.tmpl with
// the compiler and flags of the model's build (and the target's own flags) and cached. nullopt
// after writing what failed to *log.
std::optional<Roofline> machine_roofline(const std::string& target, int threads, const std::string& cxx,
                                         const std::vector<std::string>& flags, bool remeasure, std::string* log);

// One step of the profile.
struct LayerRow {
  std::size_t index = 0;  // the step's number in the generated code ("// N. 'name' Op")
  std::string name, op, output_shape;
  double us = 0;
  int64_t macs = 0, bytes = 0;
  double gflops = 0, gbps = 0;
  std::string bound;  // "compute" or "memory": whichever the step's FLOPs per byte reach first
  double percent_of_bound = 0;
  // bench --predict-threads N (TaskShare): the step's parallel loops and their tasks, its
  // predicted time on N threads and each thread's busy time in it (empty without the option).
  int loops = 0, tasks = 0;
  double predicted_us = 0;
  std::vector<double> busy_us;
};

// What the harness's `--predict-threads N layers` printed for one step ("share I LOOPS TASKS
// PREDICTED_US BUSY_0 .. BUSY_N-1"): its tasks, timed one after the other on one thread, handed
// out as the example pool's N threads would take them (templates/harness.cpp.tmpl, TaskShares).
struct TaskShare {
  int loops = 0, tasks = 0;
  double predicted_us = 0;
  std::vector<double> busy_us;
};
std::map<std::size_t, TaskShare> parse_task_shares(const std::string& harness_output);

// The rows of the main block's steps that have times in step_us (steps without code have none),
// slowest first (ties: by index). A control-flow step (If, Loop, Scan) counts its bodies' steps'
// MACs and bytes (a loop body's once).
// With `shares` (bench --predict-threads), each row also gets its step's share.
std::vector<LayerRow> layer_rows(const Block& main, const std::map<std::size_t, double>& step_us, const Roofline& r,
                                 const std::map<std::size_t, TaskShare>& shares = {});

// What the bench harness's `layers` mode printed: "step I US" lines, and "median_us: X" (the whole
// run's median, written to *run_median_us when given).
std::map<std::size_t, double> parse_step_times(const std::string& harness_output, double* run_median_us);

// The table for a person: the bounds, one line per row, the totals. Rows with predicted times
// (bench --predict-threads) add the split columns and a line with the predicted scaling: the
// sum of the predicted step times over the sum of the one-thread ones.
std::string layers_text(const std::vector<LayerRow>& rows, const Roofline& r, double run_median_us);
// The same as JSON: peak_gflops, bandwidth_gbps, run_median_us, steps_us (their sum),
// steps: [{index, name, op, output_shape, us, macs, bytes, gflops, gbps, bound, percent_of_bound}];
// with predicted times also predicted_threads, predicted_us, predicted_scaling and per step
// loops, tasks, predicted_us, busy_us (one per thread).
std::string layers_json(const std::vector<LayerRow>& rows, const Roofline& r, double run_median_us);

// bench --layers on a target run under QEMU's user mode: the instructions of each step, counted by
// templates/qemu_insn_count.c.tmpl from the harness's step marks ("step_insns: STEP SUM TIMES"
// lines), per run. Deterministic, unlike the emulator's times.
std::map<std::size_t, double> parse_step_instructions(const std::string& plugin_output);
// The QEMU plugin's source (templates/) built with the host's C compiler into dir: the .so's path,
// or "" after writing the compiler's output to *log.
std::string build_insn_count_plugin(const std::string& dir, std::string* log);
// The table of rows whose `us` holds instructions (layer_rows over parse_step_instructions'
// counts): instructions, MACs, MACs per instruction and share of the run, heaviest first.
std::string layers_instructions_text(const std::vector<LayerRow>& rows, const std::string& target);

}  // namespace onnxc
