// Startup code of onnxc's firmware images for Armv7-M and Armv8-M cores (Cortex-M4, M7, M55):
// the vector table, the reset handler that enables the FPU and runs main() (startup_common.h:
// memory, stack measurement), a fault handler and the SysTick cycle count of firmware.h. It
// relies on the symbols sections.ld defines and on nothing from the C library but memcpy and
// memset.
#include <cstdint>

#include "firmware.h"
#include "semihosting.h"
#include "startup_common.h"

extern "C" {
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

}  // namespace

extern "C" void onnxc_firmware_reset() {
  enable_fpu();
  onnxc::firmware::run_main();
}

extern "C" void onnxc_firmware_fault() {
  onnxc::firmware::semihosting::print("onnxc firmware: fault exception (bad memory access, undefined "
                                      "instruction or stack overflow)\n");
  onnxc::firmware::semihosting::exit(3);
}

namespace onnxc::firmware {

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
