#include "backend/weights.h"

#include <algorithm>

#include <fmt/format.h>

#include "backend/target.h"
#include "support/align.h"
#include "support/diagnostics.h"

namespace onnxc {
namespace {

// The preamble of the weights section: how the assembler finds the file, and the one
// assumption the raw bytes make about the target.
constexpr const char* kIncbinPreamble = R"(// The weights are the bytes of {file} ({bytes} bytes), which the assembler copies into
// read-only data with .incbin. It opens ONNXC_WEIGHTS_FILE, a string literal: by default the
// file name, found from the compiler's working directory; to build from elsewhere, define it
// as the file's path (-DONNXC_WEIGHTS_FILE='"path/{file}"'); onnxc_add_model() does.
#ifndef ONNXC_WEIGHTS_FILE
#define ONNXC_WEIGHTS_FILE "{file}"
#endif
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "{file} holds little-endian data: for a big-endian target, compile with --weights-format array"
#endif
// One weight: `bytes` bytes at `offset` in the file, as the hidden global symbol `symbol`,
// aligned to `align`, in {section_comment}.
#define ONNXC_INCBIN_WEIGHT(symbol, align, offset, bytes)                        \
  __asm__(".pushsection {section},\"a\",%progbits\n"                   \
          ".balign " #align "\n"                                                 \
          ".globl " #symbol "\n"                                                 \
          ".hidden " #symbol "\n"                                                \
          ".type " #symbol ", %object\n"                                         \
          ".size " #symbol ", " #bytes "\n" #symbol ":\n"                        \
          ".incbin \"" ONNXC_WEIGHTS_FILE "\", " #offset ", " #bytes "\n"        \
          ".popsection\n")

)";

// A weight's bytes as the target reads them: the IR's bytes (host order, little-endian on the
// hosts onnxc runs on; the preamble refuses big-endian targets), bool as 0/1 like a C++ bool.
std::string weight_bytes(const Value& v) {
  const Tensor& t = *v.constant;
  if (t.dtype == DType::String)
    throw CompileError(ErrorKind::Unsupported, fmt::format("constant '{}'", v.name),
                       "string tensors cannot be written to a weights file", "use --weights-format array");
  std::string bytes(t.bytes.begin(), t.bytes.end());
  if (t.dtype == DType::Bool)
    std::transform(bytes.begin(), bytes.end(), bytes.begin(), [](char b) { return b ? '\1' : '\0'; });
  return bytes;
}

// C++ for one weight: the assembler definition and its declaration under the name the
// generated code uses. An empty tensor has nothing to include: it becomes a one-element array,
// as in the array format.
std::string declare_weight(const Value& v, const std::string& cname, const std::string& symbol, std::size_t alignment,
                           std::size_t offset, std::size_t bytes) {
  const Tensor& t = *v.constant;
  std::string ctype = dtype_ctype(t.dtype);
  std::string s = fmt::format("// '{}': {} {}\n", v.name, dtype_name(t.dtype), shape_str(t.shape));
  if (bytes == 0) return s + fmt::format("alignas({}) const {} {}[1] = {{}};\n", alignment, ctype, cname);
  int64_t n = t.numel();
  s += fmt::format("ONNXC_INCBIN_WEIGHT({}, {}, {}, {});\n", symbol, alignment, offset, bytes);
  s += fmt::format("extern \"C\" alignas({}) __attribute__((visibility(\"hidden\"))) const {} {}[{}];\n", alignment,
                   ctype, symbol, n);
  s += fmt::format("constexpr const {} (&{})[{}] = {};\n", ctype, cname, n, symbol);
  return s;
}

}  // namespace

bool parse_weights_format(const std::string& text, WeightsFormat* format) {
  if (text == "array") *format = WeightsFormat::Array;
  else if (text == "incbin") *format = WeightsFormat::Incbin;
  else if (text == "auto") *format = WeightsFormat::Auto;
  else return false;
  return true;
}

WeightsFormat choose_weights_format(WeightsFormat requested, const Program& prog, const std::string& target) {
  if (requested != WeightsFormat::Auto) return requested;
  const Target* t = find_target(target);
  return t && t->elf_incbin && prog.weights_bytes >= kAutoIncbinBytes ? WeightsFormat::Incbin : WeightsFormat::Array;
}

std::string weights_format_description(WeightsFormat requested, WeightsFormat chosen) {
  const char* name = chosen == WeightsFormat::Incbin ? "incbin" : "array";
  if (requested != WeightsFormat::Auto) return name;
  return fmt::format("{} (auto: incbin from {} KiB on ELF targets)", name, kAutoIncbinBytes / 1024);
}

IncbinWeights render_incbin_weights(const Program& prog, const std::vector<const Value*>& weights,
                                    const std::string& symbol_prefix, const std::string& file_name,
                                    const std::string& section) {
  IncbinWeights out;
  std::string decls;
  for (const Value* w : weights) {
    std::string bytes = weight_bytes(*w);
    out.bytes.resize(align_up(out.bytes.size(), prog.alignment), '\0');
    const std::string& cname = prog.tensors.at(w).weight_cname;
    decls += declare_weight(*w, cname, symbol_prefix + "_" + cname, prog.alignment, out.bytes.size(), bytes.size());
    decls += "\n";
    out.bytes += bytes;
  }
  // The default section name is spliced from the macro's argument: .rodata." #symbol "
  std::string section_comment = section.empty() ? "a section of its own (so --gc-sections can drop unused ones)"
                                                : fmt::format("section {} (onnxc --weights-section)", section);
  out.declarations = fmt::format(kIncbinPreamble, fmt::arg("file", file_name), fmt::arg("bytes", out.bytes.size()),
                                 fmt::arg("section", section.empty() ? ".rodata.\" #symbol \"" : section),
                                 fmt::arg("section_comment", section_comment)) +
                     decls + "#undef ONNXC_INCBIN_WEIGHT\n";
  return out;
}

}  // namespace onnxc
