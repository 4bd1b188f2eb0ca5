// onnxc example: classify a hand-drawn digit with a compiled MNIST CNN.
//
// The model (mnist-cnn.onnx, random weights: the corpus in ../shared/models documents how it was
// made) is compiled to C++ at build time by onnxc_add_model() in CMakeLists.txt. This program
// draws a "7" into a 28x28 image, runs the model and prints the scores and the latency.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "mnist.h"

int main() {
  // A 7: a horizontal bar and a diagonal stroke, values in [0, 1] like MNIST's.
  static float image[28 * 28] = {};
  for (int x = 6; x < 22; ++x) image[6 * 28 + x] = image[7 * 28 + x] = 1.0f;
  for (int y = 8; y < 24; ++y) {
    int x = 21 - (y - 8) * 2 / 3;
    image[y * 28 + x] = image[y * 28 + x - 1] = 1.0f;
  }

  alignas(mnist::kArenaAlignment) static unsigned char arena[mnist::kArenaBytes];
  float scores[10];
  auto t0 = std::chrono::steady_clock::now();
  mnist::run(image, scores, arena);
  auto t1 = std::chrono::steady_clock::now();

  int best = static_cast<int>(std::max_element(scores, scores + 10) - scores);
  std::printf("mnist-cnn compiled by onnxc: arena %zu bytes, weights %zu bytes\n", mnist::kArenaBytes,
              mnist::kWeightBytes);
  for (int i = 0; i < 10; ++i) std::printf("  class %d: %9.4f%s\n", i, scores[i], i == best ? "  <- best" : "");
  std::printf("predicted class %d in %.1f us\n", best,
              std::chrono::duration<double, std::micro>(t1 - t0).count());
  return 0;
}
