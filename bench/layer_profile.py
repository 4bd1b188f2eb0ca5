#!/usr/bin/env python3
"""Time of each node of a generated model, from the code `onnxc bench --keep DIR` left in DIR.

Copies DIR/model.cpp with a clock read before each node's block of run_parallel (the
`// N. 'name' Op` comments codegen writes) and at its end, builds it with a small driver
(-O3 -march=native, like `onnxc bench`), runs the model RUNS times on the inputs `onnxc bench
--inputs` left in DIR (in_0_N.bin; pseudo-random values in [-0.5, 0.5) without them, which can
differ a lot: subnormal floats are slow) and prints, per node, the median of its time over the runs, its share of the whole, and the
op's text from the comment; the slowest first. Nodes without code (views) are left out.

  onnxc bench model.onnx --inputs DIR/test_data_set_0 --keep /tmp/onnxc-bench-mobilenet_v2
  bench/layer_profile.py /tmp/onnxc-bench-mobilenet_v2 [--runs 50] [--top 25]
  bench/layer_profile.py /tmp/onnxc-bench-mobilenet_v2 --threads 2   # 1 and 2 threads side by side

The clock reads add about 20 ns per node; on layers of a few microseconds that is noise.
"""
import argparse
import os
import re
import statistics
import subprocess
import tempfile

NODE = re.compile(r"^  // (\d+)\. (.*)$")

DRIVER = r"""
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "onnxc/base.h"
#include "onnxc/parallel.h"
#include "onnxc/thread_pool.h"

std::int64_t onnxc_profile_ns[PROFILE_NODES + 1];
static std::chrono::steady_clock::time_point onnxc_profile_last;
static int onnxc_profile_node = -1;

void onnxc_profile_tick(int node) {
  const auto now = std::chrono::steady_clock::now();
  if (onnxc_profile_node >= 0)
    onnxc_profile_ns[onnxc_profile_node] +=
        std::chrono::duration_cast<std::chrono::nanoseconds>(now - onnxc_profile_last).count();
  onnxc_profile_node = node;
  onnxc_profile_last = std::chrono::steady_clock::now();
}

extern "C" {
const onnxc::rt::TensorInfo* onnxc_harness_inputs(int* count);
const onnxc::rt::TensorInfo* onnxc_harness_outputs(int* count);
std::size_t onnxc_harness_arena_bytes();
std::size_t onnxc_harness_arena_alignment();
void onnxc_harness_run(const void* const* inputs, void* const* outputs, std::int64_t* const* output_shapes,
                       void* arena, const onnxc_parallel_for* parallel);
}

static void* buffer(std::size_t bytes, std::size_t align) {
  bytes = (bytes + align - 1) / align * align;
  void* p = std::aligned_alloc(align, bytes ? bytes : align);
  unsigned state = 12345;
  for (std::size_t i = 0; i < bytes / 4; ++i) {  // small floats (or ints): valid for every model input here
    state = state * 1664525u + 1013904223u;
    static_cast<float*>(p)[i] = static_cast<float>(state >> 9) / 8388608.0f - 0.5f;
  }
  return p;
}

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 50;
  onnxc::ThreadPool pool(THREADS);
  const onnxc_parallel_for pool_parallel_for = pool.parallel_for();
  const onnxc_parallel_for* parallel = THREADS > 1 ? &pool_parallel_for : nullptr;
  int ni = 0, no = 0;
  const onnxc::rt::TensorInfo* in = onnxc_harness_inputs(&ni);
  const onnxc::rt::TensorInfo* out = onnxc_harness_outputs(&no);
  std::vector<void*> inputs, outputs;
  std::vector<std::int64_t> shapes(8 * (no + 1));
  std::vector<std::int64_t*> shape_ptrs;
  for (int i = 0; i < ni; ++i) inputs.push_back(buffer(in[i].bytes, 64));
  for (int i = 0; i < ni && argc == 2 + ni; ++i) {  // the input files, when given
    std::FILE* f = std::fopen(argv[2 + i], "rb");
    if (!f || std::fread(inputs[i], 1, in[i].bytes, f) != in[i].bytes) return std::fprintf(stderr, "cannot read %s\n", argv[2 + i]), 2;
    std::fclose(f);
  }
  for (int i = 0; i < no; ++i) outputs.push_back(buffer(out[i].bytes, 64)), shape_ptrs.push_back(&shapes[8 * i]);
  void* arena = buffer(onnxc_harness_arena_bytes(), std::max<std::size_t>(64, onnxc_harness_arena_alignment()));
  for (int r = 0; r < 3 + runs; ++r) {
    std::fill(onnxc_profile_ns, onnxc_profile_ns + PROFILE_NODES + 1, 0);
    onnxc_profile_node = -1;
    onnxc_harness_run(inputs.data(), outputs.data(), shape_ptrs.data(), arena, parallel);
    if (r < 3) continue;
    for (int n = 0; n <= PROFILE_NODES; ++n) std::printf("%s%lld", n ? " " : "", (long long)onnxc_profile_ns[n]);
    std::printf("\n");
  }
}
"""


def instrument(source):
    """model.cpp with onnxc_profile_tick(N) before node N's block and after the last one."""
    lines = source.split("\n")
    out, labels, in_run, last = [], {}, False, 0
    for line in lines:
        if line.startswith("void run_parallel("):
            in_run = True
        m = NODE.match(line) if in_run else None
        if m:
            node = int(m.group(1))
            labels[node] = m.group(2)
            last = max(last, node)
            out.append(f"  onnxc_profile_tick({node});")
        if in_run and line == "}":
            out.append(f"  onnxc_profile_tick({last + 1});")
            in_run = False
        out.append(line)
    text = "\n".join(out)
    decl = "void onnxc_profile_tick(int node);\n"
    at = text.index("namespace model")
    return text[:at] + decl + text[at:], labels, last + 1


def build(a, work, nodes, threads):
    """The instrumented program that runs the model with `threads` threads (1: run())."""
    driver = os.path.join(work, f"driver{threads}.cpp")
    open(driver, "w").write(DRIVER.replace("PROFILE_NODES", str(nodes)).replace("THREADS", str(threads)))
    program = os.path.join(work, f"profile{threads}")
    subprocess.run([a.cxx, "-std=c++17", "-O3", "-march=native", "-pthread", "-w", "-I", a.include, "-I", a.dir,
                    os.path.join(work, "model.cpp"), os.path.join(a.dir, "glue.cpp"), driver, "-o", program], check=True)
    return program


def per_node_samples(program, runs, inputs):
    rows = subprocess.run([program, str(runs)] + inputs, check=True, stdout=subprocess.PIPE, text=True).stdout.split("\n")
    return [list(map(int, r.split())) for r in rows if r.strip()]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", help="a folder `onnxc bench --keep` wrote")
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--threads", type=int, default=1,
                    help="also time each node through run_parallel with onnxc::ThreadPool of this many threads, "
                         "in rounds alternating with the one-thread program, and print both and their ratio")
    ap.add_argument("--rounds", type=int, default=5, help="alternating rounds with --threads (runs are split among them)")
    ap.add_argument("--cxx", default=os.environ.get("CXX", "c++"))
    ap.add_argument("--include", default=os.path.join(os.path.dirname(__file__), "..", "runtime-support", "include"))
    a = ap.parse_args()

    source, labels, nodes = instrument(open(os.path.join(a.dir, "model.cpp")).read())
    work = tempfile.mkdtemp(prefix="onnxc-layer-profile-")
    open(os.path.join(work, "model.cpp"), "w").write(source)
    # The inputs `onnxc bench --inputs` left in DIR (in_0_N.bin), else pseudo-random values.
    files = sorted((f for f in os.listdir(a.dir) if re.fullmatch(r"in_0_\d+\.bin", f)), key=lambda f: int(f[5:-4]))
    inputs = [os.path.join(a.dir, f) for f in files]
    counts = [1] + ([a.threads] if a.threads > 1 else [])
    programs = {t: build(a, work, nodes, t) for t in counts}
    samples = {t: [] for t in counts}
    rounds = a.rounds if a.threads > 1 else 1
    for _ in range(rounds):
        for t in counts:
            samples[t] += per_node_samples(programs[t], max(1, a.runs // rounds), inputs)
    medians = {t: {n: statistics.median(s[n] for s in samples[t]) / 1e3 for n in labels} for t in counts}
    one = medians[1]
    total = sum(one.values())
    if a.threads == 1:
        print(f"{'us':>9} {'%':>5}  node (median of {len(samples[1])} runs; sum {total:.1f} us)")
        for n in sorted(one, key=one.get, reverse=True)[: a.top]:
            print(f"{one[n]:9.1f} {100 * one[n] / total:5.1f}  {n}. {labels[n]}")
        return
    many = medians[a.threads]
    total_many = sum(many.values())
    print(f"{'1T us':>9} {f'{a.threads}T us':>9} {'ratio':>6}  node (medians of {len(samples[1])} runs each, "
          f"{rounds} alternating rounds; sums {total:.1f} and {total_many:.1f} us, ratio {total_many / total:.2f})")
    for n in sorted(one, key=one.get, reverse=True)[: a.top]:
        print(f"{one[n]:9.1f} {many[n]:9.1f} {many[n] / one[n] if one[n] else 0:6.2f}  {n}. {labels[n]}")


if __name__ == "__main__":
    main()
