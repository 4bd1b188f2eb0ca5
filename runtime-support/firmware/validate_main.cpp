// The firmware program of `onnxc validate --target cortex-m*`: runs one generated model once
// on inputs read from host files and writes its outputs to host files, through semihosting.
//
//   command line (QEMU -semihosting-config arg=...):  run IN_0 ... -- OUT_0 ... [--trace DIR]
//
// With -DONNXC_TRACE_VALUES (a model generated with --trace: validate --layers) and --trace DIR,
// every value onnxc_trace receives goes to the host file DIR/STEP_OUTPUT.bin.
//
// Prints "stack_bytes: N" (the stack run() used) and exits 0, or prints why and exits 2.
// Compiled with -DONNXC_MODEL_HEADER='"model.h"' -DONNXC_MODEL_NAMESPACE=model.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include ONNXC_MODEL_HEADER
#include "firmware.h"
#include "semihosting.h"

namespace model = ONNXC_MODEL_NAMESPACE;
namespace sh = onnxc::firmware::semihosting;

namespace {

constexpr std::size_t kBufferAlignment = model::kArenaAlignment > 16 ? model::kArenaAlignment : 16;

constexpr std::size_t padded(std::size_t bytes) {
  return (bytes + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
}

template <std::size_t N>
constexpr std::size_t total_bytes(const onnxc::rt::TensorInfo (&tensors)[N], int count) {
  std::size_t sum = 0;
  for (int i = 0; i < count; ++i) sum += padded(tensors[i].bytes);
  return sum;
}

// Static memory: the arena, and the inputs and outputs one after another.
alignas(model::kArenaAlignment) unsigned char arena[model::kArenaBytes];
alignas(kBufferAlignment) unsigned char input_memory[total_bytes(model::kInputs, model::kNumInputs) + 1];
alignas(kBufferAlignment) unsigned char output_memory[total_bytes(model::kOutputs, model::kNumOutputs) + 1];

char command_line[4096];

// Splits command_line in place at spaces into at most `capacity` words; returns how many.
int split_words(char* text, char** words, int capacity) {
  int count = 0;
  for (char* p = text; *p;) {
    while (*p == ' ') *p++ = '\0';
    if (!*p) break;
    if (count == capacity) return capacity + 1;
    words[count++] = p;
    while (*p && *p != ' ') ++p;
  }
  return count;
}

bool transfer_file(const char* path, void* data, std::size_t bytes, bool reading) {
  std::intptr_t handle = sh::open(path, reading ? sh::kReadBinary : sh::kWriteBinary);
  if (handle < 0) return false;
  std::size_t left = reading ? sh::read(handle, data, bytes) : sh::write(handle, data, bytes);
  sh::close(handle);
  return left == 0;
}

[[noreturn]] void fail(const char* what, const char* detail = "") {
  sh::print("validate_main: ");
  sh::print(what);
  sh::print(detail);
  sh::print("\n");
  sh::exit(2);
}

// Appends the decimal digits of n to text at `at` (within capacity); returns the new end.
std::size_t append_number(char* text, std::size_t at, std::size_t capacity, std::size_t n) {
  char digits[24];
  int count = 0;
  do {
    digits[count++] = static_cast<char>('0' + n % 10);
    n /= 10;
  } while (n);
  while (count > 0 && at + 1 < capacity) text[at++] = digits[--count];
  return at;
}

// "stack_bytes: 1234\n" without printf (`end` after the digits).
void print_count(const char* label, std::size_t n, char end = '\n') {
  char text[24];
  std::size_t at = append_number(text, 0, sizeof text - 1, n);
  text[at++] = end;
  text[at] = '\0';
  sh::print(label);
  sh::print(text);
}

#if defined(ONNXC_STEP_COUNTS)
// `validate --report` builds the model a second time with --profile, ONNXC_PROFILE_COUNTER() the
// board's counter (firmware.h's cycles_elapsed()), and ONNXC_STEP_COUNTS its steps; the counts
// onnxc_profile receives are printed as "step_cycles: N C".
std::uint32_t step_cycles[ONNXC_STEP_COUNTS];
#endif

#if defined(ONNXC_TRACE_VALUES)
const char* trace_dir = nullptr;  // --trace DIR
#endif

}  // namespace

#if defined(ONNXC_TRACE_VALUES)
extern "C" void onnxc_trace(const onnxc_trace_info* info) {
  if (!trace_dir) return;
  char path[512];
  std::size_t at = 0;
  for (const char* p = trace_dir; *p && at + 1 < sizeof path; ++p) path[at++] = *p;
  path[at++] = '/';
  at = append_number(path, at, sizeof path, static_cast<std::size_t>(info->step.step));
  if (at + 1 < sizeof path) path[at++] = '_';
  at = append_number(path, at, sizeof path, static_cast<std::size_t>(info->output));
  for (const char* p = ".bin"; *p && at + 1 < sizeof path; ++p) path[at++] = *p;
  path[at] = '\0';
  if (!transfer_file(path, const_cast<void*>(info->data), info->bytes, false)) fail("cannot write ", path);
}
#endif

#if defined(ONNXC_STEP_COUNTS)
extern "C" void onnxc_profile(const onnxc_step_info* step, std::uint64_t ticks) {
  if (step->step >= 0 && step->step < ONNXC_STEP_COUNTS) step_cycles[step->step] += static_cast<std::uint32_t>(ticks);
}
#endif

int main() {
  constexpr int kFileWords = 2 + model::kNumInputs + model::kNumOutputs;
  constexpr int kMaxWords = kFileWords + 2;  // and --trace DIR
  char* words[kMaxWords];
  if (!sh::command_line(command_line, sizeof command_line)) fail("the command line is too long");
  int count = split_words(command_line, words, kMaxWords);
  const bool traced = count == kMaxWords && std::strcmp(words[kFileWords], "--trace") == 0;
  if ((count != kFileWords && !traced) || std::strcmp(words[0], "run") != 0 ||
      std::strcmp(words[1 + model::kNumInputs], "--") != 0)
    fail("usage: run IN... -- OUT... [--trace DIR] (one file per model input and output)");
#if defined(ONNXC_TRACE_VALUES)
  if (traced) trace_dir = words[kFileWords + 1];
#else
  if (traced) fail("--trace needs a model generated with --trace, built with -DONNXC_TRACE_VALUES");
#endif

  const void* inputs[model::kNumInputs];
  void* outputs[model::kNumOutputs];
  unsigned char* next = input_memory;
  for (int i = 0; i < model::kNumInputs; ++i) {
    if (!transfer_file(words[1 + i], next, model::kInputs[i].bytes, true)) fail("cannot read ", words[1 + i]);
    inputs[i] = next;
    next += padded(model::kInputs[i].bytes);
  }
  next = output_memory;
  for (int i = 0; i < model::kNumOutputs; ++i) {
    outputs[i] = next;
    next += padded(model::kOutputs[i].bytes);
  }

  onnxc::firmware::paint_stack();
  onnxc::firmware::start_cycle_count();
  model::run_generic(inputs, outputs, arena);
  const long cycles = onnxc::firmware::cycles_elapsed();
  print_count("stack_bytes: ", onnxc::firmware::stack_bytes_used());
  if (cycles >= 0) print_count("run_cycles: ", static_cast<std::size_t>(cycles));
#if defined(ONNXC_STEP_COUNTS)
  for (int i = 0; i < ONNXC_STEP_COUNTS; ++i)
    if (step_cycles[i]) {
      print_count("step_cycles: ", static_cast<std::size_t>(i), ' ');
      print_count("", step_cycles[i]);
    }
#endif

  for (int i = 0; i < model::kNumOutputs; ++i)
    if (!transfer_file(words[2 + model::kNumInputs + i], outputs[i], model::kOutputs[i].bytes, false))
      fail("cannot write ", words[2 + model::kNumInputs + i]);
  return 0;
}
