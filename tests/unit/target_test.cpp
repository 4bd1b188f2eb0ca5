// The target table: each row's traits reach the fields the passes and the code generator read.
#include <catch2/catch.hpp>

#include "backend/target.h"

using namespace onnxc;

TEST_CASE("generic is the first target and has no SIMD and no special traits") {
  const Target& generic = targets().front();
  CHECK(generic.name == "generic");
  CHECK_FALSE(generic.simd);
  CHECK_FALSE(generic.memory_first);
  CHECK(generic.cxx_flags.empty());
  CHECK(target_preamble(generic).empty());
}

TEST_CASE("microcontroller targets plan memory first and have the SMLAD dual multiply-add") {
  for (const char* name : {"cortex-m4", "cortex-m7", "cortex-m55"}) {
    const Target* t = find_target(name);
    REQUIRE(t);
    CHECK(t->memory_first);
    CHECK(t->int8_dual_mac);
    CHECK_FALSE(t->simd);
    CHECK_FALSE(t->int8_dot_product);
    CHECK(t->int8_helium == (std::string(name) == "cortex-m55"));  // (Helium's 1x1 weight bytes)
  }
}

TEST_CASE("RISC-V 32 microcontroller targets plan memory first, take the dual multiply-add kernels' plan and name their toolchain") {
  for (const char* name : {"riscv32", "riscv32f"}) {
    const Target* t = find_target(name);
    REQUIRE(t);
    CHECK(t->memory_first);
    CHECK_FALSE(t->simd);
    CHECK(t->int8_dual_mac);  // (their portable paths: int16 weight pairs, register tiles)
    CHECK_FALSE(t->int8_helium);
    CHECK(t->arch.empty());  // bare metal: never run as a host program
    CHECK_FALSE(runs_emulated(*t));
    CHECK(t->cross_compiler == "riscv64-unknown-elf-gcc");
    CHECK(t->emulator == "qemu-system-riscv32");
    CHECK(t->cross_packages.find("picolibc-riscv64-unknown-elf") != std::string::npos);
    CHECK(t->cross_packages.find("qemu-system-misc") != std::string::npos);
  }
}

TEST_CASE("x86 SIMD targets check their compiler flags in the generated source") {
  const Target* avx512 = find_target("avx512");
  REQUIRE(avx512);
  CHECK(avx512->simd);
  CHECK_FALSE(avx512->memory_first);
  CHECK_FALSE(avx512->int8_dot_product);
  const std::string preamble = target_preamble(*avx512);
  CHECK(preamble.find("#define ONNXC_SIMD 1") != std::string::npos);
  CHECK(preamble.find("#if !(defined(__AVX512F__))") != std::string::npos);
  CHECK(preamble.find("-march=x86-64-v4") != std::string::npos);

  const Target* vnni = find_target("avx512-vnni");
  REQUIRE(vnni);
  CHECK(vnni->int8_dot_product);
  CHECK(vnni->cxx_flags == std::vector<std::string>{"-march=x86-64-v4", "-mavx512vnni"});
  CHECK(find_target("native")->int8_dot_product);
  CHECK(find_target("no-such-isa") == nullptr);
}

TEST_CASE("AArch64 targets: neon and neon-dotprod run under qemu-aarch64, neon-dotprod requires the dot-product macro") {
  for (const char* name : {"neon", "neon-dotprod"}) {
    const Target* t = find_target(name);
    REQUIRE(t);
    CHECK(t->simd);
    CHECK(t->float_lanes == 4);
    CHECK(t->arch == "aarch64");
    CHECK(t->cross_compiler == "aarch64-linux-gnu-g++");
    CHECK(t->emulator == "qemu-aarch64");
    CHECK_FALSE(t->int8_dot_product);  // (x86's VNNI layout)
  }
  const Target* dot = find_target("neon-dotprod");
  CHECK(dot->cxx_flags == std::vector<std::string>{"-march=armv8.2-a+dotprod"});
  CHECK(target_preamble(*dot).find("defined(__ARM_FEATURE_DOTPROD)") != std::string::npos);
  CHECK(target_preamble(*find_target("neon")).find("__ARM_FEATURE_DOTPROD") == std::string::npos);
}

TEST_CASE("riscv64-rvv: clang++ for riscv64 Linux, RVV kernels without xsimd, the vector flag checked, QEMU at VLEN 128") {
  const Target* t = find_target("riscv64-rvv");
  REQUIRE(t);
  CHECK_FALSE(t->simd);  // (no xsimd: the portable kernels' *_rvv.h variants)
  CHECK(t->rvv);
  CHECK_FALSE(t->memory_first);
  CHECK(t->arch == "riscv64");
  CHECK(t->cross_compiler == "clang++");
  CHECK(t->emulator == "qemu-riscv64");
  CHECK(t->emulator_cpu == "rv64,v=true,vext_spec=v1.0,vlen=128");
  CHECK(t->cxx_flags == std::vector<std::string>{"-march=rv64gcv"});
  REQUIRE_FALSE(t->cross_flags.empty());
  CHECK(t->cross_flags.front() == "--target=riscv64-linux-gnu");
  const std::string preamble = target_preamble(*t);
  CHECK(preamble.find("ONNXC_SIMD") == std::string::npos);
  CHECK(preamble.find("defined(__riscv_vector)") != std::string::npos);
  CHECK(target_preamble(*find_target("riscv64")).empty());  // portable: builds anywhere
  CHECK_FALSE(find_target("riscv64")->rvv);
}
