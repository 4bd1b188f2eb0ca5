// Startup code of onnxc's firmware images for 32-bit RISC-V cores in machine mode (rv32imac,
// rv32imafc: ESP32-C3, GD32VF103 and the like): the entry point that sets the stack pointer,
// the trap vector and the FPU, then runs main() (startup_common.h: memory, stack measurement),
// a trap handler, and the instruction count of firmware.h from the instret counter. It relies
// on the symbols sections.ld defines and on nothing from the C library but memcpy and memset.
//
// The image starts executing at its first address (QEMU's virt board with -bios none jumps to
// the start of RAM, 0x80000000): sections.ld puts .vectors there.
#include <climits>
#include <cstdint>

#include "firmware.h"
#include "semihosting.h"
#include "startup_common.h"

extern "C" {
void onnxc_firmware_start();
void onnxc_firmware_trap();
}

// The entry point (ENTRY in sections.ld). No C++ before the stack pointer is set. The global
// pointer stays unused: sections.ld defines no __global_pointer$, so the linker relaxes no
// access to be relative to it. mstatus.FS (bits 13-14) starts Off: code built with the F
// extension traps on its first FP instruction until it is Initial.
__asm__(
    "  .section .vectors, \"ax\", @progbits\n"
    "  .globl onnxc_firmware_reset\n"
    "  .type onnxc_firmware_reset, @function\n"
    "onnxc_firmware_reset:\n"
    "  .option push\n"
    "  .option arch, +zicsr\n"
    "  la sp, __stack_top\n"
    "  la t0, onnxc_firmware_trap\n"
    "  csrw mtvec, t0\n"
#if defined(__riscv_flen)
    "  li t0, 0x2000\n"
    "  csrs mstatus, t0\n"
    "  csrw fcsr, zero\n"
#endif
    "  .option pop\n"
    "  j onnxc_firmware_start\n"
    "  .size onnxc_firmware_reset, . - onnxc_firmware_reset\n"
    "  .text\n");

extern "C" void onnxc_firmware_start() { onnxc::firmware::run_main(); }

// mtvec in direct mode: every exception and interrupt lands here (interrupts stay disabled).
// The address must be a multiple of 4.
extern "C" __attribute__((aligned(4))) void onnxc_firmware_trap() {
  onnxc::firmware::semihosting::print("onnxc firmware: trap (bad memory access, illegal instruction or stack "
                                      "overflow)\n");
  onnxc::firmware::semihosting::exit(3);
}

namespace onnxc::firmware {
namespace {

// The instret counter (64 bits as two CSRs on RV32: read the high half around the low one so
// that a carry between the two reads is not missed).
std::uint64_t instructions_retired() {
  std::uint32_t high, low, high_again;
  do {
    __asm__ volatile(".option push\n\t.option arch, +zicsr\n\t"
                     "csrr %0, instreth\n\tcsrr %1, instret\n\tcsrr %2, instreth\n\t.option pop"
                     : "=r"(high), "=r"(low), "=r"(high_again));
  } while (high != high_again);
  return (std::uint64_t{high} << 32) | low;
}

std::uint64_t count_start = 0;

}  // namespace

// No timer: the instructions retired, which QEMU run with -icount shift=0 counts exactly (its
// virtual clock advances 1 ns per instruction, so the count is that of a 1 GHz clock).
void start_cycle_count() { count_start = instructions_retired(); }

long cycles_elapsed() {
  const std::uint64_t elapsed = instructions_retired() - count_start;
  return elapsed > static_cast<std::uint64_t>(LONG_MAX) ? -1 : static_cast<long>(elapsed);
}

}  // namespace onnxc::firmware
