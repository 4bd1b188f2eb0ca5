// Semihosting: the firmware's only way to reach the outside world under an emulator or a debug
// probe. The program stops at a breakpoint with an operation number in the first argument
// register and a pointer to its arguments in the second; the host (QEMU with
// -semihosting-config enable=on) performs it and resumes with the result in the first. No heap,
// no libc stdio, no global state.
//
// Arm (Cortex-M): `bkpt 0xAB`, r0 and r1. RISC-V: `ebreak` between `slli x0, x0, 0x1f` and
// `srai x0, x0, 7` (uncompressed, on one page: the sequence tells a semihosting call from a
// debugger's breakpoint), a0 and a1; the operations and argument blocks are Arm's.
//
// References: Arm "Semihosting for AArch32 and AArch64", version 3.0 (operation numbers and
// argument blocks below); the RISC-V Semihosting specification (the trap sequence).
#ifndef ONNXC_FIRMWARE_SEMIHOSTING_H
#define ONNXC_FIRMWARE_SEMIHOSTING_H

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace onnxc::firmware::semihosting {

enum Operation : std::uintptr_t {
  kOpen = 0x01,
  kClose = 0x02,
  kWrite0 = 0x04,  // a NUL-terminated string to the debug console
  kWrite = 0x05,
  kRead = 0x06,
  kGetCmdline = 0x15,
  kExitExtended = 0x20,  // exit with a status code (plain SYS_EXIT has none on AArch32 and RV32)
};

// SYS_OPEN modes, as fopen's: "rb" and "wb".
enum Mode : std::uintptr_t { kReadBinary = 1, kWriteBinary = 5 };

inline std::intptr_t call(Operation op, const void* args) {
#if defined(__riscv)
  register std::uintptr_t a0 __asm__("a0") = op;
  register const void* a1 __asm__("a1") = args;
  // Aligned to 16 bytes so that the three instructions never straddle a page (the padding
  // before .option norvc, where it may take 2-byte no-ops).
  __asm__ volatile(".option push\n\t.balign 16\n\t.option norvc\n\t"
                   "slli x0, x0, 0x1f\n\tebreak\n\tsrai x0, x0, 7\n\t.option pop"
                   : "+r"(a0)
                   : "r"(a1)
                   : "memory");
  return static_cast<std::intptr_t>(a0);
#else
  register std::uintptr_t r0 __asm__("r0") = op;
  register const void* r1 __asm__("r1") = args;
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return static_cast<std::intptr_t>(r0);
#endif
}

// A host file handle, or -1.
inline std::intptr_t open(const char* path, Mode mode) {
  const std::uintptr_t args[3] = {reinterpret_cast<std::uintptr_t>(path), mode, std::strlen(path)};
  return call(kOpen, args);
}

inline void close(std::intptr_t handle) {
  const std::uintptr_t args[1] = {static_cast<std::uintptr_t>(handle)};
  call(kClose, args);
}

// Both return the number of bytes NOT transferred (0: all of them).
inline std::size_t read(std::intptr_t handle, void* data, std::size_t bytes) {
  const std::uintptr_t args[3] = {static_cast<std::uintptr_t>(handle), reinterpret_cast<std::uintptr_t>(data), bytes};
  return static_cast<std::size_t>(call(kRead, args));
}

inline std::size_t write(std::intptr_t handle, const void* data, std::size_t bytes) {
  const std::uintptr_t args[3] = {static_cast<std::uintptr_t>(handle), reinterpret_cast<std::uintptr_t>(data),
                                  bytes};
  return static_cast<std::size_t>(call(kWrite, args));
}

inline void print(const char* text) { call(kWrite0, text); }

// The command line the host was given (QEMU: -semihosting-config arg=...), NUL-terminated in
// buffer; false if it does not fit.
inline bool command_line(char* buffer, std::size_t capacity) {
  std::uintptr_t args[2] = {reinterpret_cast<std::uintptr_t>(buffer), capacity};
  return call(kGetCmdline, args) == 0;
}

[[noreturn]] inline void exit(int status) {
  constexpr std::uintptr_t kApplicationExit = 0x20026;  // ADP_Stopped_ApplicationExit
  const std::uintptr_t args[2] = {kApplicationExit, static_cast<std::uintptr_t>(status)};
  call(kExitExtended, args);
  for (;;) {
  }
}

}  // namespace onnxc::firmware::semihosting

#endif  // ONNXC_FIRMWARE_SEMIHOSTING_H
