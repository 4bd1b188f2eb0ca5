// The firmware build's checks (compiler/driver/firmware.h) that do not need a bare-metal toolchain:
// which linked symbols an image is refused for, and the board table.
#include <catch2/catch.hpp>

#include "driver/firmware.h"

using namespace onnxc;

TEST_CASE("forbidden_symbols names what reaches the heap, stdio, exceptions and TLS, with the reason") {
  // arm-none-eabi-nm output: defined symbols with an address, undefined ones without.
  const std::string nm = "00000040 T main\n"
                         "000001c8 T memcpy\n"
                         "00000210 T expf\n"
                         "00000300 T malloc\n"
                         "00000340 T _Znwj\n"
                         "         U __cxa_throw\n"
                         "00000400 T _vfprintf_r\n"
                         "00000480 T __aeabi_read_tp\n"
                         "00000500 T __cxa_guard_acquire\n";
  CHECK(forbidden_symbols(nm) == std::vector<std::string>{
                                     "_Znwj (operator new)",
                                     "__aeabi_read_tp (thread-local storage)",
                                     "__cxa_guard_acquire (thread-safe initialisation of a function-local static)",
                                     "__cxa_throw (C++ exceptions)",
                                     "_vfprintf_r (stdio)",
                                     "malloc (heap)",
                                 });
}

TEST_CASE("forbidden_symbols accepts what a model image legitimately links") {
  const std::string nm = "00000000 R vectors\n00000040 T main\n000001c8 T memcpy\n000001f0 T memset\n"
                         "00000210 T expf\n00000260 T __errno\n20000000 D _impure_ptr\n"
                         "00000300 T _ZN5model3runEPKfPfPv\n00000400 T mallocate_tensor_name\n";
  CHECK(forbidden_symbols(nm).empty());
}

TEST_CASE("every Cortex-M target has an emulated board with its core's flags") {
  CHECK(board_targets() == std::vector<std::string>{"cortex-m4", "cortex-m7", "cortex-m55", "riscv32", "riscv32f"});
  for (const char* name : {"cortex-m4", "cortex-m7", "cortex-m55"}) {
    const std::string target = name;
    const Board* board = find_board(target);
    REQUIRE(board);
    CHECK(board->cpu_flags.front() == "-mcpu=" + target);
    CHECK(board->linker_script == board->machine + ".ld");
    CHECK(board->startup == "startup.cpp");
    CHECK(board->counter == "SysTick");
  }
  CHECK(find_board("cortex-m4")->machine == "mps2-an386");
  CHECK(find_board("cortex-m7")->machine == "mps2-an500");
  CHECK(find_board("cortex-m55")->machine == "mps3-an547");
  CHECK(find_board("generic") == nullptr);
}

TEST_CASE("the RISC-V 32 targets run on QEMU's virt board from the start of RAM, counting instret") {
  const Board* imac = find_board("riscv32");
  const Board* imafc = find_board("riscv32f");
  REQUIRE(imac);
  REQUIRE(imafc);
  CHECK(imac->cpu_flags == std::vector<std::string>{"-march=rv32imac", "-mabi=ilp32"});
  CHECK(imafc->cpu_flags == std::vector<std::string>{"-march=rv32imafc", "-mabi=ilp32f"});
  for (const Board* board : {imac, imafc}) {
    CHECK(board->machine == "virt");
    CHECK(board->emulator_flags == std::vector<std::string>{"-bios", "none"});
    CHECK(board->linker_script == "riscv32-virt.ld");
    CHECK(board->startup == "startup_riscv.cpp");
    CHECK(board->clock_hz == 1e9);  // instret: one count per instruction
  }
}

TEST_CASE("forbidden_symbols knows picolibc's names for the heap, stdio and system calls") {
  const std::string nm = "80000040 T main\n80000100 T memcpy\n80000200 T expf\n80000300 T sbrk\n"
                         "80000400 T vfprintf\n80000500 T write\n80000600 T exit\n";
  CHECK(forbidden_symbols(nm) == std::vector<std::string>{"exit (static destructors)", "sbrk (heap)",
                                                          "vfprintf (stdio)", "write (OS system calls)"});
}
