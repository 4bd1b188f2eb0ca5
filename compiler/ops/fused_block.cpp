// FusedBlock (domain onnxc, made by pass fuse-block, never in a model file): a 1x1 Conv (the
// expansion), the depthwise Conv reading it and optionally the 1x1 Conv reading that (the
// projection) and an Add of the projection's output (the residual), computed band by band by
// rt::fused_block so the expanded tensor is never written whole.
//
// Inputs: x, the expansion's packed weights and bias, the depthwise weights and bias, the
// projection's packed weights and bias, the residual (absent inputs: null). Attributes: the
// depthwise geometry (kDepthwiseParamsAttr), the channels, band and tasks (kBlockShapeAttr) and
// the three epilogues' rt::Epilogue literals.
#include "ops/fused_block.h"

#include "onnxc/fused_block.h"
#include "ops/emitter.h"
#include "ops/spatial.h"

namespace onnxc {

rt::FusedBlockParams fused_block_params(const Node& n) {
  const std::vector<int64_t> g = n.attr_ints(kDepthwiseParamsAttr), s = n.attr_ints(kBlockShapeAttr);
  if (g.size() != 22 || s.size() != 4) fail_invalid(n, "its fused-block attributes are incomplete");
  rt::ConvParams p{g[0],  g[1],  g[2],  g[3],  g[4],  g[5],  g[6],  g[7],  g[8],  g[9],  g[10],
                   g[11], g[12], g[13], g[14], g[15], g[16], g[17], g[18], g[19], g[20], g[21]};
  return {p, s[0], s[1], s[2], s[3]};
}

void set_fused_block_params(Node& n, const rt::FusedBlockParams& f) {
  const rt::ConvParams& p = f.depthwise;
  n.set_attr_ints(kDepthwiseParamsAttr,
                  {p.batch, p.in_channels, p.out_channels, p.group, p.in_d, p.in_h, p.in_w, p.out_d, p.out_h, p.out_w,
                   p.k_d, p.k_h, p.k_w, p.stride_d, p.stride_h, p.stride_w, p.dilation_d, p.dilation_h, p.dilation_w,
                   p.pad_d, p.pad_h, p.pad_w});
  n.set_attr_ints(kBlockShapeAttr, {f.in_channels, f.out_channels, f.band, f.tasks});
}

int64_t fused_block_band(const rt::ConvParams& depthwise, int64_t in_channels, int64_t out_channels) {
  rt::FusedBlockParams f{depthwise, in_channels, out_channels, 1, 1};
  for (int64_t band = 2; band <= depthwise.out_h; ++band) {
    rt::FusedBlockParams wider = f;
    wider.band = band;
    if (static_cast<std::size_t>(rt::fused_block_slot_floats(wider)) * sizeof(float) > kFusedBlockSlotBytes) break;
    f = wider;
  }
  return f.band;
}

namespace {

int64_t fused_block_macs(const Node& n) {
  const rt::FusedBlockParams f = fused_block_params(n);
  const rt::ConvParams& p = f.depthwise;
  const int64_t in_plane = p.in_h * p.in_w, out_plane = p.out_h * p.out_w;
  return p.batch * (p.in_channels * f.in_channels * in_plane + p.in_channels * p.k_h * p.k_w * out_plane +
                    f.out_channels * p.in_channels * out_plane);
}

void infer_fused_block(Node& n) {
  const rt::FusedBlockParams f = fused_block_params(n);
  const rt::ConvParams& p = f.depthwise;
  set_output(n, 0, DType::Float, {p.batch, f.out_channels ? f.out_channels : p.out_channels, p.out_h, p.out_w});
}

void emit_fused_block(const Node& n, Emitter& e) {
  e.include("onnxc/fused_block.h");
  const rt::FusedBlockParams f = fused_block_params(n);
  e.line(conv_params_code(f.depthwise));
  e.linef("constexpr rt::FusedBlockParams f = {{p, {}, {}, {}, {}}};", f.in_channels, f.out_channels, f.band, f.tasks);
  auto operand = [&](std::size_t i) { return e.in_or_null(i, DType::Float); };
  e.linef("const rt::FusedBlockOperands o = {{{}, {}, {}, {}, {}, {}, {}}};", e.in(kExpandW), operand(kExpandBias),
          e.in(kDepthwiseW), operand(kDepthwiseBias), operand(kProjectW), operand(kProjectBias), operand(kResidual));
  e.linef("const rt::FusedBlockEpilogues a = {{{}, {}, {}}};", n.attr_string(kExpandEpilogueAttr, ""),
          n.attr_string(kDepthwiseEpilogueAttr, ""), n.attr_string(kProjectEpilogueAttr, "rt::Epilogue{}"));
  e.linef("rt::fused_block(f, {}, o, a, {}, reinterpret_cast<float*>({}), {});", e.in(kBlockX), e.out(0), e.scratch(),
          e.parallel(fused_block_macs(n)));
}

std::size_t fused_block_scratch_bytes(const Node& n) {
  return static_cast<std::size_t>(rt::fused_block_scratch_floats(fused_block_params(n))) * sizeof(float);
}

const OpRegistrar fused_block_op([] {
  OpDef d;
  d.domain = kFusedBlockDomain;
  d.op_type = kFusedBlockOp;
  d.versions = {1};
  d.infer = infer_fused_block;
  d.emit = emit_fused_block;
  d.scratch_bytes = fused_block_scratch_bytes;
  d.macs = fused_block_macs;
  return d;
}());

}  // namespace
}  // namespace onnxc
