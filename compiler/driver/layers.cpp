#include "driver/layers.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "backend/codegen.h"
#include "backend/target.h"
#include "driver/build.h"
#include "driver/commands.h"
#include "driver/report.h"
#include "ops/cost.h"
#include "support/process.h"

namespace fs = std::filesystem;

namespace onnxc {
namespace {

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      std::string name = line.substr(line.find(':') + 1);
      name.erase(0, name.find_first_not_of(" \t"));
      return name;
    }
  return "unknown CPU";
}

// "peak_gflops X" and "bandwidth_gbps Y" lines (the roofline program's output and the cache file).
bool parse_roofline(const std::string& text, Roofline* r) {
  std::istringstream in(text);
  for (std::string key; in >> key;) {
    if (key == "peak_gflops") in >> r->peak_gflops;
    else if (key == "bandwidth_gbps") in >> r->bandwidth_gbps;
  }
  return r->peak_gflops > 0 && r->bandwidth_gbps > 0;
}

std::string read_text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// A control-flow step's work: its bodies' steps' (an If's branch that runs; a Loop's or Scan's
// body counted once, their trip counts being run-time values). Other steps: their own.
void add_step_cost(const Step& s, int64_t* macs, int64_t* bytes) {
  if (s.subgraphs.empty()) {
    *macs += node_macs(*s.node, *s.op);
    *bytes += node_bytes_moved(*s.node);
    return;
  }
  for (const auto& body : s.subgraphs)
    if (body)
      for (const Step& inner : body->steps) add_step_cost(inner, macs, bytes);
}

}  // namespace

std::optional<Roofline> machine_roofline(const std::string& target, int threads, const std::string& cxx,
                                         const std::vector<std::string>& flags, bool remeasure, std::string* log) {
  const Target* t = find_target(target);
  std::vector<std::string> all_flags = flags;
  if (t) all_flags.insert(all_flags.end(), t->cxx_flags.begin(), t->cxx_flags.end());
  const std::string source = (t ? target_preamble(*t) : "") + template_text("roofline.cpp.tmpl");
  const std::string cpu = cpu_model();
  const std::size_t key =
      std::hash<std::string>{}(fmt::format("{}\n{}\n{}\n{}", cpu, cxx, fmt::join(all_flags, " "), source));
  Roofline r;
  r.cache_file = (fs::path(cache_dir()) / fmt::format("roofline-{}-{}t-{:016x}.txt", target, threads, key)).string();
  if (!remeasure && fs::exists(r.cache_file) && parse_roofline(read_text(r.cache_file), &r)) return r;

  const std::string dir = make_temp_dir();
  const fs::path src = fs::path(dir) / "roofline.cpp", program = fs::path(dir) / "roofline";
  std::ofstream(src, std::ios::binary) << source;
  std::vector<std::string> argv = {cxx, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-pthread"};
  argv.insert(argv.end(), all_flags.begin(), all_flags.end());
  argv.insert(argv.end(), {"-I", runtime_include_dir(), src.string(), "-o", program.string()});
  ProcessResult built = run_process(argv, 600);
  ProcessResult ran;
  if (built.exit_code == 0) ran = run_process({program.string(), std::to_string(threads)}, 600);
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (built.exit_code != 0 || ran.exit_code != 0 || !parse_roofline(ran.output, &r)) {
    *log = built.exit_code != 0 ? fmt::format("$ {}\n{}", fmt::join(argv, " "), built.output)
                                : fmt::format("the roofline measurement failed:\n{}", ran.output);
    return std::nullopt;
  }
  r.measured_now = true;
  // Written under a unique name and renamed: benches in parallel may race here.
  const std::string tmp = r.cache_file + fmt::format(".{}", fs::path(dir).filename().string());
  std::ofstream(tmp) << fmt::format("# onnxc bench --layers: target {}, {} thread{}, {}; {} {}\n{}", target, threads,
                                    threads == 1 ? "" : "s", cpu, cxx, fmt::join(all_flags, " "), ran.output);
  fs::rename(tmp, r.cache_file, ec);
  if (ec) fs::remove(tmp, ec);
  return r;
}

std::vector<LayerRow> layer_rows(const Block& main, const std::map<std::size_t, double>& step_us, const Roofline& r,
                                 const std::map<std::size_t, TaskShare>& shares) {
  // Above this many FLOPs per byte a step can reach the FMA peak before the bandwidth bound.
  const double ridge = r.peak_gflops / r.bandwidth_gbps;
  std::vector<LayerRow> rows;
  for (const auto& [index, us] : step_us) {
    if (index >= main.steps.size()) continue;
    const Step& s = main.steps[index];
    const Node& n = *s.node;
    LayerRow row;
    row.index = index;
    row.name = n.name;
    row.op = n.op_type;
    row.output_shape = n.has_output(0) ? shape_str(n.outputs[0]->shape) : "-";
    row.us = us;
    add_step_cost(s, &row.macs, &row.bytes);
    if (us > 0) {
      row.gflops = 2.0 * static_cast<double>(row.macs) / us / 1e3;
      row.gbps = static_cast<double>(row.bytes) / us / 1e3;
    }
    const bool compute = row.bytes > 0 && 2.0 * static_cast<double>(row.macs) / static_cast<double>(row.bytes) > ridge;
    row.bound = compute ? "compute" : "memory";
    row.percent_of_bound = 100.0 * (compute ? row.gflops / r.peak_gflops : row.gbps / r.bandwidth_gbps);
    if (const auto share = shares.find(index); share != shares.end()) {
      row.loops = share->second.loops;
      row.tasks = share->second.tasks;
      row.predicted_us = share->second.predicted_us;
      row.busy_us = share->second.busy_us;
    }
    rows.push_back(row);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const LayerRow& a, const LayerRow& b) { return a.us > b.us; });
  return rows;
}

std::map<std::size_t, double> parse_step_times(const std::string& harness_output, double* run_median_us) {
  std::map<std::size_t, double> times;
  std::istringstream in(harness_output);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string key;
    words >> key;
    std::size_t index = 0;
    double us = 0;
    if (key == "step" && words >> index >> us) times[index] = us;
    if (key == "median_us:" && run_median_us) words >> *run_median_us;
  }
  return times;
}

std::map<std::size_t, TaskShare> parse_task_shares(const std::string& harness_output) {
  std::map<std::size_t, TaskShare> shares;
  std::istringstream in(harness_output);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string key;
    std::size_t index = 0;
    TaskShare share;
    if (!(words >> key) || key != "share" || !(words >> index >> share.loops >> share.tasks >> share.predicted_us))
      continue;
    for (double us; words >> us;) share.busy_us.push_back(us);
    shares[index] = share;
  }
  return shares;
}

namespace {

double steps_sum(const std::vector<LayerRow>& rows) {
  double sum = 0;
  for (const LayerRow& row : rows) sum += row.us;
  return sum;
}

// The number of threads the rows' predictions are for (0: none).
std::size_t predicted_threads(const std::vector<LayerRow>& rows) {
  std::size_t threads = 0;
  for (const LayerRow& row : rows) threads = std::max(threads, row.busy_us.size());
  return threads;
}

struct Prediction {
  double predicted_us = 0, serial_us = 0;  // serial: steps without a parallel loop
  int serial_steps = 0;
};
Prediction predict(const std::vector<LayerRow>& rows) {
  Prediction p;
  for (const LayerRow& row : rows) {
    p.predicted_us += row.loops ? row.predicted_us : row.us;
    if (row.loops) continue;
    p.serial_us += row.us;
    p.serial_steps += 1;
  }
  return p;
}

}  // namespace

std::string layers_text(const std::vector<LayerRow>& rows, const Roofline& r, double run_median_us) {
  std::string s = fmt::format(
      "roofline: FMA peak {:.1f} GFLOP/s, memory bandwidth {:.1f} GB/s (ridge {:.1f} FLOP/byte; {} {})\n", r.peak_gflops,
      r.bandwidth_gbps, r.peak_gflops / r.bandwidth_gbps, r.measured_now ? "measured now, cached in" : "cached in",
      r.cache_file);
  const std::size_t threads = predicted_threads(rows);
  s += fmt::format("{:>4}  {:<28} {:<18} {:<18} {:>9} {:>12} {:>11} {:>8} {:>7} {:<7} {:>6}", "step", "node", "op",
                   "output", "us", "MACs", "bytes", "GFLOP/s", "GB/s", "bound", "%");
  if (threads) s += fmt::format(" {:>5} {:>5} {:>9} {:>6}  busy us per thread", "loops", "tasks", "pred us", "pred/1");
  s += "\n";
  for (const LayerRow& row : rows) {
    s += fmt::format("{:>4}  {:<28} {:<18} {:<18} {:>9.2f} {:>12} {:>11} {:>8.2f} {:>7.2f} {:<7} {:>6.1f}", row.index,
                     row.name.size() > 28 ? row.name.substr(0, 27) + "~" : row.name, row.op, row.output_shape, row.us,
                     row.macs, row.bytes, row.gflops, row.gbps, row.bound, row.percent_of_bound);
    if (threads) {
      const double predicted = row.loops ? row.predicted_us : row.us;
      s += fmt::format(" {:>5} {:>5} {:>9.2f} {:>6.2f}  ", row.loops, row.tasks, predicted,
                       row.us > 0 ? predicted / row.us : 1.0);
      s += row.loops ? fmt::format("{:.1f}", fmt::join(row.busy_us, " / ")) : "serial";
    }
    s += "\n";
  }
  int64_t macs = 0, bytes = 0;
  for (const LayerRow& row : rows) macs += row.macs, bytes += row.bytes;
  s += fmt::format("total: {} steps, {:.2f} us (sum of the steps' medians; the whole run's median {:.2f} us), {} MACs, "
                   "{} bytes\n",
                   rows.size(), steps_sum(rows), run_median_us, macs, bytes);
  if (threads) {
    const Prediction p = predict(rows);
    const double sum = steps_sum(rows);
    s += fmt::format("predicted on {} threads: {:.2f} us, {:.3f} of one thread's steps (the tasks of each parallel loop "
                     "timed one after the other and handed out as the pool would; memory and cache contention not "
                     "counted); {} steps run serially, {:.2f} us ({:.1f} %)\n",
                     threads, p.predicted_us, sum > 0 ? p.predicted_us / sum : 1.0, p.serial_steps, p.serial_us,
                     sum > 0 ? 100.0 * p.serial_us / sum : 0.0);
  }
  return s;
}

std::string layers_json(const std::vector<LayerRow>& rows, const Roofline& r, double run_median_us) {
  std::string s = "{\n";
  s += fmt::format("  \"peak_gflops\": {:.3f},\n  \"bandwidth_gbps\": {:.3f},\n", r.peak_gflops, r.bandwidth_gbps);
  s += fmt::format("  \"run_median_us\": {:.3f},\n  \"steps_us\": {:.3f},\n", run_median_us, steps_sum(rows));
  const std::size_t threads = predicted_threads(rows);
  if (threads) {
    const Prediction p = predict(rows);
    s += fmt::format("  \"predicted_threads\": {},\n  \"predicted_us\": {:.3f},\n  \"predicted_scaling\": {:.4f},\n",
                     threads, p.predicted_us, steps_sum(rows) > 0 ? p.predicted_us / steps_sum(rows) : 1.0);
  }
  s += "  \"steps\": [\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const LayerRow& row = rows[i];
    s += fmt::format("    {{\"index\": {}, \"name\": {}, \"op\": {}, \"output_shape\": {}, \"us\": {:.3f}, \"macs\": {}, "
                     "\"bytes\": {}, \"gflops\": {:.3f}, \"gbps\": {:.3f}, \"bound\": {}, \"percent_of_bound\": {:.2f}",
                     row.index, json_string(row.name), json_string(row.op), json_string(row.output_shape), row.us,
                     row.macs, row.bytes, row.gflops, row.gbps, json_string(row.bound), row.percent_of_bound);
    if (threads)
      s += fmt::format(", \"loops\": {}, \"tasks\": {}, \"predicted_us\": {:.3f}, \"busy_us\": [{:.3f}]", row.loops,
                       row.tasks, row.loops ? row.predicted_us : row.us, fmt::join(row.busy_us, ", "));
    s += fmt::format("}}{}\n", i + 1 < rows.size() ? "," : "");
  }
  s += "  ]\n}\n";
  return s;
}

std::map<std::size_t, double> parse_step_instructions(const std::string& plugin_output) {
  std::map<std::size_t, double> counts;
  std::istringstream lines(plugin_output);
  for (std::string line; std::getline(lines, line);) {
    unsigned long long step = 0, sum = 0, times = 0;
    if (std::sscanf(line.c_str(), "step_insns: %llu %llu %llu", &step, &sum, &times) == 3 && times > 0)
      counts[static_cast<std::size_t>(step)] = static_cast<double>(sum) / static_cast<double>(times);
  }
  return counts;
}

std::string build_insn_count_plugin(const std::string& dir, std::string* log) {
  const fs::path source = fs::path(dir) / "qemu_insn_count.c";
  const fs::path plugin = fs::path(dir) / "qemu_insn_count.so";
  std::ofstream(source, std::ios::binary) << template_text("qemu_insn_count.c.tmpl");
  const std::vector<std::string> argv = {"cc", "-shared", "-fPIC", "-O2", "-o", plugin.string(), source.string()};
  ProcessResult r = run_process(argv, 300);
  if (r.exit_code == 0) return plugin.string();
  *log = fmt::format("$ {}\n{}", fmt::join(argv, " "), r.output);
  return "";
}

std::string layers_instructions_text(const std::vector<LayerRow>& rows, const std::string& target) {
  double total = 0;
  int64_t macs = 0;
  for (const LayerRow& row : rows) total += row.us, macs += row.macs;
  std::string s = fmt::format("instructions per step of run() on {}, counted under QEMU (deterministic; the emulator's "
                              "times are not the core's)\n", target);
  s += fmt::format("{:>4}  {:<28} {:<18} {:<18} {:>13} {:>12} {:>9} {:>6}\n", "step", "node", "op", "output",
                   "instructions", "MACs", "MAC/insn", "%");
  for (const LayerRow& row : rows)
    s += fmt::format("{:>4}  {:<28} {:<18} {:<18} {:>13.0f} {:>12} {:>9.2f} {:>6.1f}\n", row.index,
                     row.name.size() > 28 ? row.name.substr(0, 27) + "~" : row.name, row.op, row.output_shape, row.us,
                     row.macs, row.us > 0 ? static_cast<double>(row.macs) / row.us : 0.0,
                     total > 0 ? 100.0 * row.us / total : 0.0);
  s += fmt::format("total: {} steps, {:.0f} instructions, {} MACs, {:.2f} MACs per instruction\n", rows.size(), total,
                   macs, total > 0 ? static_cast<double>(macs) / total : 0.0);
  return s;
}

}  // namespace onnxc
