// RISC-V vector extension (RVV 1.0) support for the *_rvv.h kernels: the intrinsics' header and one
// name for them across compiler generations. Clang 14-16 name the intrinsics without a prefix
// (vle32_v_f32m4); the ratified intrinsics API (clang 17+, GCC 13+: __riscv_v_intrinsic >= 11000)
// prefixes them (__riscv_vle32_v_f32m4). ONNXC_RVV(vle32_v_f32m4) is the one this compiler has.
// Included only where the compiler targets the vector extension (__riscv_vector: -march=rv64gcv).
#ifndef ONNXC_RVV_H
#define ONNXC_RVV_H

#if defined(__riscv_vector)  // (elsewhere empty: every runtime header compiles on any host)
#include <riscv_vector.h>

#if defined(__riscv_v_intrinsic) && __riscv_v_intrinsic >= 11000
#define ONNXC_RVV(name) __riscv_##name
#else
#define ONNXC_RVV(name) name
#endif
#endif

#endif  // ONNXC_RVV_H
