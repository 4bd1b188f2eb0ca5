// onnxc example: a program outside the onnxc tree that links a model compiled by an installed
// onnxc (see CMakeLists.txt). It reads a 28x28 image (raw float32, default: input.f32 beside
// this source, an input of the MNIST CNN's test data), runs the model and prints the scores
// and the predicted digit.
#include <algorithm>
#include <cstdio>

#include "digits.h"

#ifndef CONSUMER_DATA_DIR
#define CONSUMER_DATA_DIR "."
#endif

int main(int argc, char** argv) {
  static_assert(digits::kInputs[0].elements == 28 * 28 && digits::kOutputs[0].elements == 10, "MNIST shapes");
  const char* path = argc > 1 ? argv[1] : CONSUMER_DATA_DIR "/input.f32";
  static float image[28 * 28];
  std::FILE* f = std::fopen(path, "rb");
  bool read = f && std::fread(image, sizeof image, 1, f) == 1;
  if (f) std::fclose(f);
  if (!read) {
    std::fprintf(stderr, "error: %s: cannot read %zu bytes of float32\n", path, sizeof image);
    return 1;
  }

  alignas(digits::kArenaAlignment) static unsigned char arena[digits::kArenaBytes];
  float scores[10];
  digits::run(image, scores, arena);

  std::printf("scores:");
  for (float s : scores) std::printf(" %.4f", s);
  int digit = static_cast<int>(std::max_element(scores, scores + 10) - scores);
  std::printf("\npredicted digit %d (score %.4f)\n", digit, scores[digit]);
  return 0;
}
