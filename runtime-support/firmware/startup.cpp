// Startup code of onnxc's firmware images for Armv7-M and Armv8-M cores (Cortex-M4, M7, M55):
// the vector table, the reset handler that prepares memory and calls main(), a fault handler,
// and the stack measurement of firmware.h. It relies on the symbols sections.ld defines and
// on nothing from the C library but memcpy and memset.
//
// There is deliberately no call of static constructors: sections.ld refuses an image that has
// any (.init_array must be empty), since generated code must not need them.
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
void onnxc_firmware_reset();
void onnxc_firmware_fault();
}

namespace {

using Handler = void (*)();

// What the core reads at reset: the initial stack pointer, then the exception handlers.
struct VectorTable {
  void* initial_sp;
  Handler reset;
  Handler system[14];  // NMI, HardFault, MemManage, BusFault, UsageFault, SecureFault, 3 reserved,
                       // SVCall, DebugMonitor, reserved, PendSV, SysTick
};

constexpr Handler F = onnxc_firmware_fault;

__attribute__((section(".vectors"), used)) const VectorTable vectors = {
    __stack_top, onnxc_firmware_reset, {F, F, F, F, F, F, nullptr, nullptr, nullptr, F, F, nullptr, F, F}};

// The floating-point unit (and M-profile vector extension) is off after reset: code built with
// -mfloat-abi=hard faults on its first FP instruction until CP10 and CP11 are enabled.
void enable_fpu() {
#if defined(__ARM_FP) || defined(__ARM_FEATURE_MVE)
  volatile std::uint32_t& cpacr = *reinterpret_cast<volatile std::uint32_t*>(0xE000ED88u);
  cpacr = cpacr | (0xFu << 20);
  __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
}

constexpr std::uint32_t kStackPaint = 0x57AC4ED5u;
std::uintptr_t painted_below = 0;  // the stack pointer when paint_stack() ran

std::uintptr_t stack_pointer() {
  std::uintptr_t sp;
  __asm__ volatile("mov %0, sp" : "=r"(sp));
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

}  // namespace

extern "C" void onnxc_firmware_reset() {
  enable_fpu();
  std::memcpy(__data_start, __data_load, static_cast<std::size_t>(__data_end - __data_start));
  std::memset(__bss_start, 0, static_cast<std::size_t>(__bss_end - __bss_start));
  onnxc::firmware::semihosting::exit(main());
}

extern "C" void onnxc_firmware_fault() {
  onnxc::firmware::semihosting::print("onnxc firmware: fault exception (bad memory access, undefined "
                                      "instruction or stack overflow)\n");
  onnxc::firmware::semihosting::exit(3);
}

namespace onnxc::firmware {

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

namespace {

// SysTick's registers (Armv7-M / Armv8-M system control space).
volatile std::uint32_t& systick_control() { return *reinterpret_cast<volatile std::uint32_t*>(0xE000E010u); }
volatile std::uint32_t& systick_reload() { return *reinterpret_cast<volatile std::uint32_t*>(0xE000E014u); }
volatile std::uint32_t& systick_current() { return *reinterpret_cast<volatile std::uint32_t*>(0xE000E018u); }
constexpr std::uint32_t kEnable = 1u, kProcessorClock = 1u << 2, kCountedToZero = 1u << 16;
constexpr std::uint32_t kCounterMask = 0xFFFFFFu;
std::uint32_t cycle_count_start = 0;

}  // namespace

void start_cycle_count() {
  systick_control() = 0;
  systick_reload() = kCounterMask;
  systick_current() = 0;  // any write clears the counter and its counted-to-zero flag
  systick_control() = kProcessorClock | kEnable;
  while (systick_current() == 0) {  // the first tick loads the reload value
  }
  const std::uint32_t clear_flag = systick_control();  // reading clears the flag the first load may have set
  (void)clear_flag;
  cycle_count_start = systick_current();
}

long cycles_elapsed() {
  const std::uint32_t now = systick_current();
  if (systick_control() & kCountedToZero) return -1;  // wrapped: the count is ambiguous
  return static_cast<long>((cycle_count_start - now) & kCounterMask);  // it counts down
}

}  // namespace onnxc::firmware
