// Runs each model compiled with --weights-format array and with incbin on the same inputs and
// requires bit-identical outputs and the same constants in the headers.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "dtypes_array.h"
#include "dtypes_incbin.h"
#include "kws_array.h"
#include "kws_incbin.h"

namespace {

// What the generated header of one model says, gathered so two of them can be compared.
struct Compiled {
  const char* name;
  int num_inputs, num_outputs;
  const onnxc::rt::TensorInfo* inputs;
  const onnxc::rt::TensorInfo* outputs;
  std::size_t arena_bytes, arena_alignment, weight_bytes;
  void (*run_generic)(const void* const*, void* const*, void*);
};

#define COMPILED(ns)                                                                                      \
  Compiled {                                                                                              \
    #ns, ns::kNumInputs, ns::kNumOutputs, ns::kInputs, ns::kOutputs, ns::kArenaBytes, ns::kArenaAlignment, \
        ns::kWeightBytes, ns::run_generic                                                                 \
  }

using Buffers = std::vector<std::vector<unsigned char>>;

// Deterministic inputs: float inputs get a smooth signal in [-1, 1], others zeros.
Buffers make_inputs(const Compiled& m) {
  Buffers in(m.num_inputs);
  for (int i = 0; i < m.num_inputs; ++i) {
    in[i].resize(m.inputs[i].bytes);
    if (m.inputs[i].dtype != 1) continue;
    for (std::size_t k = 0; k < m.inputs[i].elements; ++k) {
      float v = std::sin(0.37f * static_cast<float>(k) + static_cast<float>(i));
      std::memcpy(in[i].data() + 4 * k, &v, 4);
    }
  }
  return in;
}

Buffers run(const Compiled& m, const Buffers& in) {
  Buffers out(m.num_outputs);
  std::vector<const void*> in_ptrs;
  std::vector<void*> out_ptrs;
  for (const auto& b : in) in_ptrs.push_back(b.data());
  for (int o = 0; o < m.num_outputs; ++o) {
    out[o].assign(m.outputs[o].bytes, 0xAB);  // a pattern, so an unwritten byte would show
    out_ptrs.push_back(out[o].data());
  }
  std::unique_ptr<unsigned char[]> arena(new (std::align_val_t(m.arena_alignment)) unsigned char[m.arena_bytes]);
  m.run_generic(in_ptrs.data(), out_ptrs.data(), arena.get());
  return out;
}

bool same(const Compiled& a, const Compiled& b) {
  if (a.weight_bytes != b.weight_bytes || a.arena_bytes != b.arena_bytes || a.num_outputs != b.num_outputs) {
    std::printf("FAIL %s vs %s: headers differ (weights %zu/%zu, arena %zu/%zu)\n", a.name, b.name, a.weight_bytes,
                b.weight_bytes, a.arena_bytes, b.arena_bytes);
    return false;
  }
  Buffers in = make_inputs(a);
  Buffers out_a = run(a, in), out_b = run(b, in);
  std::size_t bytes = 0;
  for (int o = 0; o < a.num_outputs; ++o) {
    if (out_a[o] != out_b[o]) {
      std::printf("FAIL %s vs %s: output '%s' differs\n", a.name, b.name, a.outputs[o].name);
      return false;
    }
    bytes += out_a[o].size();
  }
  std::printf("ok %s vs %s: %d outputs, %zu bytes identical, %zu bytes of weights\n", a.name, b.name, a.num_outputs,
              bytes, a.weight_bytes);
  return true;
}

}  // namespace

int main() {
  bool ok = same(COMPILED(kws_array), COMPILED(kws_incbin));
  ok = same(COMPILED(dtypes_array), COMPILED(dtypes_incbin)) && ok;
  return ok ? 0 : 1;
}
