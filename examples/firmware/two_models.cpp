// Two compiled models in one firmware image (docs/debugging.md, "Several models in one program"):
// the keyword spotter (NAME kws) and the digit classifier (NAME mnist), run one after the other in
// one static arena of the larger kArenaBytes, on their test samples built into the image. Prints
// "two models, one arena of N bytes: kws class 9, mnist class 7".
#include <cstddef>

#include "kws.h"
#include "line.h"
#include "mnist.h"
#include "semihosting.h"

// The samples (raw little-endian floats), placed in read-only data by the assembler.
__asm__(".pushsection .rodata.two_models_samples,\"a\",%progbits\n"
        ".balign 16\n"
        "kws_sample:\n"
        ".incbin \"" KWS_SAMPLE_FILE "\"\n"
        ".balign 16\n"
        "mnist_sample:\n"
        ".incbin \"" MNIST_SAMPLE_FILE "\"\n"
        ".popsection\n");
extern "C" const float kws_sample[kws::kInputs[0].elements];
extern "C" const float mnist_sample[mnist::kInputs[0].elements];

namespace {

constexpr std::size_t larger(std::size_t a, std::size_t b) { return a > b ? a : b; }

// Working memory of whichever model runs: an arena is free again when run() returns.
alignas(larger(kws::kArenaAlignment, mnist::kArenaAlignment)) unsigned char arena[larger(kws::kArenaBytes,
                                                                                        mnist::kArenaBytes)];
float kws_scores[kws::kOutputs[0].elements];
float mnist_scores[mnist::kOutputs[0].elements];

unsigned best_class(const float* scores, std::size_t n) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < n; ++i)
    if (scores[i] > scores[best]) best = i;
  return static_cast<unsigned>(best);
}

}  // namespace

int main() {
  kws::run(kws_sample, kws_scores, arena);
  mnist::run(mnist_sample, mnist_scores, arena);
  char line[96];
  char* out = line;
  append_text(&out, "two models, one arena of ");
  append_number(&out, static_cast<unsigned>(sizeof arena));
  append_text(&out, " bytes: kws class ");
  append_number(&out, best_class(kws_scores, kws::kOutputs[0].elements));
  append_text(&out, ", mnist class ");
  append_number(&out, best_class(mnist_scores, mnist::kOutputs[0].elements));
  append_text(&out, "\n");
  *out = '\0';
  onnxc::firmware::semihosting::print(line);
  return 0;
}
