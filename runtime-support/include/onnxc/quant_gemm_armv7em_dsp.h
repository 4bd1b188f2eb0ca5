// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// The matrix-product tile of rt::qconv_gemm for cores with dual 16-bit multiply-accumulate
// (Armv7E-M / Armv8-M DSP extension: SMLAD; Cortex-M4, M7, M33, M55). Included by quant.h after
// the dual 16-bit helpers it uses (load_u32, even_bytes, odd_bytes, dual_mac), whose portable
// forms let hosts run and test it.
//
// Output registers, not the block's columns, are the tile: one or two weight rows times two
// columns, four int32 accumulators kept in registers for the whole reduction and stored once.
// The im2col block holds each column's four k of a group as one word (col + (g * stride_cols +
// j) * 4), the two columns' words adjacent; each word splits into its (k0, k2) and (k1, k3)
// 16-bit pairs (UXTB16 and UXTB16 ROR #8), each row's four int8 weights of the group the same
// way (SXTB16), and each of the four outputs takes two SMLADs: 16 multiply-accumulates in 27
// instructions a group (the loop below), where the former tile of four rows times one column
// rebuilt its weight pairs per group and reloaded and stored its accumulators per column.
#ifndef ONNXC_QUANT_GEMM_ARMV7EM_DSP_H
#define ONNXC_QUANT_GEMM_ARMV7EM_DSP_H

namespace onnxc {
namespace rt {
namespace detail {

// The group of four weights at row[4g..] as a word, bytes past k_total 0 (the last group of a
// row whose length is not a multiple of 4: a whole-word load would read the next row, or past
// the weights).
inline std::uint32_t dsp_weight_tail(const std::int8_t* row, index_t k_total, index_t g) {
  std::uint32_t v = 0;
  for (index_t t = 0; t < 4 && 4 * g + t < k_total; ++t)
    v |= static_cast<std::uint32_t>(static_cast<std::uint8_t>(row[4 * g + t])) << (8 * t);
  return v;
}

// acc[r][j] (r < Rows, 1 or 2; j < columns, even) = the dot product of weight row r (k_total
// int8, rows k_total apart from w) with block column j over the `groups` groups of four k
// (the block's bytes for k past k_total are 0).
// The four outputs of rows (r0, r1) and columns (j, j + 1) after one group: x0, x1 the columns'
// words, w0, w1 the rows' (w1 unused for one row).
template <int Rows>
ONNXC_INLINE void dual_mac_group(std::uint32_t x0, std::uint32_t x1, std::uint32_t w0, std::uint32_t w1,
                                 std::int32_t& a00, std::int32_t& a01, std::int32_t& a10, std::int32_t& a11) {
  const std::uint32_t x0e = even_bytes(x0, std::uint8_t{}), x0o = odd_bytes(x0, std::uint8_t{});
  const std::uint32_t x1e = even_bytes(x1, std::uint8_t{}), x1o = odd_bytes(x1, std::uint8_t{});
  std::uint32_t we = even_bytes(w0, std::int8_t{}), wo = odd_bytes(w0, std::int8_t{});
  a00 = dual_mac(x0o, wo, dual_mac(x0e, we, a00));
  a01 = dual_mac(x1o, wo, dual_mac(x1e, we, a01));
  if (Rows == 2) {
    we = even_bytes(w1, std::int8_t{}), wo = odd_bytes(w1, std::int8_t{});
    a10 = dual_mac(x0o, wo, dual_mac(x0e, we, a10));
    a11 = dual_mac(x1o, wo, dual_mac(x1e, we, a11));
  }
}

// acc[r][j] (r < Rows, 1 or 2; j < columns, even) = the dot product of weight row r (k_total
// int8, rows k_total apart from w) with block column j over the `groups` groups of four k
// (the block's bytes for k past k_total are 0).
template <int Rows>
inline void qconv_tile_dual_mac(const std::int8_t* w, index_t k_total, index_t groups, const std::uint8_t* col,
                                index_t stride_cols, index_t columns, std::int32_t (*acc)[kQConvColumnQuantum * 4]) {
  static_assert(Rows == 1 || Rows == 2, "one or two weight rows");
  const index_t full = k_total / 4;  // groups whose four weights all lie in the row
  const std::int8_t* const w1 = Rows == 2 ? w + k_total : w;
  const std::uint32_t tail0 = dsp_weight_tail(w, k_total, full), tail1 = dsp_weight_tail(w1, k_total, full);
  for (index_t j = 0; j < columns; j += 2) {
    std::int32_t a00 = 0, a01 = 0, a10 = 0, a11 = 0;
    const std::uint8_t* c = col + 4 * j;
    index_t g = 0;
#if defined(ONNXC_QUANT_DUAL_MAC) && defined(__thumb2__) && defined(__OPTIMIZE__) && defined(__BYTE_ORDER__) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__  // (-O0 cannot give the assembly its registers)
    if (Rows == 2 && full > 0) {
      // GCC spills this loop's registers to the stack (about 38 instructions a group); by hand 27:
      // 6 loads (x0 twice: thirteen registers, so that it builds with a frame pointer too), 10
      // extensions, 8 SMLADs, 3 for the loop.
      const std::int8_t* wp = w;
      const std::uint8_t* cp = c;
      index_t n = full;
      const index_t next = 4 * stride_cols, row = k_total;
      std::uint32_t t0, t1, t2, t3;
      __asm__(
          "1:\n\t"
          "ldr %[t1], [%[cp]]\n\t"
          "ldr %[t2], [%[wp]]\n\t"
          "uxtb16 %[t0], %[t1]\n\t"
          "uxtb16 %[t1], %[t1], ror #8\n\t"
          "sxtb16 %[t3], %[t2], ror #8\n\t"
          "sxtb16 %[t2], %[t2]\n\t"
          "smlad %[a00], %[t0], %[t2], %[a00]\n\t"
          "smlad %[a00], %[t1], %[t3], %[a00]\n\t"
          "ldr %[t1], [%[cp], #4]\n\t"
          "uxtb16 %[t0], %[t1]\n\t"
          "uxtb16 %[t1], %[t1], ror #8\n\t"
          "smlad %[a01], %[t0], %[t2], %[a01]\n\t"
          "smlad %[a01], %[t1], %[t3], %[a01]\n\t"
          "ldr %[t2], [%[wp], %[row]]\n\t"
          "adds %[wp], %[wp], #4\n\t"
          "sxtb16 %[t3], %[t2], ror #8\n\t"
          "sxtb16 %[t2], %[t2]\n\t"
          "smlad %[a11], %[t0], %[t2], %[a11]\n\t"
          "smlad %[a11], %[t1], %[t3], %[a11]\n\t"
          "ldr %[t1], [%[cp]]\n\t"
          "add %[cp], %[cp], %[next]\n\t"
          "uxtb16 %[t0], %[t1]\n\t"
          "uxtb16 %[t1], %[t1], ror #8\n\t"
          "smlad %[a10], %[t0], %[t2], %[a10]\n\t"
          "smlad %[a10], %[t1], %[t3], %[a10]\n\t"
          "subs %[n], %[n], #1\n\t"
          "bne 1b\n\t"
          : [a00] "+r"(a00), [a01] "+r"(a01), [a10] "+r"(a10), [a11] "+r"(a11), [cp] "+r"(cp), [wp] "+r"(wp),
            [n] "+r"(n), [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3)
          : [next] "r"(next), [row] "r"(row)
          : "cc", "memory");
      g = full;
      c = cp;
    }
#endif
    for (; g < full; ++g, c += 4 * stride_cols)
      dual_mac_group<Rows>(load_u32(c), load_u32(c + 4), load_u32(w + 4 * g), load_u32(w1 + 4 * g), a00, a01, a10, a11);
    if (full < groups)
      dual_mac_group<Rows>(load_u32(c), load_u32(c + 4), tail0, tail1, a00, a01, a10, a11);
    acc[0][j] = a00;
    acc[0][j + 1] = a01;
    if (Rows == 2) {
      acc[1][j] = a10;
      acc[1][j + 1] = a11;
    }
  }
}

}  // namespace detail
}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_QUANT_GEMM_ARMV7EM_DSP_H
