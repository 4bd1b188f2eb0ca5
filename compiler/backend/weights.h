// Weights outside the C++ text (onnxc --weights-format incbin).
//
// A 14 MB model written as C++ array initialisers is ~50 MB of text that the C++ compiler
// parses number by number: minutes and gigabytes at -O2. Instead, the weights go into a binary
// file beside the generated source, OUT.weights.bin, and the generated source pulls each weight
// into read-only data with the assembler's `.incbin` (GNU as, clang's integrated assembler and
// arm-none-eabi-as; ELF object files). Each weight is still a typed, aligned, const array under
// its usual name, so the rest of the generated code does not change and the bytes are exactly
// those the array initialisers would have produced.
#pragma once

#include <string>
#include <vector>

#include "passes/program.h"

namespace onnxc {

enum class WeightsFormat {
  Array,   // const arrays with initialisers in the generated source (the default)
  Incbin,  // OUT.weights.bin + .incbin, see above
};

// "array" / "incbin" -> the format; false for anything else.
bool parse_weights_format(const std::string& text, WeightsFormat* format);

// The suffix that turns OUT (the source's path without .cpp) into the weights file's path.
inline constexpr const char* kWeightsFileSuffix = ".weights.bin";

struct IncbinWeights {
  std::string declarations;  // C++ for the generated source, in place of the array definitions
  std::string bytes;         // the content of the weights file
};

// Lays out every weight of prog in one file (each at an offset aligned to prog.alignment) and
// declares it in C++. symbol_prefix makes the assembler symbols unique in a program (the C
// prefix of the generated functions); file_name is what the source looks for by default.
// `weights`: the constants the generated code reads (a subset of prog.weights). section: the
// linker section for all of them (onnxc --weights-section); empty: one .rodata.<symbol> each.
IncbinWeights render_incbin_weights(const Program& prog, const std::vector<const Value*>& weights,
                                    const std::string& symbol_prefix, const std::string& file_name,
                                    const std::string& section = {});

}  // namespace onnxc
