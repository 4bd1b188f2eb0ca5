#include "backend/target.h"

#include <fmt/format.h>

namespace onnxc {

const std::vector<Target>& targets() {
  static const std::vector<Target> all = {
      {"generic", "portable C++, no SIMD intrinsics (any C++17 compiler, bare metal included)", {}, "", false, false},
      {"native", "SIMD for whatever the compiler's flags enable (validate and bench use -march=native)",
       {"-march=native"}, "", true, false, true},
      {"x86-64-v2", "x86-64 with SSE4.2", {"-march=x86-64-v2"}, "defined(__SSE4_2__)", true, false},
      {"x86-64-v3", "x86-64 with AVX2 and FMA", {"-march=x86-64-v3"}, "defined(__AVX2__) && defined(__FMA__)", true, false},
      {"avx2", "same as x86-64-v3", {"-march=x86-64-v3"}, "defined(__AVX2__) && defined(__FMA__)", true, false},
      {"avx512", "x86-64 with AVX-512 F/BW/DQ/VL (x86-64-v4)", {"-march=x86-64-v4"}, "defined(__AVX512F__)", true, false},
      {"avx512-vnni", "avx512 plus AVX-512 VNNI int8 dot products (Cascade Lake, Ice Lake, Zen 4 and later)",
       {"-march=x86-64-v4", "-mavx512vnni"}, "defined(__AVX512F__) && defined(__AVX512VNNI__)", true, false, true},
      {"neon", "64-bit ARM with NEON (AArch64)", {}, "defined(__ARM_NEON) && defined(__aarch64__)", true, false},
      {"cortex-m4", "Arm Cortex-M4 (portable C++ kernels)", {}, "", false, true, false, true},
      {"cortex-m7", "Arm Cortex-M7 (portable C++ kernels)", {}, "", false, true, false, true},
      {"cortex-m55", "Arm Cortex-M55 (portable C++ kernels)", {}, "", false, true, false, true},
  };
  return all;
}

const Target* find_target(const std::string& name) {
  for (const Target& t : targets())
    if (t.name == name) return &t;
  return nullptr;
}

std::vector<std::string> target_names() {
  std::vector<std::string> names;
  for (const Target& t : targets()) names.push_back(t.name);
  return names;
}

std::string target_preamble(const Target& t) {
  if (!t.simd) return "";
  std::string s = fmt::format("// Target {}: the kernels use their SIMD paths.\n#define ONNXC_SIMD 1\n", t.name);
  if (!t.required_macros.empty())
    s += fmt::format("#if !({})\n#error \"generated for target {}: compile with {}\"\n#endif\n", t.required_macros,
                     t.name, t.cxx_flags.empty() ? std::string("the matching -m flags") : fmt::format("{}", fmt::join(t.cxx_flags, " ")));
  return s;
}

}  // namespace onnxc
