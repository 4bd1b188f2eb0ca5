// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// packed_gemm.h's panel on RISC-V vectors (RVV 1.0), vector-length agnostic: a register tile of
// up to 4 rows of the panel by one group of 4 vector registers (LMUL 4: 16 floats at VLEN 128, 32
// at 256) of y's columns accumulates over the whole K loop. Each k step loads B's row once
// (vle32) and multiplies it by each row's weight, a scalar (vfmacc.vf: RVV has no FMA by
// element): 4 scalar loads, 1 vector load and 4 multiply-adds for 4 x vl products, with the
// accumulators in 16 of the 32 registers and B's row in 4 more. The columns run in strips of
// vsetvl's length, the last strip shorter (no scalar tail). Relu and Clip clamp in registers;
// other activations run over the stored rows (activate_row). Included by packed_gemm.h where
// the compiler targets the vector extension (__riscv_vector); tested with it
// (tests/unit/packed_gemm_test.cpp, cross-built: unit.rvv).
#ifndef ONNXC_PACKED_GEMM_RVV_H
#define ONNXC_PACKED_GEMM_RVV_H

#include <limits>

#include "onnxc/rvv.h"

namespace onnxc {
namespace rt {
namespace packed_gemm_detail {

constexpr int kRvvTileRows = 4;

// Rows (1 to 4) of the panel (weights a[l * a_step + r]) times vl columns of B from column 0.
template <int Rows, class B>
inline void rvv_tile(index_t k, const float* a, index_t a_step, const B& b, float* y, index_t ldy, const float* bias,
                     const Epilogue& e, std::size_t vl) {
  vfloat32m4_t acc0 = ONNXC_RVV(vfmv_v_f_f32m4)(bias ? bias[0] : 0.0f, vl);
  vfloat32m4_t acc1 = ONNXC_RVV(vfmv_v_f_f32m4)(Rows > 1 && bias ? bias[Rows > 1 ? 1 : 0] : 0.0f, vl);
  vfloat32m4_t acc2 = ONNXC_RVV(vfmv_v_f_f32m4)(Rows > 2 && bias ? bias[Rows > 2 ? 2 : 0] : 0.0f, vl);
  vfloat32m4_t acc3 = ONNXC_RVV(vfmv_v_f_f32m4)(Rows > 3 && bias ? bias[Rows > 3 ? 3 : 0] : 0.0f, vl);
  for (index_t l = 0; l < k; ++l) {
    const float* w = a + l * a_step;
    const vfloat32m4_t x = ONNXC_RVV(vle32_v_f32m4)(b.row(l), vl);
    acc0 = ONNXC_RVV(vfmacc_vf_f32m4)(acc0, w[0], x, vl);
    if (Rows > 1) acc1 = ONNXC_RVV(vfmacc_vf_f32m4)(acc1, w[Rows > 1 ? 1 : 0], x, vl);
    if (Rows > 2) acc2 = ONNXC_RVV(vfmacc_vf_f32m4)(acc2, w[Rows > 2 ? 2 : 0], x, vl);
    if (Rows > 3) acc3 = ONNXC_RVV(vfmacc_vf_f32m4)(acc3, w[Rows > 3 ? 3 : 0], x, vl);
  }
  const bool clamps = e.activation == Activation::Relu || e.activation == Activation::Clip;
  if (clamps) {
    const float lo = e.activation == Activation::Relu ? 0.0f : e.alpha;
    const float hi = e.activation == Activation::Relu ? std::numeric_limits<float>::infinity() : e.beta;
    acc0 = ONNXC_RVV(vfmin_vf_f32m4)(ONNXC_RVV(vfmax_vf_f32m4)(acc0, lo, vl), hi, vl);
    acc1 = ONNXC_RVV(vfmin_vf_f32m4)(ONNXC_RVV(vfmax_vf_f32m4)(acc1, lo, vl), hi, vl);
    acc2 = ONNXC_RVV(vfmin_vf_f32m4)(ONNXC_RVV(vfmax_vf_f32m4)(acc2, lo, vl), hi, vl);
    acc3 = ONNXC_RVV(vfmin_vf_f32m4)(ONNXC_RVV(vfmax_vf_f32m4)(acc3, lo, vl), hi, vl);
  }
  ONNXC_RVV(vse32_v_f32m4)(y, acc0, vl);
  if (Rows > 1) ONNXC_RVV(vse32_v_f32m4)(y + ldy, acc1, vl);
  if (Rows > 2) ONNXC_RVV(vse32_v_f32m4)(y + 2 * ldy, acc2, vl);
  if (Rows > 3) ONNXC_RVV(vse32_v_f32m4)(y + 3 * ldy, acc3, vl);
  if (!clamps && e.activation != Activation::None)
    for (int r = 0; r < Rows; ++r) activate_row(e, y + r * ldy, static_cast<std::ptrdiff_t>(vl));
}

template <int Rows, class B>
inline void rvv_rows(index_t n, index_t k, const float* a, index_t a_step, const B& b, float* y, index_t ldy,
                     const float* bias, const Epilogue& e) {
  for (index_t j = 0; j < n;) {
    const std::size_t vl = ONNXC_RVV(vsetvl_e32m4)(static_cast<std::size_t>(n - j));
    rvv_tile<Rows>(k, a, a_step, b.shifted(j), y + j, ldy, bias, e, vl);
    j += static_cast<index_t>(vl);
  }
}

template <class B>
inline void panel(index_t rows, index_t n, index_t k, const float* a, const B& b, float* y, index_t ldy,
                  const float* bias, const Epilogue& e) {
  index_t r = 0;
  for (; r + kRvvTileRows <= rows; r += kRvvTileRows)
    rvv_rows<kRvvTileRows>(n, k, a + r, rows, b, y + r * ldy, ldy, bias ? bias + r : nullptr, e);
  const float* rest_bias = bias ? bias + r : nullptr;
  switch (rows - r) {
    case 3: return rvv_rows<3>(n, k, a + r, rows, b, y + r * ldy, ldy, rest_bias, e);
    case 2: return rvv_rows<2>(n, k, a + r, rows, b, y + r * ldy, ldy, rest_bias, e);
    case 1: return rvv_rows<1>(n, k, a + r, rows, b, y + r * ldy, ldy, rest_bias, e);
    default: return;
  }
}

}  // namespace packed_gemm_detail
}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_PACKED_GEMM_RVV_H
