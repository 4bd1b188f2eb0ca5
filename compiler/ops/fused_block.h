// The FusedBlock node pass fuse-block makes (ops/fused_block.cpp): its attributes and the cost
// model that sizes its bands.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ir/ir.h"
#include "onnxc/fused_block.h"

namespace onnxc {

constexpr const char* kFusedBlockDomain = "onnxc";
constexpr const char* kFusedBlockOp = "FusedBlock";
constexpr const char* kDepthwiseParamsAttr = "onnxc.depthwise_params";  // ints: the rt::ConvParams fields in order
constexpr const char* kBlockShapeAttr = "onnxc.block_shape";  // ints: in_channels, out_channels, band, tasks
constexpr const char* kExpandEpilogueAttr = "onnxc.expand_epilogue";  // strings: rt::Epilogue literals
constexpr const char* kDepthwiseEpilogueAttr = "onnxc.depthwise_epilogue";
constexpr const char* kProjectEpilogueAttr = "onnxc.project_epilogue";

// Inputs of a FusedBlock node.
enum FusedBlockInput : std::size_t {
  kBlockX, kExpandW, kExpandBias, kDepthwiseW, kDepthwiseBias, kProjectW, kProjectBias, kResidual, kBlockInputs
};

rt::FusedBlockParams fused_block_params(const Node& fused_block);
void set_fused_block_params(Node& fused_block, const rt::FusedBlockParams& f);

// The cost model. A block is fused where its expanded tensor (the expansion's output) is at least
// kFusedBlockMinExpandedBytes: below, it stays in L2 between the unfused steps anyway and the
// shorter products of the bands cost more than they save (AVX-512, one block alone, thread CPU
// time: 32 -> 192 -> 32 on 28 x 28, 602 KB expanded, 1.06-1.17x the unfused steps; 24 -> 144 ->
// 24 on 56 x 56, 1.8 MB, 0.86-0.91x; 16 -> 96 -> 24 stride 2 on 112 x 112, 4.8 MB, 0.63-0.67x).
constexpr std::size_t kFusedBlockMinExpandedBytes = std::size_t(1) << 20;
// A task's band buffers (its expanded rows, and the band's depthwise rows with a projection): the
// most output rows per band whose buffers take at most this (a quarter of the 2 MB L2 per core
// of the AVX-512 machines measured), one row at least.
constexpr std::size_t kFusedBlockSlotBytes = std::size_t(512) << 10;
int64_t fused_block_band(const rt::ConvParams& depthwise, int64_t in_channels, int64_t out_channels);
// Tasks (scratch slots) with a parallel-for: bands of rows on each core.
constexpr int64_t kFusedBlockTasks = 2;

}  // namespace onnxc
