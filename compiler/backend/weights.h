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

#include <cstddef>
#include <string>
#include <vector>

#include "passes/program.h"

namespace onnxc {

enum class WeightsFormat {
  Array,   // const arrays with initialisers in the generated source
  Incbin,  // OUT.weights.bin + .incbin, see above
  Auto,    // the default: the driver picks one of the two (choose_weights_format); never reaches emit_code
};

// "array" / "incbin" / "auto" -> the format; false for anything else.
bool parse_weights_format(const std::string& text, WeightsFormat* format);

// Auto takes incbin from this many bytes of weights on. Below it the arrays compile in about a
// second anyway, and a single self-contained source is easier to drop into a project.
inline constexpr std::size_t kAutoIncbinBytes = std::size_t(1) << 20;

// The format `requested` stands for: Auto is Incbin when the target's code is assembled into ELF
// objects by a GNU-compatible assembler (Target::elf_incbin), the weights reach kAutoIncbinBytes
// and none is a string tensor (those have no bytes to include), Array otherwise. Array and Incbin
// stand for themselves.
WeightsFormat choose_weights_format(WeightsFormat requested, const Program& prog, const std::string& target);

// For the summary lines: "array", "incbin", "incbin (auto: 1 MiB or more, ELF target)".
std::string weights_format_description(WeightsFormat requested, WeightsFormat chosen);

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
