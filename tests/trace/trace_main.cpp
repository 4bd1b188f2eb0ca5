// tests/trace/trace_profile.sh: a user's program around a model generated with --trace and
// --profile. It defines the two hooks, runs the model on input_0.pb's raw float bytes and checks
// what the hooks saw: every step's values in step order, each described as the model's header
// says (the last one is the model's output, whose bytes run() wrote), one profile call per step
// with code. Prints one line per traced value.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "model.h"

namespace {

struct Seen {
  int step;
  int output;
  std::vector<unsigned char> bytes;
};
std::vector<Seen> seen;
std::vector<int> profiled;
int failures = 0;

void check(bool ok, const char* what, int step) {
  if (ok) return;
  std::printf("FAIL: %s (step %d)\n", what, step);
  ++failures;
}

}  // namespace

extern "C" void onnxc_trace(const onnxc_trace_info* t) {
  check(std::strcmp(t->step.model, "traced") == 0, "the model name is --name's", t->step.step);
  check(seen.empty() || seen.back().step <= t->step.step, "steps come in order", t->step.step);
  std::size_t elements = 1;
  for (int d = 0; d < t->rank; ++d) elements *= static_cast<std::size_t>(t->shape[d]);
  check(t->dtype == 1 && elements * sizeof(float) == t->bytes, "a float value's bytes match its shape", t->step.step);
  const unsigned char* p = static_cast<const unsigned char*>(t->data);
  seen.push_back({t->step.step, t->output, std::vector<unsigned char>(p, p + t->bytes)});
  std::printf("trace step %d '%s' %s -> '%s' rank %d bytes %zu\n", t->step.step, t->step.node, t->step.op, t->value,
              t->rank, t->bytes);
}

extern "C" void onnxc_profile(const onnxc_step_info* step, std::uint64_t ticks) {
  (void)ticks;
  check(profiled.empty() || profiled.back() < step->step, "each step is profiled once, in order", step->step);
  profiled.push_back(step->step);
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  alignas(traced::kArenaAlignment) static unsigned char arena[traced::kArenaBytes];
  static float input[traced::kInputs[0].elements], output[traced::kOutputs[0].elements];
  std::FILE* f = std::fopen(argv[1], "rb");
  if (!f || std::fread(input, 1, sizeof input, f) != sizeof input) return 2;
  std::fclose(f);
  traced::run(input, output, arena);
  const int steps = std::atoi(argv[2]);
  check(!seen.empty() && seen.back().step == steps - 1, "the last step is traced", steps - 1);
  check(!seen.empty() && seen.back().bytes.size() == sizeof output &&
            std::memcmp(seen.back().bytes.data(), output, sizeof output) == 0,
        "the last traced value is the output run() wrote", steps - 1);
  std::printf("traced %zu values, profiled %zu steps\n", seen.size(), profiled.size());
  return failures ? 1 : 0;
}
