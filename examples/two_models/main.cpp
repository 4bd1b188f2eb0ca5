// onnxc example: two compiled models in one program.
//
// kws-dscnn (keyword spotting) and mnist-cnn (digits) are compiled by onnxc_add_model() into
// wake_word.h/.cpp with NAME kws and digits.h/.cpp with NAME mnist: each generated file defines
// its run() in its own namespace (and kws_run, mnist_run for C), so the two link together and
// share the header-only kernels.
//
// Memory: a model's arena is working memory for one run() at a time, free again when run()
// returns. Models that run one after the other can therefore share one arena of the larger
// kArenaBytes (and the larger alignment). Models that run at the same time (two threads, or an
// interrupt that runs one while the other is running) need an arena each.
//
// This program runs both ways on the models' test inputs (*_input.f32, raw float32) and checks
// the outputs against the reference outputs of their test data (*_expected.f32, ONNX Runtime's).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <thread>

#include "wake_word.h"
#include "digits.h"

namespace {

constexpr std::size_t max(std::size_t a, std::size_t b) { return a > b ? a : b; }

// One arena for models that never run at the same time.
alignas(max(kws::kArenaAlignment, mnist::kArenaAlignment)) unsigned char shared_arena[max(kws::kArenaBytes,
                                                                                       mnist::kArenaBytes)];
// An arena each for models that do.
alignas(kws::kArenaAlignment) unsigned char kws_arena[kws::kArenaBytes];
alignas(mnist::kArenaAlignment) unsigned char mnist_arena[mnist::kArenaBytes];

float kws_input[kws::kInputs[0].elements], kws_expected[kws::kOutputs[0].elements];
float mnist_input[mnist::kInputs[0].elements], mnist_expected[mnist::kOutputs[0].elements];

bool read(const char* name, float* data, std::size_t count) {
  const std::string path = std::string(TWO_MODELS_DATA_DIR) + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  const bool ok = f && std::fread(data, sizeof(float), count, f) == count;
  if (f) std::fclose(f);
  if (!ok) std::fprintf(stderr, "cannot read %zu floats from %s\n", count, path.c_str());
  return ok;
}

// Prints the best class and whether every score is within 1e-5 + 1e-3 |expected| of the reference.
bool report(const char* how, const char* model, const float* scores, const float* expected, std::size_t n) {
  bool ok = true;
  for (std::size_t i = 0; i < n; ++i) ok = ok && std::fabs(scores[i] - expected[i]) <= 1e-5f + 1e-3f * std::fabs(expected[i]);
  const std::size_t best = static_cast<std::size_t>(std::max_element(scores, scores + n) - scores);
  std::printf("%s: %s class %zu (%.4f): %s\n", how, model, best, static_cast<double>(scores[best]),
              ok ? "matches the reference" : "DIFFERS from the reference");
  return ok;
}

}  // namespace

int main() {
  if (!read("kws_input.f32", kws_input, kws::kInputs[0].elements) ||
      !read("kws_expected.f32", kws_expected, kws::kOutputs[0].elements) ||
      !read("mnist_input.f32", mnist_input, mnist::kInputs[0].elements) ||
      !read("mnist_expected.f32", mnist_expected, mnist::kOutputs[0].elements))
    return 2;
  std::printf("arenas: kws %zu bytes, mnist %zu bytes; shared %zu bytes, separate %zu bytes\n", kws::kArenaBytes,
              mnist::kArenaBytes, sizeof shared_arena, sizeof kws_arena + sizeof mnist_arena);
  bool ok = true;

  // One after the other, in one arena.
  float kws_scores[kws::kOutputs[0].elements], mnist_scores[mnist::kOutputs[0].elements];
  kws::run(kws_input, kws_scores, shared_arena);
  mnist::run(mnist_input, mnist_scores, shared_arena);
  ok &= report("one arena", "kws", kws_scores, kws_expected, kws::kOutputs[0].elements);
  ok &= report("one arena", "mnist", mnist_scores, mnist_expected, mnist::kOutputs[0].elements);

  // At the same time, an arena each (the C API this time: kws_run, mnist_run).
  float kws_concurrent[kws::kOutputs[0].elements], mnist_concurrent[mnist::kOutputs[0].elements];
  std::thread other([&] {
    for (int i = 0; i < 50; ++i) mnist_run(mnist_input, mnist_concurrent, mnist_arena);
  });
  for (int i = 0; i < 50; ++i) kws_run(kws_input, kws_concurrent, kws_arena);
  other.join();
  ok &= report("two threads", "kws", kws_concurrent, kws_expected, kws::kOutputs[0].elements);
  ok &= report("two threads", "mnist", mnist_concurrent, mnist_expected, mnist::kOutputs[0].elements);
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
