// What the startup code does the same on every core: prepare memory and run main()
// (run_main), and the stack measurement of firmware.h (paint_stack, stack_bytes_used,
// stack_bytes_reserved). Not a header for programs: each architecture's startup file
// (startup.cpp for Cortex-M, startup_riscv.cpp) includes it once, so an image has one
// definition of each.
#ifndef ONNXC_FIRMWARE_STARTUP_COMMON_H
#define ONNXC_FIRMWARE_STARTUP_COMMON_H

#include <cstdint>
#include <cstring>

#include "firmware.h"
#include "semihosting.h"

extern "C" {
// From sections.ld.
extern unsigned char __data_start[], __data_end[], __data_load[];
extern unsigned char __bss_start[], __bss_end[];
extern unsigned char __stack_bottom[], __stack_top[];

int main();
}

namespace onnxc::firmware {
namespace {

constexpr std::uint32_t kStackPaint = 0x57AC4ED5u;
std::uintptr_t painted_below = 0;  // the stack pointer when paint_stack() ran

std::uintptr_t stack_pointer() {
  std::uintptr_t sp;
#if defined(__riscv)
  __asm__ volatile("mv %0, sp" : "=r"(sp));
#else
  __asm__ volatile("mov %0, sp" : "=r"(sp));
#endif
  return sp;
}

// paint_stack() reads the stack pointer before it may push anything of its own (the compiler
// is free to order it so), so it leaves a margin unpainted for its own frame. The result
// counts from the stack pointer paint_stack() saw, so it may exceed the truth by at most
// kPaintMargin bytes, never fall short of it.
constexpr std::uintptr_t kPaintMargin = 64;

volatile std::uint32_t* painted_end() {
  return reinterpret_cast<volatile std::uint32_t*>((painted_below - kPaintMargin) & ~std::uintptr_t{3});
}

// Copies .data's initial values from flash, clears .bss, runs main() and exits through
// semihosting with its status. There is deliberately no call of static constructors:
// sections.ld refuses an image that has any (.init_array must be empty), since generated code
// must not need them.
[[noreturn]] void run_main() {
  std::memcpy(__data_start, __data_load, static_cast<std::size_t>(__data_end - __data_start));
  std::memset(__bss_start, 0, static_cast<std::size_t>(__bss_end - __bss_start));
  semihosting::exit(main());
}

}  // namespace

__attribute__((noinline)) void paint_stack() {
  painted_below = stack_pointer();
  volatile std::uint32_t* word = reinterpret_cast<volatile std::uint32_t*>(__stack_bottom);
  for (volatile std::uint32_t* end = painted_end(); word < end;) *word++ = kStackPaint;
}

std::size_t stack_bytes_used() {
  volatile std::uint32_t* word = reinterpret_cast<volatile std::uint32_t*>(__stack_bottom);
  for (volatile std::uint32_t* end = painted_end(); word < end && *word == kStackPaint;) ++word;
  return static_cast<std::size_t>(painted_below - reinterpret_cast<std::uintptr_t>(word));
}

std::size_t stack_bytes_reserved() { return static_cast<std::size_t>(__stack_top - __stack_bottom); }

}  // namespace onnxc::firmware

#endif  // ONNXC_FIRMWARE_STARTUP_COMMON_H
