// How a Conv node is computed: chosen at compile time per layer from its shape and types, and
// shared by the Conv emitter and the pass that packs weights for it (passes/pack_weights.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ir/ir.h"
#include "onnxc/conv.h"

namespace onnxc {

enum class ConvAlgorithm {
  Gemm,       // float, constant weights, one group or per group (conv_groups_run_one_group_kernels):
              // packed-weight matrix product (rt::conv_gemm)
  Winograd,   // float 3x3 stride 1, one group, constant weights fit-scratch gave rt::conv_winograd
              // (weights transformed at compile time by rt::winograd_pack_weights), with scratch
  ChannelLanes,  // a Gemm Conv (the input as the matrix, or im2col blocks) whose output positions are
                 // few against a vector where its output channels are not (conv_prefers_channel_lanes,
                 // SIMD targets): rt::conv_channel_lanes, weights packed by pack-weights into panels of
                 // output channels (rt::pack_channel_lane_weights), the same scratch
  Shifted,    // a Gemm Conv fit-scratch gave rt::conv_shifted (the product reading its input in
              // place, AVX-512; weights packed as for Gemm), no scratch
  Depthwise,  // float 1-d/2-d, one channel per group: rt::conv_depthwise, or without scratch
              // rt::conv_depthwise_in_place
  DirectPacked,  // float 1-d/2-d, one group or per group, constant weights packed for it, no im2col room
                 // (SIMD targets): rt::conv_direct_packed, no scratch
  Stacked,    // a Gemm Conv (1-d/2-d) fit-scratch gave rt::conv_gemm_stacked: im2col blocks of depth x
              // columns on the stack, weights packed as for Gemm, no scratch
  Band,       // float 2-d, constant weights packed as for DirectPacked, any group count, where
              // conv_fits_band's cost model prefers it (SIMD targets): rt::conv_band, no scratch
  Direct,     // anything else: float 1-d/2-d by register-blocked direct loops (rt::conv_direct),
              // other types and 3-d by the reference loop nest (rt::conv)
};

// Whether the one-group kernels (Gemm, Shifted, DirectPacked) may compute the Conv: one group,
// or group by group (rt::conv_each_group over channel-offset views, weights packed per group)
// when a group has at least kMinGroupWidthForProduct input channels.
bool conv_groups_run_one_group_kernels(const Node& conv);
constexpr int64_t kMinGroupWidthForProduct = 2;
// Whether the Conv may use the Gemm algorithm once its weights are packed (pack-weights does it).
bool conv_packs_weights(const Node& conv);
// Whether rt::conv_direct_packed can compute the Conv: float, one group, constant weights, 1-d or 2-d.
bool conv_fits_direct_packed(const Node& conv);
// Whether the Conv may use DirectPacked once its weights are packed for it (pack-weights does it
// on SIMD targets): one the Gemm algorithm would take, but left without an im2col block.
bool conv_direct_packs_weights(const Node& conv);
// Output columns (per image) up to which DirectPacked beats the matrix product even with room
// for im2col (fit-scratch on SIMD targets takes it then): with few columns the product's tiles
// run mostly empty. AVX-512, one layer in isolation: silero-vad-v5's 3-column layers 1-3 us
// against 15-25, resnet8-cifar's 8 x 8 ones 31 against 34 us and 19 against 27 (stride 2);
// its 32 x 32 one 43 against 31.
constexpr int64_t kDirectPackedMaxColumns = 64;
// The same bound on a target of `float_lanes` floats per vector: four vectors of columns where
// vectors hold 8 floats or more (AVX-512: 64; AVX2: 32, one layer alone, bench/gemm_bench
// -march=x86-64-v3: 3 x 3 onto 16 and 25 columns 8.9 against 15.3 us and 24.4 against 37.5, onto
// 36 and 64 columns 19.7 against 15.7 and 190 against 169, 1 x 1 stride 2 160 -> 400 onto 7 x 7
// 215 against 84); kDirectPackedMaxColumns on narrower ones (NEON, SSE: not measured).
int64_t direct_packed_max_columns(int64_t float_lanes);
constexpr int64_t kDirectPackedMaxVectors = 4;
// Depth (input channels x kernel taps) from which the matrix product over im2col beats
// DirectPacked whatever the columns, where the im2col block fits (one layer alone, --scratch
// speed, AVX-512: a 16 x 16 stride-16 patch embedding 3 -> 192 channels on 96 x 96 (depth 768,
// 36 columns) 142 -> 104 us; 2 x 2 stride 2 256 -> 256 on 16 x 16 (depth 1024, 64 columns)
// 296 -> 193 us).
constexpr int64_t kDirectPackedMaxDepth = 512;
// Output columns from which the AVX-512 products reading the input in place or over its phase
// planes (rt::conv_shifted, conv_phase_gemm: tiles of 16 output channels) beat DirectPacked
// (one layer alone, Relu: 8 x 8 outputs: 64 -> 64 channels 42.3 against 45.2 us, 32 -> 32 11.1
// against 11.6, stride 2 32 -> 64 23.2 against 25.3; 25-36 columns about even, 16 lose).
// Layers with fewer output channels than a tall tile keep DirectPacked up to 64 columns.
constexpr int64_t kTallTileMinColumns = 64;
constexpr int64_t kTallTileRows = 16;
ConvAlgorithm conv_algorithm(const Node& conv);
// Whether rt::conv_channel_lanes (output channels in the vector lanes, the input broadcast) is
// cheaper than the product with the output positions in the lanes, for a Conv the latter would
// compute (Gemm, not Shifted or Winograd) on a target of `float_lanes` floats per vector. The
// cost model: each orientation's work is its MACs over the share of lanes it fills (positions
// per group image rounded up to whole vectors; output channels per group likewise), the channel
// one also pays its tiles' transposed stores, kChannelLanesStoreMacs per output, and im2col where
// the other reads the input through phase planes or a padded copy instead. Measured one layer
// alone, AVX-512, docs/performance.md 'Small planes: output channels in the lanes'.
bool conv_prefers_channel_lanes(const Node& conv, int64_t float_lanes);
constexpr int64_t kChannelLanesStoreMacs = 20;
// Targets of 16 vector registers (fewer than 16 lanes: AVX2, NEON as xsimd builds it) hold a
// 6 x 2 channel tile, which loads 8 values per 12 multiply-adds: it ran at 0.8 of the
// position tiles' rate per filled lane (AVX2, one layer alone: 400 -> 400 on 7 x 7 215 against
// 198 us, 160 -> 960 198 against 170), so its cost counts 25 % more.
constexpr int64_t kChannelLanesSmallTilePercent = 125;
// ... except where the product reads the input as its matrix (1 x 1, stride 1, no padding) on
// AVX2: there its register tiles over few positions end in tiles of 1 or 2 vectors, and the
// channel tiles ran faster than the cost model with kChannelLanesSmallTilePercent said (one
// layer alone, bench/gemm_bench -march=x86-64-v3, channel lanes against the product: 400 -> 400
// on 7 x 7 157 against 210 us, 64 -> 128 on 5 x 5 4.4 against 5.5, 256 -> 128 on 3 x 3 5.7
// against 9.9; on 14 x 14 even within 5 %: 160 -> 960 573 against 574, 960 -> 160 701 against
// 664, 576 -> 96 235 against 228; 144 -> 24 on 56 x 56 356 against 287), so its cost counts 10 %
// less. docs/performance-avx2.md, 'Eighth round'.
constexpr int64_t kChannelLanesAvx2InPlacePercent = 90;
// The narrowest im2col block fit-scratch gives it (a tile of output positions on AVX-512).
constexpr int64_t kChannelLanesMinBlock = 12;
// Whether rt::conv_band (output rows in bands copied to the stack, conv_band_simd.h) computes the
// Conv on SIMD targets: its cost model, from one layer alone against the kernels it replaces
// (AVX-512, docs/performance.md 'Grouped convolutions (third round)'). conv_band_preferred:
// narrow groups (input channels per group up to kBandMaxNarrowWidth), whatever the scratch
// (64 channels in 32 groups on 56 x 56 stride 2: 41 -> 25 us against the per-group product with
// its im2col block, 85 -> 40 against the packed direct kernel; width 8 lost in regnet_y_400mf,
// whole model 7.00 -> 7.40 ms, so wider groups keep the product); and first layers of up to
// kBandMaxInChannels channels whose kernels have kBandMinFirstLayerTaps taps or more (5 x 5,
// 7 x 7: the stems of ResNet, GoogLeNet, DenseNet, SqueezeNet 1.0), whose im2col copies every
// input value under each tap (3 -> 64 7 x 7 stride 2 on 224 x 224: 1.80 -> 1.70 ms against
// blocks of 384 columns; 3 -> 32 5 x 5 545 -> 479 us; 3 x 3 about even, so it keeps the product),
// onto output rows of at least kBandMinFirstLayerWidth columns (kws-dscnn's 1 -> 64 10 x 4 onto
// rows of 5: 5.5 -> 9.0 us; docs/performance.md 'Models outside the corpus (sixth round)').
// conv_band_without_scratch: where
// the matrix product has no room for its im2col block or phase planes and the packed direct
// kernel would compute the Conv: grouped Convs of group width up to kBandMaxGroupWidth onto at
// least kBandMinGroupedColumns output columns (32 channels in 2 groups 112 -> 56: 470 -> 349 us)
// and first layers of up to kBandMaxInChannels channels (3 -> 32 3x3 stride 2 on 224 x 224:
// 273 -> 214). Not with room: the product over im2col or phase planes is faster there
// (regnet_x_400mf's stem 370-387 against 395-450 us in the model, its 32-channel grouped layer
// 353-367 against 437-495), as is conv_shifted on width-16 groups of 7 x 7 to 28 x 28 planes.
// Both: 2-d, with a band row that fits rt::band_detail's buffer.
bool conv_band_preferred(const Node& conv);
bool conv_band_without_scratch(const Node& conv);
constexpr int64_t kBandMaxNarrowWidth = 2;
constexpr int64_t kBandMinGroupedColumns = 56 * 56;
constexpr int64_t kBandMaxGroupWidth = 64;
constexpr int64_t kBandMaxInChannels = 4;
constexpr int64_t kBandMinFirstLayerTaps = 25;
constexpr int64_t kBandMinFirstLayerWidth = 16;
// Whether rt::conv_gemm_stacked (the product over im2col blocks on the stack, cut along K too) can
// compute the Conv, and its cost model (conv_gemm_stacked_cost against conv_direct_packed_cost,
// conv_gemm_stacked.h) puts it under rt::conv_direct_packed on a target of `float_lanes` floats
// per vector: fit-scratch takes it where the arena has no room for a row of im2col tiles.
bool conv_prefers_stacked_im2col(const Node& conv, int64_t float_lanes);
// Whether rt::conv_shifted can compute the Conv (on targets with Target::shifted_input_product):
// one the Gemm algorithm may take, stride 1, output rows as wide as the input's.
bool conv_fits_shifted_input(const Node& conv);
// Whether conv_gemm would compute the Conv with `room_bytes` of scratch over a padded copy of its
// input, given the im2col block (columns) fit-scratch would choose for that room.
bool conv_gemm_reads_padded_input(const Node& conv, int64_t im2col_cols);
// Whether rt::conv_winograd computes the Conv faster than the other kernels (SIMD targets; its
// scratch is fitted by fit-scratch): float, one group, constant weights, 2-d 3 x 3 stride 1, and
// a shape where it was measured to win (AVX-512, one layer alone against rt::conv_shifted and the
// padded product: squeezenet1_1's 16 -> 64 channels on 55 x 55 540 -> 420 us, 32 -> 128 on
// 27 x 27 536 -> 342, 48 -> 192 on 13 x 13 281 -> 210, 64 -> 256 on 13 x 13 489 -> 344;
// resnet8-cifar's 16 -> 16 on 32 x 32 50 -> 43, 32 -> 32 on 16 x 16 47 -> 37, 64 -> 64 on 8 x 8
// 45 -> 38). Fewer channels or smaller planes leave too little product for the transforms.
bool conv_fits_winograd(const Node& conv);
constexpr int64_t kWinogradMinOutputs = 8 * 8;   // output positions per channel
constexpr int64_t kWinogradMinOutChannels = 16;
constexpr int64_t kWinogradMinInChannels = 16;
// Rows of tiles per block of rt::conv_winograd the compiler prefers: its transformed input (16 x
// in_channels x rows x tiles_w floats) at most kWinogradBlockFloats; and the product buffers with
// a parallel-for.
constexpr int64_t kWinogradBlockFloats = 64 * 1024;
int64_t winograd_preferred_rows(const Node& conv);
// Output channels per output-stage task for blocks of `rows` rows of tiles: 32 where the narrow
// product applies (AVX-512 targets, blocks of fewer than 64 tiles: 13 x 13 planes, 245 against
// 256 us and 391 against 413 with panels of 8), else 8.
int64_t winograd_group_rows(const Node& conv, int64_t rows, bool avx512);
constexpr int64_t kWinogradParallelSlots = 4;
std::size_t winograd_scratch_bytes(const Node& conv, int64_t rows, int64_t slots, int64_t group_rows);
// Input channels x kernel taps.
int64_t conv_depth(const Node& conv);
// The Conv's geometry as the kernels take it (its weights' kernel, not a packed layout's).
rt::ConvParams conv_geometry(const Node& conv);
// The im2col block (columns) whose scratch holds the phase planes rt::conv_gemm reads a stride-2
// Conv through on AVX-512 (rt::conv_phase_gemm, no im2col), or 0 when it cannot read them or its
// product is shallower than rt::kPhaseMinDepth.
int64_t conv_phase_planes_cols(const Node& conv);
// A Gemm Conv with a kernel larger than 1x1 (or strided, or padded) builds its im2col matrix
// block by block of output columns in scratch memory; the block width is the compiler's choice
// per layer (kIm2colColsAttr), set by the memory planner. Zero bytes_per_column: no im2col.
struct Im2colShape {
  int64_t bytes_per_column = 0;  // one column of im2col: input channels x kernel taps floats
  int64_t columns = 0;           // output positions of one image
  int64_t fastest_cols = 0;      // the kernel's preferred block (rt::packed_gemm_block_cols)
  int64_t quantum_cols = 0;      // smaller useful blocks are multiples of this (whole register tiles)
  // Where not even quantum_cols fit: the narrowest block still worth the matrix-product kernel
  // (narrower blocks are multiples of it); quantum_cols when the kernel takes no narrower one.
  int64_t narrow_cols = 0;
};
Im2colShape conv_im2col_shape(const Node& conv);
// The im2col block the Conv's kernel is given: the attribute, or the fastest block.
int64_t conv_im2col_cols(const Node& conv);
// The same for QLinearConv's matrix-product kernel (rt::qconv_gemm: uint8 bytes, in groups of
// four k); zero bytes_per_column when the node cannot use it.
Im2colShape qlinear_conv_im2col_shape(const Node& qlinear_conv);
// QLinearConv's weights in rt::qconv_vnni's layout, when that kernel can compute it.
std::optional<Tensor> qlinear_conv_vnni_weights(const Node& qlinear_conv);
// QLinearConv's weights in rt::qconv_pointwise's layout (int16 pairs for cores with dual 16-bit
// multiply-accumulate, Target::int8_dual_mac), when that kernel can compute it; with helium
// (Target::int8_helium) in rt::qconv_pointwise_s8's (int8 bytes).
std::optional<Tensor> qlinear_conv_dual_mac_weights(const Node& qlinear_conv, bool helium);
// QLinearConv's weights in rt::qconv_gemm_pairs' layout (int16 pairs), when rt::qconv_gemm may
// compute it and rt::qconv_pointwise does not.
std::optional<Tensor> qlinear_conv_dual_mac_pairs(const Node& qlinear_conv);
// QLinearConv's weights in rt::qconv_avx2's layout (int16 pairs of input channels), when that
// kernel can compute it.
std::optional<Tensor> qlinear_conv_avx2_pairs(const Node& qlinear_conv);
// Bytes of the widened columns rt::qconv_gemm_pairs adds to the im2col block of a QLinearConv
// with kDspScratchAttr and its pairs (0 otherwise), for blocks of `cols` columns.
std::size_t qlinear_conv_widened_bytes(const Node& qlinear_conv, int64_t cols);
// Bytes of the working block of a QLinearConv with kDspScratchAttr through rt::qconv_pointwise
// or rt::depthwise_3x3 (0 otherwise).
std::size_t qlinear_conv_dsp_block_bytes(const Node& qlinear_conv);
// Whether rt::depthwise_3x3 (no scratch, for the same cores) can compute the QLinearConv.
bool qlinear_conv_depthwise_3x3_applies(const Node& qlinear_conv);
// Whether the byte-permute depthwise kernel (AVX-512 VBMI) computes this QLinearConv.
bool qlinear_conv_depthwise_permute_applies(const Node& qlinear_conv);
// Whether the AVX2 depthwise kernel (no scratch: the plane on the stack) computes this QLinearConv.
bool qlinear_conv_depthwise_avx2_applies(const Node& qlinear_conv);
// A float Conv's multiply-accumulates: every output element, (C / group) * kernel taps.
int64_t float_conv_macs(const Node& conv);
// The work splits_into_tasks weighs for a float Conv: its multiply-accumulates, each of a
// depthwise Conv's counted kDepthwiseWorkPerMac times. The depthwise kernels run at 12-26 GMAC/s
// on AVX-512 (96 planes of 7 x 7: 3.6 us; 144 of 56 x 56: 158 us) where the products the 1 M
// threshold was measured on run at 50-60: a depthwise Conv over 960 planes of 7 x 7 (423 K MACs,
// mobilenet_v2's last blocks) takes as long as a 1.7 M MAC product, and ran on one thread.
constexpr int64_t kDepthwiseWorkPerMac = 4;
int64_t conv_parallel_work(const Node& conv);
// Whether the depthwise Conv's kernel reads its input in place on SIMD targets whatever scratch it
// is given (flat 'same' stride-1 planes; 3x3 stride 2 too on AVX2 and AVX-512,
// Target::depthwise_stride2_in_place): fit-scratch gives it none. Not the flat planes that
// targets with channel lanes (Target::depthwise_channel_lanes; `channel_lanes` floats a vector,
// 0 without) compute faster with scratch.
bool depthwise_needs_no_scratch(const Node& conv, bool simd, bool stride2_in_place, int64_t channel_lanes);
// The scratch one task of a depthwise Conv needs (padded input rows, or a padded plane).
std::size_t depthwise_slot_bytes(const Node& conv);

// Whether a ConvTranspose takes rt::conv_transpose_gemm (float, 1 or 2 spatial dims, constant
// weights, packed at compile time by pack-weights) rather than the loops of rt::conv_transpose.
bool conv_transpose_gemm_applies(const Node& conv_transpose);
// Its geometry (rt::ConvParams, read as conv_transpose.h describes).
rt::ConvParams conv_transpose_params(const Node& conv_transpose);
// The input rows per block of its columns the fastest way (the whole image's columns up to 4 MB;
// one row at least), and the bytes of one row's columns (0: the product alone, no columns).
int64_t conv_transpose_fastest_rows(const Node& conv_transpose);
std::size_t conv_transpose_row_bytes(const Node& conv_transpose);
// The ConvTranspose's phase kernel where one can take it (float, 1 or 2 spatial dims, constant
// weights): 2 rt::conv_transpose_phases_simd (with `simd`, one channel's band row on the stack),
// 1 rt::conv_transpose_phases, 0 none.
int conv_transpose_phases_kernel(const Node& conv_transpose, bool simd);
// Whether rt::conv_transpose_gemm_stacked can take the ConvTranspose (conv_transpose_gemm_applies
// and a block of columns on the stack) and the cost models put it under rt::conv_transpose_phases_simd
// on a target of `float_lanes` floats per vector.
bool conv_transpose_prefers_stacked(const Node& conv_transpose, int64_t float_lanes);

// The rt::Epilogue literal of the activation fused into the node (None when there is none).
std::string epilogue_code(const Node& node);

// Whether a float Gemm takes rt::gemm_packed_b (B constant, packed at compile time into column
// panels) rather than rt::gemm's row-by-row product: the cost model of the matrix products.
bool gemm_packs_b(const Node& gemm);
// The kernel the generated code calls for a Gemm or MatMul (--report): "gemm_packed_b",
// "gemm_tiles" (B read in place), "matmul_tiles", "gemm" or "matmul" (the loops of onnxc/gemm.h).
std::string matrix_product_kernel(const Node& product);

// Internal attributes the kernel passes leave on Conv and Gemm nodes (never in a model file).
constexpr const char* kPackedWeightsAttr = "onnxc.packed_weights";  // int 1: input 1 is packed
constexpr const char* kActivationAttr = "onnxc.activation";         // string: the fused activation
constexpr const char* kActivationAlphaAttr = "onnxc.activation_alpha";
constexpr const char* kActivationBetaAttr = "onnxc.activation_beta";
// strings: the nodes fold-batchnorm, fold-affine and fuse-activation merged into the node, in
// order (--report's "fused"). Also on nodes other than Conv and Gemm (MatMul).
constexpr const char* kMergedOpsAttr = "onnxc.merged_ops";
// int: output columns per im2col block of a Gemm Conv (or of QLinearConv's matrix-product
// kernel); 0: compute it with the direct kernel instead (no scratch, weights left unpacked).
constexpr const char* kIm2colColsAttr = "onnxc.im2col_cols";
// int: input rows per block of a ConvTranspose's columns (rt::conv_transpose_gemm), set by
// fit-scratch (0 would send it to the reference loops). Absent: the fastest block.
constexpr const char* kColumnRowsAttr = "onnxc.column_rows";
// int: rows of tiles per block of a Conv computed by rt::conv_winograd (its product buffers:
// kParallelSlotsAttr); absent or 0: another kernel. Set by fit-scratch; pack-weights then stores
// the transformed weights (shape [M, C, 4, 4]).
constexpr const char* kWinogradRowsAttr = "onnxc.winograd_rows";
// int: output channels per output-stage task of rt::conv_winograd (winograd_group_rows).
constexpr const char* kWinogradGroupRowsAttr = "onnxc.winograd_group_rows";
// int: a ConvTranspose computed by stride phases with no scratch (conv_transpose_phases.h), set by
// fit-scratch where rt::conv_transpose_gemm's columns have no room: 1 the plain kernel
// rt::conv_transpose_phases, 2 the register tiles of rt::conv_transpose_phases_simd. Pack-weights
// then lays the weights out per phase (pack_conv_transpose_phase_weights).
constexpr const char* kTransposePhasesAttr = "onnxc.conv_transpose_phases";
// int 1: a ConvTranspose computed by rt::conv_transpose_gemm_stacked (the product plus col2im with
// its columns on the stack, no scratch; weights packed as for rt::conv_transpose_gemm), set by
// fit-scratch where the columns have no room and the cost model puts it under the phase kernel.
constexpr const char* kTransposeStackedAttr = "onnxc.conv_transpose_stacked";
// int 1: a Conv computed by rt::conv_band (no scratch; weights packed as for rt::conv_direct_packed).
// Set by fit-scratch.
constexpr const char* kBandAttr = "onnxc.conv_band";
// int 1: a Gemm Conv computed by rt::conv_channel_lanes (its weights in that kernel's panels; the
// im2col block kIm2colColsAttr as for Gemm). Set by fit-scratch where it sizes that block, else
// by pack-weights (the 1x1 Convs reading their input as the matrix); 0: decided against.
constexpr const char* kChannelLanesAttr = "onnxc.channel_lanes";
// int 1: a Gemm Conv computed by rt::conv_gemm_stacked (im2col blocks on the stack, no scratch).
// Set by fit-scratch.
constexpr const char* kStackedIm2colAttr = "onnxc.stacked_im2col";
// int 1: a Gemm Conv computed by rt::conv_shifted (no scratch). Set by fit-scratch.
constexpr const char* kShiftedInputAttr = "onnxc.shifted_input";
// MatMulInteger / QLinearMatMul(Bias) with a constant b: b in rt::qgemm_pack's layout and its
// column terms, when rt::qgemm_packed can compute the product (pack-weights, x86 and AArch64 SIMD targets). They
// become inputs kQGemmPackedInput and + 1 (MatMulInteger) or kQLinearQGemmPackedInput and + 1.
std::optional<std::pair<Tensor, Tensor>> integer_product_packed_b(const Node& n);
constexpr std::size_t kQGemmPackedInput = 4;
constexpr std::size_t kQLinearQGemmPackedInput = 9;
// QLinearConv's weights in rt::qconv_vnni's layout, after its nine ONNX inputs (pack-weights).
constexpr std::size_t kVnniWeightsInput = 9;
// int 1: such a QLinearConv takes rt::qconv_vnni wherever it is built (pack-dot-product-weights, on
// targets sure to have VNNI), else rt::conv_integer_direct: no scratch.
constexpr const char* kVnniOnlyAttr = "onnxc.vnni_only";
// QLinearConv's weights in rt::qconv_pointwise's layout (pack-dual-mac-weights): the node takes
// that kernel, which needs no scratch.
constexpr std::size_t kDualMacWeightsInput = 10;
// QLinearConv's weights in rt::qconv_gemm_pairs' layout (pack-dual-mac-weights): on cores with
// the DSP extension but no Helium the generated code takes that kernel in place of
// rt::qconv_gemm, with the same im2col blocks (ONNXC_QCONV_GEMM_PAIRS).
constexpr std::size_t kDualMacPairsInput = 11;
// int 1: a depthwise QLinearConv computed by rt::depthwise_3x3 (pack-dual-mac-weights), no scratch.
constexpr const char* kDepthwise3x3Attr = "onnxc.depthwise_3x3";
// QLinearConv's weights in rt::qconv_avx2's layout (pack-dot-product-weights, on targets sure to
// have AVX2 and not VNNI): the node takes that kernel, or rt::conv_integer_direct built without
// AVX2; no scratch.
constexpr std::size_t kAvx2PairsInput = 12;
// int 1: a depthwise QLinearConv computed by rt::depthwise_integer_in_place (the byte-permute kernel
// on AVX-512 VBMI, the AVX2 one on targets sure of AVX2; pack-dot-product-weights), no scratch.
constexpr const char* kDepthwiseInPlaceAttr = "onnxc.depthwise_in_place";
// int: scratch copies a depthwise Conv has, one per task it splits into when run() is given a
// parallel-for (absent: 1, the kernel runs serially); 0: compute it with
// rt::conv_depthwise_in_place instead (no scratch). Set by fit-scratch.
constexpr const char* kParallelSlotsAttr = "onnxc.parallel_slots";
// int: on a grouped Conv through the matrix product (rt::conv_gemm per group), the im2col slots
// it has, one per task when its (image, group) pairs are the tasks of the parallel-for
// (rt::conv_each_group_in_slots); absent or 1: each group's product splits itself. Set by
// fit-scratch (conv_group_slots_wanted, as many as the room holds under 'fit').
constexpr const char* kGroupSlotsAttr = "onnxc.group_slots";
// The slots a grouped Conv through the matrix product asks for: one per task of its (image,
// group) pairs, up to kGroupParallelSlots (rt::kGroupTasks's reason), where the step splits (splits_into_tasks) and has at
// least kMinGroupTasks pairs; else 1 (each group's own product splits: with 2 or 3 large groups
// that gives two threads more even shares). regnet_x_400mf's 25 groups of 16 channels on 7 x 7
// ran as 25 parallel loops of 16 tasks of 4-5 K multiply-adds each (bench --predict-threads 2:
// 0.83 of one thread; docs/performance.md "Two threads (sixth round)").
constexpr int64_t kGroupParallelSlots = 16;
// The threads fit-scratch evens grouped Convs' tasks out for where fewer slots than pairs fit
// (issue #21's two-thread bar; any count still runs them).
constexpr int64_t kPlannedThreads = 2;
constexpr int64_t kMinGroupTasks = 4;
int64_t conv_group_slots_wanted(const Node& conv);
// On a QLinearConv whose M4 / M7 kernel has a working block (rt::qconv_pointwise's widened
// block, rt::depthwise_3x3's bands, rt::qconv_gemm_pairs' widened columns; set by
// pack-dual-mac-weights on cores without Helium): int 1 when the block is the node's scratch,
// sized for its shape (fit-scratch, where the step has room for it), 0 when it is on the stack.
constexpr const char* kDspScratchAttr = "onnxc.dsp_scratch";
// A QLinearConv's output table (fuse-output-table): the 256-entry table of the onnxc.QLinearLookup
// that read its output, merged into it; the kernels store table[requantized byte]
// (rt::RequantizeLookupOutput).
constexpr std::size_t kOutputTableInput = 13;

}  // namespace onnxc
