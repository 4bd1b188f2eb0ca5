// Keyword spotting firmware: the compiled DS-CNN (examples/classify/kws-dscnn.onnx) on one
// recorded sample of MFCC features, on a bare-metal Cortex-M or RISC-V 32 core. No heap, no stdio, no OS: the
// arena and the output are static, the sample is part of the image, and the one line of
// output goes through semihosting (runtime-support/firmware/semihosting.h).
#include <cstddef>
#include <cstdint>

#include "firmware.h"
#include "kws.h"
#include "line.h"
#include "semihosting.h"

namespace sh = onnxc::firmware::semihosting;

// The sample (49 x 10 float features, little-endian), placed in read-only data by the assembler.
__asm__(".pushsection .rodata.kws_sample,\"a\",%progbits\n"
        ".balign 16\n"
        "kws_sample:\n"
        ".incbin \"" SAMPLE_FILE "\"\n"
        ".popsection\n");
extern "C" const float kws_sample[kws::kInputs[0].elements];

namespace {

constexpr const char* kLabels[] = {"down", "go",  "left",  "no",      "off",     "on",
                                   "right", "stop", "up", "yes", "silence", "unknown"};
constexpr std::size_t kClasses = sizeof kLabels / sizeof kLabels[0];
static_assert(kws::kOutputs[0].elements == kClasses, "one label per class");

alignas(kws::kArenaAlignment) unsigned char arena[kws::kArenaBytes];
float scores[kClasses];

std::size_t best_class() {
  std::size_t best = 0;
  for (std::size_t i = 1; i < kClasses; ++i)
    if (scores[i] > scores[best]) best = i;
  return best;
}

}  // namespace

int main() {
  onnxc::firmware::paint_stack();
  kws::run(kws_sample, scores, arena);
  std::size_t stack = onnxc::firmware::stack_bytes_used();

  // "yes (class 9) 9.33%, stack 388 bytes"
  std::size_t best = best_class();
  unsigned hundredths = static_cast<unsigned>(scores[best] * 10000.0f + 0.5f);
  char line[96];
  char* out = line;
  append_text(&out, kLabels[best]);
  append_text(&out, " (class ");
  append_number(&out, static_cast<unsigned>(best));
  append_text(&out, ") ");
  append_number(&out, hundredths / 100);
  append_text(&out, hundredths % 100 < 10 ? ".0" : ".");
  append_number(&out, hundredths % 100);
  append_text(&out, "%, stack ");
  append_number(&out, static_cast<unsigned>(stack));
  append_text(&out, " bytes\n");
  *out = '\0';
  sh::print(line);
  return 0;
}
