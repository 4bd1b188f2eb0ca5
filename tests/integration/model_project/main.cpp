// run_net INPUT_0.f32 ...: runs the model `net` on inputs read from raw files (one per model
// input, in kInputs order, exactly kInputs[i].bytes long) and prints every output, floats
// with 4 decimals, so a test can tell which model it was built from and check its values.
#include <cstdio>
#include <vector>

#include "net.h"

static bool read_file(const char* path, std::vector<unsigned char>* bytes) {
  std::FILE* f = std::fopen(path, "rb");
  if (!f) return false;
  std::size_t want = bytes->size();
  bool ok = std::fread(bytes->data(), 1, want, f) == want && std::fgetc(f) == EOF;
  std::fclose(f);
  return ok;
}

int main(int argc, char** argv) {
  if (argc != 1 + net::kNumInputs) {
    std::fprintf(stderr, "usage: %s INPUT.f32 (one file per input; this model has %d)\n", argv[0], net::kNumInputs);
    return 2;
  }
  std::vector<std::vector<unsigned char>> inputs(net::kNumInputs), outputs(net::kNumOutputs);
  std::vector<const void*> in_ptrs;
  std::vector<void*> out_ptrs;
  for (int i = 0; i < net::kNumInputs; ++i) {
    inputs[i].resize(net::kInputs[i].bytes);
    if (!read_file(argv[1 + i], &inputs[i])) {
      std::fprintf(stderr, "error: %s: expected %zu bytes for input '%s'\n", argv[1 + i], net::kInputs[i].bytes,
                   net::kInputs[i].name);
      return 1;
    }
    in_ptrs.push_back(inputs[i].data());
  }
  for (int o = 0; o < net::kNumOutputs; ++o) {
    outputs[o].resize(net::kOutputs[o].bytes);
    out_ptrs.push_back(outputs[o].data());
  }
  alignas(net::kArenaAlignment) static unsigned char arena[net::kArenaBytes];
  net::run_generic(in_ptrs.data(), out_ptrs.data(), arena);

  for (int o = 0; o < net::kNumOutputs; ++o) {
    std::printf("output '%s' (%zu values):", net::kOutputs[o].name, net::kOutputs[o].elements);
    if (net::kOutputs[o].dtype == 1)
      for (std::size_t k = 0; k < net::kOutputs[o].elements; ++k)
        std::printf(" %.4f", reinterpret_cast<const float*>(outputs[o].data())[k]);
    std::printf("\n");
  }
  return 0;
}
