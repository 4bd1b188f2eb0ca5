// Convolution (ONNX Conv) over 1, 2 or 3 spatial dims, NCHW layout.
//
// Every case is normalised to three spatial dims (depth, height, width); unused leading dims
// have size 1. The compiler picks one algorithm per layer from its shape (ops/conv.cpp):
// - conv_gemm (float, one group): a matrix product of the weights, packed at compile time,
//   with the input (1x1 stride-1 convolutions read it in place) or with its im2col, built block
//   by block in the node's scratch memory;
// - conv_depthwise (float, one input and one output channel per group): a direct kernel
//   over zero-padded copies of the input rows, vectorised along the output row;
// - conv_depthwise_in_place: the same without scratch, reading the input where it is, for
//   layers whose arena has no room for conv_depthwise's (on AVX-512 and AVX2, conv_depthwise's
//   3x3 stride-2 layers too: depthwise_stride2_detail);
// - conv_direct_packed (float, one group, 1-d and 2-d, SIMD targets): no scratch, output
//   channels in the vector lanes over weights packed at compile time, for convolutions whose
//   step has no room for an im2col block;
// - conv_direct (float, 1-d and 2-d): register-blocked direct loops, no scratch and weights as
//   they are, for grouped or run-time weights, and without SIMD where im2col has no room;
// - conv: the direct reference for every other case and type.
// The float kernels apply bias and a fused activation (activation.h) in their epilogue.
#ifndef ONNXC_CONV_H
#define ONNXC_CONV_H

#include "onnxc/activation.h"
#include "onnxc/base.h"
#include "onnxc/packed_gemm.h"
#include "onnxc/simd.h"
#include "onnxc/window.h"

namespace onnxc {
namespace rt {

struct ConvParams {
  index_t batch, in_channels, out_channels, group;
  index_t in_d, in_h, in_w;
  index_t out_d, out_h, out_w;
  index_t k_d, k_h, k_w;
  index_t stride_d, stride_h, stride_w;
  index_t dilation_d, dilation_h, dilation_w;
  index_t pad_d, pad_h, pad_w;  // padding before the first element of each dim
};

// x: [batch, in_channels, in_d, in_h, in_w]; w: [out_channels, in_channels/group, k_d, k_h, k_w];
// bias: [out_channels] or nullptr; y: [batch, out_channels, out_d, out_h, out_w].
template <class T>
inline void conv(const ConvParams& p, const T* x, const T* w, const T* bias, T* y) {
  using C = compute_t<T>;
  const index_t icg = p.in_channels / p.group, ocg = p.out_channels / p.group;
  const index_t in_plane = p.in_d * p.in_h * p.in_w, out_plane = p.out_d * p.out_h * p.out_w;
  const index_t ksize = p.k_d * p.k_h * p.k_w;
  for (index_t n = 0; n < p.batch; ++n) {
    for (index_t g = 0; g < p.group; ++g) {
      for (index_t oc = 0; oc < ocg; ++oc) {
        const index_t m = g * ocg + oc;
        T* yp = y + (n * p.out_channels + m) * out_plane;
        const C b = bias ? load(bias[m]) : C(0);
        // Accumulate in the compute type; 16-bit storage gets a compute-type pass below.
        for (index_t od = 0; od < p.out_d; ++od) {
          for (index_t oh = 0; oh < p.out_h; ++oh) {
            for (index_t ow = 0; ow < p.out_w; ++ow) {
              C acc = b;
              for (index_t ic = 0; ic < icg; ++ic) {
                const T* xp = x + (n * p.in_channels + g * icg + ic) * in_plane;
                const T* wp = w + (m * icg + ic) * ksize;
                for (index_t kd = 0; kd < p.k_d; ++kd) {
                  const index_t id = od * p.stride_d - p.pad_d + kd * p.dilation_d;
                  if (id < 0 || id >= p.in_d) continue;
                  for (index_t kh = 0; kh < p.k_h; ++kh) {
                    const index_t ih = oh * p.stride_h - p.pad_h + kh * p.dilation_h;
                    if (ih < 0 || ih >= p.in_h) continue;
                    const T* xrow = xp + (id * p.in_h + ih) * p.in_w;
                    const T* wrow = wp + (kd * p.k_h + kh) * p.k_w;
                    for (index_t kw = 0; kw < p.k_w; ++kw) {
                      const index_t iw = ow * p.stride_w - p.pad_w + kw * p.dilation_w;
                      if (iw < 0 || iw >= p.in_w) continue;
                      acc += load(xrow[iw]) * load(wrow[kw]);
                    }
                  }
                }
              }
              yp[(od * p.out_h + oh) * p.out_w + ow] = store<T>(acc);
            }
          }
        }
      }
    }
  }
}

// ---- float kernels ----

// The matrix product view of a convolution with one group: y[M, N] = W[M, K] * col[K, N] with
// M output channels, K = input channels * kernel taps, N output positions.
inline index_t conv_gemm_k(const ConvParams& p) { return p.in_channels * p.k_d * p.k_h * p.k_w; }
inline index_t conv_gemm_n(const ConvParams& p) { return p.out_d * p.out_h * p.out_w; }

// A 1x1 kernel with stride 1 and no padding reads its input as the matrix itself.
inline bool conv_reads_input_as_matrix(const ConvParams& p) {
  return p.k_d * p.k_h * p.k_w == 1 && p.stride_d == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_d == 0 &&
         p.pad_h == 0 && p.pad_w == 0;
}

// Floats of scratch conv_gemm needs: one im2col block (K x block_cols columns), or none.
// block_cols is the compiler's choice per layer: packed_gemm_block_cols(k) is the fastest, a
// smaller block (a multiple of kBlockColsQuantum) trades a little speed for arena memory.
inline index_t conv_gemm_scratch_floats(const ConvParams& p, index_t block_cols) {
  if (conv_reads_input_as_matrix(p)) return 0;
  const index_t k = conv_gemm_k(p), n = conv_gemm_n(p);
  return k * (n < block_cols ? n : block_cols);
}

// An output position of the convolution; `first` decomposed once per im2col block (the rows
// of a block all walk the same positions).
struct OutputPosition {
  index_t od, oh, ow;
};

inline OutputPosition output_position(const ConvParams& p, index_t flat) {
  return {flat / (p.out_h * p.out_w), (flat / p.out_w) % p.out_h, flat % p.out_w};
}

// dst[i] = src[2 * i] for i < n (im2col's rows under stride 2: half of MobileNet's and SqueezeNet's
// first layers, a scalar loop otherwise). Reads no float past src[2 * (n - 1)]: a whole vector of
// even lanes loads the odd float after its last lane, so the last vector takes at most L - 1 lanes.
inline void copy_even_floats(const float* src, index_t n, float* dst) {
  index_t i = 0;
#if defined(ONNXC_SIMD)
  for (; i + kFloatLanes < n; i += kFloatLanes) load_strided<2>(src + 2 * i, 2, kFloatLanes).store_unaligned(dst + i);
  const index_t last = n - i < kFloatLanes ? n - i : kFloatLanes - 1;
  if (last > 0) store_partial(load_strided<2>(src + 2 * i, 2, last), dst + i, last);
  i += last;
#endif
  for (; i < n; ++i) dst[i] = src[2 * i];
}

#if defined(ONNXC_SIMD) && defined(__AVX512F__)

// Output rows narrower than a vector (kws-dscnn's first layer: 25 x 5 outputs of a 10 x 4
// stride-2 kernel): copied as segments, a row of im2col is a few floats per call of the segment
// loop (about 7 ns for 5 floats). Here a vector of output positions, spanning several output
// rows, is one gather from the input plane, the lanes whose tap falls in the padding (or past
// `cols`) masked off and zero.
inline bool im2col_gathers_rows(const ConvParams& p) { return p.out_w < kFloatLanes && p.in_d == 1 && p.k_d == 1; }

inline void im2col_row_gathered(const ConvParams& p, const float* xc, index_t kh, index_t kw, OutputPosition from,
                                index_t cols, float* col) {
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i one = _mm512_set1_epi32(1), out_w = _mm512_set1_epi32(static_cast<int>(p.out_w));
  // Each lane's output row and column, stepped along a vector of positions at a time.
  __m512i ow = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(from.ow)), lane);
  __m512i oh = _mm512_set1_epi32(static_cast<int>(from.oh));
  for (__mmask16 past = _mm512_cmpge_epi32_mask(ow, out_w); past; past = _mm512_cmpge_epi32_mask(ow, out_w)) {
    ow = _mm512_mask_sub_epi32(ow, past, ow, out_w);
    oh = _mm512_mask_add_epi32(oh, past, oh, one);
  }
  const __m512i step_w = _mm512_set1_epi32(static_cast<int>(kFloatLanes % p.out_w));
  const __m512i step_h = _mm512_set1_epi32(static_cast<int>(kFloatLanes / p.out_w));
  const __m512i stride_h = _mm512_set1_epi32(static_cast<int>(p.stride_h));
  const __m512i stride_w = _mm512_set1_epi32(static_cast<int>(p.stride_w));
  const __m512i row0 = _mm512_set1_epi32(static_cast<int>(kh * p.dilation_h - p.pad_h));
  const __m512i column0 = _mm512_set1_epi32(static_cast<int>(kw * p.dilation_w - p.pad_w));
  const __m512i in_h = _mm512_set1_epi32(static_cast<int>(p.in_h)), in_w = _mm512_set1_epi32(static_cast<int>(p.in_w));
  for (index_t j = 0; j < cols; j += kFloatLanes) {
    const index_t left = cols - j;
    const __m512i ih = _mm512_add_epi32(_mm512_mullo_epi32(oh, stride_h), row0);
    const __m512i iw = _mm512_add_epi32(_mm512_mullo_epi32(ow, stride_w), column0);
    // Unsigned compares: a negative row or column is a large unsigned one.
    __mmask16 inside = _mm512_cmplt_epu32_mask(ih, in_h) & _mm512_cmplt_epu32_mask(iw, in_w);
    if (left < kFloatLanes) inside &= static_cast<__mmask16>((1u << left) - 1u);
    const __m512i at = _mm512_add_epi32(_mm512_mullo_epi32(ih, in_w), iw);
    const __m512 v = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), inside, at, xc, 4);
    if (left >= kFloatLanes) _mm512_storeu_ps(col + j, v);
    else store_partial(v, col + j, left);
    ow = _mm512_add_epi32(ow, step_w);
    oh = _mm512_add_epi32(oh, step_h);
    const __mmask16 past = _mm512_cmpge_epi32_mask(ow, out_w);
    ow = _mm512_mask_sub_epi32(ow, past, ow, out_w);
    oh = _mm512_mask_add_epi32(oh, past, oh, one);
  }
}

#endif
}  // namespace rt
}  // namespace onnxc
#if defined(ONNXC_SIMD) && defined(__AVX2__) && !defined(__AVX512F__)
#include "onnxc/im2col_gather_avx2.h"
#endif
namespace onnxc {
namespace rt {

// One row of im2col: the input under tap (kd, kh, kw) of channel plane xc for the `cols` output
// positions from `from` on, zero where the tap falls in the padding. Output rows are copied as
// segments: zeros, a strided run of the input row, zeros (or, narrower than a vector on
// AVX-512 and AVX2, gathered).
inline void im2col_row(const ConvParams& p, const float* xc, index_t kd, index_t kh, index_t kw, OutputPosition from,
                       index_t cols, float* col) {
#if defined(ONNXC_SIMD) && defined(__AVX512F__)
  if (im2col_gathers_rows(p)) return im2col_row_gathered(p, xc, kh, kw, from, cols, col);
#elif defined(ONNXC_SIMD) && defined(__AVX2__)
  if (im2col_gathers_rows_avx2(p)) return im2col_row_gathered_avx2(p, xc, kh, kw, from, cols, col);
#endif
  const index_t offset = kw * p.dilation_w - p.pad_w;  // input column of output column 0
  const ColumnRange inside = columns_inside(offset, p.stride_w, p.in_w, p.out_w);
  index_t od = from.od, oh = from.oh, ow0 = from.ow;
  for (index_t j = 0; j < cols;) {
    const index_t seg = p.out_w - ow0 < cols - j ? p.out_w - ow0 : cols - j;
    const index_t id = od * p.stride_d - p.pad_d + kd * p.dilation_d;
    const index_t ih = oh * p.stride_h - p.pad_h + kh * p.dilation_h;
    float* out = col + j;  // out[ow - ow0] for ow in [ow0, ow0 + seg)
    index_t lo = inside.lo < ow0 ? ow0 : inside.lo, hi = inside.hi > ow0 + seg ? ow0 + seg : inside.hi;
    if (id < 0 || id >= p.in_d || ih < 0 || ih >= p.in_h) lo = hi = ow0;
    if (hi < lo) hi = lo;
    const index_t row = (id * p.in_h + ih) * p.in_w + offset;  // x index of output column 0 (valid for [lo, hi))
    for (index_t ow = ow0; ow < lo; ++ow) out[ow - ow0] = 0.0f;
    if (p.stride_w == 1) {
      copy_floats(xc + row + lo, hi - lo, out + (lo - ow0));
    } else if (p.stride_w == 2) {
      copy_even_floats(xc + row + 2 * lo, hi - lo, out + (lo - ow0));
    } else {
      for (index_t ow = lo; ow < hi; ++ow) out[ow - ow0] = xc[row + ow * p.stride_w];
    }
    for (index_t ow = hi; ow < ow0 + seg; ++ow) out[ow - ow0] = 0.0f;
    j += seg;
    ow0 = 0;  // the next segment starts a new output row
    if (++oh == p.out_h) oh = 0, ++od;
  }
}

// The rows of col[K, cols] that input channel ic's taps own (K = channels x taps, in the
// weight's order): its plane under every kernel tap for output positions `from` on.
inline void im2col_channel(const ConvParams& p, const float* x, index_t ic, OutputPosition from, index_t cols,
                           float* col) {
  const float* xc = x + ic * p.in_d * p.in_h * p.in_w;
  col += ic * p.k_d * p.k_h * p.k_w * cols;
  for (index_t kd = 0; kd < p.k_d; ++kd)
    for (index_t kh = 0; kh < p.k_h; ++kh)
      for (index_t kw = 0; kw < p.k_w; ++kw) {
        im2col_row(p, xc, kd, kh, kw, from, cols, col);
        col += cols;
      }
}

// Tasks im2col_block cuts its rows of kernel taps into with a parallel-for: at most this many
// ranges of rows. A task per row gave a 1x1 stride-2 Conv of 160 channels onto 7 x 7 (regnet's
// projections) 160 tasks that copy 49 floats each, where taking a task costs about as much.
constexpr index_t kIm2colTasks = 8;

// col[K, cols] = the input under every kernel tap for output positions [first, first + cols)
// of one image; with a parallel-for, the rows of kernel taps (input channel, kd, kh) are cut into
// up to kIm2colTasks ranges: a task per input channel left a 3-channel first layer
// (mobilenet_v2's, squeezenet1_1's) three tasks for two threads.
inline void im2col_block(const ConvParams& p, const float* x, index_t first, index_t cols, float* col,
                         Parallel parallel = nullptr) {
  const OutputPosition from = output_position(p, first);
  if (!parallel) {
    for (index_t ic = 0; ic < p.in_channels; ++ic) im2col_channel(p, x, ic, from, cols, col);
    return;
  }
  const index_t rows = p.in_channels * p.k_d * p.k_h, tasks = rows < kIm2colTasks ? rows : kIm2colTasks;
  parallel_for(parallel, tasks, [&](index_t task) {
    const Range r = part_of(rows, tasks, task);
    for (index_t at = r.begin; at < r.end; ++at) {
      const index_t ic = at / (p.k_d * p.k_h), kd = at / p.k_h % p.k_d, kh = at % p.k_h;
      const float* xc = x + ic * p.in_d * p.in_h * p.in_w;
      float* row = col + (at * p.k_w) * cols;
      for (index_t kw = 0; kw < p.k_w; ++kw, row += cols) im2col_row(p, xc, kd, kh, kw, from, cols, row);
    }
  });
}

// ---- zero-padded copies of the input ----
//
// Kernels that read the input under every tap without border tests first copy its rows into
// zero-padded rows: padded column c holds input column c - pad_w (zero outside the row), up to
// the last column the last tap of the last output reads (and rows likewise).

inline index_t padded_input_w(const ConvParams& p) { return (p.out_w - 1) * p.stride_w + (p.k_w - 1) * p.dilation_w + 1; }
inline index_t padded_input_h(const ConvParams& p) { return (p.out_h - 1) * p.stride_h + (p.k_h - 1) * p.dilation_h + 1; }

// row[c] = xrow[c - pad_w] for c in [0, padded_input_w), zero where that is outside the input row.
inline void pad_input_row(const ConvParams& p, const float* xrow, float* row) {
  const index_t width = padded_input_w(p);
  const index_t lo = p.pad_w < width ? p.pad_w : width;
  const index_t hi = p.pad_w + p.in_w < width ? p.pad_w + p.in_w : width;
  for (index_t c = 0; c < lo; ++c) row[c] = 0.0f;
  copy_floats(xrow + lo - p.pad_w, hi - lo, row + lo);
  for (index_t c = hi; c < width; ++c) row[c] = 0.0f;
}

// ---- stride-1 convolutions: the product over a padded copy of the input ----
//
// With stride 1, im2col's row for tap (ic, kh, kw) is a shifted run of the input: in a copy
// whose channel planes are zero-padded to padded_input_w columns and laid end to end, output
// (oh, ow) under that tap is element (oh + kh * dilation_h) * padded_w + ow + kw * dilation_w of
// plane ic. So the packed product reads row l of B at an offset into the copy (PaddedInputRows),
// over out_h * padded_w "wide" columns (j = oh * padded_w + ow), and drops the columns
// ow >= out_w (computed from the padding) as it stores. The copy is about the input's size where
// im2col writes k_h * k_w copies of it. It is made in bands of output rows sized to the scratch
// the compiler gave conv_gemm for its im2col block (the input rows of the band's outputs).

// Floats after the last padded plane the wide columns' taps may read (their values reach only
// dropped columns).
inline index_t padded_input_slack(const ConvParams& p) { return (p.k_w - 1) * p.dilation_w + 1; }
// Input rows the outputs rows of a band of `band` rows read.
inline index_t padded_band_rows(const ConvParams& p, index_t band) { return band + (p.k_h - 1) * p.dilation_h; }
inline index_t padded_band_floats(const ConvParams& p, index_t band) {
  return p.in_channels * padded_band_rows(p, band) * padded_input_w(p) + padded_input_slack(p);
}
// The copy of a band, then the offset of each of B's K rows (index_t, 8-byte aligned).
inline index_t padded_offsets_at(const ConvParams& p, index_t band) { return (padded_band_floats(p, band) + 1) / 2 * 2; }
inline index_t padded_product_floats(const ConvParams& p, index_t band) {
  return padded_offsets_at(p, band) + conv_gemm_k(p) * static_cast<index_t>(sizeof(index_t) / sizeof(float));
}

// Largest copy (it is re-read for every panel of output channels, so it should stay in L2).
constexpr index_t kPaddedInputMaxFloats = 2 * kBlockFloats;

// Whether the dropped columns cost less than im2col: im2col copies each of B's K x N elements
// once, the product computes (padded_w - out_w) / out_w more columns of M multiply-adds each; a
// copied element costs about as much as 16 multiply-adds in the micro-kernel (measured on
// AVX-512: resnet8-cifar's 16 to 64 channels gain 30-45 %, squeezenet1_1's 13 x 13 layers with
// 192 and 256 channels lose).
constexpr index_t kCopyCostInMacs = 16;

// Output rows per band of the padded-input product with `scratch_floats` of scratch, or 0 when
// the convolution is not one it computes better than im2col (stride 1, 2-d, few enough dropped
// columns for its output channels) or not even one row fits.
inline index_t padded_band(const ConvParams& p, index_t scratch_floats) {
  const bool stride1 = p.stride_d == 1 && p.stride_h == 1 && p.stride_w == 1;
  if (!stride1 || p.in_d != 1 || p.k_d != 1 || conv_reads_input_as_matrix(p) ||
      (padded_input_w(p) - p.out_w) * p.out_channels > kCopyCostInMacs * p.out_w)
    return 0;
  index_t band = p.out_h;
  while (band > 0 && (padded_product_floats(p, band) > scratch_floats || padded_band_floats(p, band) > kPaddedInputMaxFloats))
    --band;
  return band;
}

inline bool conv_gemm_reads_padded_input(const ConvParams& p, index_t block_cols) {
  return padded_band(p, conv_gemm_scratch_floats(p, block_cols)) > 0;
}

// Row l of B: the padded copy from its offset (the B type of packed_gemm_detail's kernels).
struct PaddedInputRows {
  const float* b;
  const index_t* offsets;
  const float* row(index_t l) const { return b + offsets[l]; }
  PaddedInputRows shifted(index_t cols) const { return {b + cols, offsets}; }
};

namespace padded_detail {

// Wide columns go through a buffer of kPanelRows x kWideChunk floats on the stack, a whole
// number of register tiles on every ISA (the portable kernel's 4 columns included; RVV's strips of
// up to 16 floats per 128 bits of VLEN: whole strips up to VLEN 512).
#if defined(ONNXC_SIMD)
constexpr index_t kWideChunk = kBlockColsQuantum;
#elif defined(__riscv_vector)
constexpr index_t kWideChunk = 64;
#else
constexpr index_t kWideChunk = 16;
#endif

// y[c'] for the output columns among wide columns [j, j + cols) of one output channel: the
// chunk's row, cut at the ends of the padded rows, without the dropped columns.
inline void store_wide_row(const ConvParams& p, const float* chunk, index_t j, index_t cols, float* y) {
  const index_t width = padded_input_w(p);
  index_t oh = j / width, ow = j % width;
  for (index_t c = 0; c < cols;) {
    const index_t seg = width - ow < cols - c ? width - ow : cols - c;
    if (ow < p.out_w) copy_floats(chunk + c, (p.out_w - ow < seg ? p.out_w - ow : seg), y + oh * p.out_w + ow);
    c += seg;
    ow = 0, ++oh;
  }
}

// The band's padded rows of input channel ic: row r is input row first_row + r (zero outside).
inline void copy_band(const ConvParams& p, const float* x, index_t ic, index_t first_row, index_t rows,
                      float* plane) {
  const index_t width = padded_input_w(p);
  for (index_t r = 0; r < rows; ++r) {
    float* row = plane + r * width;
    const index_t ih = first_row + r;
    if (ih < 0 || ih >= p.in_h) {
      for (index_t c = 0; c < width; ++c) row[c] = 0.0f;
    } else {
      pad_input_row(p, x + (ic * p.in_h + ih) * p.in_w, row);
    }
  }
}

// Panel `panel` of output channels over the `wide` columns of a band; y: the band's first output
// row of channel 0.
inline void panel(const ConvParams& p, index_t panel, index_t wide, const float* w_packed, const PaddedInputRows& b,
                  const float* bias, float* y, const Epilogue& e) {
  const index_t m = p.out_channels, k = conv_gemm_k(p), n = conv_gemm_n(p);
  const index_t first = panel * kPanelRows, rows = m - first < kPanelRows ? m - first : kPanelRows;
  float chunk[kPanelRows * kWideChunk];
  for (index_t j = 0; j < wide; j += kWideChunk) {
    const index_t cols = wide - j < kWideChunk ? wide - j : kWideChunk;
    packed_gemm_detail::panel(rows, cols, k, w_packed + first * k, b.shifted(j), chunk, kWideChunk,
                              bias ? bias + first : nullptr, e);
    for (index_t r = 0; r < rows; ++r) store_wide_row(p, chunk + r * kWideChunk, j, cols, y + (first + r) * n);
  }
}

}  // namespace padded_detail

// One image, band by band of `band` output rows (padded_band): the band's padded copy (a task
// per input channel), then its product (a task per panel of output channels).
inline void conv_padded_gemm(const ConvParams& p, const float* x, const float* w_packed, const float* bias, float* y,
                             float* scratch, index_t band, const Epilogue& e, Parallel parallel) {
  const index_t width = padded_input_w(p), plane = padded_band_rows(p, band) * width;
  float* padded = scratch;
  index_t* offsets = reinterpret_cast<index_t*>(scratch + padded_offsets_at(p, band));
  for (index_t ic = 0, l = 0; ic < p.in_channels; ++ic)
    for (index_t kh = 0; kh < p.k_h; ++kh)
      for (index_t kw = 0; kw < p.k_w; ++kw) offsets[l++] = ic * plane + kh * p.dilation_h * width + kw * p.dilation_w;
  for (index_t i = p.in_channels * plane; i < padded_band_floats(p, band); ++i) padded[i] = 0.0f;
  const PaddedInputRows b{padded, offsets};
  for (index_t oh = 0; oh < p.out_h; oh += band) {
    const index_t rows = p.out_h - oh < band ? p.out_h - oh : band;
    parallel_for(parallel, p.in_channels, [&](index_t ic) {
      padded_detail::copy_band(p, x, ic, oh - p.pad_h, padded_band_rows(p, rows), padded + ic * plane);
    });
    parallel_for(parallel, packed_gemm_panels(p.out_channels), [&](index_t panel) {
      padded_detail::panel(p, panel, rows * width, w_packed, b, bias, y + oh * p.out_w, e);
    });
  }
}

// ---- stride-1 'same' convolutions: the product reading the input in place (AVX-512) ----
//
// Where the output rows are as wide as the input's (stride 1, padding (k_w - 1) * dilation_w in
// all: squeezenet1_1's 3 x 3 expand layers, resnet8-cifar's 3 x 3 layers), output (oh, ow) at
// flat column j = oh * W + ow of its plane reads, under tap (kh, kw), element
// j + (kh * dilation_h - pad_h) * W + kw * dilation_w - pad_w of its input channel's plane: under
// every tap, a vector of output columns reads one run of the input, across output rows too. The
// lanes whose tap falls in the padding (a row above or below the plane, a column that wrapped to
// the neighbouring row) are left out of the load by its mask: an AVX-512 masked load reads zero
// there and never touches that memory. So the packed product's register tiles read B straight
// from the input: no im2col, no padded copy, no dropped columns, and the output is stored as it
// is computed. The masks of a vector of columns depend only on where it starts; each task
// computes those of its columns once.
namespace shifted_detail {

constexpr index_t kMaxTaps = 25;  // kernels up to 5 x 5

inline index_t shifted_reach_before(const ConvParams& p) { return p.pad_h * p.in_w + p.pad_w; }
inline index_t shifted_reach_after(const ConvParams& p) {
  return ((p.k_h - 1) * p.dilation_h - p.pad_h) * p.in_w + (p.k_w - 1) * p.dilation_w - p.pad_w;
}

}  // namespace shifted_detail

// Which convolutions conv_shifted_gemm can compute: stride 1, output rows as wide as the input's,
// and planes larger than a tap's reach (a channel's runs then stay inside its neighbours' planes).
// On targets without AVX-512 it computes none (kShiftedInputProduct).
inline bool conv_shape_reads_shifted_input(const ConvParams& p) {
  const index_t plane = p.in_h * p.in_w;
  return p.stride_h == 1 && p.stride_w == 1 && p.in_d == 1 && p.k_d == 1 && p.out_w == p.in_w &&
         p.k_h * p.k_w <= shifted_detail::kMaxTaps && !conv_reads_input_as_matrix(p) &&
         shifted_detail::shifted_reach_before(p) <= plane && shifted_detail::shifted_reach_after(p) + 16 <= plane &&
         plane < (index_t{1} << 30);
}

// Where input offset `at` (kh * dilation - pad) of output row (or column) 0 lies in the phase
// planes of a stride-2 convolution: the parity of its rows, and the shift from the output's.
struct PhaseTap {
  index_t parity, shift;
};
inline PhaseTap phase_tap(index_t at) {
  const index_t parity = at >= 0 ? at % 2 : (2 - (-at) % 2) % 2;
  return {parity, (at - parity) / 2};
}

// Floats of scratch conv_phase_gemm needs: the four phase planes of every input channel, and the
// slack the last partial vectors load past them.
constexpr index_t kPhaseSlack = 32;
inline index_t conv_phase_floats(const ConvParams& p) { return p.in_channels * 4 * p.out_h * p.out_w + kPhaseSlack; }

// Which convolutions conv_phase_gemm can compute (below): stride 2, a kernel larger than 1 x 1,
// every tap inside the phase planes of out_h x out_w (shifts <= 0) and no run starting before
// the copy; on targets without AVX-512 none (kShiftedInputProduct).
inline bool conv_shape_reads_phase_planes(const ConvParams& p) {
  if (p.stride_h != 2 || p.stride_w != 2 || p.in_d != 1 || p.k_d != 1 || p.k_h * p.k_w < 2 ||
      p.k_h * p.k_w > shifted_detail::kMaxTaps || p.out_h < 2 || p.in_channels * 4 * p.out_h * p.out_w >= (index_t{1} << 30))
    return false;
  const index_t out_plane = p.out_h * p.out_w;
  for (index_t kh = 0; kh < p.k_h; ++kh)
    for (index_t kw = 0; kw < p.k_w; ++kw) {
      const PhaseTap h = phase_tap(kh * p.dilation_h - p.pad_h), w = phase_tap(kw * p.dilation_w - p.pad_w);
      if (h.shift > 0 || w.shift > 0 || (2 * h.parity + w.parity) * out_plane + h.shift * p.out_w + w.shift < 0)
        return false;
    }
  return true;
}

// Products shallower than this take the padded copy in conv_gemm when they have its scratch: the
// tiles run a loop over the input channels per tap, which short ones do not amortize (16 channels
// x 3 x 3: squeezenet1_1's 55 x 55 layers 300-315 us against 290, resnet8-cifar's 32 x 32 ones 30
// against 28.6; 8 x 5 x 5 taps on mnist-cnn's 14 x 14 already gain, 9.6 -> 8.0 us). Without that
// scratch the compiler still gives them conv_shifted (the alternative is rt::conv_direct_packed).
constexpr index_t kShiftedMinDepth = 192;

#if defined(ONNXC_SIMD) && defined(__AVX512F__)

constexpr bool kShiftedInputProduct = true;

namespace shifted_detail {

constexpr index_t kBlockVectors = 6;     // columns per task: 96, a whole number of 32-column tiles
constexpr index_t kBlockCols = kBlockVectors * 16;
static_assert(kFloatLanes == 16, "a mask per 16 lanes");

// The input runs of one block of columns: tap t of input channel ic is offset[t] + ic * plane
// floats from the block's column, vector v of the tile masked by mask[v][t].
struct ShiftedInput {
  const float* x;  // the block's first column in input plane 0
  index_t first_col, plane, taps;
  index_t before, after;  // floats before and after its 16 columns the runs of a vector reach at most
  const index_t* offset;
  const __mmask16 (*mask)[kMaxTaps];
};

// Where each tap reads, in planes of `rows` x `width` floats whose flat columns are the output's:
// output (oh, ow) reads (oh + dh[t], ow + dw[t]), nothing outside the plane.
struct TapShifts {
  index_t taps, rows, width;
  index_t dh[kMaxTaps], dw[kMaxTaps];
};

// mask[t] for the 16 columns from flat column j (of n): the lanes whose input under tap t lies
// inside the plane. Lane columns and rows are j's plus the lane, wrapped at the row's end.
inline void lane_masks(const TapShifts& s, index_t j, index_t n, __mmask16* mask) {
  const __m512i width = _mm512_set1_epi32(static_cast<int>(s.width)), one = _mm512_set1_epi32(1);
  __m512i ow = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(j % s.width)),
                                _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
  __m512i oh = _mm512_set1_epi32(static_cast<int>(j / s.width));
  for (__mmask16 wrap; (wrap = _mm512_cmpge_epi32_mask(ow, width)) != 0;) {
    ow = _mm512_mask_sub_epi32(ow, wrap, ow, width);
    oh = _mm512_mask_add_epi32(oh, wrap, oh, one);
  }
  const __mmask16 columns = static_cast<__mmask16>(n - j >= 16 ? 0xffffu : (1u << (n - j)) - 1u);
  auto within = [](__m512i at, index_t size) {
    return static_cast<__mmask16>(_mm512_cmpge_epi32_mask(at, _mm512_setzero_si512()) &
                                  _mm512_cmplt_epi32_mask(at, _mm512_set1_epi32(static_cast<int>(size))));
  };
  for (index_t t = 0; t < s.taps; ++t) {
    const __m512i ih = _mm512_add_epi32(oh, _mm512_set1_epi32(static_cast<int>(s.dh[t])));
    const __m512i iw = _mm512_add_epi32(ow, _mm512_set1_epi32(static_cast<int>(s.dw[t])));
    mask[t] = static_cast<__mmask16>(columns & within(ih, s.rows) & within(iw, s.width));
  }
}

// How a tile loads a tap's input runs: whole vectors where every lane is inside the plane;
// whole vectors with the lanes in the padding zeroed where the run lies inside the input tensor;
// masked loads where it may reach outside it (the first channel's runs near the top of the
// plane, the last one's near its end). Masked loads and zeroing moves each cost: with masked loads
// only, squeezenet1_1's 3 x 3 layers ran at 175-185 GFLOP/s, with zeroing moves everywhere the
// 16-channel ones still lost to the padded copy (183 against 193).
enum class RunLoad { Whole, Zeroed, Masked };

// v with the lanes outside mask zero, by a move after the load: GCC otherwise folds the two into
// a masked load, which Zen 4 runs far slower (resnet8-cifar's 32 x 32 layer with tall tiles: 76
// against 42 us).
ONNXC_INLINE __m512 zero_lanes(__mmask16 mask, __m512 v) {
  asm("" : "+v"(v));
  return _mm512_maskz_mov_ps(mask, v);
}

// acc += tap t's weights x its input runs, for input channels [first, last): xt, at are channel
// 0's run and weights, a channel's the next plane and taps * a_step weights on.
template <int Rows, int Vecs, RunLoad Load>
ONNXC_INLINE void accumulate_tap(vfloat (&acc)[Rows][Vecs], const float* at, index_t a_channel_step, const float* xt,
                                 index_t plane, const __mmask16 (&mask)[Vecs], index_t first, index_t last) {
  for (index_t ic = first; ic < last; ++ic) {
    const float* x = xt + ic * plane;
    const float* a = at + ic * a_channel_step;
    vfloat bv[Vecs];
    ONNXC_UNROLL for (int v = 0; v < Vecs; ++v) {
      if (Load == RunLoad::Whole) bv[v] = _mm512_loadu_ps(x + v * 16);
      // (Only the vectors with lanes in the padding: resnet8-cifar's 32-wide rows have one per
      // tile and tap, and the zeroing moves compete with the FMAs; 53.4 -> 52.0 us.)
      if (Load == RunLoad::Zeroed)
        bv[v] = mask[v] == 0xffff ? _mm512_loadu_ps(x + v * 16) : _mm512_maskz_mov_ps(mask[v], _mm512_loadu_ps(x + v * 16));
      if (Load == RunLoad::Masked) bv[v] = _mm512_maskz_loadu_ps(mask[v], x + v * 16);
    }
    ONNXC_UNROLL for (int r = 0; r < Rows; ++r) {
      const vfloat av(a[r]);
      ONNXC_UNROLL for (int v = 0; v < Vecs; ++v) acc[r][v] = xsimd::fma(av, bv[v], acc[r][v]);
    }
  }
}

// Rows x Vecs vectors of y from column j of the block (j / 16 + v: the tile's vectors of masks),
// cols of them real (the last vector may be partial): the packed product's tile with B's rows
// read from the input, tap by tap (a tap's masks stay in mask registers over the channels).
template <int Rows, int Vecs>
inline void tile(index_t in_channels, const float* a, index_t a_step, const ShiftedInput& b, index_t j, index_t cols,
                 float* y, index_t ldy, const float* bias, const Epilogue& e) {
  vfloat acc[Rows][Vecs];
  ONNXC_UNROLL for (int r = 0; r < Rows; ++r)
    ONNXC_UNROLL for (int v = 0; v < Vecs; ++v) acc[r][v] = vfloat(bias ? bias[r] : 0.0f);
  const index_t a_channel_step = b.taps * a_step;
  // Whether every channel's runs of the tile lie inside the input tensor (all but the tiles at the
  // top and the bottom of the plane).
  const bool inside = b.first_col + j >= b.before && b.first_col + j + Vecs * 16 + b.after <= b.plane;
  for (index_t t = 0; t < b.taps; ++t) {
    __mmask16 mask[Vecs];
    bool whole = true;
    ONNXC_UNROLL for (int v = 0; v < Vecs; ++v) {
      mask[v] = b.mask[j / 16 + v][t];
      whole = whole && mask[v] == 0xffff;
    }
    // (The address of a tap's run in the first channel may lie before the input; only its masked
    // lanes do.)
    const float* xt = b.x + j + b.offset[t];
    const float* at = a + t * a_step;
    if (whole) {
      accumulate_tap<Rows, Vecs, RunLoad::Whole>(acc, at, a_channel_step, xt, b.plane, mask, 0, in_channels);
    } else if (inside) {
      accumulate_tap<Rows, Vecs, RunLoad::Zeroed>(acc, at, a_channel_step, xt, b.plane, mask, 0, in_channels);
    } else {
      accumulate_tap<Rows, Vecs, RunLoad::Masked>(acc, at, a_channel_step, xt, b.plane, mask, 0, 1);
      accumulate_tap<Rows, Vecs, RunLoad::Zeroed>(acc, at, a_channel_step, xt, b.plane, mask, 1, in_channels - 1);
      if (in_channels > 1)
        accumulate_tap<Rows, Vecs, RunLoad::Masked>(acc, at, a_channel_step, xt, b.plane, mask, in_channels - 1,
                                                    in_channels);
    }
  }
  packed_gemm_detail::store_activated<Rows * Vecs>(&acc[0][0], e, [&](int i, vfloat out) {
    const index_t first = i % Vecs * 16;
    float* at = y + i / Vecs * ldy + j + first;
    if (cols - first >= 16) out.store_unaligned(at);
    else store_partial(out, at, cols - first);
  });
}

// The block's columns [0, cols) for `rows` (<= 8) output channels: 32-column tiles, then 16.
template <int Rows>
inline void panel_columns(index_t in_channels, const float* a, index_t a_step, const ShiftedInput& b, index_t cols,
                          float* y, index_t ldy, const float* bias, const Epilogue& e) {
  index_t j = 0;
  for (; j + 32 <= cols; j += 32) tile<Rows, 2>(in_channels, a, a_step, b, j, 32, y, ldy, bias, e);
  for (; j < cols; j += 16) tile<Rows, 1>(in_channels, a, a_step, b, j, cols - j, y, ldy, bias, e);
}

// One panel of output channels (rows of it, at most 8) over one block of columns.
inline void panel(index_t rows, index_t in_channels, const float* a, const ShiftedInput& b, index_t cols, float* y,
                  index_t ldy, const float* bias, const Epilogue& e) {
  static_assert(kPanelRows == 8, "a panel is one tile high");
  switch (rows) {
    case 1: return panel_columns<1>(in_channels, a, rows, b, cols, y, ldy, bias, e);
    case 2: return panel_columns<2>(in_channels, a, rows, b, cols, y, ldy, bias, e);
    case 3: return panel_columns<3>(in_channels, a, rows, b, cols, y, ldy, bias, e);
    case 4: return panel_columns<4>(in_channels, a, rows, b, cols, y, ldy, bias, e);
    case 5: return panel_columns<5>(in_channels, a, rows, b, cols, y, ldy, bias, e);
    case 6: return panel_columns<6>(in_channels, a, rows, b, cols, y, ldy, bias, e);
    case 7: return panel_columns<7>(in_channels, a, rows, b, cols, y, ldy, bias, e);
    case 8: return panel_columns<8>(in_channels, a, rows, b, cols, y, ldy, bias, e);
    default: return;
  }
}

// Tall tiles: 16 output channels (two packed panels, a0 and a1) x one vector of columns. Each
// input run loaded (and zeroed where its tap falls in the padding) feeds 16 multiply-adds, whose
// weights the FMAs take as broadcast memory operands, where the 8 x 2 tile above loads and masks
// two runs for 16. resnet8-cifar's 3 x 3 layers alone: 16 channels on 32 x 32 51.8 -> 41.9 us,
// 32 on 16 x 16 47.7 -> 41.0, 64 on 8 x 8 44.1 -> 40.6; squeezenet1_1's 16 -> 64 on 55 x 55-sized
// planes 456 -> 380.
constexpr index_t kTallRows = 2 * kPanelRows;

template <RunLoad Load>
ONNXC_INLINE void accumulate_tall(vfloat (&acc)[kTallRows], const float* a0, const float* a1, index_t a_channel_step,
                                  const float* xt, index_t plane, __mmask16 mask, index_t first, index_t last) {
  for (index_t ic = first; ic < last; ++ic) {
    const float* x = xt + ic * plane;
    vfloat b;
    if (Load == RunLoad::Whole) b = _mm512_loadu_ps(x);
    if (Load == RunLoad::Zeroed) b = zero_lanes(mask, _mm512_loadu_ps(x));
    if (Load == RunLoad::Masked) b = _mm512_maskz_loadu_ps(mask, x);
    const float* w0 = a0 + ic * a_channel_step;
    const float* w1 = a1 + ic * a_channel_step;
    ONNXC_UNROLL for (int r = 0; r < kPanelRows; ++r) acc[r] = xsimd::fma(vfloat(w0[r]), b, acc[r]);
    ONNXC_UNROLL for (int r = 0; r < kPanelRows; ++r) acc[kPanelRows + r] = xsimd::fma(vfloat(w1[r]), b, acc[kPanelRows + r]);
  }
}

// Stores the tall tile's rows, activated.
ONNXC_INLINE void store_tall(const vfloat (&acc)[kTallRows], index_t j, index_t cols, float* y, index_t ldy,
                             const Epilogue& e) {
  auto store = [&](int r, vfloat out) {
    if (cols >= 16) out.store_unaligned(y + r * ldy + j);
    else store_partial(out, y + r * ldy + j, cols);
  };
  if (e.activation == Activation::None) {
    ONNXC_UNROLL for (int r = 0; r < kTallRows; ++r) store(r, acc[r]);
  } else if (packed_gemm_detail::is_clamp(e)) {
    const packed_gemm_detail::Clamp c = packed_gemm_detail::clamp_of(e);
    ONNXC_UNROLL for (int r = 0; r < kTallRows; ++r) store(r, packed_gemm_detail::clamp(c, acc[r]));
  } else {
    ONNXC_UNROLL for (int r = 0; r < kTallRows; ++r) store(r, activate(e, acc[r]));
  }
}

// Input channels x taps per pass of the tall tiles over a block of columns: a pass multiplies
// 16 x that many weights (16 KB at 256), kept in L1 over the block's column tiles, its partial
// sums in y.
constexpr index_t kTallPassDepth = 256;

// Channels per pass: passes as even as they can be, none deeper than kTallPassDepth (one channel
// at least).
inline index_t tall_pass_channels(index_t in_channels, index_t taps) {
  const index_t most = kTallPassDepth / taps > 0 ? kTallPassDepth / taps : 1;
  const index_t passes = (in_channels + most - 1) / most;
  return (in_channels + passes - 1) / passes;
}

// Weights a tall tile fetches for the pass after its own while it computes: `lines` cache lines
// from `at` and as many from `at + kPanelRows * k` (the next pass's two panels), a share per tap.
// (In a model the weights come from L3 or memory: resnet18's 512-channel 3 x 3 layers hold 9.4 MB
// each, and without it each pass's first column tile waited for them.)
struct TallPrefetch {
  const float* at;
  index_t lines;
};

// The input channels [first, last) of a pass (of in_channels) into 16 rows of y (two whole panels
// of packed weights from a) x the vector at column j of the block, cols of its lanes real: the
// first pass starts from the bias, later ones from y's partial sums; the last stores activated.
// Inside the input tensor (Border false) a tap's runs load whole, or zeroed by a move where lanes
// fall in the padding; near its top and bottom (Border true), where a run may reach outside the
// tensor, the first and the last channel's runs take masked loads.
// Each case is a function of its own: with all three loops in one, GCC kept the accumulators in
// memory between taps (as it did when acc's address went to store_activated), 42 -> 75 us.
template <bool Border>
inline void tall_tile_at(index_t in_channels, index_t first, index_t last, const float* a, index_t k,
                         const ShiftedInput& b, index_t j, index_t cols, float* y, index_t ldy, const float* bias,
                         const Epilogue& e, TallPrefetch pf) {
  vfloat acc[kTallRows];
  if (first > 0) {
    ONNXC_UNROLL for (int r = 0; r < kTallRows; ++r)
      acc[r] = cols >= 16 ? vfloat::load_unaligned(y + r * ldy + j) : load_partial(y + r * ldy + j, cols);
  } else {
    ONNXC_UNROLL for (int r = 0; r < kTallRows; ++r) acc[r] = vfloat(bias ? bias[r] : 0.0f);
  }
  const float* a1 = a + kPanelRows * k;
  const index_t a_channel_step = b.taps * kPanelRows;
  const index_t per_tap = (pf.lines + b.taps - 1) / b.taps;
  for (index_t t = 0; t < b.taps; ++t) {
    for (index_t l = t * per_tap; l < pf.lines && l < (t + 1) * per_tap; ++l) {
      __builtin_prefetch(pf.at + l * 16);
      __builtin_prefetch(pf.at + kPanelRows * k + l * 16);
    }
    const __mmask16 mask = b.mask[j / 16][t];
    const float* xt = b.x + j + b.offset[t];
    const float* w0 = a + t * kPanelRows;
    const float* w1 = a1 + t * kPanelRows;
    if (Border) {
      index_t lo = first, hi = last;
      if (lo == 0) {
        accumulate_tall<RunLoad::Masked>(acc, w0, w1, a_channel_step, xt, b.plane, mask, 0, 1);
        lo = 1;
      }
      const bool tail = hi == in_channels && hi > lo;
      if (tail) --hi;
      accumulate_tall<RunLoad::Zeroed>(acc, w0, w1, a_channel_step, xt, b.plane, mask, lo, hi);
      if (tail) accumulate_tall<RunLoad::Masked>(acc, w0, w1, a_channel_step, xt, b.plane, mask, hi, hi + 1);
    } else if (mask == 0xffff) {
      accumulate_tall<RunLoad::Whole>(acc, w0, w1, a_channel_step, xt, b.plane, mask, first, last);
    } else {
      accumulate_tall<RunLoad::Zeroed>(acc, w0, w1, a_channel_step, xt, b.plane, mask, first, last);
    }
  }
  store_tall(acc, j, cols, y, ldy, last == in_channels ? e : kNoActivation);
}

// Live columns of a block's last vector that tall_columns computes one at a time (at 1 the tall
// tile's vector is 1/16 live; 4 live columns on 6 x 6 and 10 x 10 planes were no faster).
constexpr index_t kTallColumnsMax = 1;

// The tall tile's 16 rows for the output columns [j, j + count) of the block, one column at a
// time with the output channels in the lanes (two halves of 8, a packed panel's row each): the
// columns of a plane's last vector when few are live (49 = 3 x 16 + 1), where the tall tile pays
// 16 multiply-adds per channel and tap for the vector, this 2 per column. Taps in the padding
// are skipped.
inline void tall_columns(index_t in_channels, index_t first, index_t last, const float* a, index_t k,
                         const ShiftedInput& b, index_t j, index_t count, float* y, index_t ldy, const float* bias,
                         const Epilogue& e, TallPrefetch pf) {
  for (index_t l = 0; l < pf.lines; ++l) {
    __builtin_prefetch(pf.at + l * 16);
    __builtin_prefetch(pf.at + kPanelRows * k + l * 16);
  }
  const float* a1 = a + kPanelRows * k;
  const index_t step = b.taps * kPanelRows;
  for (index_t col = j; col < j + count; ++col) {
    alignas(64) float sums[kTallRows];
    if (first > 0) {
      for (index_t r = 0; r < kTallRows; ++r) sums[r] = y[r * ldy + col];
    } else {
      for (index_t r = 0; r < kTallRows; ++r) sums[r] = bias ? bias[r] : 0.0f;
    }
    // Four chains per half (channels ic + u for u < 4) hide the multiply-adds' latency.
    __m256 lo[4], hi[4];
    lo[0] = _mm256_load_ps(sums);
    hi[0] = _mm256_load_ps(sums + kPanelRows);
    for (int u = 1; u < 4; ++u) lo[u] = hi[u] = _mm256_setzero_ps();
    for (index_t t = 0; t < b.taps; ++t) {
      if (((b.mask[col / 16][t] >> (col % 16)) & 1) == 0) continue;  // in the padding
      const float* x = b.x + col + b.offset[t];
      const float* w0 = a + t * kPanelRows;
      const float* w1 = a1 + t * kPanelRows;
      index_t ic = first;
      for (; ic + 4 <= last; ic += 4) {
        ONNXC_UNROLL for (int u = 0; u < 4; ++u) {
          const __m256 xv = _mm256_broadcast_ss(x + (ic + u) * b.plane);
          lo[u] = _mm256_fmadd_ps(xv, _mm256_loadu_ps(w0 + (ic + u) * step), lo[u]);
          hi[u] = _mm256_fmadd_ps(xv, _mm256_loadu_ps(w1 + (ic + u) * step), hi[u]);
        }
      }
      for (; ic < last; ++ic) {
        const __m256 xv = _mm256_broadcast_ss(x + ic * b.plane);
        lo[0] = _mm256_fmadd_ps(xv, _mm256_loadu_ps(w0 + ic * step), lo[0]);
        hi[0] = _mm256_fmadd_ps(xv, _mm256_loadu_ps(w1 + ic * step), hi[0]);
      }
    }
    const __m256 lo_sum = _mm256_add_ps(_mm256_add_ps(lo[0], lo[1]), _mm256_add_ps(lo[2], lo[3]));
    const __m256 hi_sum = _mm256_add_ps(_mm256_add_ps(hi[0], hi[1]), _mm256_add_ps(hi[2], hi[3]));
    vfloat out = _mm512_insertf32x8(_mm512_castps256_ps512(lo_sum), hi_sum, 1);
    if (last == in_channels) out = activate(e, out);
    out.store_aligned(sums);
    for (index_t r = 0; r < kTallRows; ++r) y[r * ldy + col] = sums[r];
  }
}

inline void tall_tile(index_t in_channels, index_t first, index_t last, const float* a, index_t k,
                      const ShiftedInput& b, index_t j, index_t cols, float* y, index_t ldy, const float* bias,
                      const Epilogue& e, TallPrefetch pf) {
  if (b.first_col + j >= b.before && b.first_col + j + 16 + b.after <= b.plane)
    tall_tile_at<false>(in_channels, first, last, a, k, b, j, cols, y, ldy, bias, e, pf);
  else
    tall_tile_at<true>(in_channels, first, last, a, k, b, j, cols, y, ldy, bias, e, pf);
}

// The product over runs of `x` (channel planes `plane` floats apart, tap t at offset[t] from a
// column): a task per block of columns and group of output channels (16 in tall tiles while
// two whole panels are left, then a panel of 8), the groups of a block next to each other (they
// read the same input).
inline void shifted_product(const ConvParams& p, const float* x, index_t plane, const index_t* offset,
                            const TapShifts& shifts, index_t before, index_t after, const float* w_packed,
                            const float* bias, float* y, const Epilogue& e, Parallel parallel) {
  const index_t m = p.out_channels, k = conv_gemm_k(p), n = conv_gemm_n(p);
  const index_t talls = m / kTallRows, panels = packed_gemm_panels(m - talls * kTallRows);
  const index_t groups = talls + panels, blocks = (n + kBlockCols - 1) / kBlockCols;
  parallel_for(parallel, blocks * groups, [&](index_t task) {
    const index_t j = task / groups * kBlockCols, cols = n - j < kBlockCols ? n - j : kBlockCols;
    const index_t group = task % groups;
    __mmask16 mask[kBlockVectors][kMaxTaps];
    for (index_t v = 0; v * 16 < cols; ++v) lane_masks(shifts, j + v * 16, n, mask[v]);
    const ShiftedInput b{x + j, j, plane, shifts.taps, before, after, offset, mask};
    if (group < talls) {
      const index_t first = group * kTallRows, step = tall_pass_channels(p.in_channels, shifts.taps);
      const float* a = w_packed + first * k;
      const index_t tiles = (cols + 15) / 16, pass_floats = kPanelRows * shifts.taps;
      for (index_t c0 = 0; c0 < p.in_channels; c0 += step) {
        const index_t c1 = p.in_channels - c0 < step ? p.in_channels : c0 + step;
        // The next pass's weights (this group's next channels, else the next group's first pass),
        // a slice per column tile.
        const bool last_pass = c1 == p.in_channels;
        const float* next = !last_pass ? a + c1 * pass_floats : group + 1 < talls ? a + kTallRows * k : nullptr;
        const index_t next_channels = !last_pass ? (p.in_channels - c1 < step ? p.in_channels - c1 : step) : step;
        const index_t lines = next ? (next_channels * pass_floats + 15) / 16 : 0;
        for (index_t c = 0, tile = 0; c < cols; c += 16, ++tile) {
          const index_t lo = lines * tile / tiles, hi = lines * (tile + 1) / tiles;
          const TallPrefetch pf{next ? next + lo * 16 : nullptr, hi - lo};
          if (cols - c <= kTallColumnsMax)
            tall_columns(p.in_channels, c0, c1, a, k, b, c, cols - c, y + first * n + j, n, bias ? bias + first : nullptr,
                         e, pf);
          else
            tall_tile(p.in_channels, c0, c1, a, k, b, c, cols - c, y + first * n + j, n, bias ? bias + first : nullptr,
                      e, pf);
        }
      }
      return;
    }
    const index_t first = talls * kTallRows + (group - talls) * kPanelRows;
    const index_t rows = m - first < kPanelRows ? m - first : kPanelRows;
    panel(rows, p.in_channels, w_packed + first * k, b, cols, y + first * n + j, n, bias ? bias + first : nullptr, e);
  });
}

}  // namespace shifted_detail

// One image of a convolution conv_shape_reads_shifted_input accepts.
inline void conv_shifted_gemm(const ConvParams& p, const float* x, const float* w_packed, const float* bias, float* y,
                              const Epilogue& e, Parallel parallel) {
  using namespace shifted_detail;
  TapShifts shifts{p.k_h * p.k_w, p.in_h, p.in_w, {}, {}};
  index_t offset[kMaxTaps];
  for (index_t kh = 0, t = 0; kh < p.k_h; ++kh)
    for (index_t kw = 0; kw < p.k_w; ++kw, ++t) {
      shifts.dh[t] = kh * p.dilation_h - p.pad_h;
      shifts.dw[t] = kw * p.dilation_w - p.pad_w;
      offset[t] = shifts.dh[t] * p.in_w + shifts.dw[t];
    }
  shifted_product(p, x, p.in_h * p.in_w, offset, shifts, shifted_reach_before(p), shifted_reach_after(p), w_packed,
                  bias, y, e, parallel);
}

// ---- stride-2 convolutions: the same product over the input's four phase planes ----
//
// With stride 2, input row 2 * oh + kh * dilation_h - pad_h is row oh + dh of the plane of the
// input rows of its parity (dh = floor((kh * dilation_h - pad_h) / 2)), and columns likewise. So
// in a copy of each input channel as four phase planes of out_h x out_w floats (phase (a, b):
// x[2i + a][2j + b], zero outside the input), every tap is again a shifted run across the flat
// output columns, in the plane of its phase: conv_shifted_gemm's tiles read them, where im2col
// would copy the input under each of the 9 taps (resnet8-cifar's two stride-2 3 x 3 layers: 17 of
// 28 us and 15 of 25 us). Taken where every tap stays inside the phase planes (dh, dw <= 0: 3 x 3
// with padding 1, or 1 x 1) and no run starts before the copy, which ends in kPhaseSlack floats
// the last partial vectors may load.

namespace shifted_detail {

// even[j] = src[2j] and odd[j] = src[2j + 1] for the columns of a row of in_w floats, each row
// then zero up to `width` floats. Whole runs of 32 columns go through two permutes (copying a
// phase a row at a time took 3.5 of resnet8-cifar's 30 us stride-2 layer: partial vectors with
// masked loads, and every input row read twice).
inline void split_columns(const float* src, index_t in_w, index_t width, float* even, float* odd) {
  const index_t n_even = (in_w + 1) / 2 < width ? (in_w + 1) / 2 : width, n_odd = in_w / 2 < width ? in_w / 2 : width;
  const __m512i even_lanes = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd_lanes = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  const __m512i halves = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
  index_t j = 0;
  for (; 2 * j + 32 <= in_w && j + 16 <= n_odd; j += 16) {  // n_even >= n_odd
    const __m512 lo = _mm512_loadu_ps(src + 2 * j), hi = _mm512_loadu_ps(src + 2 * j + 16);
    _mm512_storeu_ps(even + j, _mm512_permutex2var_ps(lo, even_lanes, hi));
    _mm512_storeu_ps(odd + j, _mm512_permutex2var_ps(lo, odd_lanes, hi));
  }
  for (; 2 * j + 16 <= in_w && j + 8 <= n_odd; j += 8) {  // 16 columns: the even half, then the odd
    const __m512 v = _mm512_permutexvar_ps(halves, _mm512_loadu_ps(src + 2 * j));
    _mm256_storeu_ps(even + j, _mm512_castps512_ps256(v));
    _mm256_storeu_ps(odd + j, _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
  }
  for (index_t i = j; i < n_even; ++i) even[i] = src[2 * i];
  for (index_t i = j; i < n_odd; ++i) odd[i] = src[2 * i + 1];
  for (index_t i = n_even; i < width; ++i) even[i] = 0.0f;
  for (index_t i = n_odd; i < width; ++i) odd[i] = 0.0f;
}

// One input channel's four phase planes (phase 2a + b holds x[2i + a][2j + b]), zero outside it.
inline void copy_phase_planes(const ConvParams& p, const float* xc, float* planes) {
  for (index_t a = 0; a < 2; ++a)
    for (index_t i = 0; i < p.out_h; ++i) {
      float* even = planes + (2 * a * p.out_h + i) * p.out_w;
      float* odd = even + p.out_h * p.out_w;
      const index_t ih = 2 * i + a;
      if (ih < p.in_h) {
        split_columns(xc + ih * p.in_w, p.in_w, p.out_w, even, odd);
      } else {
        for (index_t j = 0; j < p.out_w; ++j) even[j] = odd[j] = 0.0f;
      }
    }
}

}  // namespace shifted_detail

// One image of a convolution conv_reads_phase_planes accepts; scratch: conv_phase_floats(p).
inline void conv_phase_gemm(const ConvParams& p, const float* x, const float* w_packed, const float* bias, float* y,
                            float* scratch, const Epilogue& e, Parallel parallel) {
  using namespace shifted_detail;
  const index_t out_plane = p.out_h * p.out_w, plane = 4 * out_plane;
  parallel_for(parallel, p.in_channels, [&](index_t ic) {
    copy_phase_planes(p, x + ic * p.in_h * p.in_w, scratch + ic * plane);
  });
  for (index_t i = p.in_channels * plane; i < conv_phase_floats(p); ++i) scratch[i] = 0.0f;
  TapShifts shifts{p.k_h * p.k_w, p.out_h, p.out_w, {}, {}};
  index_t offset[kMaxTaps];
  for (index_t kh = 0, t = 0; kh < p.k_h; ++kh)
    for (index_t kw = 0; kw < p.k_w; ++kw, ++t) {
      const PhaseTap h = phase_tap(kh * p.dilation_h - p.pad_h), w = phase_tap(kw * p.dilation_w - p.pad_w);
      shifts.dh[t] = h.shift;
      shifts.dw[t] = w.shift;
      offset[t] = (2 * h.parity + w.parity) * out_plane + h.shift * p.out_w + w.shift;
    }
  shifted_product(p, scratch, plane, offset, shifts, 0, 0, w_packed, bias, y, e, parallel);
}

#else

constexpr bool kShiftedInputProduct = false;

inline void conv_shifted_gemm(const ConvParams&, const float*, const float*, const float*, float*, const Epilogue&,
                              Parallel) {}
inline void conv_phase_gemm(const ConvParams&, const float*, const float*, const float*, float*, float*,
                            const Epilogue&, Parallel) {}

#endif

// Products shallower than this keep im2col under stride 2: with few input channels the tiles'
// loop per tap is too short (MobileNet's first layer, 3 channels x 3 x 3 on 224 x 224: 295 us
// through im2col, 340 over the phase planes; resnet8-cifar's 16 x 3 x 3 gain, 38.9 -> 29.0).
constexpr index_t kPhaseMinDepth = 144;

// Which convolutions conv_gemm computes by conv_phase_gemm when its scratch holds the phase planes.
inline bool conv_reads_phase_planes(const ConvParams& p) {
  return kShiftedInputProduct && conv_gemm_k(p) >= kPhaseMinDepth && conv_shape_reads_phase_planes(p);
}

// Which convolutions conv_gemm computes by conv_shifted_gemm whatever scratch it is given.
inline bool conv_reads_shifted_input(const ConvParams& p) {
  return kShiftedInputProduct && conv_gemm_k(p) >= kShiftedMinDepth && conv_shape_reads_shifted_input(p);
}

// A convolution conv_shape_reads_shifted_input accepts, on AVX-512 (kShiftedInputProduct), with
// weights packed as for conv_gemm: the product reading the input in place, no scratch. The
// compiler calls it for the layers it gives no scratch (generated code checks kShiftedInputProduct).
inline void conv_shifted(const ConvParams& p, const float* x, const float* w_packed, const float* bias, float* y,
                         const Epilogue& e, Parallel parallel = nullptr) {
  const index_t in_image = p.in_channels * p.in_h * p.in_w, out_image = p.out_channels * conv_gemm_n(p);
  for (index_t b = 0; b < p.batch; ++b)
    conv_shifted_gemm(p, x + b * in_image, w_packed, bias, y + b * out_image, e, parallel);
}

// With a parallel-for, an im2col block whose columns outnumber the output channels
// kColumnTaskRatio times splits into kColumnTasks ranges of columns (whole 16-column runs), each
// task building and multiplying its own; else the block is built by channel tasks, then multiplied
// by panel tasks.
constexpr index_t kColumnTaskRatio = 4;
constexpr index_t kColumnTasks = 4;

// One-group convolution as a matrix product; w_packed is the weight laid out by pack_weights
// (M x K), scratch holds conv_gemm_scratch_floats(p, block_cols) floats: the input itself (1x1),
// a padded copy of it (stride 1, when that fits), the phase planes (stride 2, AVX-512, when they
// fit) or im2col blocks. With a parallel-for, the copy or each im2col block is built by channel
// tasks, then multiplied by panel tasks (im2col blocks with small weights: column tasks, above).
inline void conv_gemm(const ConvParams& p, const float* x, const float* w_packed, const float* bias, float* y,
                      float* scratch, index_t block_cols, const Epilogue& e, Parallel parallel = nullptr) {
  const index_t m = p.out_channels, k = conv_gemm_k(p), n = conv_gemm_n(p);
  const index_t in_image = p.in_channels * p.in_d * p.in_h * p.in_w;
  for (index_t b = 0; b < p.batch; ++b) {
    const float* xb = x + b * in_image;
    float* yb = y + b * m * n;
    if (conv_reads_input_as_matrix(p)) {
      packed_gemm(m, n, k, w_packed, xb, n, yb, n, bias, e, parallel);
      continue;
    }
    if (conv_reads_shifted_input(p)) {
      conv_shifted_gemm(p, xb, w_packed, bias, yb, e, parallel);
      continue;
    }
    if (conv_reads_phase_planes(p) && conv_gemm_scratch_floats(p, block_cols) >= conv_phase_floats(p)) {
      conv_phase_gemm(p, xb, w_packed, bias, yb, scratch, e, parallel);
      continue;
    }
    if (const index_t band = padded_band(p, conv_gemm_scratch_floats(p, block_cols))) {
      conv_padded_gemm(p, xb, w_packed, bias, yb, scratch, band, e, parallel);
      continue;
    }
    for (index_t j = 0; j < n; j += block_cols) {
      const index_t cols = n - j < block_cols ? n - j : block_cols;
      if (parallel && m * kColumnTaskRatio <= cols) {
        // Small weights: each task builds the im2col columns of its part of the block and
        // multiplies them, one parallel loop and no column read by the other core (squeezenet1_1's
        // 3 -> 64 first layer on two threads: 0.74 -> 0.50 of one thread's time).
        parallel_for(parallel, kColumnTasks, [&](index_t task) {
          const Range part = part_of(cols, kColumnTasks, task);
          const index_t from = part.begin / 16 * 16, to = task + 1 == kColumnTasks ? cols : part.end / 16 * 16;
          if (to <= from) return;
          float* col = scratch + k * from;  // the task's columns, kept apart in the block's scratch
          im2col_block(p, xb, j + from, to - from, col);
          packed_gemm_block(m, to - from, k, w_packed, col, to - from, yb + j + from, n, bias, e);
        });
        continue;
      }
      im2col_block(p, xb, j, cols, scratch, parallel);
      packed_gemm_block(m, cols, k, w_packed, scratch, cols, yb + j, n, bias, e, parallel);
    }
  }
}

// ---- the parts of a window inside the input (the direct and depthwise kernels) ----

// The kernel rows of output row oh that read a row of the input, [lo, hi); the others read padding.
struct KernelRowRange {
  index_t lo, hi;
  bool operator==(const KernelRowRange& o) const { return lo == o.lo && hi == o.hi; }
};

inline KernelRowRange kernel_rows_inside(const ConvParams& p, index_t oh) {
  const index_t ih0 = oh * p.stride_h - p.pad_h;
  index_t lo = 0, hi = p.k_h;
  while (lo < hi && ih0 + lo * p.dilation_h < 0) ++lo;
  while (hi > lo && ih0 + (hi - 1) * p.dilation_h >= p.in_h) --hi;
  return {lo, hi};
}

// The output columns whose whole window lies inside the input row: no bounds checks.
inline ColumnRange interior_columns(const ConvParams& p) {
  const ColumnRange first_tap = columns_inside(-p.pad_w, p.stride_w, p.in_w, p.out_w);
  const ColumnRange last_tap = columns_inside((p.k_w - 1) * p.dilation_w - p.pad_w, p.stride_w, p.in_w, p.out_w);
  const index_t lo = first_tap.lo < p.out_w ? first_tap.lo : p.out_w;
  return {lo, last_tap.hi > lo ? last_tap.hi : lo};
}

// ---- direct, register-blocked ----
//
// The convolution with no scratch memory and no packed weights: what memory-first targets run
// when the arena has no room for an im2col block, and every float 1-d/2-d convolution the other
// kernels do not take (grouped, weights computed at run time). A block of kDirectChannels output
// channels x kDirectColumns adjacent output columns of one row is accumulated in registers
// (16 accumulators + 4 inputs + 4 weights: 24 of the 32 single-precision registers of a
// Cortex-M4/M7 FPU), so each input value loaded feeds kDirectChannels multiply-adds and each
// weight kDirectColumns. Columns whose window overhangs the padding run one at a time with
// bounds checks; rows outside the input are skipped per output row. The sums run in the same
// order as rt::conv's (bias, then channels, rows, columns of the kernel).

namespace direct_detail {

constexpr int kDirectChannels = 4;
constexpr int kDirectColumns = 4;

// acc[i][j] += the window of output column ow0 + j (of the row whose kernel rows [kh_lo, kh_hi)
// read input rows ih0 + kh * dilation_h) times output channel i's weights, for every input
// channel of the group. Checked: one column, whose window may overhang the row's padding.
template <int MB, int NB, bool Checked>
inline void accumulate(const ConvParams& p, const float* xg, const float* wm, index_t icg, index_t ih0,
                       index_t kh_lo, index_t kh_hi, index_t ow0, float (&acc)[MB][NB]) {
  const index_t in_plane = p.in_h * p.in_w, taps = p.k_h * p.k_w, channel_stride = icg * taps;
  const index_t iw0 = ow0 * p.stride_w - p.pad_w;
  for (index_t ic = 0; ic < icg; ++ic) {
    const float* xc = xg + ic * in_plane;
    const float* wc = wm + ic * taps;
    for (index_t kh = kh_lo; kh < kh_hi; ++kh) {
      const float* xrow = xc + (ih0 + kh * p.dilation_h) * p.in_w;
      const float* wrow = wc + kh * p.k_w;
      for (index_t kw = 0; kw < p.k_w; ++kw) {
        const index_t iw = iw0 + kw * p.dilation_w;
        if (Checked && (iw < 0 || iw >= p.in_w)) continue;
        float xv[NB];
        ONNXC_UNROLL for (int j = 0; j < NB; ++j) xv[j] = xrow[iw + j * p.stride_w];
        ONNXC_UNROLL for (int i = 0; i < MB; ++i) {
          const float wv = wrow[i * channel_stride + kw];
          ONNXC_UNROLL for (int j = 0; j < NB; ++j) acc[i][j] += wv * xv[j];
        }
      }
    }
  }
}

template <int MB, int NB, bool Checked>
inline void output_block(const ConvParams& p, const float* xg, const float* wm, const float* bias, index_t icg,
                         index_t oh, index_t kh_lo, index_t kh_hi, index_t ow0, float* ym) {
  const index_t out_plane = p.out_h * p.out_w;
  float acc[MB][NB];
  ONNXC_UNROLL for (int i = 0; i < MB; ++i) {
    ONNXC_UNROLL for (int j = 0; j < NB; ++j) acc[i][j] = bias ? bias[i] : 0.0f;
  }
  accumulate<MB, NB, Checked>(p, xg, wm, icg, oh * p.stride_h - p.pad_h, kh_lo, kh_hi, ow0, acc);
  ONNXC_UNROLL for (int i = 0; i < MB; ++i) {
    ONNXC_UNROLL for (int j = 0; j < NB; ++j) ym[i * out_plane + oh * p.out_w + ow0 + j] = acc[i][j];
  }
}

}  // namespace direct_detail
}  // namespace rt
}  // namespace onnxc
#if !defined(ONNXC_SIMD) && defined(__riscv_vector)
#include "onnxc/conv_direct_rvv.h"  // interior_columns_rvv
#endif
namespace onnxc {
namespace rt {
namespace direct_detail {

// MB output channels (wm: the first one's weights, ym: its output plane) over the whole plane.
template <int MB>
inline void channel_block(const ConvParams& p, const float* xg, const float* wm, const float* bias, index_t icg,
                          float* ym) {
  const ColumnRange interior = interior_columns(p);
  const index_t lo = interior.lo, hi = interior.hi;
  for (index_t oh = 0; oh < p.out_h; ++oh) {
    const KernelRowRange kr = kernel_rows_inside(p, oh);
    const index_t kh_lo = kr.lo, kh_hi = kr.hi;
    index_t ow = 0;
    for (; ow < lo; ++ow) output_block<MB, 1, true>(p, xg, wm, bias, icg, oh, kh_lo, kh_hi, ow, ym);
#if !defined(ONNXC_SIMD) && defined(__riscv_vector)
    if (ow < hi) interior_columns_rvv<MB>(p, xg, wm, bias, icg, oh, kh_lo, kh_hi, ow, hi, ym);
    ow = ow < hi ? hi : ow;
#endif
    for (; ow + kDirectColumns <= hi; ow += kDirectColumns)
      output_block<MB, kDirectColumns, false>(p, xg, wm, bias, icg, oh, kh_lo, kh_hi, ow, ym);
    for (; ow < p.out_w; ++ow) output_block<MB, 1, true>(p, xg, wm, bias, icg, oh, kh_lo, kh_hi, ow, ym);
  }
}

}  // namespace direct_detail

// Any float convolution with k_d == in_d == 1 (1-d and 2-d, every group count), no scratch. A
// fused activation is left to the caller (activate_row over y), whose literal epilogue the
// compiler reduces to the one activation: a run-time Epilogue here would link every activation's
// libm function into firmware that uses none of them.
inline void conv_direct(const ConvParams& p, const float* x, const float* w, const float* bias, float* y) {
  using namespace direct_detail;
  const index_t icg = p.in_channels / p.group, ocg = p.out_channels / p.group;
  const index_t in_plane = p.in_h * p.in_w, out_plane = p.out_h * p.out_w, taps = p.k_h * p.k_w;
  for (index_t n = 0; n < p.batch; ++n)
    for (index_t g = 0; g < p.group; ++g) {
      const float* xg = x + (n * p.in_channels + g * icg) * in_plane;
      for (index_t oc = 0; oc < ocg;) {
        const index_t m = g * ocg + oc;
        const float* wm = w + m * icg * taps;
        const float* bm = bias ? bias + m : nullptr;
        float* ym = y + (n * p.out_channels + m) * out_plane;
        // The last channels of a group that do not fill a block go one at a time: two
        // instantiations instead of four keep the code small for firmware.
        if (ocg - oc >= kDirectChannels) {
          channel_block<kDirectChannels>(p, xg, wm, bm, icg, ym);
          oc += kDirectChannels;
        } else {
          channel_block<1>(p, xg, wm, bm, icg, ym);
          oc += 1;
        }
      }
    }
}

// ---- direct over packed weights: output channels in the vector lanes ----
//
// The scratch-free convolution, on SIMD targets, of a Conv the matrix product would compute but
// whose step leaves no room for an im2col block (--scratch fit): the product's register tile
// with its B operand read straight from the input. A panel of kDirectPanelChannels output
// channels (one AVX-512 vector, two AVX2, four SSE/NEON) x a block of output columns of one row
// accumulates in registers over every input channel and kernel tap: per tap the panel's weights
// are one load (pack_direct_weights puts a tap's channels side by side) and each column's input
// value one broadcast. The input is read where it is, a value at a time, so every stride,
// dilation and row width vectorises alike (silero-vad's 3-column 1-d Convs as resnet8's 32 x 32
// planes); columns whose window overhangs the padding skip the taps outside the row, and kernel
// rows in the padding are skipped per output row. Each block goes to the NCHW output through a
// transpose on the stack.

constexpr index_t kDirectPanelChannels = 16;

// w[m, k] (row-major: k = input channels x taps) in panels of kDirectPanelChannels rows: panel p
// holds rows [16p, 16p + r) as packed[16p * k + l * r + row] (r = 16, or the rows left).
inline void pack_direct_weights(const float* w, index_t m, index_t k, float* packed) {
  for (index_t first = 0; first < m; first += kDirectPanelChannels) {
    const index_t rows = m - first < kDirectPanelChannels ? m - first : kDirectPanelChannels;
    for (index_t l = 0; l < k; ++l)
      for (index_t r = 0; r < rows; ++r) packed[first * k + l * rows + r] = w[(first + r) * k + l];
  }
}

#if defined(ONNXC_SIMD)

namespace direct_packed_detail {

constexpr int kPanelVectors = static_cast<int>(kDirectPanelChannels / kFloatLanes);
// Output columns per block: the accumulators take half the vector registers (AVX-512: 16
// columns, AVX2: 4, SSE/NEON: 2). Rows narrower than that take blocks of fewer columns
// (halving) over several panels at once, so there are still enough independent accumulators to
// hide the FMA latency, and at most kMaxPanelVectors weight vectors per tap.
constexpr int kBlockColumns = kVectorRegisters / 2 / kPanelVectors;
constexpr int kMaxPanelVectors = 4;
template <int NB>
constexpr int panels_per_block() {
  const int by_registers = kBlockColumns / NB, by_weights = kMaxPanelVectors / kPanelVectors;
  const int panels = by_registers < by_weights ? by_registers : by_weights;
  return panels > 1 ? panels : 1;
}

// Panels [first, first + MP) of output channels of one image: their packed weights (each panel
// k * kDirectPanelChannels floats after the previous one), their bias (or nullptr), the channels
// of the last one (the others are whole panels) and the output plane of their first channel.
struct Panels {
  const float* w;
  const float* bias;
  index_t last_channels;
  float* y;
};

// Lanes [0, count) of p (all of them when Full), zero beyond.
template <bool Full>
inline vfloat panel_lanes(const float* p, index_t count) {
  if (Full || count >= kFloatLanes) return vfloat::load_unaligned(p);
  return count > 0 ? load_partial(p, count) : vfloat(0.0f);
}

// acc[m][v][j] += w[m][v] x the input under column j of the block, at xrow[iw + j * stride] (S:
// the stride when fixed at compile time, 0: given), for the columns j in [inside.lo, inside.hi)
// (Checked; all NB otherwise): those whose input lies inside the row. A skipped column is a
// branch the same way for every channel and kernel row of the tap, where a select of zero per
// column took a scalar load, a compare and a broadcast from a register (a shuffle competing with
// the FMAs) on every tap of every block with a column in the padding or past the row's end.
template <int MP, int NB, int S, bool Checked>
ONNXC_INLINE void accumulate_tap(vfloat (&acc)[MP][kPanelVectors][NB], const vfloat (&w)[MP][kPanelVectors],
                                 const float* xrow, index_t iw, index_t stride, ColumnRange inside) {
  ONNXC_UNROLL for (int j = 0; j < NB; ++j) {
    if (Checked && (j < inside.lo || j >= inside.hi)) continue;
    const vfloat xv(xrow[iw + j * (S ? S : stride)]);
    ONNXC_UNROLL for (int m = 0; m < MP; ++m)
      ONNXC_UNROLL for (int v = 0; v < kPanelVectors; ++v) acc[m][v][j] = xsimd::fma(w[m][v], xv, acc[m][v][j]);
  }
}

// Kernel columns up to which output_block keeps each one's range of block columns inside the
// row (wider kernels compute it per tap).
constexpr index_t kMaxCachedKernelColumns = 64;

// Output columns [ow, ow + cols) (cols <= NB) of output row oh, whose kernel rows kr read the
// input, for MP panels of channels (Full: the last is a whole one). Checked: a column may be
// past cols, or its window overhang the row's padding: a kernel column whose input lies inside
// the row for the whole block runs unchecked, the others skip the columns outside.
template <int MP, int NB, int S, bool Full, bool Checked>
inline void output_block(const ConvParams& p, const float* x, const Panels& panels, index_t oh, KernelRowRange kr,
                         index_t ow, index_t cols) {
  constexpr int PV = kPanelVectors;
  const index_t k = conv_gemm_k(p), taps = p.k_h * p.k_w, stride = S ? S : p.stride_w;
  const index_t ih0 = oh * p.stride_h - p.pad_h, iw0 = ow * stride - p.pad_w;
  // Channels of panel m (whole panels but maybe the last), which is also the step of its
  // weights from one tap to the next.
  auto channels = [&](int m) { return Full || m + 1 < MP ? kDirectPanelChannels : panels.last_channels; };
  // The block columns whose input under kernel column kw lies inside the row.
  auto inside_of = [&](index_t kw) { return columns_inside(iw0 + kw * p.dilation_w, stride, p.in_w, cols); };
  ColumnRange inside[Checked ? kMaxCachedKernelColumns : 1];
  if (Checked)
    for (index_t kw = 0; kw < p.k_w && kw < kMaxCachedKernelColumns; ++kw) inside[kw] = inside_of(kw);
  vfloat acc[MP][PV][NB];
  for (int m = 0; m < MP; ++m)
    for (int v = 0; v < PV; ++v) {
      const index_t lanes = channels(m) - v * kFloatLanes;
      const float* b = panels.bias + m * kDirectPanelChannels + v * kFloatLanes;
      const vfloat init = panels.bias ? panel_lanes<Full>(b, lanes) : vfloat(0.0f);
      for (int j = 0; j < NB; ++j) acc[m][v][j] = init;
    }
  for (index_t ic = 0; ic < p.in_channels; ++ic) {
    const float* xc = x + ic * p.in_h * p.in_w;
    for (index_t kh = kr.lo; kh < kr.hi; ++kh) {
      const float* xrow = xc + (ih0 + kh * p.dilation_h) * p.in_w;
      const index_t first_tap = ic * taps + kh * p.k_w;
      for (index_t kw = 0; kw < p.k_w; ++kw) {
        vfloat wv[MP][PV];
        for (int m = 0; m < MP; ++m) {
          const float* w = panels.w + m * kDirectPanelChannels * k + (first_tap + kw) * channels(m);
          for (int v = 0; v < PV; ++v) wv[m][v] = panel_lanes<Full>(w + v * kFloatLanes, channels(m) - v * kFloatLanes);
        }
        const index_t iw = iw0 + kw * p.dilation_w;
        if (!Checked) {
          accumulate_tap<MP, NB, S, false>(acc, wv, xrow, iw, stride, {0, NB});
          continue;
        }
        const ColumnRange in = kw < kMaxCachedKernelColumns ? inside[kw] : inside_of(kw);
        if (in.lo == 0 && in.hi == NB) accumulate_tap<MP, NB, S, false>(acc, wv, xrow, iw, stride, in);
        else accumulate_tap<MP, NB, S, true>(acc, wv, xrow, iw, stride, in);
      }
    }
  }
  // Column j's channels, out of the lanes, then into the NCHW planes.
  const index_t out_plane = p.out_h * p.out_w;
  alignas(64) float block[NB][kDirectPanelChannels];
  for (int m = 0; m < MP; ++m) {
    for (int j = 0; j < NB; ++j)
      for (int v = 0; v < PV; ++v) acc[m][v][j].store_aligned(&block[j][v * kFloatLanes]);
    float* y = panels.y + m * kDirectPanelChannels * out_plane + oh * p.out_w + ow;
    for (index_t c = 0; c < channels(m); ++c)
      for (index_t j = 0; j < cols; ++j) y[c * out_plane + j] = block[j][c];
  }
}

// Output rows [first, last) of MP panels, NB columns at a time: blocks whose windows all lie
// inside the input rows unchecked, the others (the borders and the row's last, short block)
// checked.
template <int MP, int NB, int S, bool Full>
inline void panel_rows(const ConvParams& p, const float* x, const Panels& panels, index_t first, index_t last) {
  const ColumnRange interior = interior_columns(p);
  for (index_t oh = first; oh < last; ++oh) {
    const KernelRowRange kr = kernel_rows_inside(p, oh);
    for (index_t ow = 0; ow < p.out_w; ow += NB) {
      const index_t cols = p.out_w - ow < NB ? p.out_w - ow : NB;
      if (cols == NB && ow >= interior.lo && ow + NB <= interior.hi)
        output_block<MP, NB, S, Full, false>(p, x, panels, oh, kr, ow, cols);
      else
        output_block<MP, NB, S, Full, true>(p, x, panels, oh, kr, ow, cols);
    }
  }
}

// panel_rows with the stride fixed at compile time where it is 1 or 2.
template <int MP, int NB, bool Full>
inline void panel_rows_any_stride(const ConvParams& p, const float* x, const Panels& panels, index_t first,
                                  index_t last) {
  if (p.stride_w == 1) panel_rows<MP, NB, 1, Full>(p, x, panels, first, last);
  else if (p.stride_w == 2) panel_rows<MP, NB, 2, Full>(p, x, panels, first, last);
  else panel_rows<MP, NB, 0, Full>(p, x, panels, first, last);
}

// The output of one image, rows [first, last): groups of panels_per_block<NB>() whole panels,
// then the panels left one at a time.
template <int NB>
inline void image_rows(const ConvParams& p, const float* x, const float* w, const float* bias, float* y, index_t first,
                       index_t last) {
  constexpr int MP = panels_per_block<NB>();
  const index_t k = conv_gemm_k(p), out_plane = p.out_h * p.out_w;
  auto panels_at = [&](index_t c, index_t last_channels) {
    return Panels{w + c * k, bias ? bias + c : nullptr, last_channels, y + c * out_plane};
  };
  index_t c = 0;
  for (; c + MP * kDirectPanelChannels <= p.out_channels; c += MP * kDirectPanelChannels)
    panel_rows_any_stride<MP, NB, true>(p, x, panels_at(c, kDirectPanelChannels), first, last);
  for (; c < p.out_channels; c += kDirectPanelChannels) {
    const index_t channels = p.out_channels - c < kDirectPanelChannels ? p.out_channels - c : kDirectPanelChannels;
    if (channels == kDirectPanelChannels) panel_rows_any_stride<1, NB, true>(p, x, panels_at(c, channels), first, last);
    else panel_rows_any_stride<1, NB, false>(p, x, panels_at(c, channels), first, last);
  }
}

// Loads (weight vectors and broadcast inputs) per multiply-add of one tap of a block of NB
// columns over panels_per_block<NB>() panels, times 1024.
template <int NB>
constexpr int loads_per_fma_1024() {
  constexpr int vectors = panels_per_block<NB>() * kPanelVectors;
  return (vectors + NB) * 1024 / (vectors * NB);
}

// image_rows with the widest block the output row fills at least half of, narrowed further
// while the output channels fill the more panels a narrower block takes and that block loads
// less per multiply-add (AVX-512: 16 columns of one panel load 17 vectors per 16 FMAs, 4 columns
// of four panels 8; a 16 x 16 stride-16 patch embedding 3 -> 192 channels on 224 x 224 without
// scratch ran 1.6x ONNX Runtime in blocks of 16, docs/performance.md 'Convolution sweep (third
// round)').
template <int NB>
inline void image_rows_for_width(const ConvParams& p, const float* x, const float* w, const float* bias, float* y,
                                 index_t first, index_t last) {
  if constexpr (NB > 1) {
    constexpr int narrower_panels = panels_per_block<NB / 2>();
    const bool fills_panels = p.out_channels >= narrower_panels * kDirectPanelChannels;
    if (2 * p.out_w <= NB || (fills_panels && loads_per_fma_1024<NB / 2>() < loads_per_fma_1024<NB>()))
      return image_rows_for_width<NB / 2>(p, x, w, bias, y, first, last);
  }
  image_rows<NB>(p, x, w, bias, y, first, last);
}

}  // namespace direct_packed_detail

// Tasks conv_direct_packed splits into when run() is given a parallel-for: bands of output rows.
constexpr index_t kDirectPackedTasks = 4;

// One-group float convolution with k_d == in_d == 1 (1-d and 2-d), no scratch; w_packed: the
// weight as pack_direct_weights lays it out. A fused activation is left to the caller
// (activate_row over y), as with conv_direct. With a parallel-for, each task computes a band of
// output rows of every image.
inline void conv_direct_packed(const ConvParams& p, const float* x, const float* w_packed, const float* bias,
                               float* y, Parallel parallel = nullptr) {
  using direct_packed_detail::image_rows_for_width;
  using direct_packed_detail::kBlockColumns;
  const index_t in_image = p.in_channels * p.in_h * p.in_w, out_image = p.out_channels * p.out_h * p.out_w;
  auto rows = [&](Range r) {
    for (index_t b = 0; b < p.batch; ++b)
      image_rows_for_width<kBlockColumns>(p, x + b * in_image, w_packed, bias, y + b * out_image, r.begin, r.end);
  };
  if (!parallel || p.out_h < 2) return rows({0, p.out_h});
  const index_t tasks = p.out_h < kDirectPackedTasks ? p.out_h : kDirectPackedTasks;
  parallel_for(parallel, tasks, [&](index_t t) { rows(part_of(p.out_h, tasks, t)); });
}

#else

// Without SIMD the compiler never emits conv_direct_packed (non-SIMD targets keep their weights
// for rt::conv_direct); this plain loop over the packed layout keeps code generated for a SIMD
// target compiling when its headers were parsed without ONNXC_SIMD (a precompiled header).
inline void conv_direct_packed(const ConvParams& p, const float* x, const float* w_packed, const float* bias,
                               float* y, Parallel = nullptr) {
  const index_t k = conv_gemm_k(p), in_image = p.in_channels * p.in_h * p.in_w;
  for (index_t b = 0; b < p.batch; ++b)
    for (index_t m = 0; m < p.out_channels; ++m) {
      const index_t first = m / kDirectPanelChannels * kDirectPanelChannels;
      const index_t rows = p.out_channels - first < kDirectPanelChannels ? p.out_channels - first : kDirectPanelChannels;
      const float* wm = w_packed + first * k + (m - first);  // tap l at wm[l * rows]
      for (index_t oh = 0; oh < p.out_h; ++oh)
        for (index_t ow = 0; ow < p.out_w; ++ow) {
          float acc = bias ? bias[m] : 0.0f;
          for (index_t ic = 0; ic < p.in_channels; ++ic)
            for (index_t kh = 0; kh < p.k_h; ++kh)
              for (index_t kw = 0; kw < p.k_w; ++kw) {
                const index_t ih = oh * p.stride_h - p.pad_h + kh * p.dilation_h;
                const index_t iw = ow * p.stride_w - p.pad_w + kw * p.dilation_w;
                if (ih < 0 || ih >= p.in_h || iw < 0 || iw >= p.in_w) continue;
                acc += wm[((ic * p.k_h + kh) * p.k_w + kw) * rows] * x[b * in_image + (ic * p.in_h + ih) * p.in_w + iw];
              }
          y[((b * p.out_channels + m) * p.out_h + oh) * p.out_w + ow] = acc;
        }
    }
}

#endif

// ---- depthwise ----
//
// Each input row the kernel reads is first copied into a padded row: zeros where the window
// overhangs the input, so the inner loops never test a border. The padded rows live in a ring
// of span_h rows (the input rows one output row reads) in scratch memory; going down the plane,
// each input row is copied once per channel. The inner loop keeps one vector of output columns
// in a register across every tap (no read-modify-write of the output row per tap).

// Floats past each padded row (and past the flat plane and its wide output) that whole-vector
// loads and stores of the last columns may touch: the widest stride-2 load (two AVX-512
// vectors) and the flat path's last group of four vectors; their values never reach the output.
constexpr index_t kDepthwiseRowSlack = 64;

inline index_t depthwise_span_h(const ConvParams& p) { return (p.k_h - 1) * p.dilation_h + 1; }
inline index_t depthwise_row_floats(const ConvParams& p) { return padded_input_w(p) + kDepthwiseRowSlack; }
// The ring holds the input rows of two adjacent output rows (narrow planes compute two output
// rows at once); after it, one row that stays zero stands for the rows of the vertical padding.
inline index_t depthwise_ring_rows(const ConvParams& p) { return depthwise_span_h(p) + p.stride_h; }

// Narrow stride-1 planes (kws-dscnn's 25 x 5, MobileNet's 7 x 7) fill few vector lanes per
// output row. For them the kernel pads the whole plane into scratch and runs the taps over it as
// one flat array of padded_w-wide rows, out_h * padded_w outputs of which the columns past out_w
// are discarded: a 5-wide row costs 7 lanes instead of a whole vector.
constexpr index_t kFlatMaxWidth = 16;
constexpr index_t kFlatMaxFloats = 4096;
inline index_t depthwise_flat_floats(const ConvParams& p) {
  return (padded_input_h(p) + p.out_h) * padded_input_w(p) + 2 * kDepthwiseRowSlack;
}
inline bool depthwise_uses_flat_plane(const ConvParams& p) {
  return p.stride_h == 1 && p.stride_w == 1 && p.out_w <= kFlatMaxWidth &&
         (p.k_w - 1) * p.dilation_w <= kDepthwiseRowSlack / 2 && depthwise_flat_floats(p) <= kFlatMaxFloats;
}

namespace depthwise_detail {

// The padded rows of one output row: rows[kh] is the padded input row under kernel row kh, or
// the zero row where that row lies in the vertical padding.
constexpr index_t kMaxKernelRows = 16;
using KernelRows = const float* [kMaxKernelRows];

#if defined(ONNXC_SIMD)

// A tap's FMA depends on the previous tap's (4 cycles of latency): kDepthwiseVectors
// independent vectors of output are computed together to keep the FMA units busy, from one
// output row, or from two when the rows are at most two vectors wide.
constexpr int kDepthwiseVectors = 4;
inline bool computes_row_pairs(const ConvParams& p) { return p.out_w <= 2 * kFloatLanes; }

// Clamps and stores R rows of V accumulated vectors at y (row r at y + r * out_w); the last
// vector of a row stores its first `cols` lanes.
template <int R, int V>
inline void store_group(const vfloat (&acc)[R][V], index_t out_w, index_t cols, float* y,
                        const packed_gemm_detail::Clamp& c) {
  using packed_gemm_detail::clamp;
  for (int r = 0; r < R; ++r) {
    float* yr = y + r * out_w;
    for (int v = 0; v + 1 < V; ++v) clamp(c, acc[r][v]).store_unaligned(yr + v * kFloatLanes);
    if (cols == kFloatLanes) clamp(c, acc[r][V - 1]).store_unaligned(yr + (V - 1) * kFloatLanes);
    else store_partial(clamp(c, acc[r][V - 1]), yr + (V - 1) * kFloatLanes, cols);
  }
}

// Output columns [ow, ow + V * L) of R adjacent output rows (rows[r]: the padded input rows of
// row r), every tap accumulated in registers, clamped and stored (y: columns from ow of the
// first row); `cols` is the number of columns a lane of the last vector reads and stores (L but
// in the row's tail).
template <int S, int K, int R, int V>
inline void output_group(const ConvParams& p, const KernelRows* rows, const float* wc, float bias, index_t ow,
                         index_t cols, float* y, const packed_gemm_detail::Clamp& c) {
  const index_t k_h = K ? K : p.k_h, k_w = K ? K : p.k_w;
  const index_t stride = S ? S : p.stride_w;
  vfloat acc[R][V];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) acc[r][v] = vfloat(bias);
  for (index_t kh = 0; kh < k_h; ++kh)
    for (index_t kw = 0; kw < k_w; ++kw) {
      const vfloat wv(wc[kh * k_w + kw]);
      for (int r = 0; r < R; ++r) {
        const float* first = rows[r][kh] + ow * stride + kw * p.dilation_w;
        for (int v = 0; v < V; ++v)
          acc[r][v] = xsimd::fma(
              wv, load_strided<S>(first + v * kFloatLanes * stride, stride, v + 1 < V ? kFloatLanes : cols), acc[r][v]);
      }
    }
  store_group<R, V>(acc, p.out_w, cols, y + ow, c);
}

// R adjacent output rows (y: the first), in groups of kDepthwiseVectors / R vectors per row; the
// last group has the vectors left (the last of them partial; their loads may run into the
// rows' slack, only the columns that exist are stored). A clamp activation is applied in
// registers, the others over the stored rows.
template <int S, int K, int R>
inline void output_rows(const ConvParams& p, const KernelRows* rows, const float* wc, float bias, float* y,
                        const Epilogue& e) {
  constexpr int V = kDepthwiseVectors / R;
  const packed_gemm_detail::Clamp c = packed_gemm_detail::clamp_of(e);
  index_t ow = 0;
  for (; ow + V * kFloatLanes <= p.out_w; ow += V * kFloatLanes)
    output_group<S, K, R, V>(p, rows, wc, bias, ow, kFloatLanes, y, c);
  if (ow < p.out_w) {
    const index_t vectors = (p.out_w - ow + kFloatLanes - 1) / kFloatLanes;
    const index_t cols = p.out_w - ow - (vectors - 1) * kFloatLanes;
    if (vectors == 1) output_group<S, K, R, 1>(p, rows, wc, bias, ow, cols, y, c);
    else if (vectors == 2) output_group<S, K, R, 2>(p, rows, wc, bias, ow, cols, y, c);
    else if (vectors == 3) output_group<S, K, R, 3>(p, rows, wc, bias, ow, cols, y, c);
    else output_group<S, K, R, V>(p, rows, wc, bias, ow, cols, y, c);  // V vectors, the last partial
  }
  if (!packed_gemm_detail::is_clamp(e)) activate_row(e, y, R * p.out_w);
}

#elif defined(__riscv_vector)

}  // namespace depthwise_detail
}  // namespace rt
}  // namespace onnxc
#include "onnxc/depthwise_rows_rvv.h"  // output_rows: vector-length-agnostic strips of a row
namespace onnxc {
namespace rt {
namespace depthwise_detail {

#else

// Without SIMD: kDepthwiseColumns adjacent outputs accumulate in registers across every tap, so
// each weight loaded feeds that many multiply-adds; one output row at a time (no pairs). The
// last block may read into the row's slack (zeroed, never stored).
constexpr int kDepthwiseColumns = 4;
inline bool computes_row_pairs(const ConvParams&) { return false; }

template <int S, int K>
inline void output_row(const ConvParams& p, const KernelRows& rows, const float* wc, float bias, float* yrow,
                       const Epilogue& e) {
  constexpr int C = kDepthwiseColumns;
  const index_t k_h = K ? K : p.k_h, k_w = K ? K : p.k_w;
  const index_t stride = S ? S : p.stride_w;
  for (index_t ow = 0; ow < p.out_w; ow += C) {
    float acc[C];
    ONNXC_UNROLL for (int c = 0; c < C; ++c) acc[c] = bias;
    for (index_t kh = 0; kh < k_h; ++kh) {
      const float* first = rows[kh] + ow * stride;
      for (index_t kw = 0; kw < k_w; ++kw) {
        const float wv = wc[kh * k_w + kw];
        const float* at = first + kw * p.dilation_w;
        ONNXC_UNROLL for (int c = 0; c < C; ++c) acc[c] += wv * at[c * stride];
      }
    }
    const index_t cols = p.out_w - ow < C ? p.out_w - ow : C;
    for (index_t c = 0; c < cols; ++c) yrow[ow + c] = acc[c];
  }
  activate_row(e, yrow, p.out_w);
}

template <int S, int K, int R>
inline void output_rows(const ConvParams& p, const KernelRows* rows, const float* wc, float bias, float* y,
                        const Epilogue& e) {
  for (int r = 0; r < R; ++r) output_row<S, K>(p, rows[r], wc, bias, y + r * p.out_w, e);
}

#endif

// One channel plane; S is the horizontal stride and K x K the kernel when fixed at compile time
// (0: read from p), so the common 3x3 layers get fully unrolled taps.
template <int S, int K>
inline void plane(const ConvParams& p, const float* xc, const float* wc, float bias, float* yc, float* ring,
                  const Epilogue& e) {
  const index_t ring_rows = depthwise_ring_rows(p), row_floats = depthwise_row_floats(p);
  const float* zero_row = ring + ring_rows * row_floats;
  // The ring holds input rows [next_row - ring_rows, next_row), row r in slot r % ring_rows;
  // next_slot is next_row % ring_rows, stepped along (no division per row).
  index_t next_row = 0, next_slot = 0;
  auto read_rows = [&](index_t oh, KernelRows& rows) {
    const index_t ih0 = oh * p.stride_h - p.pad_h;
    // Load the rows up to this output row's last (rows in between too: dilated kernels read
    // them on the next output row); earlier rows than the ring holds are skipped.
    const index_t last = ih0 + (p.k_h - 1) * p.dilation_h < p.in_h ? ih0 + (p.k_h - 1) * p.dilation_h : p.in_h - 1;
    if (next_row < last - ring_rows + 1) {
      next_row = last - ring_rows + 1;
      next_slot = next_row % ring_rows;
    }
    for (; next_row <= last; ++next_row) {
      pad_input_row(p, xc + next_row * p.in_w, ring + next_slot * row_floats);
      if (++next_slot == ring_rows) next_slot = 0;
    }
    for (index_t kh = 0; kh < p.k_h; ++kh) {
      const index_t ih = ih0 + kh * p.dilation_h;
      if (ih < 0 || ih >= p.in_h) {
        rows[kh] = zero_row;
        continue;
      }
      // Row ih is next_row - ih rows behind the next one to load.
      index_t slot = next_slot - (next_row - ih);
      if (slot < 0) slot += ring_rows;
      rows[kh] = ring + slot * row_floats;
    }
  };
  const bool pairs = computes_row_pairs(p);
  KernelRows rows[2];
  for (index_t oh = 0; oh < p.out_h;) {
    read_rows(oh, rows[0]);
    if (pairs && oh + 1 < p.out_h) {
      read_rows(oh + 1, rows[1]);
      output_rows<S, K, 2>(p, rows, wc, bias, yc + oh * p.out_w, e);
      oh += 2;
    } else {
      output_rows<S, K, 1>(p, rows, wc, bias, yc + oh * p.out_w, e);
      oh += 1;
    }
  }
}

// The flat-plane path. padded: padded_input_h x padded_input_w floats and the slack, whose
// borders (and slack) the caller zeroed; only the input's rectangle is written here.
inline void copy_into_padded_plane(const ConvParams& p, const float* xc, float* padded) {
  const index_t width = padded_input_w(p), height = padded_input_h(p);
  const index_t cols = p.in_w < width - p.pad_w ? p.in_w : width - p.pad_w;
  const index_t rows = p.in_h < height - p.pad_h ? p.in_h : height - p.pad_h;
  for (index_t ih = 0; ih < rows; ++ih) copy_floats(xc + ih * p.in_w, cols, padded + (ih + p.pad_h) * width + p.pad_w);
}

// wide[i] = bias + sum over taps of w * padded[i + tap offset] for i < count (rounded up to
// whole groups of kDepthwiseVectors vectors: `wide` and `padded` have the slack for it).
inline void flat_taps(const ConvParams& p, const float* padded, const float* wc, float bias, index_t count,
                      float* wide) {
  const index_t width = padded_input_w(p);
#if defined(ONNXC_SIMD)
  constexpr int V = kDepthwiseVectors;  // independent accumulators, as in output_vectors
  for (index_t i = 0; i < count; i += V * kFloatLanes) {
    vfloat acc[V];
    for (int v = 0; v < V; ++v) acc[v] = vfloat(bias);
    for (index_t kh = 0; kh < p.k_h; ++kh)
      for (index_t kw = 0; kw < p.k_w; ++kw) {
        const vfloat wv(wc[kh * p.k_w + kw]);
        const float* at = padded + i + kh * p.dilation_h * width + kw * p.dilation_w;
        for (int v = 0; v < V; ++v) acc[v] = xsimd::fma(wv, vfloat::load_unaligned(at + v * kFloatLanes), acc[v]);
      }
    for (int v = 0; v < V; ++v) acc[v].store_unaligned(wide + i + v * kFloatLanes);
  }
#elif defined(__riscv_vector)
  flat_taps_rvv(p, width, padded, wc, bias, count, wide);
#else
  constexpr int C = kDepthwiseColumns;  // as in output_row: outputs per register block
  for (index_t i = 0; i < count; i += C) {
    float acc[C];
    ONNXC_UNROLL for (int c = 0; c < C; ++c) acc[c] = bias;
    for (index_t kh = 0; kh < p.k_h; ++kh) {
      const float* row = padded + i + kh * p.dilation_h * width;
      for (index_t kw = 0; kw < p.k_w; ++kw) {
        const float wv = wc[kh * p.k_w + kw];
        const float* at = row + kw * p.dilation_w;
        ONNXC_UNROLL for (int c = 0; c < C; ++c) acc[c] += wv * at[c];
      }
    }
    ONNXC_UNROLL for (int c = 0; c < C; ++c) wide[i + c] = acc[c];
  }
#endif
}

inline void flat_plane(const ConvParams& p, const float* xc, const float* wc, float bias, float* yc, float* scratch,
                       const Epilogue& e) {
  const index_t width = padded_input_w(p);
  float* padded = scratch;
  float* wide = padded + padded_input_h(p) * width + kDepthwiseRowSlack;
  copy_into_padded_plane(p, xc, padded);
  flat_taps(p, padded, wc, bias, p.out_h * width, wide);
  for (index_t oh = 0; oh < p.out_h; ++oh) copy_floats(wide + oh * width, p.out_w, yc + oh * p.out_w);
  activate_row(e, yc, p.out_h * p.out_w);
}

}  // namespace depthwise_detail

// One plane (image x channel) of a depthwise Conv: its input, its channel's weights and bias,
// its output.
struct DepthwisePlane {
  const float* x;
  const float* w;
  float bias;
  float* y;
};
inline DepthwisePlane depthwise_plane(const ConvParams& p, index_t plane, const float* x, const float* w,
                                      const float* bias, float* y) {
  const index_t c = plane % p.out_channels;
  return {x + plane * p.in_h * p.in_w, w + c * p.k_h * p.k_w, bias ? bias[c] : 0.0f, y + plane * p.out_h * p.out_w};
}

}  // namespace rt
}  // namespace onnxc
#include "onnxc/depthwise_channels_simd.h"
#include "onnxc/depthwise_phases_simd.h"
#include "onnxc/depthwise_rows_simd.h"
#include "onnxc/depthwise_rows_neon.h"
namespace onnxc {
namespace rt {

// Floats of scratch conv_depthwise needs: the padded plane and the wide output, or the ring of
// padded rows and the zero row, or on SIMD targets the ring of rows split into stride phases.
inline index_t conv_depthwise_scratch_floats(const ConvParams& p) {
  if (depthwise_channels_detail::prefers_lanes(p)) {  // AVX-512 and AVX2 may take the channels in the lanes
    const index_t flat = depthwise_uses_flat_plane(p) ? depthwise_flat_floats(p) : 0;
    const index_t channels = depthwise_channels_detail::scratch_floats(p);
    return flat > channels ? flat : channels;
  }
  if (depthwise_uses_flat_plane(p)) return depthwise_flat_floats(p);
  const index_t padded_rows = (depthwise_ring_rows(p) + 1) * depthwise_row_floats(p);
  const index_t phases = depthwise_phases_detail::scratch_floats(p);
  const index_t channels = depthwise_channels_detail::applies(p) ? depthwise_channels_detail::scratch_floats(p) : 0;
  const index_t rows = padded_rows > phases ? padded_rows : phases;
  return rows > channels ? rows : channels;
}

// ---- depthwise, in place ----
//
// conv_depthwise without scratch, for layers the arena leaves no room for its padded rows
// (--scratch fit): the kernel reads the input where it is. Each output row splits into its interior
// columns, whose whole window lies inside the input row, computed a vector of columns at a time
// straight from the input rows, and the few border columns on either side, whose window overhangs
// the padding, computed one at a time without the taps that fall outside the row. Kernel rows that
// fall in the vertical padding are skipped. The vectors of output columns stay in registers
// across every tap (no read-modify-write of the output row per tap).

namespace depthwise_in_place_detail {

using depthwise_detail::computes_row_pairs;
using depthwise_detail::KernelRows;

// rows[kh]: input column 0 of the row kernel row kh of output row oh reads (set for the rows of
// its KernelRowRange only).
inline void point_kernel_rows(const ConvParams& p, const float* xc, index_t oh, KernelRowRange kr, KernelRows& rows) {
  const index_t ih0 = oh * p.stride_h - p.pad_h;
  for (index_t kh = kr.lo; kh < kr.hi; ++kh) rows[kh] = xc + (ih0 + kh * p.dilation_h) * p.in_w;
}

// Output column ow of output row oh, one tap at a time, skipping those outside the input.
inline float border_output(const ConvParams& p, const KernelRows& rows, KernelRowRange kr, const float* wc, float bias,
                           index_t ow) {
  const index_t iw0 = ow * p.stride_w - p.pad_w;
  // The taps inside the row, kw in [lo, hi), found once for every kernel row.
  index_t lo = 0, hi = p.k_w;
  while (lo < hi && iw0 + lo * p.dilation_w < 0) ++lo;
  while (hi > lo && iw0 + (hi - 1) * p.dilation_w >= p.in_w) --hi;
  float acc = bias;
  for (index_t kh = kr.lo; kh < kr.hi; ++kh)
    for (index_t kw = lo; kw < hi; ++kw) acc += wc[kh * p.k_w + kw] * rows[kh][iw0 + kw * p.dilation_w];
  return acc;
}

#if defined(ONNXC_SIMD)

// kDepthwiseVectors independent vectors of output at a time, as conv_depthwise.
using depthwise_detail::kDepthwiseVectors;
// A clamp activation (Relu, Clip) is applied in registers, the others over the stored rows.
inline bool activates_in_registers(const Epilogue& e) { return packed_gemm_detail::is_clamp(e); }

// The end of the columns the vector loop computes: the interior, but for a stride-2 row's last
// column when load_strided's whole-vector load of it would read one float past the input row.
template <int S>
inline index_t vector_columns_end(const ConvParams& p, ColumnRange interior) {
  if (S != 2) return interior.hi;
  const index_t last_tap = (p.k_w - 1) * p.dilation_w - p.pad_w;
  const index_t end = columns_inside(last_tap + 1, p.stride_w, p.in_w, p.out_w).hi;
  return end < interior.lo ? interior.lo : end;
}

// Output columns [ow, ow + V * L) of R adjacent output rows, every tap accumulated in registers,
// clamped and stored (y: columns from ow of the first row); `cols` is the number of columns a
// lane of the last vector reads and stores (L but in the row's tail).
template <int S, int K, int R, int V>
inline void output_group(const ConvParams& p, const KernelRows* rows, KernelRowRange kr, const float* wc, float bias,
                         index_t ow, index_t cols, float* y, const packed_gemm_detail::Clamp& c) {
  const index_t k_w = K ? K : p.k_w;
  const index_t stride = S ? S : p.stride_w;
  vfloat acc[R][V];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) acc[r][v] = vfloat(bias);
  const index_t iw0 = ow * stride - p.pad_w;
  for (index_t kh = kr.lo; kh < kr.hi; ++kh)
    for (index_t kw = 0; kw < k_w; ++kw) {
      const vfloat wv(wc[kh * k_w + kw]);
      for (int r = 0; r < R; ++r) {
        const float* first = rows[r][kh] + iw0 + kw * p.dilation_w;
        for (int v = 0; v < V; ++v)
          acc[r][v] = xsimd::fma(
              wv, load_strided<S>(first + v * kFloatLanes * stride, stride, v + 1 < V ? kFloatLanes : cols), acc[r][v]);
      }
    }
  depthwise_detail::store_group<R, V>(acc, p.out_w, cols, y + ow, c);
}

// Columns [from, to) of R adjacent output rows (y: the first row), in groups of
// kDepthwiseVectors / R vectors per row; the last group has the vectors left, the last of them
// partial (its loads read only the lanes it stores).
template <int S, int K, int R>
inline void vector_columns(const ConvParams& p, const KernelRows* rows, KernelRowRange kr, const float* wc, float bias,
                           index_t from, index_t to, float* y, const Epilogue& e) {
  constexpr int V = kDepthwiseVectors / R;
  const packed_gemm_detail::Clamp c = packed_gemm_detail::clamp_of(e);
  index_t ow = from;
  for (; ow + V * kFloatLanes <= to; ow += V * kFloatLanes)
    output_group<S, K, R, V>(p, rows, kr, wc, bias, ow, kFloatLanes, y, c);
  if (ow < to) {
    const index_t vectors = (to - ow + kFloatLanes - 1) / kFloatLanes;
    const index_t cols = to - ow - (vectors - 1) * kFloatLanes;
    if (vectors == 1) output_group<S, K, R, 1>(p, rows, kr, wc, bias, ow, cols, y, c);
    else if (vectors == 2) output_group<S, K, R, 2>(p, rows, kr, wc, bias, ow, cols, y, c);
    else if (vectors == 3) output_group<S, K, R, 3>(p, rows, kr, wc, bias, ow, cols, y, c);
    else output_group<S, K, R, V>(p, rows, kr, wc, bias, ow, cols, y, c);  // V vectors, the last partial
  }
}

#else

// Without SIMD: kDepthwiseColumns adjacent outputs accumulate in registers across every tap, as
// conv_depthwise; the interior's last columns that do not fill a block go one at a time, still
// without the border's per-tap bounds tests (kws-dscnn's 5-column planes: before, every column
// went through border_output; its float 3x3 depthwise Convs on a Cortex-M4 took 14.7
// instructions per multiply-add).
using depthwise_detail::kDepthwiseColumns;
inline bool activates_in_registers(const Epilogue&) { return false; }

template <int S>
inline index_t vector_columns_end(const ConvParams&, ColumnRange interior) {
  return interior.hi;
}

// Output columns [ow, ow + C) of one row r, every tap in registers.
template <int S, int K, int C>
inline void column_block(const ConvParams& p, const float* const* rows_r, KernelRowRange kr, const float* wc, float bias,
                         index_t ow, float* yrow) {
  const index_t k_w = K ? K : p.k_w;
  const index_t stride = S ? S : p.stride_w;
  const index_t dilation = K ? 1 : p.dilation_w;  // plane<S, K> fixes K for dense kernels only
  float acc[C];
  ONNXC_UNROLL for (int c = 0; c < C; ++c) acc[c] = bias;
  for (index_t kh = kr.lo; kh < kr.hi; ++kh) {
    const float* first = rows_r[kh] + ow * stride - p.pad_w;
    auto tap = [&](index_t kw) {
      const float wv = wc[kh * k_w + kw];
      const float* at = first + kw * dilation;
      ONNXC_UNROLL for (int c = 0; c < C; ++c) acc[c] += wv * at[c * stride];
    };
    // A kernel width fixed at compile time is unrolled by force (GCC -O2 keeps a loop of 3).
    if (K) {
      ONNXC_UNROLL for (index_t kw = 0; kw < K; ++kw) tap(kw);
    } else {
      for (index_t kw = 0; kw < k_w; ++kw) tap(kw);
    }
  }
  ONNXC_UNROLL for (int c = 0; c < C; ++c) yrow[ow + c] = acc[c];
}

template <int S, int K, int R>
inline void vector_columns(const ConvParams& p, const KernelRows* rows, KernelRowRange kr, const float* wc, float bias,
                           index_t from, index_t to, float* y, const Epilogue&) {
#if defined(__riscv_vector)
  for (int r = 0; r < R; ++r)
    depthwise_detail::in_place_columns_rvv<S, K>(p, rows[r], kr.lo, kr.hi, wc, bias, from, to, y + r * p.out_w);
  return;
#endif
  constexpr int C = kDepthwiseColumns;
  const index_t blocks_end = from + (to - from) / C * C;
  for (int r = 0; r < R; ++r) {
    float* yrow = y + r * p.out_w;
    for (index_t ow = from; ow < blocks_end; ow += C) column_block<S, K, C>(p, rows[r], kr, wc, bias, ow, yrow);
    for (index_t ow = blocks_end; ow < to; ++ow) column_block<S, K, 1>(p, rows[r], kr, wc, bias, ow, yrow);
  }
}

#endif

// The border columns of one output row (yrow): [0, from) and [to, out_w), activated here when
// the vector columns were activated in registers.
inline void border_columns(const ConvParams& p, const KernelRows& rows, KernelRowRange kr, const float* wc, float bias,
                           index_t from, index_t to, float* yrow, const Epilogue& e) {
  auto one = [&](index_t ow) {
    yrow[ow] = border_output(p, rows, kr, wc, bias, ow);
    if (activates_in_registers(e)) activate_row(e, yrow + ow, 1);
  };
  for (index_t ow = 0; ow < from; ++ow) one(ow);
  for (index_t ow = to; ow < p.out_w; ++ow) one(ow);
}

#if !defined(ONNXC_SIMD)

// Without SIMD, planes whose rows fit kPaddedRingFloats: every input row the kernel reads is
// copied once, zero-padded (pad_input_row), into a ring of k_h rows on the stack, and every output column takes
// the interior's register blocks, none the border's per-tap bounds tests (kws-dscnn's planes of 5
// columns had 2 of every 5 outputs in border_output). Zero taps add +0: the sums are the border's.
// The ring takes 768 bytes of stack. kws-dscnn's float 3x3 depthwise Convs on a Cortex-M4, in
// instructions each: 1,642,840 -> 1,284,000 (interior remainders without bounds tests) -> 985,680
// (taps unrolled) -> 782,080 (this ring, dense kernels' dilation fixed at 1).
constexpr index_t kPaddedRingFloats = 192;
inline bool uses_padded_ring(const ConvParams& p) { return p.k_h * padded_input_w(p) <= kPaddedRingFloats; }

template <int S, int K>
inline void padded_ring_plane(const ConvParams& p, const float* xc, const float* wc, float bias, float* yc,
                              const Epilogue& e) {
  const index_t width = padded_input_w(p);
  float ring[kPaddedRingFloats];
  index_t held[depthwise_detail::kMaxKernelRows];  // the input row each slot holds
  for (index_t s = 0; s < p.k_h; ++s) held[s] = -p.in_h - p.pad_h - 1;  // none: no output row reads it
  const KernelRowRange all{0, p.k_h};
  KernelRows rows;
  for (index_t oh = 0; oh < p.out_h; ++oh) {
    const index_t ih0 = oh * p.stride_h - p.pad_h;
    auto read_by_this_row = [&](index_t ih) {
      return ih >= ih0 && (ih - ih0) % p.dilation_h == 0 && (ih - ih0) / p.dilation_h < p.k_h;
    };
    for (index_t kh = 0; kh < p.k_h; ++kh) {
      const index_t ih = ih0 + kh * p.dilation_h;
      // Row ih's slot: ih mod k_h when that keeps one output row's rows apart (dilation 1), else
      // the slot holding it or one whose row this output row does not read (k_h rows, k_h slots).
      index_t slot = -1;
      if (p.dilation_h == 1) {
        slot = ih % p.k_h;
        if (slot < 0) slot += p.k_h;
      }
      for (index_t s = 0; s < p.k_h && slot < 0; ++s)
        if (held[s] == ih) slot = s;
      for (index_t s = 0; s < p.k_h && slot < 0; ++s)
        if (!read_by_this_row(held[s])) slot = s;
      if (held[slot] != ih) {
        float* row = ring + slot * width;
        if (ih >= 0 && ih < p.in_h) pad_input_row(p, xc + ih * p.in_w, row);
        else
          for (index_t c = 0; c < width; ++c) row[c] = 0.0f;  // a row of the vertical padding
        held[slot] = ih;
      }
      rows[kh] = ring + slot * width + p.pad_w;  // column_block reads from ow * stride - pad_w
    }
    vector_columns<S, K, 1>(p, &rows, all, wc, bias, 0, p.out_w, yc + oh * p.out_w, e);
  }
  activate_row(e, yc, p.out_h * p.out_w);
}

#endif

// One channel plane; S is the horizontal stride and K x K the kernel when fixed at compile time
// (0: read from p), so the common 3x3 layers get fully unrolled taps.
template <int S, int K>
inline void plane(const ConvParams& p, const float* xc, const float* wc, float bias, float* yc, const Epilogue& e) {
#if !defined(ONNXC_SIMD)
  if (uses_padded_ring(p)) return padded_ring_plane<S, K>(p, xc, wc, bias, yc, e);
#endif
  const ColumnRange interior = interior_columns(p);
  const index_t vector_end = vector_columns_end<S>(p, interior);
  const bool pairs = computes_row_pairs(p);
  KernelRows rows[2];
  for (index_t oh = 0; oh < p.out_h;) {
    const KernelRowRange kr = kernel_rows_inside(p, oh);
    point_kernel_rows(p, xc, oh, kr, rows[0]);
    float* y = yc + oh * p.out_w;
    index_t row_count = 1;
    if (pairs && oh + 1 < p.out_h && kernel_rows_inside(p, oh + 1) == kr) {
      point_kernel_rows(p, xc, oh + 1, kr, rows[1]);
      vector_columns<S, K, 2>(p, rows, kr, wc, bias, interior.lo, vector_end, y, e);
      row_count = 2;
    } else {
      vector_columns<S, K, 1>(p, rows, kr, wc, bias, interior.lo, vector_end, y, e);
    }
    for (index_t r = 0; r < row_count; ++r)
      border_columns(p, rows[r], kr, wc, bias, interior.lo, vector_end, y + r * p.out_w, e);
    if (!activates_in_registers(e)) activate_row(e, y, row_count * p.out_w);
    oh += row_count;
  }
}

// The depthwise layers the SIMD kernels compute in place whatever scratch they are given (the
// compiler, built without SIMD, gives them none on such targets): stride-1 planes of the input's
// size (flat planes, below; any SIMD target) and 3x3 stride-2 ones (depthwise_stride2_detail;
// AVX-512 and AVX2).
constexpr index_t kFlatMaxTaps = 64;  // kernels of any other size: one weight register per tap
inline bool depthwise_shape_is_flat_plane(const ConvParams& p) {
  return p.stride_h == 1 && p.stride_w == 1 && p.in_w == p.out_w && p.in_h == p.out_h &&
         p.k_h * p.k_w <= kFlatMaxTaps;
}
inline bool depthwise_shape_is_3x3_stride2(const ConvParams& p) {
  return p.k_h == 3 && p.k_w == 3 && p.stride_h == 2 && p.stride_w == 2 && p.dilation_h == 1 &&
         p.dilation_w == 1 && p.in_d == 1 && p.k_d == 1;
}

#if defined(ONNXC_SIMD)

// Stride-1 planes whose output has the input's size ("same" padding: kws-dscnn's 25 x 5, all of
// MobileNet's stride-1 layers) run as one flat array, without padding (narrow planes would fill
// few vector lanes per output row, and wide ones need no padded copy): under tap (kh, kw),
// output i reads input
// i + (kh * dilation_h - pad_h) * w + kw * dilation_w - pad_w, so one load serves a vector of
// outputs spanning several rows. A lane whose tap column lies outside its row (the load gave it
// the neighbouring row's end) is dropped by a mask; one whose tap row lies outside the plane
// reads outside [0, h * w) and is loaded as zero.
// Per plane, the kernel's weights stay in registers across the plane's vectors, the taps'
// offsets and column bounds are computed once per call, and each vector's column masks come from
// a vector of lane columns stepped along. In isolation (min of 2000 runs, load 15): kws-dscnn's
// 64 planes of 25 x 5 9.0 -> 3.1 us, MobileNet's 96 of 14 x 14 19.0 -> 7.2 (12.2 with the
// padded kernel), 96 of 7 x 7 11.0 -> 3.0 (5.4 padded); against the padded rows of
// conv_depthwise, 144 x 56 x 56 246 -> 158 us, 192 x 28 x 28 124 -> 56, 32 x 112 x 112 187 -> 137.
inline bool uses_flat_plane(const ConvParams& p) { return depthwise_shape_is_flat_plane(p); }

// The vector of plane[at + l], zero for the lanes outside [0, count) (at may be negative): a
// masked load on AVX-512, elsewhere through a buffer (the few vectors at the plane's ends).
inline vfloat load_in_plane(const float* plane, index_t at, index_t count) {
  if (at >= 0 && at + kFloatLanes <= count) return vfloat::load_unaligned(plane + at);
  const index_t lo = at < 0 ? -at : 0, hi = count - at < kFloatLanes ? count - at : kFloatLanes;
  if (hi <= lo) return vfloat(0.0f);
#if defined(__AVX512F__)
  const unsigned lanes = ((1u << hi) - 1u) & ~((1u << lo) - 1u);
  return _mm512_maskz_loadu_ps(static_cast<__mmask16>(lanes), plane + at);
#else
  alignas(64) float buf[kFloatLanes] = {};
  for (index_t l = lo; l < hi; ++l) buf[l] = plane[at + l];
  return vfloat::load_aligned(buf);
#endif
}

// The geometry of a flat plane's taps, the same for every plane and vector: tap t = kh * k_w + kw
// reads input i + offset[t] for output i; a lane keeps kernel column kw's taps when its output
// column c has lo[kw] <= c < hi[kw] (the tap column lies in the row). K: the kernel when fixed
// at compile time (0: at most kFlatMaxTaps taps).
template <int K>
struct FlatTaps {
  static constexpr index_t kTaps = K ? K * K : kFlatMaxTaps, kColumns = K ? K : kFlatMaxTaps;
  index_t offset[kTaps];
  vfloat lo[kColumns], hi[kColumns];
};

// Outputs [i, i + L) of one plane (xc) with its bias, every tap accumulated in registers (a
// kernel column's taps are summed first, then the lanes whose tap column lies outside their
// row dropped). column: each lane's output column; wv: the plane's weights. Inside: every load
// lies in the plane (no lane to zero).
template <int K, bool Inside>
inline vfloat flat_vector(const ConvParams& p, const FlatTaps<K>& taps, const float* xc, index_t i, const vfloat* wv,
                          vfloat column, float bias) {
  const index_t k_h = K ? K : p.k_h, k_w = K ? K : p.k_w, count = p.in_h * p.in_w;
  vfloat acc(bias);
  for (index_t kw = 0; kw < k_w; ++kw) {
    vfloat column_sum(0.0f);
    for (index_t kh = 0; kh < k_h; ++kh) {
      const index_t at = i + taps.offset[kh * k_w + kw];
      const vfloat in = Inside ? vfloat::load_unaligned(xc + at) : load_in_plane(xc, at, count);
      column_sum = xsimd::fma(wv[kh * k_w + kw], in, column_sum);
    }
    acc += xsimd::select((column >= taps.lo[kw]) & (column < taps.hi[kw]), column_sum, vfloat(0.0f));
  }
  return acc;
}

// A register tile of N consecutive vectors of outputs from i, every load inside the plane: each
// tap's weight serves N independent accumulator chains (one vector at a time, a kernel column's
// taps were one chain of dependent FMAs, and the plane ran at about 20 GMAC/s on AVX-512).
// columns: each vector's lane columns.
constexpr int kFlatTileVectors = kVectorRegisters >= 32 ? 4 : 2;
template <int K, int N>
ONNXC_INLINE void flat_vectors(const ConvParams& p, const FlatTaps<K>& taps, const float* xc, index_t i,
                               const vfloat* wv, const vfloat (&columns)[N], float bias, vfloat (&acc)[N]) {
  const index_t k_h = K ? K : p.k_h, k_w = K ? K : p.k_w;
  ONNXC_UNROLL for (int v = 0; v < N; ++v) acc[v] = vfloat(bias);
  for (index_t kw = 0; kw < k_w; ++kw) {
    vfloat column_sum[N];
    ONNXC_UNROLL for (int v = 0; v < N; ++v) column_sum[v] = vfloat(0.0f);
    for (index_t kh = 0; kh < k_h; ++kh) {
      const float* at = xc + i + taps.offset[kh * k_w + kw];
      const vfloat w = wv[kh * k_w + kw];
      ONNXC_UNROLL for (int v = 0; v < N; ++v)
        column_sum[v] = xsimd::fma(w, vfloat::load_unaligned(at + v * kFloatLanes), column_sum[v]);
    }
    ONNXC_UNROLL for (int v = 0; v < N; ++v)
      acc[v] += xsimd::select((columns[v] >= taps.lo[kw]) & (columns[v] < taps.hi[kw]), column_sum[v], vfloat(0.0f));
  }
}

// The taps of flat planes of p's geometry; `shift` is added to every offset (a band of a plane
// whose first output row is not its input's first row: fused_block.h).
template <int K>
inline void flat_taps_of(const ConvParams& p, index_t shift, FlatTaps<K>& taps) {
  const index_t k_h = K ? K : p.k_h, k_w = K ? K : p.k_w;
  for (index_t kw = 0; kw < k_w; ++kw) {
    const index_t dw = kw * p.dilation_w - p.pad_w;
    taps.lo[kw] = vfloat(static_cast<float>(-dw));
    taps.hi[kw] = vfloat(static_cast<float>(p.in_w - dw));
    for (index_t kh = 0; kh < k_h; ++kh) taps.offset[kh * k_w + kw] = (kh * p.dilation_h - p.pad_h) * p.in_w + dw + shift;
  }
}

// Outputs [0, count) of one plane (count a whole number of rows; output i's column is i % in_w),
// from xc, of which p.in_h * p.in_w floats are read (outside them: zeros), with its weights wv
// and bias; clamped and stored at yc.
template <int K>
inline void flat_plane_outputs(const ConvParams& p, const FlatTaps<K>& taps, const float* xc, const vfloat* wv,
                               float bias, index_t count, float* yc, const packed_gemm_detail::Clamp& c) {
  using packed_gemm_detail::clamp;
  const index_t k_h = K ? K : p.k_h, k_w = K ? K : p.k_w;
  const index_t width = p.in_w, readable = p.in_h * p.in_w;
  // A vector whose loads all stay in [0, readable): from the first tap's offset to the last's.
  const index_t first_tap = taps.offset[0], last_tap = taps.offset[k_h * k_w - 1];
  // The lane columns of the first vector, and their step from one vector to the next (less than
  // a row: one subtraction wraps a lane into the next row).
  alignas(64) float lane_columns[kFloatLanes];
  for (index_t l = 0; l < kFloatLanes; ++l) lane_columns[l] = static_cast<float>(l % width);
  const vfloat step = vfloat(static_cast<float>(kFloatLanes % width)), row_width = vfloat(static_cast<float>(width));
  vfloat column = vfloat::load_aligned(lane_columns);
  auto next = [&](vfloat at) {
    at += step;
    return xsimd::select(at >= row_width, at - row_width, at);
  };
  constexpr int N = kFlatTileVectors;
  for (index_t i = 0; i < count;) {
    if (i + first_tap >= 0 && i + last_tap + N * kFloatLanes <= readable && count - i >= N * kFloatLanes) {
      vfloat columns[N], acc[N];
      columns[0] = column;
      ONNXC_UNROLL for (int v = 1; v < N; ++v) columns[v] = next(columns[v - 1]);
      flat_vectors<K, N>(p, taps, xc, i, wv, columns, bias, acc);
      ONNXC_UNROLL for (int v = 0; v < N; ++v) clamp(c, acc[v]).store_unaligned(yc + i + v * kFloatLanes);
      column = next(columns[N - 1]);
      i += N * kFloatLanes;
      continue;
    }
    const bool inside = i + first_tap >= 0 && i + last_tap + kFloatLanes <= readable;
    const vfloat acc = clamp(c, inside ? flat_vector<K, true>(p, taps, xc, i, wv, column, bias)
                                       : flat_vector<K, false>(p, taps, xc, i, wv, column, bias));
    if (count - i >= kFloatLanes) acc.store_unaligned(yc + i);
    else store_partial(acc, yc + i, count - i);
    column = next(column);
    i += kFloatLanes;
  }
}

// The planes of `planes` (images x channels), K x K the kernel when fixed at compile time (0:
// read from p, at most kFlatMaxTaps taps).
template <int K>
inline void flat_planes(const ConvParams& p, const float* x, const float* w, const float* bias, float* y,
                        Range planes, const Epilogue& e) {
  const index_t taps_count = (K ? K * K : p.k_h * p.k_w), count = p.in_h * p.in_w;
  const packed_gemm_detail::Clamp c = packed_gemm_detail::clamp_of(e);
  FlatTaps<K> taps;
  flat_taps_of<K>(p, 0, taps);
  index_t channel = planes.begin % p.out_channels;
  for (index_t plane = planes.begin; plane < planes.end; ++plane) {
    float* yc = y + plane * count;
    vfloat wv[FlatTaps<K>::kTaps];
    for (index_t t = 0; t < taps_count; ++t) wv[t] = vfloat(w[channel * taps_count + t]);
    flat_plane_outputs<K>(p, taps, x + plane * count, wv, bias ? bias[channel] : 0.0f, count, yc, c);
    if (!activates_in_registers(e)) activate_row(e, yc, count);
    if (++channel == p.out_channels) channel = 0;
  }
}

inline void flat_planes(const ConvParams& p, const float* x, const float* w, const float* bias, float* y,
                        Range planes, const Epilogue& e) {
  if (p.k_h == 3 && p.k_w == 3) flat_planes<3>(p, x, w, bias, y, planes, e);
  else if (p.k_h == 5 && p.k_w == 5) flat_planes<5>(p, x, w, bias, y, planes, e);
  else if (p.k_h == 7 && p.k_w == 7) flat_planes<7>(p, x, w, bias, y, planes, e);  // ConvNeXt's
  else flat_planes<0>(p, x, w, bias, y, planes, e);
}

#else

inline bool uses_flat_plane(const ConvParams&) { return false; }
inline void flat_planes(const ConvParams&, const float*, const float*, const float*, float*, Range, const Epilogue&) {}

#endif

}  // namespace depthwise_in_place_detail

#if defined(ONNXC_SIMD) && defined(__AVX512F__)

// ---- depthwise 3x3, stride 2 (AVX-512) ----
//
// MobileNet-v2's stride-2 depthwise layers (3x3, pad 1: 96 x 112 x 112, 144 x 56 x 56,
// 192 x 28 x 28, 576 x 14 x 14), from the input where it is (no padded rows). The padded-row
// kernel gathers each tap of each output row on its own (load_strided: two loads and a
// two-source permute per tap and vector of outputs, nine per vector), and copies each input
// row into the ring first. Here a block of kStride2Rows output rows reads each of its 2 R + 1
// input rows once per vector of 16 output columns: two loads (the row's 32 columns from the
// vector's first tap) and three two-source permutes give the row's three taps (the even
// columns, the odd ones, the even ones a column on; the last lane of that one reads column 32,
// a scalar). Every load is masked to the row's columns, so the padding reads as zero and no
// load leaves the row; rows outside the input are skipped. Rows of at most
// kStride2NarrowWidth outputs (14 x 14 -> 7 x 7) would fill 7 of 16 lanes: there one vector
// holds two output rows, each tap one two-source permute of two input rows' loads.
// Isolated layer, one thread, Clip 0..6 (/tmp micro-benchmark against a scalar loop, min of
// 300 runs, load 3-5; padded rows -> this): 96 x 112 x 112 335 -> 133 us, 144 x 56 x 56
// 160 -> 45, 192 x 28 x 28 81 -> 14, 576 x 14 x 14 117 -> 16. Measured and not kept: four
// loads (columns from base and base + 1) and in-lane vshufps with the lanes put back in
// order per output vector, 10-15% slower (the loads, each across two cache lines, cost more
// than the permutes); prefetching the next plane, slower. Block heights (the layer called
// 1000 times, CPU time per call, best of 5; 144 x 56 x 56 / 192 x 28 x 28 / 96 x 112 x 112):
// 3 rows 57 / 19.6 / 165 us, 4: 53 / 18.0 / 179, 6: 55 / 17.1 / 164, 7: 51 / 15.9 / 154,
// 8: 51 / 18.5 / 150, 10: 66 / 23 / 199 (spills).
#define ONNXC_DEPTHWISE_STRIDE2 1  // conv_depthwise(_in_place) take depthwise_stride2_detail
namespace depthwise_stride2_detail {

constexpr int kStride2Rows = 7;  // 2 * 7 + 1 input rows per block; MobileNet's heights are multiples of 7
constexpr index_t kStride2NarrowWidth = 7;  // 2 * 7 + 1 input columns: one vector per input row

inline bool applies(const ConvParams& p) { return depthwise_in_place_detail::depthwise_shape_is_3x3_stride2(p); }

// The lanes l of a vector loaded from column `first` of a row of n columns with 0 <= first + l < n.
inline __mmask16 columns_inside_mask(index_t first, index_t n) {
  const index_t lo = first < 0 ? -first : 0;
  const index_t hi = n - first < kFloatLanes ? n - first : kFloatLanes;
  if (hi <= lo) return 0;
  return static_cast<__mmask16>(((1u << hi) - 1u) & ~((1u << lo) - 1u));
}

// Output rows [oh, oh + R) of one plane, a vector of 16 columns at a time. AllRows: the block's
// 2 R + 1 input rows all lie in the input (none to skip).
template <int R, bool AllRows>
inline void wide_rows(const ConvParams& p, const float* xc, const __m512 (&w)[9], __m512 bias, index_t oh, float* yc,
                      const packed_gemm_detail::Clamp& c) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  const __m512i next = _mm512_setr_epi32(2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 0);
  const index_t in_w = p.in_w, out_w = p.out_w;
  const index_t ih0 = 2 * oh - p.pad_h;
  const index_t i_lo = ih0 < 0 ? -ih0 : 0, i_hi = p.in_h - ih0;  // the block's rows inside the input
  for (index_t ow0 = 0; ow0 < out_w; ow0 += kFloatLanes) {
    const index_t base = 2 * ow0 - p.pad_w;  // the column tap 0 of output column ow0 reads
    const __mmask16 ma = columns_inside_mask(base, in_w), mb = columns_inside_mask(base + 16, in_w);
    // Tap 2 of the vector's last column reads column base + 32, past the two loads: a scalar,
    // when the column exists and the vector is whole (otherwise the lane is padding or unused).
    const bool column_32 = out_w - ow0 >= kFloatLanes && base + 32 < in_w;
    __m512 acc[R];
    ONNXC_UNROLL for (int r = 0; r < R; ++r) acc[r] = bias;
    const float* row = xc + ih0 * in_w + base;
    ONNXC_UNROLL for (int i = 0; i < 2 * R + 1; ++i, row += in_w) {
      if (!AllRows && (i < i_lo || i >= i_hi)) continue;
      const __m512 a = _mm512_maskz_loadu_ps(ma, row), b = _mm512_maskz_loadu_ps(mb, row + 16);
      // Columns base + 2j, base + 2j + 1 and base + 2j + 2 of output column ow0 + j.
      const __m512 t0 = _mm512_permutex2var_ps(a, even, b), t1 = _mm512_permutex2var_ps(a, odd, b);
      __m512 t2 = _mm512_maskz_permutex2var_ps(0x7FFF, a, next, b);
      if (column_32) t2 = _mm512_mask_broadcastss_ps(t2, 0x8000, _mm_load_ss(row + 32));
      ONNXC_UNROLL for (int r = 0; r < R; ++r) {
        const int kh = i - 2 * r;  // input row i is kernel row kh of output row oh + r
        if (kh < 0 || kh > 2) continue;
        acc[r] = _mm512_fmadd_ps(w[kh * 3], t0, acc[r]);
        acc[r] = _mm512_fmadd_ps(w[kh * 3 + 1], t1, acc[r]);
        acc[r] = _mm512_fmadd_ps(w[kh * 3 + 2], t2, acc[r]);
      }
    }
    const index_t cols = out_w - ow0 < kFloatLanes ? out_w - ow0 : kFloatLanes;
    const __mmask16 stored = static_cast<__mmask16>((1u << cols) - 1u);
    float* y = yc + oh * out_w + ow0;
    ONNXC_UNROLL for (int r = 0; r < R; ++r, y += out_w)
      _mm512_mask_storeu_ps(y, stored, packed_gemm_detail::clamp(c, vfloat(acc[r])));
  }
}

template <int R>
inline void wide_rows(const ConvParams& p, const float* xc, const __m512 (&w)[9], __m512 bias, index_t oh, float* yc,
                      const packed_gemm_detail::Clamp& c) {
  const index_t ih0 = 2 * oh - p.pad_h;
  if (ih0 >= 0 && ih0 + 2 * R < p.in_h) wide_rows<R, true>(p, xc, w, bias, oh, yc, c);
  else wide_rows<R, false>(p, xc, w, bias, oh, yc, c);
}

inline void wide_plane(const ConvParams& p, const float* xc, const float* wc, float bias, float* yc,
                       const packed_gemm_detail::Clamp& c) {
  __m512 w[9];
  for (int t = 0; t < 9; ++t) w[t] = _mm512_set1_ps(wc[t]);
  const __m512 b = _mm512_set1_ps(bias);
  index_t oh = 0;
  for (; oh + kStride2Rows <= p.out_h; oh += kStride2Rows) wide_rows<kStride2Rows>(p, xc, w, b, oh, yc, c);
  for (; oh + 2 <= p.out_h; oh += 2) wide_rows<2>(p, xc, w, b, oh, yc, c);
  if (oh < p.out_h) wide_rows<1>(p, xc, w, b, oh, yc, c);
}

// Narrow rows: lanes [0, out_w) of a vector hold output row oh, [out_w, 2 out_w) row oh + 1.
// taps[kw] picks, from the loads of the input rows under kernel row kh of the two output rows
// (columns from -pad_w; the first source for row oh, the second for oh + 1), the column each
// lane's tap kw reads.
struct NarrowTaps {
  __m512i taps[3];
};

inline NarrowTaps narrow_taps(const ConvParams& p) {
  alignas(64) int index[3][16];
  const int w = static_cast<int>(p.out_w);
  for (int kw = 0; kw < 3; ++kw)
    for (int l = 0; l < 16; ++l) index[kw][l] = l < w ? 2 * l + kw : l < 2 * w ? 16 + 2 * (l - w) + kw : 0;
  NarrowTaps n;
  for (int kw = 0; kw < 3; ++kw) n.taps[kw] = _mm512_load_si512(index[kw]);
  return n;
}

// The weights are broadcast from memory by the FMAs (embedded broadcasts): holding the nine in
// registers across the plane's few vectors measured 7% slower (576 x 14 x 14: 17.1 -> 16.0 us).
inline void narrow_plane(const ConvParams& p, const float* xc, const float* wc, float bias, float* yc,
                         const NarrowTaps& n, const packed_gemm_detail::Clamp& c) {
  const index_t in_w = p.in_w, in_h = p.in_h, out_w = p.out_w;
  const __mmask16 columns =
      columns_inside_mask(-p.pad_w, in_w) & static_cast<__mmask16>((1u << (2 * out_w + 1)) - 1u);
  for (index_t oh = 0; oh < p.out_h; oh += 2) {
    const index_t ih0 = 2 * oh - p.pad_h;
    __m512 rows[5];  // input rows ih0 .. ih0 + 4: kernel row kh of row oh is rows[kh], of oh + 1 rows[kh + 2]
    ONNXC_UNROLL for (int i = 0; i < 5; ++i) {
      const index_t ih = ih0 + i;
      rows[i] = ih >= 0 && ih < in_h ? _mm512_maskz_loadu_ps(columns, xc + ih * in_w - p.pad_w) : _mm512_setzero_ps();
    }
    // One sum per kernel row: three short dependency chains instead of one of nine FMAs.
    __m512 acc[3];
    ONNXC_UNROLL for (int kh = 0; kh < 3; ++kh) {
      acc[kh] = kh == 0 ? _mm512_set1_ps(bias) : _mm512_setzero_ps();
      ONNXC_UNROLL for (int kw = 0; kw < 3; ++kw)
        acc[kh] = _mm512_fmadd_ps(_mm512_set1_ps(wc[kh * 3 + kw]),
                                  _mm512_permutex2var_ps(rows[kh], n.taps[kw], rows[kh + 2]), acc[kh]);
    }
    const __m512 sum = _mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), acc[2]);
    const index_t outs = (p.out_h - oh >= 2 ? 2 : 1) * out_w;
    _mm512_mask_storeu_ps(yc + oh * out_w, static_cast<__mmask16>((1u << outs) - 1u),
                          packed_gemm_detail::clamp(c, vfloat(sum)));
  }
}

// The planes of `range` (images x channels); a clamp activation is applied in registers, the
// others over each stored plane.
inline void planes(const ConvParams& p, const float* x, const float* w, const float* bias, float* y, Range range,
                   const Epilogue& e) {
  const packed_gemm_detail::Clamp c = packed_gemm_detail::clamp_of(e);
  const bool narrow = p.out_w <= kStride2NarrowWidth;
  const NarrowTaps taps = narrow_taps(p);
  for (index_t plane = range.begin; plane < range.end; ++plane) {
    const DepthwisePlane d = depthwise_plane(p, plane, x, w, bias, y);
    if (narrow) narrow_plane(p, d.x, d.w, d.bias, d.y, taps, c);
    else wide_plane(p, d.x, d.w, d.bias, d.y, c);
    if (!packed_gemm_detail::is_clamp(e)) activate_row(e, d.y, p.out_h * p.out_w);
  }
}

}  // namespace depthwise_stride2_detail

#elif defined(ONNXC_SIMD) && defined(__AVX2__) && defined(__FMA__)

// ---- depthwise 3x3, stride 2 (AVX2) ----
//
// The AVX-512 kernel above on 8 lanes: blocks of kStride2Rows output rows, each of their input
// rows read once per vector of 8 output columns, from the input where it is. The padded-row
// kernel was slower here than the plain C++ build (load_strided gathers a partial vector's even
// lanes through a stack buffer). AVX2 has no two-source permute: two loads (16 columns from the
// vector's first tap) and two in-lane vshufps give the even and the odd columns with the output
// columns in the lane order 0 1 4 5 2 3 6 7, which the accumulators keep (one vpermpd per output
// vector, when stored, puts them back); the third tap (the even columns a column on) is the even
// one's lanes moved by a vpermps, with column 16 broadcast into lane 7. Vectors whose columns
// reach outside the row (the first and last ones) load with masks (the padding reads as zero, no
// load leaves the row), four loads and a third vshufps instead of the vpermps and broadcast (a
// longer dependency chain after the masked loads: 14 x 14 planes, all masked, 35 -> 41 us that
// way). Rows outside the input are skipped. 7-wide output rows (14 x 14 -> 7 x 7) fill 7 of the
// 8 lanes: no narrow path. Isolated layer, one thread, Clip 0..6 (/tmp micro-benchmark, 20th
// percentile of 201 runs, load 2-3; padded rows -> this; plain C++ build): 144 x 56 x 56
// 408 -> 77 us (331), 96 x 112 x 112 435 -> 160 (811), 192 x 28 x 28 262 -> 32 (142),
// 576 x 14 x 14 428 -> 35 (154). Measured and not kept: the third tap from two more loads
// (columns from base + 1 and base + 9) and a vshufps, 5-15% slower (8 planes in cache:
// 112 x 112 14.3 -> 11.6 us with the vpermps); a separate sum per kernel row (three short
// dependency chains), no faster. Block heights (with the four loads; 144 x 56 x 56 /
// 96 x 112 x 112 / 192 x 28 x 28 / 576 x 14 x 14): 2 rows 95 / 195 / 37 / 39 us, 3: 94 / 190 /
// 36 / 39, 4: 87 / 184 / 35 / 38, 5: 89 / 187 / 40 / 49, 6: 89 / 190 / 37 / 41, 7: 84 / 186 /
// 33 / 37, 8: 86 / 165 / 40 / 38.
#define ONNXC_DEPTHWISE_STRIDE2 1  // conv_depthwise(_in_place) take depthwise_stride2_detail
namespace depthwise_stride2_detail {

constexpr int kStride2Rows = 7;  // 2 * 7 + 1 input rows per block, as on AVX-512

inline bool applies(const ConvParams& p) { return depthwise_in_place_detail::depthwise_shape_is_3x3_stride2(p); }

// All ones in the lanes l of a vector loaded from column `first` of a row of n columns with
// 0 <= first + l < n.
inline __m256i columns_inside_mask(index_t first, index_t n) {
  const __m256i column = _mm256_add_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                          _mm256_set1_epi32(static_cast<int>(first)));
  return _mm256_and_si256(_mm256_cmpgt_epi32(column, _mm256_set1_epi32(-1)),
                          _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), column));
}

// The masks of a vector's loads near the row's ends: columns from base (a), base + 8 (b),
// base + 1 (c) and base + 9 (d).
struct LoadMasks {
  __m256i a, b, c, d;
};

// Output columns [ow0, ow0 + 8) of output rows [oh, oh + R). AllRows: the block's 2 R + 1 input
// rows all lie in the input (none to skip); Masked: some load reaches outside the row.
template <int R, bool AllRows, bool Masked>
inline void vector_rows(const ConvParams& p, const float* xc, const __m256 (&w)[9], __m256 bias, index_t oh,
                        index_t ow0, const LoadMasks& m, float* yc, const packed_gemm_detail::Clamp& c) {
  // t2's lanes from t0's: output column j + 1 (lane 7: column 16, blended in).
  const __m256i next = _mm256_setr_epi32(1, 4, 3, 6, 5, 2, 7, 0);
  const index_t in_w = p.in_w, out_w = p.out_w;
  const index_t ih0 = 2 * oh - p.pad_h;
  const index_t i_lo = ih0 < 0 ? -ih0 : 0, i_hi = p.in_h - ih0;  // the block's rows inside the input
  __m256 acc[R];
  ONNXC_UNROLL for (int r = 0; r < R; ++r) acc[r] = bias;
  const float* row = xc + ih0 * in_w + 2 * ow0 - p.pad_w;
  ONNXC_UNROLL for (int i = 0; i < 2 * R + 1; ++i, row += in_w) {
    if (!AllRows && (i < i_lo || i >= i_hi)) continue;
    const __m256 a = Masked ? _mm256_maskload_ps(row, m.a) : _mm256_loadu_ps(row);
    const __m256 b = Masked ? _mm256_maskload_ps(row + 8, m.b) : _mm256_loadu_ps(row + 8);
    // Columns base + 2j, base + 2j + 1 and base + 2j + 2 of output column ow0 + j, in the lane
    // order 0 1 4 5 2 3 6 7 of j: [a0 a2 b0 b2 | a4 a6 b4 b6] and so on.
    const __m256 t0 = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
    const __m256 t1 = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
    const __m256 t2 = Masked ? _mm256_shuffle_ps(_mm256_maskload_ps(row + 1, m.c), _mm256_maskload_ps(row + 9, m.d),
                                                 _MM_SHUFFLE(3, 1, 3, 1))
                             : _mm256_blend_ps(_mm256_permutevar8x32_ps(t0, next), _mm256_broadcast_ss(row + 16), 0x80);
    ONNXC_UNROLL for (int r = 0; r < R; ++r) {
      const int kh = i - 2 * r;  // input row i is kernel row kh of output row oh + r
      if (kh < 0 || kh > 2) continue;
      acc[r] = _mm256_fmadd_ps(w[kh * 3], t0, acc[r]);
      acc[r] = _mm256_fmadd_ps(w[kh * 3 + 1], t1, acc[r]);
      acc[r] = _mm256_fmadd_ps(w[kh * 3 + 2], t2, acc[r]);
    }
  }
  const index_t cols = out_w - ow0 < kFloatLanes ? out_w - ow0 : kFloatLanes;
  const __m256i stored = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(cols)),
                                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  float* y = yc + oh * out_w + ow0;
  ONNXC_UNROLL for (int r = 0; r < R; ++r, y += out_w) {
    // The lanes back in column order: 64-bit pairs (0 1) (4 5) (2 3) (6 7) -> (0 1) (2 3) (4 5) (6 7).
    const __m256 v = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(acc[r]), _MM_SHUFFLE(3, 1, 2, 0)));
    const __m256 out = packed_gemm_detail::clamp(c, vfloat(v));
    if (cols == kFloatLanes) _mm256_storeu_ps(y, out);
    else _mm256_maskstore_ps(y, stored, out);
  }
}

template <int R, bool AllRows>
inline void block_rows(const ConvParams& p, const float* xc, const __m256 (&w)[9], __m256 bias, index_t oh, float* yc,
                       const packed_gemm_detail::Clamp& c) {
  const index_t in_w = p.in_w;
  for (index_t ow0 = 0; ow0 < p.out_w; ow0 += kFloatLanes) {
    const index_t base = 2 * ow0 - p.pad_w;  // the column tap 0 of output column ow0 reads
    if (base >= 0 && base + 17 <= in_w) {  // columns base .. base + 16 all in the row
      vector_rows<R, AllRows, false>(p, xc, w, bias, oh, ow0, LoadMasks{}, yc, c);
    } else {
      const LoadMasks m{columns_inside_mask(base, in_w), columns_inside_mask(base + 8, in_w),
                        columns_inside_mask(base + 1, in_w), columns_inside_mask(base + 9, in_w)};
      vector_rows<R, AllRows, true>(p, xc, w, bias, oh, ow0, m, yc, c);
    }
  }
}

template <int R>
inline void block_rows(const ConvParams& p, const float* xc, const __m256 (&w)[9], __m256 bias, index_t oh, float* yc,
                       const packed_gemm_detail::Clamp& c) {
  const index_t ih0 = 2 * oh - p.pad_h;
  if (ih0 >= 0 && ih0 + 2 * R < p.in_h) block_rows<R, true>(p, xc, w, bias, oh, yc, c);
  else block_rows<R, false>(p, xc, w, bias, oh, yc, c);
}

inline void plane(const ConvParams& p, const float* xc, const float* wc, float bias, float* yc,
                  const packed_gemm_detail::Clamp& c) {
  __m256 w[9];
  for (int t = 0; t < 9; ++t) w[t] = _mm256_set1_ps(wc[t]);
  const __m256 b = _mm256_set1_ps(bias);
  index_t oh = 0;
  for (; oh + kStride2Rows <= p.out_h; oh += kStride2Rows) block_rows<kStride2Rows>(p, xc, w, b, oh, yc, c);
  for (; oh + 2 <= p.out_h; oh += 2) block_rows<2>(p, xc, w, b, oh, yc, c);
  if (oh < p.out_h) block_rows<1>(p, xc, w, b, oh, yc, c);
}

// The planes of `range` (images x channels); a clamp activation is applied in registers, the
// others over each stored plane.
inline void planes(const ConvParams& p, const float* x, const float* w, const float* bias, float* y, Range range,
                   const Epilogue& e) {
  const packed_gemm_detail::Clamp c = packed_gemm_detail::clamp_of(e);
  for (index_t plane_index = range.begin; plane_index < range.end; ++plane_index) {
    const DepthwisePlane d = depthwise_plane(p, plane_index, x, w, bias, y);
    plane(p, d.x, d.w, d.bias, d.y, c);
    if (!packed_gemm_detail::is_clamp(e)) activate_row(e, d.y, p.out_h * p.out_w);
  }
}

}  // namespace depthwise_stride2_detail

#endif

// Tasks conv_depthwise_in_place splits into when run() is given a parallel-for: ranges of planes.
constexpr index_t kDepthwiseTasks = 4;

// conv_depthwise's convolution (same shapes and results up to rounding) with no scratch. With a
// parallel-for, the planes (images x channels) are cut into kDepthwiseTasks ranges, one task each.
inline void conv_depthwise_in_place(const ConvParams& p, const float* x, const float* w, const float* bias, float* y,
                           const Epilogue& e, Parallel parallel = nullptr) {
  const index_t planes = p.batch * p.out_channels;
  const bool flat = depthwise_in_place_detail::uses_flat_plane(p);
  const bool dense3 = p.k_h == 3 && p.k_w == 3 && p.dilation_w == 1;
  auto compute = [&](Range range) {
#if defined(ONNXC_DEPTHWISE_NEON)
    if (depthwise_neon_detail::applies(p)) return depthwise_neon_detail::planes(p, x, w, bias, y, range, e);
#endif
    if (flat) return depthwise_in_place_detail::flat_planes(p, x, w, bias, y, range, e);
#if defined(ONNXC_DEPTHWISE_STRIDE2)
    if (depthwise_stride2_detail::applies(p)) return depthwise_stride2_detail::planes(p, x, w, bias, y, range, e);
#endif
#if defined(ONNXC_DEPTHWISE_ROWS)
    if (depthwise_rows_detail::takes_in_place(p)) return depthwise_rows_detail::planes(p, x, w, bias, y, range, e);
#endif
    for (index_t plane = range.begin; plane < range.end; ++plane) {
      const DepthwisePlane d = depthwise_plane(p, plane, x, w, bias, y);
      if (dense3 && p.stride_w == 1) depthwise_in_place_detail::plane<1, 3>(p, d.x, d.w, d.bias, d.y, e);
      else if (dense3 && p.stride_w == 2) depthwise_in_place_detail::plane<2, 3>(p, d.x, d.w, d.bias, d.y, e);
      else if (p.stride_w == 1) depthwise_in_place_detail::plane<1, 0>(p, d.x, d.w, d.bias, d.y, e);
      else if (p.stride_w == 2) depthwise_in_place_detail::plane<2, 0>(p, d.x, d.w, d.bias, d.y, e);
      else depthwise_in_place_detail::plane<0, 0>(p, d.x, d.w, d.bias, d.y, e);
    }
  };
  if (!parallel) return compute({0, planes});
  parallel_for(parallel, kDepthwiseTasks, [&](index_t t) { compute(part_of(planes, kDepthwiseTasks, t)); });
}

// Depthwise convolution (group == in_channels == out_channels), 1-d or 2-d (in_d == k_d == 1),
// k_h <= 16; scratch holds `slots` times conv_depthwise_scratch_floats(p) floats. With a
// parallel-for, the planes (images x channels) are cut into `slots` ranges, one task each with
// its own scratch; without one, slot 0 computes every plane. The 'same' stride-1 planes
// conv_depthwise_in_place computes as flat arrays on SIMD targets go to it (faster than padding
// them: kws-dscnn's 64 planes of 25 x 5 8.8 -> 3.6 us, MobileNet's 96 of 14 x 14 12.2 -> 8.1,
// 96 of 7 x 7 5.4 -> 3.6, 144 of 56 x 56 246 -> 158), and leave the scratch unused; so do the
// 3x3 stride-2 layers on AVX-512 (depthwise_stride2_detail: MobileNet-v2's four 335 -> 133,
// 160 -> 45, 81 -> 14 and 117 -> 16 us) and AVX2 (435 -> 160, 408 -> 77, 262 -> 32 and
// 428 -> 35 us).
inline void conv_depthwise(const ConvParams& p, const float* x, const float* w, const float* bias, float* y,
                           float* scratch, const Epilogue& e, Parallel parallel = nullptr, index_t slots = 1) {
#if defined(ONNXC_SIMD) && (defined(__AVX512F__) || defined(__AVX2__))
  const bool lanes = depthwise_channels_detail::prefers_lanes(p, kFloatLanes);  // rather than the flat planes
#else
  const bool lanes = false;
#endif
  if (!lanes && depthwise_in_place_detail::uses_flat_plane(p)) return conv_depthwise_in_place(p, x, w, bias, y, e, parallel);
#if defined(ONNXC_DEPTHWISE_NEON)
  if (depthwise_neon_detail::applies(p)) return conv_depthwise_in_place(p, x, w, bias, y, e, parallel);
#endif
#if defined(ONNXC_DEPTHWISE_STRIDE2)
  if (depthwise_stride2_detail::applies(p)) return conv_depthwise_in_place(p, x, w, bias, y, e, parallel);
#endif
  const index_t planes = p.batch * p.out_channels, slot_floats = conv_depthwise_scratch_floats(p);
  const bool flat = !lanes && depthwise_uses_flat_plane(p);
  const bool dense3 = p.k_h == 3 && p.k_w == 3 && p.dilation_w == 1;
  auto compute = [&](Range range, float* slot) {
    // The padding (and the slack, read but never used) is zeroed once: only the input's
    // rectangle, or the inside of the padded rows, is rewritten per channel.
    for (index_t i = 0; i < slot_floats; ++i) slot[i] = 0.0f;
#if defined(ONNXC_SIMD)
    if (!flat && depthwise_channels_detail::applies(p) && p.out_w <= kFloatLanes)
      return depthwise_channels_detail::planes(p, x, w, bias, y, range, slot, e);
    if (!flat && depthwise_phases_detail::applies(p)) return depthwise_phases_detail::planes(p, x, w, bias, y, range, slot, e);
#endif
    for (index_t plane = range.begin; plane < range.end; ++plane) {
      const DepthwisePlane d = depthwise_plane(p, plane, x, w, bias, y);
      if (flat) depthwise_detail::flat_plane(p, d.x, d.w, d.bias, d.y, slot, e);
      else if (dense3 && p.stride_w == 1) depthwise_detail::plane<1, 3>(p, d.x, d.w, d.bias, d.y, slot, e);
      else if (dense3 && p.stride_w == 2) depthwise_detail::plane<2, 3>(p, d.x, d.w, d.bias, d.y, slot, e);
      else depthwise_detail::plane<0, 0>(p, d.x, d.w, d.bias, d.y, slot, e);
    }
  };
  if (!parallel || slots < 2) return compute({0, planes}, scratch);
  parallel_for(parallel, slots, [&](index_t s) { compute(part_of(planes, slots, s), scratch + s * slot_floats); });
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_CONV_H
