// onnxc example: classify an input with a compiled model; print the top 5 classes with their
// probabilities, and the latency.
//
//   classify [INPUT.f32] [--labels FILE] [--runs N]
//
// INPUT.f32 is the model's input as raw little-endian float32 values (default: sample.f32 beside
// this source, a keyword-spotting input of 49 MFCC frames x 10 coefficients). The model,
// kws-dscnn.onnx (a depthwise-separable CNN with 12 classes; its weights are random, so the
// prediction means nothing), is compiled to C++ at build time by onnxc_add_model() in
// CMakeLists.txt. Nothing here is specific to it but the default file names: the sizes come
// from the generated header (kws::kInputs, kws::kOutputs).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <numeric>
#include <string>
#include <vector>

#include "kws.h"

#ifndef CLASSIFY_DATA_DIR
#define CLASSIFY_DATA_DIR "."
#endif

namespace {

constexpr int kFloat = 1;  // ONNX TensorProto.DataType of float32
static_assert(kws::kNumInputs == 1 && kws::kNumOutputs == 1, "a classifier: one input, one output");
static_assert(kws::kInputs[0].dtype == kFloat && kws::kOutputs[0].dtype == kFloat, "float32 in and out");

struct Arguments {
  std::string input = CLASSIFY_DATA_DIR "/sample.f32";
  std::string labels = CLASSIFY_DATA_DIR "/labels.txt";
  int runs = 100;
};

bool parse_arguments(int argc, char** argv, Arguments* args) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--labels" && i + 1 < argc) args->labels = argv[++i];
    else if (a == "--runs" && i + 1 < argc) args->runs = std::max(1, std::atoi(argv[++i]));
    else if (!a.empty() && a[0] != '-') args->input = a;
    else return false;
  }
  return true;
}

bool read_input(const std::string& path, std::vector<float>* values) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (!f.is_open() || bytes.size() != kws::kInputs[0].bytes) {
    std::fprintf(stderr, "error: %s: expected %zu bytes (%zu float32 values), got %zu\n", path.c_str(),
                 kws::kInputs[0].bytes, kws::kInputs[0].elements, bytes.size());
    return false;
  }
  values->resize(kws::kInputs[0].elements);
  std::copy(bytes.begin(), bytes.end(), reinterpret_cast<char*>(values->data()));
  return true;
}

// One label per line; classes without one are shown by number.
std::vector<std::string> read_labels(const std::string& path) {
  std::vector<std::string> labels;
  std::ifstream f(path);
  for (std::string line; std::getline(f, line);) labels.push_back(line);
  return labels;
}

// The scores as probabilities: unchanged when the model ends in a softmax already (they are in
// [0, 1] and sum to 1), otherwise passed through one.
std::vector<float> probabilities(std::vector<float> scores) {
  float sum = std::accumulate(scores.begin(), scores.end(), 0.0f);
  bool distribution = std::all_of(scores.begin(), scores.end(), [](float s) { return s >= 0 && s <= 1; }) &&
                      std::fabs(sum - 1.0f) < 1e-3f;
  if (distribution) return scores;
  float max = *std::max_element(scores.begin(), scores.end());
  float total = 0;
  for (float& s : scores) total += (s = std::exp(s - max));
  for (float& s : scores) s /= total;
  return scores;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  Arguments args;
  if (!parse_arguments(argc, argv, &args)) {
    std::fprintf(stderr, "usage: %s [INPUT.f32] [--labels FILE] [--runs N]\n", argv[0]);
    return 2;
  }
  std::vector<float> input;
  if (!read_input(args.input, &input)) return 1;
  std::vector<std::string> labels = read_labels(args.labels);

  // The model's working memory: one static buffer of a size known at compile time.
  alignas(kws::kArenaAlignment) static unsigned char arena[kws::kArenaBytes];
  std::vector<float> scores(kws::kOutputs[0].elements);
  std::vector<double> micros;
  for (int r = 0; r < args.runs; ++r) {
    auto start = std::chrono::steady_clock::now();
    kws::run(input.data(), scores.data(), arena);
    micros.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }

  std::vector<float> p = probabilities(scores);
  std::vector<int> order(p.size());
  std::iota(order.begin(), order.end(), 0);
  std::size_t top = std::min<std::size_t>(5, order.size());
  std::partial_sort(order.begin(), order.begin() + top, order.end(), [&](int a, int b) { return p[a] > p[b]; });

  std::printf("%s: %zu classes, arena %zu bytes, weights %zu bytes\n", args.input.c_str(), p.size(), kws::kArenaBytes,
              kws::kWeightBytes);
  for (std::size_t i = 0; i < top; ++i) {
    int c = order[i];
    std::string label = c < static_cast<int>(labels.size()) ? labels[c] : "class " + std::to_string(c);
    std::printf("  %zu. %-10s (class %2d)  %6.2f%%\n", i + 1, label.c_str(), c, 100.0 * p[c]);
  }
  std::printf("latency: median %.1f us, best %.1f us over %d runs\n", median(micros),
              *std::min_element(micros.begin(), micros.end()), args.runs);
  return 0;
}
