// The bare-metal runtime of onnxc's firmware images (startup.cpp): what a program's main()
// may use besides semihosting.h. See docs/embedded.md.
#ifndef ONNXC_FIRMWARE_FIRMWARE_H
#define ONNXC_FIRMWARE_FIRMWARE_H

#include <cstddef>

namespace onnxc::firmware {

// Stack high-water mark: paint_stack() fills the unused stack below the caller with a pattern;
// stack_bytes_used() then tells how deep the stack went below that point since, by finding
// the lowest word no longer holding the pattern. Call them around the code to measure.
void paint_stack();
std::size_t stack_bytes_used();

// The size of the stack the linker script reserved.
std::size_t stack_bytes_reserved();

// Processor clock cycles by the SysTick timer (24 bits, no interrupt, so nothing is pushed on
// the stack being measured): start_cycle_count(), then cycles_elapsed() tells the cycles since,
// or -1 if the counter wrapped (more than 2^24 - 1 cycles). Under QEMU run with -icount shift=0
// each instruction advances the clock by 1 ns, so cycles * 1e9 / clock_hz counts instructions.
void start_cycle_count();
long cycles_elapsed();

}  // namespace onnxc::firmware

#endif  // ONNXC_FIRMWARE_FIRMWARE_H
