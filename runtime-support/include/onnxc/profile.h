// onnxc runtime support: the counter code generated with --profile reads before and after each
// step of run() (onnxc_profile in onnxc/trace.h gets the difference).
//
//   Cortex-M3/M4/M7/M33/M55 (ARMv7-M, ARMv8-M Mainline): the DWT cycle counter, CYCCNT. The
//     program must start it once: onnxc::rt::start_cycle_counter() (or its own DWT set-up).
//   RISC-V: the `cycle` CSR (rdcycle; its low 32 bits on RV32).
//   Other targets (hosts): std::chrono::steady_clock, in nanoseconds.
//
// A program that wants another counter (a timer of its board, a core without DWT such as the
// Cortex-M0) defines ONNXC_PROFILE_COUNTER() before this header is included (for example with
// -DONNXC_PROFILE_COUNTER()=my_ticks() and a declaration in a header it force-includes): an
// unsigned integer expression whose differences are the ticks; it may wrap.
#ifndef ONNXC_PROFILE_H
#define ONNXC_PROFILE_H

#include <cstdint>

#include "onnxc/trace.h"

#ifndef ONNXC_PROFILE_COUNTER
#define ONNXC_PROFILE_COUNTER() ::onnxc::rt::profile_counter()
#if defined(__ARM_ARCH_7M__) || defined(__ARM_ARCH_7EM__) || defined(__ARM_ARCH_8M_MAIN__) || \
    defined(__ARM_ARCH_8_1M_MAIN__)
#define ONNXC_PROFILE_DWT 1
#elif !defined(__riscv)
#include <chrono>
#endif

namespace onnxc {
namespace rt {

#if defined(ONNXC_PROFILE_DWT)
// Memory-mapped registers of the Debug and Trace units (ARMv7-M / ARMv8-M architecture manuals).
inline volatile std::uint32_t& debug_register(std::uintptr_t address) {
  return *reinterpret_cast<volatile std::uint32_t*>(address);
}
// Enables trace (DEMCR.TRCENA), clears and starts the cycle counter (DWT_CTRL.CYCCNTENA).
inline void start_cycle_counter() {
  debug_register(0xE000EDFCu) |= 1u << 24;
  debug_register(0xE0001004u) = 0;
  debug_register(0xE0001000u) |= 1u;
}
inline std::uint32_t profile_counter() { return debug_register(0xE0001004u); }
#elif defined(__riscv)
inline void start_cycle_counter() {}
inline unsigned long profile_counter() {
  unsigned long cycles;
  __asm__ volatile("rdcycle %0" : "=r"(cycles));
  return cycles;
}
#else
inline void start_cycle_counter() {}
inline std::uint64_t profile_counter() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}
#endif

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_PROFILE_COUNTER

#endif  // ONNXC_PROFILE_H
