// Passes that prepare nodes for the optimised kernels of runtime-support.
#pragma once

#include "ir/ir.h"
#include "ops/conv_algorithm.h"
#include "passes/passes.h"
#include "passes/program.h"

namespace onnxc {

// fuse-activation: an activation (Relu, Clip with constant bounds, LeakyRelu, Sigmoid,
// HardSigmoid, HardSwish, Tanh, Gelu, and exact GELU written out as Div/Erf/Add/Mul/Mul) whose
// input is a float Conv's or Gemm's output that nothing else reads, directly or through one
// view (Reshape, Flatten, Squeeze, Unsqueeze), is merged into that node, which applies it in
// its epilogue; a MatMul with constant [K, N] weights becomes a Gemm to take it
// (matmul_as_gemm). Returns the nodes removed.
int fuse_activation(Graph& g);

// fuse-attention: scaled dot-product attention, MatMul(Q, K^T) -> [scalings] -> [Add mask] ->
// Softmax(last axis) -> MatMul(., V) in its common spellings (scale on the scores, Q or K^T;
// masks broadcast over batch/heads/rows; up to two batch/head dims; Transposes around Q, V and
// the result that keep the last dim read as views), becomes one onnxc.Attention node
// (ops/attention.h, rt::attention: no score matrix). Returns the nodes removed.
int fuse_attention(Graph& g);

// fold-transpose: a float MatMul or Gemm whose B is a Transpose of a runtime tensor swapping only
// its last two axes reads that tensor in place instead (MatMul: kTransposedBAttr, rt::matmul_tiles
// or rt::matmul_dots; Gemm: transB flipped). After fuse-attention, which reads K^T's Transpose itself. Returns the
// nodes removed.
int fold_transpose(Graph& g);

// mark-weights-from-memory: where the graph's constants (every distinct constant a node reads,
// nested graphs included) exceed kCoreCacheBytes, marks each node that reads a constant with
// kWeightsFromMemoryAttr, so splits_into_tasks counts its weights as streamed from memory.
// Returns the nodes marked.
int mark_weights_from_memory(Graph& g);

// How much arena the kernels' scratch may take (--scratch).
enum class ScratchPolicy {
  Fit,    // only the room the tensors leave at its step: the arena is the tensors' (the default:
          // on SIMD targets the scratch-free kernels cost at most ~8 %, docs/memory.md)
  Speed,  // no slower kernel to save memory: an im2col block of at least one row of whole tiles,
          // 4 depthwise slots, even where they grow the arena
};

struct ScratchOptions {
  ScratchPolicy policy = ScratchPolicy::Fit;
  bool memory_first = false;  // the target's RAM is scarce and no thread pool is passed
  bool int8_dual_mac = false;  // Target::int8_dual_mac
  bool int8_helium = false;    // Target::int8_helium
  bool simd = false;           // Target::simd: rt::conv_direct_packed is there to take
  bool shifted_input = false;  // Target::shifted_input_product: rt::conv_shifted is there to take
  bool depthwise_stride2 = false;  // Target::depthwise_stride2_in_place: 3x3 stride-2 depthwise reads in place
  bool depthwise_channel_lanes = false;  // Target::depthwise_channel_lanes: large-kernel flat planes want scratch
  bool winograd = false;       // rt::conv_winograd may be taken (SIMD targets whose RAM is not scarce)
  int64_t float_lanes = 1;     // Target::float_lanes: rt::conv_channel_lanes' cost model
  // AArch64 SIMD (neon, neon-dotprod): the integer im2col product's SDOT / SMULL tiles
  // (quant_gemm_neon.h) run about 3x fewer instructions than the plane kernel, so QLinearConv gets
  // a row of whole tiles even where that grows the arena by those few bytes (as --scratch speed).
  bool int8_neon_tiles = false;
};

// fit-scratch: sizes the scratch of every kernel whose scratch is the compiler's choice, per
// layer, to the room its block's tensors (and nested arenas) leave at its step, while planning
// with `plan` (PlanOptions::size_scratch: blocks are sized bottom-up, so a control-flow body's
// arena is final before the rooms of its parent are measured), so the arena is the tensors'
// alone:
// - a Conv the matrix-product kernel computes through im2col, and a QLinearConv that can use
//   the integer one: the im2col block (kIm2colColsAttr, choose_im2col_cols); 0 columns: the
//   direct kernel (no scratch; pack-weights leaves its weights unpacked);
// - a depthwise Conv: its padded-row slots (kParallelSlotsAttr, choose_depthwise_slots), one
//   per task with a parallel-for (one when the step does not split, splits_into_tasks); 0
//   slots: the in-place kernel (no scratch);
// - an LSTM that can keep its state in its outputs (lstm_can_keep_state_in_outputs): does so,
//   with no scratch (kStateInOutputsAttr), when its gate buffers do not fit (either policy).
// Each such node gets a kScratchNoteAttr saying what it got and why (--report). Runs before
// pack-weights. Returns the nodes sized.
int fit_scratch(Graph& g, std::size_t alignment, PlanOptions plan, const ScratchOptions& options);

// ScratchPolicy::Speed takes no slower kernel to save memory instead: it fits the im2col
// blocks in whole tile rows where they fit, else takes one row (growing the arena), and gives
// depthwise Convs that split into tasks their kDepthwiseParallelSlots.
//
// The im2col block (columns) of a Conv with `room_bytes` free at its step: the fastest block
// when it fits, else the widest whole number of register-tile rows that fits, else the widest
// multiple of the narrow block (Im2colShape::narrow_cols) that fits; 0 (the direct kernel) when
// not even that does.
int64_t choose_im2col_cols(const Im2colShape& shape, std::size_t room_bytes);

// The padded-row slots of a depthwise Conv: `wanted` (kDepthwiseParallelSlots, or 1 where no
// thread pool is passed), or as many as the room holds; 0: the in-place kernel.
constexpr int64_t kDepthwiseParallelSlots = 4;
int64_t choose_depthwise_slots(int64_t slot_bytes, std::size_t room_bytes, int64_t wanted);

// fuse-block: an inverted-residual block, a 1x1 Conv (the expansion, + activation) whose output
// only a depthwise Conv (any kernel, stride, padding, dilation, + activation) reads, then, when
// the depthwise output's only reader is one, a 1x1 Conv (the projection, + activation) and, when
// the projection's only reader is an Add of a tensor of its shape, that Add (the residual),
// becomes one FusedBlock node (ops/fused_block.h) computed band by band by rt::fused_block: the
// expanded tensor never exists whole. Only where the cost model (kFusedBlockMinExpandedBytes)
// says it pays. Runs after pack-weights (the 1x1 Convs' weights are in rt::pack_weights' layout);
// `tasks`: the kernel's parallel tasks (scratch slots). Returns the nodes removed.
int fuse_block(Graph& g, int64_t tasks);

// pack-weights: the constant weights of every Conv that the matrix-product kernel computes are
// rewritten into the panel layout it reads (rt::pack_weights), so nothing is packed at run time;
// with direct_layout (SIMD targets), a Conv left without an im2col block (kIm2colColsAttr 0) gets
// the layout of rt::conv_direct_packed (rt::pack_direct_weights); a float Gemm's constant
// transposed B is stored transposed back (transB = 0), the layout its kernel reads fastest; on
// those targets too, a Conv conv_prefers_channel_lanes gives rt::conv_channel_lanes (vectors of
// `float_lanes` floats) gets that kernel's panels (kChannelLanesAttr).
// With vnni_layout (Target::int8_dot_product), a QLinearConv that rt::qconv_vnni
// computes gets its weights in that kernel's layout as well, as the extra input kVnniWeightsInput.
// With int8_products (x86 and AArch64 SIMD targets: rt::qgemm_packed has AVX-512 VNNI, AVX2, SDOT
// and NEON SMULL forms), a
// MatMulInteger / QLinearMatMul with a constant b gets b in that kernel's layout as two more inputs.
// Returns the nodes rewritten.
int pack_weights(Graph& g, bool vnni_layout, bool direct_layout, bool int8_products, int64_t float_lanes = 1);

// On cores with dual 16-bit multiply-accumulate (Target::int8_dual_mac): every QLinearConv that
// rt::qconv_pointwise computes gets its weights in that kernel's layout as the extra input
// kDualMacWeightsInput, and takes that kernel (no scratch); a 3x3 depthwise one is marked for
// rt::depthwise_3x3 (kDepthwise3x3Attr, no scratch either). Runs before fit-scratch, so the plan
// sees no scratch for them. Returns the nodes rewritten.
// With helium (Target::int8_helium) the 1x1 ones' weights are rt::qconv_pointwise_s8's bytes.
int pack_dual_mac_weights(Graph& g, bool helium);

// fuse-output-table: an onnxc.QLinearLookup whose input only a QLinearConv writes and only it
// reads is merged into that QLinearConv (its table as input kOutputTableInput, its output the
// Conv's): the kernels look each requantized byte up as they store it, and the lookup's pass
// over the tensor goes. For the cores whose store_row does so in registers (the M4's and M7's
// quant_requantize_armv7em_dsp.h: one LDRB per output against about 6 for the separate
// step); elsewhere the store is per element. Returns the lookups merged.
int fuse_output_tables(Graph& g);

// On targets sure to build the generated code with AVX-512 VNNI (Target::int8_vnni_sure): every
// QLinearConv that rt::qconv_vnni computes gets that kernel's weights (kVnniWeightsInput) and
// kVnniOnlyAttr: it takes qconv_vnni, or rt::conv_integer_direct where built without VNNI after
// all, neither with scratch. With AVX-512 VBMI (Target::int8_byte_permute_sure) a depthwise one
// that the byte-permute kernel computes is marked kDepthwiseInPlaceAttr (no scratch either).
// Runs before fit-scratch, so the plan sees no scratch for them (kws: the arena is its tensors'
// liveness bound). With `pairs` (Target::int8_pairs_sure) such a QLinearConv that rt::qconv_avx2
// computes gets that kernel's weights (kAvx2PairsInput) and takes it, or rt::conv_integer_direct
// where built without AVX2, and a depthwise one the AVX2 depthwise kernel computes is marked
// kDepthwiseInPlaceAttr; no scratch either. Returns the nodes rewritten.
int pack_dot_product_weights(Graph& g, bool vnni, bool byte_permute, bool pairs);

}  // namespace onnxc
