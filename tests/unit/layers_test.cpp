// onnxc bench --layers: each step's MACs and bytes (ops/cost.h) against hand-computed counts of
// mnist-cnn, and the roofline rows, text and JSON (driver/layers.h) on made-up times and bounds.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "driver/layers.h"
#include "ops/cost.h"
#include "passes/pipeline.h"

using namespace onnxc;

namespace {

// mnist-cnn: Conv 1->8 5x5 pad 2 on 28x28 (+Relu), MaxPool 2x2/2, Conv 8->16 5x5 pad 2 on 14x14
// (+Relu), MaxPool 3x3/3, Flatten, Gemm 256->64 (+Relu), Gemm 64->10.
std::string mnist_cnn() { return std::string(ONNXC_TEST_DIR) + "/models/mnist-cnn/model.onnx"; }

struct Counted {
  std::string op;
  int64_t macs, bytes;
};

// The steps with code, in order, with their counts.
std::vector<Counted> counted_steps(const Compilation& c) {
  std::vector<Counted> out;
  for (const Step& s : c.program.main.steps)
    if (!s.op->is_view) out.push_back({s.node->op_type, node_macs(*s.node, *s.op), node_bytes_moved(*s.node)});
  return out;
}

}  // namespace

TEST_CASE("step MACs and bytes of mnist-cnn's Conv, MaxPool and Gemm steps match hand counts", "[layers]") {
  for (const char* target : {"generic", "native"}) {
    CompileOptions o;
    o.target = target;
    Compilation c = compile_model(mnist_cnn(), o);
    const std::vector<Counted> steps = counted_steps(c);
    // MACs: output elements x input channels x kernel taps (Conv); output elements x window (MaxPool);
    // N x K (Gemm). Bytes: float input + weight + bias + output, each once.
    const std::vector<Counted> want = {
        {"Conv", 8 * 28 * 28 * 1 * 25, 4 * (28 * 28 + 8 * 25 + 8 + 8 * 28 * 28)},
        {"MaxPool", 8 * 14 * 14 * 4, 4 * (8 * 28 * 28 + 8 * 14 * 14)},
        {"Conv", 16 * 14 * 14 * 8 * 25, 4 * (8 * 14 * 14 + 16 * 8 * 25 + 16 + 16 * 14 * 14)},
        {"MaxPool", 16 * 4 * 4 * 9, 4 * (16 * 14 * 14 + 16 * 4 * 4)},
        {"Gemm", 64 * 256, 4 * (256 + 64 * 256 + 64 + 64)},
        // pack-weights stores B in 16-column panels: the 10 columns are read as 16.
        {"Gemm", 10 * 64, 4 * (64 + 16 * 64 + 10 + 10)},
    };
    INFO("target " << target);
    REQUIRE(steps.size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      INFO("step " << i << " " << steps[i].op);
      CHECK(steps[i].op == want[i].op);
      CHECK(steps[i].macs == want[i].macs);
      CHECK(steps[i].bytes == want[i].bytes);
    }
  }
}

TEST_CASE("layer rows: slowest first, the bound from FLOPs per byte against the ridge, % of that bound", "[layers]") {
  Compilation c = compile_model(mnist_cnn(), {});
  const Block& main = c.program.main;
  std::map<std::size_t, double> times;
  std::vector<std::size_t> with_code;
  for (std::size_t i = 0; i < main.steps.size(); ++i)
    if (!main.steps[i].op->is_view) with_code.push_back(i);
  REQUIRE(with_code.size() == 6);
  // First Conv 10 us, first MaxPool 2 us, second Conv 20 us, the rest 1 us.
  for (std::size_t i : with_code) times[i] = 1.0;
  times[with_code[0]] = 10.0;
  times[with_code[1]] = 2.0;
  times[with_code[2]] = 20.0;
  Roofline r;
  r.peak_gflops = 100;   // ridge: 100 / 10 = 10 FLOPs per byte
  r.bandwidth_gbps = 10;
  const std::vector<LayerRow> rows = layer_rows(main, times, r);
  REQUIRE(rows.size() == 6);
  // Second Conv: 627200 MACs over 31680 bytes, 39.6 FLOPs per byte: compute-bound;
  // 1254400 FLOPs in 20 us = 62.72 GFLOP/s, 62.72 % of the peak.
  CHECK(rows[0].index == with_code[2]);
  CHECK(rows[0].bound == "compute");
  CHECK(rows[0].gflops == Approx(62.72));
  CHECK(rows[0].gbps == Approx(1.584));
  CHECK(rows[0].percent_of_bound == Approx(62.72));
  // First Conv: 156800 MACs over 29056 bytes, 10.8 FLOPs per byte, just above the ridge.
  CHECK(rows[1].index == with_code[0]);
  CHECK(rows[1].bound == "compute");
  CHECK(rows[1].percent_of_bound == Approx(31.36));
  // First MaxPool: 6272 comparisons over 31360 bytes: memory-bound; 15.68 GB/s is 156.8 % of 10.
  CHECK(rows[2].index == with_code[1]);
  CHECK(rows[2].op == "MaxPool");
  CHECK(rows[2].output_shape == "[1, 8, 14, 14]");
  CHECK(rows[2].bound == "memory");
  CHECK(rows[2].gbps == Approx(15.68));
  CHECK(rows[2].percent_of_bound == Approx(156.8));
  // Ties (1 us each) keep the steps' order.
  CHECK(rows[3].index < rows[4].index);
  CHECK(rows[4].index < rows[5].index);

  const std::string json = layers_json(rows, r, 40.0);
  for (const char* key : {"\"peak_gflops\": 100.000", "\"bandwidth_gbps\": 10.000", "\"steps_us\": 35.000",
                          "\"run_median_us\": 40.000", "\"steps\": ["})
    CHECK(json.find(key) != std::string::npos);
  std::size_t entries = 0;
  for (std::size_t at = json.find("{\"index\": "); at != std::string::npos; at = json.find("{\"index\": ", at + 1))
    ++entries;
  CHECK(entries == 6);
  for (const char* key : {"\"name\": ", "\"op\": \"Gemm\"", "\"us\": ", "\"macs\": 627200", "\"bytes\": 31680",
                          "\"gflops\": 62.720", "\"gbps\": 1.584", "\"bound\": \"compute\"", "\"percent_of_bound\": 62.72"})
    CHECK(json.find(key) != std::string::npos);
  const std::string text = layers_text(rows, r, 40.0);
  CHECK(text.find("total: 6 steps, 35.00 us") != std::string::npos);
}

TEST_CASE("the harness's layers output parses into per-step medians and the run's median", "[layers]") {
  double median = 0;
  const auto times = parse_step_times("step 0 12.500\nstep 3 0.250\nruns: 5\nmin_us: 11.00\nmedian_us: 13.75\n", &median);
  REQUIRE(times.size() == 2);
  CHECK(times.at(0) == 12.5);
  CHECK(times.at(3) == 0.25);
  CHECK(median == 13.75);
}

TEST_CASE("the QEMU plugin's step counts parse into instructions per run, and the table divides MACs by them",
          "[layers]") {
  // Step 1 ran 4 times (3 warm-up runs and 1 timed) for 4,000,000 instructions; step 0's line comes
  // after the harness's own output; a line with no runs is left out.
  const auto counts = parse_step_instructions(
      "runs: 1\nmedian_us: 5.0\nstep_insns: 1 4000000 4\nstep_insns: 0 1000 4\nstep_insns: 2 7 0\ninsns: 9\n");
  REQUIRE(counts.size() == 2);
  CHECK(counts.at(0) == 250.0);
  CHECK(counts.at(1) == 1000000.0);
  // mnist-cnn's second Conv (627,200 MACs) in 313,600 instructions: 2.00 MACs per instruction.
  Compilation c = compile_model(mnist_cnn(), {});
  const Block& main = c.program.main;
  std::size_t conv = 0, seen = 0;
  for (std::size_t i = 0; i < main.steps.size(); ++i)
    if (main.steps[i].node->op_type == "Conv" && ++seen == 2) conv = i;
  const std::vector<LayerRow> rows = layer_rows(main, {{conv, 313600.0}}, Roofline{1, 1, "", false});
  REQUIRE(rows.size() == 1);
  const std::string text = layers_instructions_text(rows, "neon");
  CHECK(text.find("313600       627200      2.00  100.0") != std::string::npos);
  CHECK(text.find("total: 1 steps, 313600 instructions, 627200 MACs, 2.00 MACs per instruction") != std::string::npos);
}

TEST_CASE("step hooks are in bench --layers' build only; without them the code is what a compile writes", "[layers]") {
  CompileOptions o;
  o.target = "native";
  Compilation c = compile_model(mnist_cnn(), o);
  const GeneratedCode plain = emit_code(c, o, "model.h", "model.cpp");
  CHECK(plain.source.find("onnxc_bench_step") == std::string::npos);
  CHECK(plain.header.find("onnxc_bench_step") == std::string::npos);
  o.step_hooks = true;
  const GeneratedCode hooked = emit_code(c, o, "model.h", "model.cpp");
  CHECK(hooked.header == plain.header);
  // One call before each of the 6 steps with code (Flatten is a view), one after the last (its
  // index: the number of steps), and the declaration; removing those lines gives the plain source.
  std::string stripped, line;
  int calls = 0;
  for (std::size_t at = 0; at < hooked.source.size();) {
    const std::size_t end = std::min(hooked.source.find('\n', at), hooked.source.size());
    line = hooked.source.substr(at, end - at);
    at = end + 1;
    if (line.find("onnxc_bench_step(") != std::string::npos) {
      calls += line.find("extern \"C\"") == std::string::npos;
      continue;
    }
    stripped += line + "\n";
  }
  CHECK(calls == 7);
  CHECK(hooked.source.find("  onnxc_bench_step(" + std::to_string(c.program.main.steps.size()) + ");") != std::string::npos);
  std::string plain_lines = plain.source;
  if (plain_lines.back() != '\n') plain_lines += "\n";
  CHECK(stripped == plain_lines);
}
