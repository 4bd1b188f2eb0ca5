// The instruction sets generated code can be compiled for (onnxc --target).
//
// A target decides two things, both fixed when the generated code is compiled (there is no
// run-time dispatch): whether the runtime-support kernels use their SIMD paths (xsimd, which
// picks SSE/AVX2/AVX-512/NEON from the compiler's own -m flags), and which compiler flags the
// code needs for that. The generated source checks those flags with #error, so code built for
// avx2 without -mavx2 fails to compile instead of silently running the portable kernels.
// "generic" (the default) is plain C++ with no xsimd include: it builds for any C++17 compiler,
// bare-metal ones included.
#pragma once

#include <string>
#include <vector>

namespace onnxc {

struct Target {
  std::string name;
  std::string description;
  // Flags for the C++ compiler (validate and bench add them), e.g. "-march=x86-64-v3".
  std::vector<std::string> cxx_flags;
  // A preprocessor condition that holds when the compiler was given those flags; empty: none.
  std::string required_macros;
  // The kernels take their xsimd paths (ONNXC_SIMD is defined in the generated source).
  bool simd = false;
  // RAM is the scarce resource (microcontrollers): where a faster kernel needs scratch memory
  // that would raise the arena, the memory planner takes the slower kernel that needs none.
  bool memory_first = false;
  // The generated code may be compiled with AVX-512 VNNI (the flags are the user's machine's): integer
  // convolutions also carry their weights in rt::qconv_vnni's layout and take that kernel when the
  // compiler of the generated code enables VNNI (ONNXC_QCONV_VNNI), the im2col product otherwise.
  bool int8_dot_product = false;
  // The integer convolutions take the kernels of dual 16-bit multiply-accumulate: int16 weight
  // pairs (rt::qconv_pointwise, rt::qconv_gemm_pairs), rt::depthwise_3x3, and im2col blocks for the
  // integer matrix product's tiles where a memory-first arena has room, instead of the plane
  // kernel. Cores with the Arm DSP extension compute them with SMLAD (ONNXC_QUANT_DUAL_MAC); the
  // RISC-V 32 cores through the same kernels' portable paths (dual_mac in C++: two multiplies
  // and two adds), whose register tiles still beat the plane kernel's accumulator plane in memory.
  bool int8_dual_mac = false;
  // RISC-V's vector extension (RVV 1.0): no xsimd (Debian's has no RVV backend), the portable kernels
  // with vector-length-agnostic variants (*_rvv.h, selected by the compiler's __riscv_vector) for the
  // float products, depthwise convolutions and elementwise steps. The generated source checks the flag.
  bool rvv = false;
  // The core has Helium (MVE, the Cortex-M55): the 1x1 integer convolutions that int8_dual_mac
  // gives rt::qconv_pointwise take rt::qconv_pointwise_s8 instead, their weights as int8 bytes
  // in its tiles (VMLADAVA.S8, sixteen products per instruction) rather than SMLAD's pairs.
  bool int8_helium = false;
  // The generated code is sure to be built with AVX-512 VNNI (avx512-vnni; native on a machine that
  // has it): integer convolutions that rt::qconv_vnni computes get no scratch (pack-dot-product-
  // weights); built without VNNI after all, they take rt::conv_integer_direct (no scratch, slow).
  bool int8_vnni_sure = false;
  // The same for AVX-512 VBMI (native on a machine that has it): depthwise integer convolutions
  // that the byte-permute kernel computes (rt::depthwise_integer_any) get no scratch.
  bool int8_byte_permute_sure = false;
  // The generated code is sure to be built with AVX2 but not sure of VNNI (avx2, x86-64-v3, avx512;
  // native on a machine without VNNI): integer convolutions that rt::qconv_avx2 computes take it,
  // with no scratch (pack-dot-product-weights); built without AVX2 after all,
  // rt::conv_integer_direct.
  bool int8_pairs_sure = false;
  // The float kernels have AVX-512's masked loads: stride-1 'same' convolutions can read their
  // input in place (rt::conv_shifted, no scratch), so the compiler gives them none. The avx512
  // targets, and native when the machine running onnxc has AVX-512 F (native code is built for the
  // machine it is compiled on; the generated code checks rt::kShiftedInputProduct).
  bool shifted_input_product = false;
  // The float depthwise kernel reads 3x3 stride-2 layers in place (rt::depthwise_stride2_detail,
  // AVX2 and AVX-512), so the compiler gives them no scratch: the x86-64-v3, avx2 and avx512
  // targets, and native when the machine running onnxc has AVX2 and FMA.
  bool depthwise_stride2_in_place = false;
  // AVX-512 F and AVX2 (the targets of shifted_input_product and depthwise_stride2_in_place):
  // rt::conv_depthwise computes 'same' stride-1 planes of large kernels no wider than a vector
  // with the channels in the vector lanes, given scratch
  // (rt::depthwise_channels_detail::prefers_lanes), so the compiler gives them scratch.
  bool depthwise_channel_lanes = false;
  // Floats per vector of the float kernels' xsimd paths: 16 on the AVX-512 targets, 8 on the AVX2
  // ones, 4 elsewhere (NEON, SSE); 1 without SIMD. The cost models that compare an orientation of
  // the lanes against another (conv_prefers_channel_lanes) read it.
  int float_lanes = 1;
  // The code is assembled by a GNU-compatible assembler (GNU as, clang's) into ELF objects, so
  // --weights-format incbin works and auto takes it for large weights: the Cortex-M targets
  // (arm-none-eabi), and the host targets when onnxc itself was built for ELF by g++ or clang
  // (Linux, the BSDs; not macOS's Mach-O or Windows' COFF, where auto keeps arrays).
  bool elf_incbin = false;
  // Code for a Linux machine of another architecture (AArch64, RISC-V 64), named as `uname -m` does;
  // empty: any host. Where onnxc runs on another architecture, validate and bench build the program
  // with `cross_compiler` (linked statically, so the emulator needs no target root file system) and
  // run it under `emulator` (QEMU's user mode); on a machine of that architecture, as on the host.
  // A microcontroller target (arch empty, a board in driver/firmware.cpp: Cortex-M, RISC-V 32)
  // names its bare-metal compiler and QEMU's system emulator here: validate builds firmware with
  // them and runs it on the board.
  std::string arch;
  std::string cross_compiler;
  std::string emulator;
  // Flags the cross compiler needs beyond cxx_flags to build and link for arch on another machine
  // (riscv64-rvv: clang++'s target triple and Debian's riscv64-linux-gnu headers and GCC libraries).
  std::vector<std::string> cross_flags;
  // The CPU the emulator models (its -cpu), unless the environment's QEMU_CPU names another
  // (riscv64-rvv: "rv64,v=true,vext_spec=v1.0,vlen=128"; QEMU_CPU=rv64,v=true,vext_spec=v1.0,vlen=256 runs the same program on
  // 256-bit vectors). Empty: the emulator's default.
  std::string emulator_cpu;
  std::string cross_packages;  // the Debian packages that provide both, for the error that names them
};

// Every target, the default ("generic") first.
const std::vector<Target>& targets();
// The target called `name`, or nullptr.
const Target* find_target(const std::string& name);
std::vector<std::string> target_names();

// The architecture onnxc itself was built for, as `uname -m` names it ("x86_64", "aarch64", "riscv64").
std::string host_arch();
// True when t's code runs on another architecture than this machine's (through t.emulator).
bool runs_emulated(const Target& t);

// Lines the generated source starts its includes with: ONNXC_SIMD and the flag check.
std::string target_preamble(const Target& t);

}  // namespace onnxc
