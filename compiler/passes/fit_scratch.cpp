// fit-scratch: see kernel_passes.h.
#include <algorithm>
#include <map>
#include <numeric>
#include <vector>

#include <fmt/format.h>

#include "onnxc/conv.h"
#include "onnxc/packed_gemm.h"
#include "onnxc/winograd.h"
#include "ops/conv_algorithm.h"
#include "ops/recurrent.h"
#include "passes/kernel_passes.h"

namespace onnxc {

int64_t choose_im2col_cols(const Im2colShape& s, std::size_t room_bytes) {
  const int64_t fitting = static_cast<int64_t>(room_bytes) / s.bytes_per_column;
  if (fitting >= std::min(s.columns, s.fastest_cols)) return s.fastest_cols;
  // Whole rows of register tiles; where not one fits, narrow blocks; else none: the direct kernel.
  if (fitting >= s.quantum_cols) return fitting / s.quantum_cols * s.quantum_cols;
  return fitting / s.narrow_cols * s.narrow_cols;
}

int64_t choose_depthwise_slots(int64_t slot_bytes, std::size_t room_bytes, int64_t wanted) {
  return std::min<int64_t>(wanted, static_cast<int64_t>(room_bytes) / slot_bytes);
}

namespace {

bool fastest(const ScratchOptions& o) { return o.policy == ScratchPolicy::Speed; }

// A Conv rt::conv_winograd computes faster (conv_fits_winograd): its preferred block of tile rows
// and a product buffer per task with a parallel-for, or (fitting) the most of both that fit
// down to one row and one buffer; false (another kernel) when not even that fits.
bool fit_winograd(Node& n, std::size_t room, const ScratchOptions& o) {
  const int64_t wanted_slots = o.memory_first || !splits_into_tasks(n, conv_parallel_work(n)) ? 1 : kWinogradParallelSlots;
  int64_t rows = winograd_preferred_rows(n), slots = wanted_slots;
  bool narrow = true;  // the 32-channel groups where they apply (winograd_group_rows), else panels of 8
  auto group = [&] { return narrow ? winograd_group_rows(n, rows, o.shifted_input) : rt::kPanelRows; };
  auto bytes = [&] { return winograd_scratch_bytes(n, rows, slots, group()); };
  if (!fastest(o)) {
    // Fewer product buffers, then panels of 8 (a quarter of the narrow groups' buffer), then
    // fewer rows of tiles, passing over those whose tiles (the products' columns) leave more than
    // a tenth of the target's vectors empty where fewer rows fill them (8 tiles a row on AVX-512:
    // 2 rows, not 3).
    const int64_t tw = rt::winograd_tiles_w(conv_geometry(n)), lanes = std::max<int64_t>(o.float_lanes, 1);
    const int64_t whole_rows = lanes / std::gcd(tw, lanes);  // the fewest rows that fill whole vectors
    auto mostly_empty = [tw, lanes](int64_t r) { return r * tw * 10 < (r * tw + lanes - 1) / lanes * lanes * 9; };
    while (slots > 1 && bytes() > room) --slots;
    for (; rows >= 1; --rows) {
      if (rows > whole_rows && mostly_empty(rows)) continue;
      narrow = true;
      if (bytes() <= room) break;
      narrow = false;
      if (bytes() <= room || rows == 1) break;
    }
    if (bytes() > room) return false;
  }
  n.set_attr_int(kWinogradRowsAttr, rows);
  n.set_attr_int(kWinogradGroupRowsAttr, group());
  n.set_attr_int(kParallelSlotsAttr, slots);
  n.set_attr_string(kScratchNoteAttr, fmt::format("Winograd F(2x2, 3x3): blocks of {} rows of tiles, {} of {} product "
                                                  "buffers of {} channels ({} B), {} B free{}",
                                                  rows, slots, wanted_slots, group(), bytes(), room,
                                                  fastest(o) ? ", --scratch speed" : ""));
  return true;
}

// Output columns from which the AVX-512 products reading the input in place or over its phase
// planes beat rt::conv_direct_packed: kTallTileMinColumns with tiles of 16 output channels, else
// more than kDirectPackedMaxColumns.
int64_t product_min_columns(const Node& conv) {
  const int64_t group_out_channels = conv.outputs[0]->shape[1] / conv.attr_int("group", 1);
  return group_out_channels >= kTallTileRows ? kTallTileMinColumns : kDirectPackedMaxColumns + 1;
}

// A Conv or QLinearConv the matrix-product kernel may compute through im2col blocks.
void fit_im2col(Node& n, const Im2colShape& shape, std::size_t room, const ScratchOptions& o) {
  if (n.op_type == "QLinearConv" && o.memory_first && !o.int8_dual_mac) {
    // Without dot-product instructions the integer matrix product gains little over the plane
    // kernel, and its im2col block and stack tiles cost RAM: keep the plane kernel.
    n.set_attr_int(kIm2colColsAttr, 0);
    n.set_attr_string(kScratchNoteAttr, "plane kernel: memory-first target");
    return;
  }
  if (n.op_type == "QLinearConv") {
    // Without a block it runs the plane kernel, whose accumulator plane is scratch too: a block
    // no larger than that plane costs no more arena and is faster with SMLAD.
    n.set_attr_int(kIm2colColsAttr, 0);
    room = std::max(room, find_op(n.domain, n.op_type)->scratch_bytes(n));
  }
  const int64_t smallest_fast = std::min(shape.columns, shape.quantum_cols);  // one row of whole tiles
  if (n.op_type == "Conv") n.set_attr_int(kShiftedInputAttr, 0);
  if (n.op_type == "Conv") n.set_attr_int(kWinogradRowsAttr, 0);
  if (n.op_type == "Conv") n.set_attr_int(kBandAttr, 0);
  if (n.op_type == "Conv") n.set_attr_int(kChannelLanesAttr, 0);
  if (n.op_type == "Conv") n.set_attr_int(kStackedIm2colAttr, 0);
  const bool band = o.simd && !o.memory_first && n.op_type == "Conv";
  if (band && conv_band_preferred(n)) {
    n.set_attr_int(kIm2colColsAttr, 0);
    n.set_attr_int(kBandAttr, 1);
    n.set_attr_string(kScratchNoteAttr, fmt::format("{}: bands of output rows on the stack (no scratch), {} B free",
                                                    n.attr_int("group", 1) > 1 ? "narrow groups" : "first layer, large kernel",
                                                    room));
    return;
  }
  if (o.winograd && n.op_type == "Conv" && conv_fits_winograd(n) && fit_winograd(n, room, o)) return;
  if (o.shifted_input && n.op_type == "Conv" && conv_fits_shifted_input(n)) {
    // rt::conv_shifted reads the input in place: no scratch, and faster than im2col and than
    // rt::conv_direct_packed (in isolation, load 17: resnet8-cifar's 32 x 32 16-channel layer 50
    // against 57 us, its 16 x 16 32-channel one 45 against 59, its 8 x 8 64-channel one 43
    // against 44). Shallow products (16 channels x 3 x 3) run as fast or faster over the padded
    // copy where it gets the block the product would (below a row of tiles, fitting on SIMD
    // targets takes no block); on 64 columns or fewer (where the padded copy is not taken) this
    // kernel from product_min_columns, else rt::conv_direct_packed (below).
    int64_t cols = choose_im2col_cols(shape, room);
    if (cols < smallest_fast) cols = fastest(o) ? smallest_fast : 0;
    // Grouped: one group's product is too small for the packed direct kernel or im2col to pay
    // (its panels of 16 output channels, its per-row transposes, the block's copy): in place
    // from a single output row up (docs/performance.md, "Grouped convolutions: sweep").
    if (n.attr_int("group", 1) > 1 || conv_depth(n) >= rt::kShiftedMinDepth ||
        (shape.columns >= product_min_columns(n) &&
         (shape.columns <= kDirectPackedMaxColumns || !conv_gemm_reads_padded_input(n, cols)))) {
      n.set_attr_int(kShiftedInputAttr, 1);
      n.set_attr_string(kScratchNoteAttr, fmt::format("product reading the input in place (no scratch), {} B free", room));
      return;
    }
  }
  // Grouped Convs take the products wherever their scratch fits, however few the columns: the
  // packed direct kernel runs one group's few output channels in mostly empty panels.
  const bool grouped = n.op_type == "Conv" && n.attr_int("group", 1) > 1;
  const int64_t phase_cols = o.shifted_input && n.op_type == "Conv" ? conv_phase_planes_cols(n) : 0;
  if (phase_cols > 0 && (grouped || shape.columns >= product_min_columns(n)) &&
      (fastest(o) || phase_cols * shape.bytes_per_column <= static_cast<int64_t>(room))) {
    // Stride 2 on AVX-512: the product over the input's four phase planes (the scratch of that
    // many im2col columns holds them), not im2col: resnet8-cifar's 16 -> 32 channels on 32 x 32
    // 38.9 -> 29.0 us in isolation (load 17; 24.1 since its tiles hold 16 output channels). Below
    // kTallTileMinColumns rt::conv_direct_packed stays as fast.
    n.set_attr_int(kIm2colColsAttr, phase_cols);
    n.set_attr_string(kScratchNoteAttr, fmt::format("product over the input's phase planes ({} B), {} B free{}",
                                                    phase_cols * shape.bytes_per_column, room,
                                                    fastest(o) ? ", --scratch speed" : ""));
    return;
  }
  if (o.simd && !o.memory_first && n.op_type == "Conv" && conv_prefers_channel_lanes(n, o.float_lanes)) {
    // rt::conv_channel_lanes over im2col blocks of the room's width (any block; at least a tile of
    // positions), where the packed direct kernel would run its panels of output channels over
    // every tap without a block (regnet_x_400mf's 1x1 stride-2 160 -> 400 onto 7 x 7).
    const int64_t whole = std::min(shape.columns, shape.fastest_cols);
    const int64_t fitting = static_cast<int64_t>(room) / shape.bytes_per_column;
    const int64_t cols = fastest(o) ? whole : std::min(whole, fitting);
    if (cols >= std::min(shape.columns, kChannelLanesMinBlock)) {
      n.set_attr_int(kIm2colColsAttr, cols);
      n.set_attr_int(kChannelLanesAttr, 1);
      n.set_attr_string(kScratchNoteAttr, fmt::format("output channels in the lanes over im2col blocks of {} of the {} "
                                                      "columns, {} B free{}",
                                                      cols, shape.columns, room, fastest(o) ? ", --scratch speed" : ""));
      return;
    }
  }
  if (o.simd && n.op_type == "Conv" && conv_fits_direct_packed(n)) {
    // rt::conv_direct_packed, no scratch: faster than the product on narrow outputs of shallow
    // products, and than its blocks narrower than a row of tiles (fitting).
    const bool narrow_output =
        !grouped && shape.columns <= direct_packed_max_columns(o.float_lanes) && conv_depth(n) < kDirectPackedMaxDepth;
    if (narrow_output || (!fastest(o) && choose_im2col_cols(shape, room) < smallest_fast)) {
      n.set_attr_int(kIm2colColsAttr, 0);
      if (!narrow_output && band && conv_band_without_scratch(n)) {
        n.set_attr_int(kBandAttr, 1);
        n.set_attr_string(kScratchNoteAttr, fmt::format("bands of output rows on the stack: a row of im2col tiles ({} B) "
                                                        "exceeds the {} B free",
                                                        smallest_fast * shape.bytes_per_column, room));
        return;
      }
      if (!narrow_output && band && conv_prefers_stacked_im2col(n, o.float_lanes)) {
        // The product with its im2col blocks cut along K too, on the stack, where the cost models
        // put it under the packed direct kernel (deep products: the direct kernel broadcasts
        // every input value once per 16 output channels).
        n.set_attr_int(kIm2colColsAttr, std::min(shape.columns, shape.fastest_cols));
        n.set_attr_int(kStackedIm2colAttr, 1);
        n.set_attr_string(kScratchNoteAttr, fmt::format("im2col blocks of depth x columns on the stack (no scratch): a "
                                                        "row of im2col tiles ({} B) exceeds the {} B free",
                                                        smallest_fast * shape.bytes_per_column, room));
        return;
      }
      n.set_attr_string(kScratchNoteAttr,
                        narrow_output ? fmt::format("packed direct kernel: {} output column{} (faster than the "
                                                    "matrix product up to {})",
                                                    shape.columns, shape.columns == 1 ? "" : "s",
                                                    direct_packed_max_columns(o.float_lanes))
                                      : fmt::format("packed direct kernel: a row of im2col tiles ({} B) exceeds the "
                                                    "{} B free",
                                                    smallest_fast * shape.bytes_per_column, room));
      return;
    }
  }
  int64_t cols = choose_im2col_cols(shape, room);
  // The arena grows a little (AArch64's integer tiles: by a row of tiles, kws_dscnn_int8 128 B).
  const bool neon_tiles = o.int8_neon_tiles && n.op_type == "QLinearConv";
  if ((fastest(o) || neon_tiles) && cols < smallest_fast) cols = smallest_fast;
  n.set_attr_int(kIm2colColsAttr, cols);
  const int64_t narrowest_bytes = shape.narrow_cols * shape.bytes_per_column;
  n.set_attr_string(kScratchNoteAttr,
                    cols ? fmt::format("im2col blocks of {} of the {} columns (fastest {}), {} B free{}",
                                       std::min(cols, shape.columns), shape.columns,
                                       std::min(shape.fastest_cols, shape.columns), room,
                                       fastest(o) ? ", --scratch speed" : neon_tiles ? ", AArch64 integer tiles" : "")
                         : fmt::format("direct kernel: the narrowest im2col block ({} B) exceeds the {} B free",
                                       narrowest_bytes, room));
}

// A depthwise Conv: one padded-row slot per task it splits into with a parallel-for (one when it
// does not split, splits_into_tasks).
void fit_depthwise(Node& n, std::size_t room, const ScratchOptions& o) {
  if (depthwise_needs_no_scratch(n, o.simd, o.depthwise_stride2, o.depthwise_channel_lanes ? o.float_lanes : 0)) {
    n.set_attr_int(kParallelSlotsAttr, 0);
    n.set_attr_string(kScratchNoteAttr, fmt::format("depthwise reading its input in place (this target's kernel "
                                                    "needs no scratch), {} B free",
                                                    room));
    return;
  }
  const int64_t wanted = o.memory_first || !splits_into_tasks(n, conv_parallel_work(n)) ? 1 : kDepthwiseParallelSlots;
  const int64_t slot_bytes = static_cast<int64_t>(depthwise_slot_bytes(n));
  const int64_t slots = fastest(o) ? wanted : choose_depthwise_slots(slot_bytes, room, wanted);
  n.set_attr_int(kParallelSlotsAttr, slots);
  n.set_attr_string(kScratchNoteAttr,
                    slots ? fmt::format("depthwise, {} of {} slots of {} B, {} B free{}", slots, wanted, slot_bytes, room,
                                      fastest(o) ? ", --scratch speed" : "")
                          : fmt::format("in-place depthwise kernel: one padded-row slot ({} B) exceeds the {} B free",
                                        slot_bytes, room));
}

// An LSTM that can keep its state in its outputs does so when its gate buffers do not fit, under
// either policy: that kernel is as fast (lstm-2layer: 52 against 58 us). With packed weights it
// also computes the input projections of all steps first where their buffer fits ('speed': always):
// each step then reads R alone instead of W and R (lstm-2layer's two layers: 30 and 36 us -> ...).
void fit_lstm(Node& n, std::size_t room, const ScratchOptions& o) {
  const bool outputs = lstm_can_keep_state_in_outputs(n);
  const std::size_t gates = lstm_gate_scratch_bytes(n);
  const std::size_t projections = lstm_packs_weights(n, o.simd) && n.inputs[0]->shape.back() > 0
                                      ? lstm_projection_bytes(n)
                                      : 0;
  const bool in_outputs = outputs && gates + projections > room && (fastest(o) || gates > room || projections <= room);
  const std::size_t state = in_outputs ? 0 : gates;
  const bool project = projections > 0 && (fastest(o) || state + projections <= room);
  n.set_attr_int(kStateInOutputsAttr, in_outputs ? 1 : 0);
  n.set_attr_int(kProjectedAttr, project ? 1 : 0);
  std::string how = in_outputs ? "state in Y and Y_c, gates 16 units at a time on the stack" : "state and gates";
  if (project) how += fmt::format(", input projections of all steps first ({} B)", projections);
  n.set_attr_string(kScratchNoteAttr, fmt::format("{}, {} B free{}", how, room, fastest(o) ? ", --scratch speed" : ""));
}

// A ConvTranspose through rt::conv_transpose_gemm: its columns a block of input rows at a time,
// as many rows as the room holds (the fastest block with 'speed'). Under 'fit' nothing grows the
// arena: without room for the fastest block it takes the phase kernels (no scratch), or, where
// they cannot, as many rows as fit or the loops of rt::conv_transpose (15-140x slower).
void fit_conv_transpose(Node& n, std::size_t room, const ScratchOptions& o) {
  const std::size_t row = conv_transpose_row_bytes(n);
  const int64_t wanted = conv_transpose_fastest_rows(n);
  const int64_t rows = row == 0 || fastest(o) ? wanted
                                              : std::min<int64_t>(static_cast<int64_t>(room / row), wanted);
  const int phases = conv_transpose_phases_kernel(n, o.simd && !o.memory_first);
  n.set_attr_int(kTransposePhasesAttr, 0);
  n.set_attr_int(kTransposeStackedAttr, 0);
  if (rows < wanted && o.simd && !o.memory_first && conv_transpose_prefers_stacked(n, o.float_lanes)) {
    // The product's columns a block at a time on the stack, where the cost models put it under
    // the phase kernel (few output channels leave the phases' register tiles one row high).
    n.set_attr_int(kColumnRowsAttr, wanted);
    n.set_attr_int(kTransposeStackedAttr, 1);
    n.set_attr_string(kScratchNoteAttr, fmt::format("product plus col2im, columns in blocks on the stack (no scratch): "
                                                    "{} of {} input rows' columns fit, {} B free",
                                                    rows, wanted, room));
    return;
  }
  if (rows < wanted && phases > 0) {
    n.set_attr_int(kColumnRowsAttr, 0);
    n.set_attr_int(kTransposePhasesAttr, phases);
    n.set_attr_string(kScratchNoteAttr, fmt::format("stride phases{} (no scratch): {} of {} input rows' columns fit, {} B free",
                                                    phases == 2 ? ", register tiles over bands on the stack" : "",
                                                    rows, wanted, room));
    return;
  }
  n.set_attr_int(kColumnRowsAttr, rows);
  n.set_attr_string(kScratchNoteAttr,
                    rows > 0 ? fmt::format("columns of {} of {} input rows per block, {} B free", rows, wanted, room)
                             : fmt::format("no room for one input row's columns ({} B, {} B free): the loops", row, room));
}

// A 3 x 3 depthwise QLinearConv (stride 1, "same" padding) whose kernel's scratch (the padded
// plane and accumulators of rt::depthwise_integer_any) exceeds the room the tensors leave at its
// step takes rt::depthwise_3x3, whose padded rows are on the stack (no scratch), rather than grow
// the arena (kws-dscnn and the VWW MobileNet on the portable target: their depthwise steps are at
// the liveness peak). Targets whose kernel needs no scratch marked the node before (pack passes).
bool fit_qlinear_depthwise(Node& n, std::size_t room) {
  if (n.has_attr(kDepthwise3x3Attr) || n.has_attr(kDepthwiseInPlaceAttr) || !qlinear_conv_depthwise_3x3_applies(n))
    return false;
  const std::size_t wanted = find_op(n.domain, n.op_type)->scratch_bytes(n);
  if (wanted <= room) return false;
  n.set_attr_int(kDepthwise3x3Attr, 1);
  n.set_attr_string(kScratchNoteAttr, fmt::format("3 x 3 depthwise, padded rows on the stack (no scratch): the plane "
                                                  "kernel's {} B exceed the {} B free",
                                                  wanted, room));
  return true;
}

// The working block of the M4's and M7's pointwise and depthwise kernels: the node's scratch
// where the step has room for it (the arena does not grow), else the stack.
void fit_dsp_block(Node& n, std::size_t room) {
  const std::size_t bytes = qlinear_conv_dsp_block_bytes(n);
  n.set_attr_int(kDspScratchAttr, bytes <= room ? 1 : 0);
  n.set_attr_string(kScratchNoteAttr, bytes <= room ? fmt::format("working block {} B, {} B free", bytes, room)
                                                    : fmt::format("working block ({} B) on the stack: {} B free",
                                                                  bytes, room));
}

// rt::qconv_gemm_pairs' widened columns: after the im2col block where the room holds both.
void fit_widened_columns(Node& n, std::size_t room) {
  n.set_attr_int(kDspScratchAttr, 0);
  const std::size_t block = find_op(n.domain, n.op_type)->scratch_bytes(n);
  const std::size_t widened = qlinear_conv_widened_bytes(n, n.attr_int(kIm2colColsAttr, 0));
  const bool fits = widened > 0 && block + widened <= room;
  n.set_attr_int(kDspScratchAttr, fits ? 1 : 0);
  n.set_attr_string(kScratchNoteAttr, n.attr_string(kScratchNoteAttr, "") +
                                          (fits ? fmt::format("; widened columns {} B", widened)
                                                : fmt::format("; widened columns ({} B) on the stack", widened)));
}

// Of 2..most tasks over `pairs` equal (image, group) pairs (rt::part_of's cut), the count whose
// tasks kPlannedThreads threads finish first when each takes the next task as it comes free (the
// pool's order); ties go to more tasks (a thread that starts late evens out). 6 pairs in 4 tasks
// (1, 2, 1, 2) leave one of two threads 4 pairs; in 2 tasks, 3 each.
int64_t balanced_group_tasks(int64_t pairs, int64_t most) {
  int64_t best = 2, best_end = pairs;
  for (int64_t tasks = 2; tasks <= most; ++tasks) {
    std::vector<int64_t> free_at(kPlannedThreads, 0);
    for (int64_t t = 0; t < tasks; ++t) {
      auto first = std::min_element(free_at.begin(), free_at.end());
      *first += pairs * (t + 1) / tasks - pairs * t / tasks;
    }
    const int64_t end = *std::max_element(free_at.begin(), free_at.end());
    if (end <= best_end) best = tasks, best_end = end;
  }
  return best;
}

// A grouped Conv fit_im2col gave the matrix product (im2col blocks or phase planes: not the
// kernels reading the input in place, the channel lanes or the bands): one block per task of its
// (image, group) pairs (conv_group_slots_wanted), or as many as the room holds under 'fit'.
void fit_group_slots(Node& n, std::size_t room, const ScratchOptions& o) {
  n.set_attr_int(kGroupSlotsAttr, 1);
  if (n.attr_int("group", 1) == 1 || o.memory_first || n.attr_int(kIm2colColsAttr, 0) <= 0 ||
      n.attr_int(kShiftedInputAttr, 0) == 1 || n.attr_int(kChannelLanesAttr, 0) == 1 || n.attr_int(kBandAttr, 0) == 1 ||
      n.attr_int(kWinogradRowsAttr, 0) > 0)
    return;
  const std::size_t slot = find_op(n.domain, n.op_type)->scratch_bytes(n);
  const int64_t wanted = conv_group_slots_wanted(n);
  if (slot == 0 || wanted < 2) return;
  const int64_t fitting = fastest(o) ? wanted : std::min<int64_t>(wanted, static_cast<int64_t>(room / slot));
  if (fitting < 2) return;
  const int64_t slots = balanced_group_tasks(n.inputs[0]->shape[0] * n.attr_int("group", 1), fitting);
  n.set_attr_int(kGroupSlotsAttr, slots);
  n.set_attr_string(kScratchNoteAttr, n.attr_string(kScratchNoteAttr, "") +
                                          fmt::format("; groups as tasks, {} of {} slots of {} B", slots, wanted, slot));
}

}  // namespace

int fit_scratch(Graph& g, std::size_t alignment, PlanOptions plan, const ScratchOptions& o) {
  // The planner hands out const nodes; these are the graph's own.
  std::map<const Node*, Node*> mutable_node;
  auto index = [&](Node& n) { mutable_node[&n] = &n; };
  for_each_nested_node(g, index);
  int fitted = 0;
  plan.size_scratch = [&](const Node& planned, std::size_t room) {
    Node& n = *mutable_node.at(&planned);
    if (!n.domain.empty()) return;
    if (n.op_type == "Conv" && conv_algorithm(n) == ConvAlgorithm::Depthwise) {
      fit_depthwise(n, room, o);
      ++fitted;
      return;
    }
    if (n.op_type == "ConvTranspose" && conv_transpose_gemm_applies(n)) {
      fit_conv_transpose(n, room, o);
      ++fitted;
      return;
    }
    if (n.op_type == "LSTM" && (lstm_can_keep_state_in_outputs(n) || lstm_packs_weights(n, o.simd))) {
      fit_lstm(n, room, o);
      ++fitted;
      return;
    }
    if (n.op_type == "QLinearConv" && fit_qlinear_depthwise(n, room)) {
      ++fitted;
      return;
    }
    if (n.op_type == "QLinearConv" && qlinear_conv_dsp_block_bytes(n) > 0) {
      fit_dsp_block(n, room);
      ++fitted;
      return;
    }
    Im2colShape shape;
    if (n.op_type == "Conv" && conv_packs_weights(n)) shape = conv_im2col_shape(n);
    else if (n.op_type == "QLinearConv") shape = qlinear_conv_im2col_shape(n);
    if (shape.bytes_per_column == 0) return;  // reads its input as the matrix (or cannot use it): no scratch
    if (n.op_type == "Conv") n.set_attr_int(kGroupSlotsAttr, 1);
    fit_im2col(n, shape, room, o);
    if (n.op_type == "Conv") fit_group_slots(n, room, o);
    if (n.has_attr(kDspScratchAttr)) fit_widened_columns(n, room);
    ++fitted;
  };
  plan_program(g, alignment, plan);  // branches that never run are not planned, so not sized
  return fitted;
}

}  // namespace onnxc
