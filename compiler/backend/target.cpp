#include "backend/target.h"

#include <fmt/format.h>

#include <filesystem>
#include <system_error>
#include <utility>

namespace onnxc {

namespace {

// What a target has beyond its flags, named at each row of the table below.
enum Trait : unsigned {
  kPortable = 0,
  kSimd = 1u << 0,            // Target::simd
  kMemoryFirst = 1u << 1,     // Target::memory_first
  kInt8DotProduct = 1u << 2,  // Target::int8_dot_product
  kInt8DualMac = 1u << 3,     // Target::int8_dual_mac
  kShiftedInput = 1u << 4,    // Target::shifted_input_product
  kShiftedInputOnHost = 1u << 5,  // Target::shifted_input_product if this machine has AVX-512 F
  kDepthwiseStride2 = 1u << 6,      // Target::depthwise_stride2_in_place
  kDepthwiseStride2OnHost = 1u << 7,  // Target::depthwise_stride2_in_place if this machine has AVX2 and FMA
  kElfIncbin = 1u << 8,         // Target::elf_incbin
  kElfIncbinOnHost = 1u << 9,   // Target::elf_incbin if onnxc itself is an ELF program built by g++ or clang
  kInt8InPlaceOnHost = 1u << 10,  // Target::int8_vnni_sure / int8_byte_permute_sure if this machine has VNNI / VBMI
  kInt8Helium = 1u << 11,       // Target::int8_helium
  kInt8Pairs = 1u << 12,        // Target::int8_pairs_sure (built with AVX2)
  kRvv = 1u << 13,              // Target::rvv
};

// Code for the host is built by the host's toolchain: ELF with a GNU-compatible assembler when
// onnxc's own was.
constexpr bool kHostIsElf =
#if defined(__ELF__) && (defined(__GNUC__) || defined(__clang__))
    true;
#else
    false;
#endif

bool host_has_avx512f() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  return __builtin_cpu_supports("avx512f");
#else
  return false;
#endif
}

bool host_has_avx512(const char* extension) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  if (std::string(extension) == "vnni") return __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
  return __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("bmi2");
#else
  (void)extension;
  return false;
#endif
}

bool host_has_avx2_fma() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

Target target(std::string name, std::string description, std::vector<std::string> cxx_flags,
              std::string required_macros, unsigned traits) {
  Target t;
  t.name = std::move(name);
  t.description = std::move(description);
  t.cxx_flags = std::move(cxx_flags);
  t.required_macros = std::move(required_macros);
  t.simd = traits & kSimd;
  t.memory_first = traits & kMemoryFirst;
  t.int8_dot_product = traits & kInt8DotProduct;
  t.int8_dual_mac = traits & kInt8DualMac;
  t.int8_helium = traits & kInt8Helium;
  t.rvv = traits & kRvv;
  t.shifted_input_product = (traits & kShiftedInput) || ((traits & kShiftedInputOnHost) && host_has_avx512f());
  t.depthwise_stride2_in_place =
      (traits & kDepthwiseStride2) || ((traits & kDepthwiseStride2OnHost) && host_has_avx2_fma());
  t.depthwise_channel_lanes = t.shifted_input_product || t.depthwise_stride2_in_place;
  t.float_lanes = !t.simd ? 1 : t.shifted_input_product ? 16 : t.depthwise_stride2_in_place ? 8 : 4;
  t.int8_vnni_sure = t.int8_dot_product && (!(traits & kInt8InPlaceOnHost) || host_has_avx512("vnni"));
  t.int8_byte_permute_sure = (traits & kInt8InPlaceOnHost) && host_has_avx512("vbmi");
  t.int8_pairs_sure = !t.int8_vnni_sure && ((traits & kInt8Pairs) || ((traits & kInt8InPlaceOnHost) && host_has_avx2_fma()));
  t.elf_incbin = (traits & kElfIncbin) || ((traits & kElfIncbinOnHost) && kHostIsElf);
  return t;
}

// A target for Linux on another architecture: built by `compiler` and run under `emulator` where onnxc
// runs on a different one.
Target foreign(Target t, std::string arch, std::string compiler, std::string emulator, std::string packages) {
  t.arch = std::move(arch);
  t.cross_compiler = std::move(compiler);
  t.emulator = std::move(emulator);
  t.cross_packages = std::move(packages);
  return t;
}

// A microcontroller target: firmware built by `compiler` (bare metal) and run on an emulated board
// under `emulator` (QEMU's system mode; the board is driver/firmware.cpp's).
Target bare_metal(Target t, std::string compiler, std::string emulator, std::string packages) {
  return foreign(std::move(t), "", std::move(compiler), std::move(emulator), std::move(packages));
}

// clang++ building for riscv64 Linux with Debian's cross toolchain (g++-riscv64-linux-gnu): clang 14
// picks the bare-metal riscv64-unknown-elf GCC when both are installed (its version directory sorts
// higher), so the headers, GCC's directory and the linker are named here. The newest GCC version
// installed is taken; none: the plain flags, and the build's error names the packages.
std::vector<std::string> riscv64_linux_clang_flags() {
  const std::string sysroot = "/usr/riscv64-linux-gnu", gcc_root = "/usr/lib/gcc-cross/riscv64-linux-gnu";
  std::vector<std::string> flags = {"--target=riscv64-linux-gnu", "--sysroot=" + sysroot};
  std::error_code ec;
  std::string version;
  for (const auto& e : std::filesystem::directory_iterator(gcc_root, ec)) {
    const std::string v = e.path().filename().string();
    if (std::filesystem::exists(sysroot + "/include/c++/" + v) && (version.empty() || v > version)) version = v;
  }
  if (version.empty()) return flags;
  const std::string cxx = sysroot + "/include/c++/" + version, gcc = gcc_root + "/" + version;
  flags.insert(flags.end(), {"-nostdinc++", "-isystem", cxx, "-isystem", cxx + "/riscv64-linux-gnu", "-B" + gcc,
                             "-L" + gcc, "--ld-path=/usr/bin/riscv64-linux-gnu-ld",
                             "-Wno-unused-command-line-argument"});  // (the link flags, when compiling only)
  return flags;
}

Target with_emulator_cpu(Target t, std::vector<std::string> cross_flags, std::string cpu) {
  t.cross_flags = std::move(cross_flags);
  t.emulator_cpu = std::move(cpu);
  return t;
}

constexpr const char* kArmFirmwarePackages =
    "gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib qemu-system-arm";
// Debian's riscv64-unknown-elf-gcc has no C++ standard headers: the firmware build takes the
// target-neutral ones of the Arm toolchain's libstdc++ (driver/firmware.cpp, Board::borrow_cxx_headers).
constexpr const char* kRiscvFirmwarePackages =
    "gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf libstdc++-arm-none-eabi-newlib qemu-system-misc";

}  // namespace

std::string host_arch() {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#elif defined(__riscv) && __riscv_xlen == 64
  return "riscv64";
#else
  return "unknown";
#endif
}

bool runs_emulated(const Target& t) { return !t.arch.empty() && t.arch != host_arch(); }

const std::vector<Target>& targets() {
  static const std::vector<Target> all = {
      target("generic", "portable C++, no SIMD intrinsics (any C++17 compiler, bare metal included)", {}, "",
             kElfIncbinOnHost),
      target("native", "SIMD for the machine onnxc runs on: build the code there with -march=native (validate and bench do)",
             {"-march=native"}, "", kSimd | kInt8DotProduct | kShiftedInputOnHost | kDepthwiseStride2OnHost | kElfIncbinOnHost |
                 kInt8InPlaceOnHost),
      target("x86-64-v2", "x86-64 with SSE4.2", {"-march=x86-64-v2"}, "defined(__SSE4_2__)", kSimd | kElfIncbinOnHost),
      target("x86-64-v3", "x86-64 with AVX2 and FMA", {"-march=x86-64-v3"}, "defined(__AVX2__) && defined(__FMA__)",
             kSimd | kDepthwiseStride2 | kElfIncbinOnHost | kInt8Pairs),
      target("avx2", "same as x86-64-v3", {"-march=x86-64-v3"}, "defined(__AVX2__) && defined(__FMA__)",
             kSimd | kDepthwiseStride2 | kElfIncbinOnHost | kInt8Pairs),
      target("avx512", "x86-64 with AVX-512 F/BW/DQ/VL (x86-64-v4)", {"-march=x86-64-v4"}, "defined(__AVX512F__)",
             kSimd | kShiftedInput | kDepthwiseStride2 | kElfIncbinOnHost | kInt8Pairs),
      target("avx512-vnni", "avx512 plus AVX-512 VNNI int8 dot products (Cascade Lake, Ice Lake, Zen 4 and later)",
             {"-march=x86-64-v4", "-mavx512vnni"}, "defined(__AVX512F__) && defined(__AVX512VNNI__)",
             kSimd | kInt8DotProduct | kShiftedInput | kDepthwiseStride2 | kElfIncbinOnHost),
      foreign(target("neon", "64-bit Arm with NEON (AArch64, Armv8-A): xsimd's NEON kernels; validate and bench "
                     "cross-build with aarch64-linux-gnu-g++ and run under qemu-aarch64 on other machines",
                     {}, "defined(__ARM_NEON) && defined(__aarch64__)", kSimd | kElfIncbinOnHost),
              "aarch64", "aarch64-linux-gnu-g++", "qemu-aarch64", "g++-aarch64-linux-gnu qemu-user"),
      foreign(target("neon-dotprod", "64-bit Arm with NEON and the dot-product instructions (Armv8.2-A+dotprod: Cortex-A55, "
                     "A75 and later, Neoverse): neon plus SDOT for int8; run like neon (qemu-aarch64's default cpu has them)",
                     {"-march=armv8.2-a+dotprod"},
                     "defined(__ARM_NEON) && defined(__aarch64__) && defined(__ARM_FEATURE_DOTPROD)", kSimd | kElfIncbinOnHost),
              "aarch64", "aarch64-linux-gnu-g++", "qemu-aarch64", "g++-aarch64-linux-gnu qemu-user"),
      foreign(target("riscv64", "64-bit RISC-V Linux (rv64gc): portable C++ kernels; validate and bench cross-build "
                     "with riscv64-linux-gnu-g++ and run under qemu-riscv64 on other machines",
                     {"-march=rv64gc"}, "defined(__riscv) && __riscv_xlen == 64", kElfIncbinOnHost),
              "riscv64", "riscv64-linux-gnu-g++", "qemu-riscv64", "g++-riscv64-linux-gnu qemu-user"),
      with_emulator_cpu(
          foreign(target("riscv64-rvv", "64-bit RISC-V Linux with the vector extension (rv64gcv, RVV 1.0): riscv64 plus "
                         "vector-length-agnostic RVV kernels (*_rvv.h, clang's RVV intrinsics); validate and bench "
                         "cross-build with clang++ and Debian's riscv64-linux-gnu libraries and run under qemu-riscv64",
                         {"-march=rv64gcv"}, "defined(__riscv) && __riscv_xlen == 64 && defined(__riscv_vector)",
                         kRvv | kElfIncbinOnHost),
                  "riscv64", "clang++", "qemu-riscv64", "clang g++-riscv64-linux-gnu qemu-user"),
          riscv64_linux_clang_flags(), "rv64,v=true,vext_spec=v1.0,vlen=128"),
      bare_metal(target("cortex-m4", "Arm Cortex-M4 with the DSP extension: portable C++ kernels, SMLAD for int8, smallest arena", {}, "", kMemoryFirst | kInt8DualMac | kElfIncbin),
                 "arm-none-eabi-g++", "qemu-system-arm", kArmFirmwarePackages),
      bare_metal(target("cortex-m7", "Arm Cortex-M7: portable C++ kernels, SMLAD for int8, smallest arena", {}, "", kMemoryFirst | kInt8DualMac | kElfIncbin),
                 "arm-none-eabi-g++", "qemu-system-arm", kArmFirmwarePackages),
      bare_metal(target("cortex-m55", "Arm Cortex-M55: portable C++ kernels, Helium (MVE) for int8, smallest arena", {}, "", kMemoryFirst | kInt8DualMac | kInt8Helium | kElfIncbin),
                 "arm-none-eabi-g++", "qemu-system-arm", kArmFirmwarePackages),
      bare_metal(target("riscv32", "32-bit RISC-V microcontroller without FPU (rv32imac: ESP32-C3, GD32VF103): portable C++ "
                        "kernels (int8 with the Cortex-M kernels' int16 weight pairs), float in software, smallest arena", {}, "",
                        kMemoryFirst | kInt8DualMac | kElfIncbin),
                 "riscv64-unknown-elf-gcc", "qemu-system-riscv32", kRiscvFirmwarePackages),
      bare_metal(target("riscv32f", "32-bit RISC-V microcontroller with a single-precision FPU (rv32imafc): portable C++ "
                        "kernels (int8 with the Cortex-M kernels' int16 weight pairs), smallest arena", {}, "",
                        kMemoryFirst | kInt8DualMac | kElfIncbin),
                 "riscv64-unknown-elf-gcc", "qemu-system-riscv32", kRiscvFirmwarePackages),
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
  // RVV's kernels are the portable ones' variants, selected by the compiler's macros: the flags are checked
  // all the same. Other portable code builds anywhere.
  if (!t.simd && !t.rvv) return "";
  std::string s = t.simd ? fmt::format("// Target {}: the kernels use their SIMD paths.\n#define ONNXC_SIMD 1\n", t.name)
                         : fmt::format("// Target {}: the kernels use their RVV paths.\n", t.name);
  if (!t.required_macros.empty())
    s += fmt::format("#if !({})\n#error \"generated for target {}: compile with {}\"\n#endif\n", t.required_macros,
                     t.name, t.cxx_flags.empty() ? std::string("the matching -m flags") : fmt::format("{}", fmt::join(t.cxx_flags, " ")));
  return s;
}

}  // namespace onnxc
