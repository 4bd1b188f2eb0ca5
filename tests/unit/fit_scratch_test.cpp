// fit-scratch: each kernel's scratch sized to the room the tensors leave at its step
// (passes/fit_scratch.cpp), and the planner placing it in that room.
#include <catch2/catch.hpp>

#include <tuple>

#include "model_builder.h"
#include "ops/conv_algorithm.h"
#include "ops/recurrent.h"
#include "passes/kernel_passes.h"
#include "passes/pipeline.h"

using testing::ModelBuilder;

namespace {

// A 3x3 Conv over 8 channels of 16x16: 72 floats (288 bytes) per im2col column, 256 columns.
const onnxc::Im2colShape kConv3x3{288, 256, 864, 96, 4};

std::vector<float> filled(int64_t n, float v) { return std::vector<float>(static_cast<std::size_t>(n), v); }

// x -> 1x1 Conv to `wide` channels -> 1x1 Conv to 8 -> 3x3 Conv "c3" -> 1x1 Conv -> y. The wide
// tensor makes the peak; at the 3x3 Conv only two 8-channel tensors (16 KiB) are live.
std::string conv_chain(const std::string& name, int64_t wide) {
  ModelBuilder b;
  b.input("x", {1, 8, 16, 16}).output("y");
  auto conv = [&b](const std::string& in, const std::string& out, int64_t c, int64_t m, int64_t k) {
    b.floats(out + "_w", {m, c, k, k}, filled(m * c * k * k, 0.01f));
    auto& n = b.node("Conv", {in, out + "_w"}, {out}, out);
    ModelBuilder::attr_ints(n, "pads", {k / 2, k / 2, k / 2, k / 2});
  };
  conv("x", "a", 8, wide, 1);
  conv("a", "b", wide, 8, 1);
  conv("b", "c3", 8, 8, 3);
  conv("c3", "y", 8, 8, 1);
  return b.write(name);
}

onnxc::Compilation compile(const std::string& path, const std::string& target,
                           std::optional<onnxc::ScratchPolicy> policy = std::nullopt) {
  onnxc::CompileOptions o;
  o.target = target;
  o.scratch_policy = policy;
  // The scratch of each Conv on its own: fuse-block would merge a 1x1 -> depthwise pair whose
  // expanded tensor reaches 1 MB into one step (its own tests: fused_block_test, model.fusion).
  o.disabled_passes.insert("fuse-block");
  return onnxc::compile_model(path, o);
}

const onnxc::Node& node_named(const onnxc::Compilation& c, const std::string& name) {
  for (auto& n : c.model.graph.nodes)
    if (n->name == name) return *n;
  FAIL("no node " << name);
  return *c.model.graph.nodes.at(0);
}

int64_t im2col_cols(const onnxc::Compilation& c, const std::string& conv) {
  return node_named(c, conv).attr_int(onnxc::kIm2colColsAttr, -1);
}

}  // namespace

TEST_CASE("the fastest im2col block when it fits, else whole rows of register tiles, else narrow blocks") {
  using onnxc::choose_im2col_cols;
  CHECK(choose_im2col_cols(kConv3x3, 256 * 288) == 864);  // the whole output fits
  CHECK(choose_im2col_cols(kConv3x3, 255 * 288) == 192);
  CHECK(choose_im2col_cols(kConv3x3, 96 * 288) == 96);
  CHECK(choose_im2col_cols(kConv3x3, 95 * 288) == 92);  // multiples of 4 columns
  CHECK(choose_im2col_cols(kConv3x3, 4 * 288) == 4);
  CHECK(choose_im2col_cols(kConv3x3, 4 * 288 - 1) == 0);  // the direct kernel
  const onnxc::Im2colShape narrow{288, 16, 864, 96, 4};  // a 4x4 output: 16 columns in all
  CHECK(choose_im2col_cols(narrow, 16 * 288) == 864);
  CHECK(choose_im2col_cols(narrow, 0) == 0);
}

TEST_CASE("a depthwise Conv gets the slots that fit, up to the ones it wants") {
  using onnxc::choose_depthwise_slots;
  CHECK(choose_depthwise_slots(1000, 10000, 4) == 4);
  CHECK(choose_depthwise_slots(1000, 3999, 4) == 3);
  CHECK(choose_depthwise_slots(1000, 999, 4) == 0);  // the in-place kernel
  CHECK(choose_depthwise_slots(1000, 10000, 1) == 1);
}

TEST_CASE("a Conv's im2col block fills the room at its step and the arena does not grow") {
  // Peak: the 48-channel tensor and b, 48 KiB + 8 KiB; at c3 16 KiB live, so 40 KiB are free:
  // 142 columns, 96 of them in whole tile rows.
  const std::string path = conv_chain("im2col_slack", 48);
  for (const char* target : {"native", "cortex-m4"}) {
    auto c = compile(path, target);
    CHECK(im2col_cols(c, "c3") == 96);
    CHECK(c.program.arena_bytes == 57344);
    CHECK(c.program.peak_live_bytes == 57344);
  }
  onnxc::CompileOptions off;
  off.disabled_passes.insert("fit-scratch");  // the fastest block: 256 columns of 288 bytes
  CHECK(onnxc::compile_model(path, off).program.peak_live_bytes == 16384 + 256 * 288);
}

TEST_CASE("with room for less than a row of tiles: narrow blocks or the packed direct kernel when fitting, one row for speed") {
  // Peak 16 KiB + 8 KiB at b; at c3 16 KiB: 8 KiB free, 28 columns.
  const std::string path = conv_chain("im2col_narrow", 16);
  auto speed = compile(path, "native", onnxc::ScratchPolicy::Speed);
  CHECK(im2col_cols(speed, "c3") == 96);
  CHECK(speed.program.arena_bytes == 16384 + 96 * 288);
  for (const char* target : {"cortex-m4", "generic"}) {  // no SIMD: narrow blocks
    auto fit = compile(path, target);
    CHECK(im2col_cols(fit, "c3") == 28);
    CHECK(fit.program.arena_bytes == 24576);
  }
  // With SIMD, no block narrower than a row of tiles: the product over im2col blocks on the
  // stack (rt::conv_gemm_stacked), which its cost model puts under rt::conv_direct_packed for
  // 8 -> 8 3x3 on 16 x 16 (one layer alone, AVX2: 33.8 against 39.5 us), no scratch (avx2:
  // native takes rt::conv_shifted on a machine with AVX-512, below).
  auto avx2 = compile(path, "avx2");
  CHECK(onnxc::conv_algorithm(node_named(avx2, "c3")) == onnxc::ConvAlgorithm::Stacked);
  CHECK(node_named(avx2, "c3").attr_string(onnxc::kScratchNoteAttr, "").find("on the stack (no scratch)") !=
        std::string::npos);
  CHECK(avx2.program.arena_bytes == 24576);
}

TEST_CASE("with AVX-512, a stride-1 'same' Conv without room for the padded copy reads its input in place") {
  // c3 (8 channels x 3 x 3: shallower than kShiftedMinDepth) with 8 KiB free: rt::conv_shifted,
  // no scratch, under either policy (--scratch speed would take the padded copy of one row of
  // tiles' im2col block); with 40 KiB free the padded copy. A deep one (64 channels) reads its
  // input in place whatever the room.
  for (auto policy : {onnxc::ScratchPolicy::Fit, onnxc::ScratchPolicy::Speed}) {
    auto narrow = compile(conv_chain("shifted_narrow", 16), "avx512", policy);
    const auto want = policy == onnxc::ScratchPolicy::Fit ? onnxc::ConvAlgorithm::Shifted : onnxc::ConvAlgorithm::Gemm;
    CHECK(onnxc::conv_algorithm(node_named(narrow, "c3")) == want);
    CHECK(narrow.program.arena_bytes == (policy == onnxc::ScratchPolicy::Fit ? 24576 : 16384 + 96 * 288));
    auto slack = compile(conv_chain("shifted_slack", 48), "avx512", policy);
    CHECK(onnxc::conv_algorithm(node_named(slack, "c3")) == onnxc::ConvAlgorithm::Gemm);
  }
  auto none = compile(conv_chain("shifted_no_room", 8), "avx512");
  CHECK(onnxc::conv_algorithm(node_named(none, "c3")) == onnxc::ConvAlgorithm::Shifted);
  CHECK(node_named(none, "c3").attr_int(onnxc::kPackedWeightsAttr, 0) == 1);  // packed as for the product
  CHECK(none.program.arena_bytes == 16384);
  // 64 channels of 8 x 8: deep enough, and taken over rt::conv_direct_packed's narrow outputs.
  ModelBuilder b;
  b.input("x", {1, 64, 8, 8}).output("y");
  b.floats("c_w", {64, 64, 3, 3}, filled(64 * 64 * 9, 0.01f));
  auto& c = b.node("Conv", {"x", "c_w"}, {"y"}, "c");
  ModelBuilder::attr_ints(c, "pads", {1, 1, 1, 1});
  const std::string deep = b.write("shifted_deep");
  auto avx512 = compile(deep, "avx512", onnxc::ScratchPolicy::Fit);
  CHECK(onnxc::conv_algorithm(node_named(avx512, "c")) == onnxc::ConvAlgorithm::Shifted);
  CHECK(avx512.program.arena_bytes == 0);
  // --scratch speed gives it rt::conv_winograd's scratch instead (conv_fits_winograd).
  auto speed = compile(deep, "avx512", onnxc::ScratchPolicy::Speed);
  CHECK(onnxc::conv_algorithm(node_named(speed, "c")) == onnxc::ConvAlgorithm::Winograd);
  CHECK(speed.program.arena_bytes > 0);
}

TEST_CASE("with no room at all, fitting takes the direct kernel and the arena is the tensors'") {
  // 8 channels throughout: 16 KiB live at every step but the last.
  const std::string path = conv_chain("im2col_no_room", 8);
  auto m4 = compile(path, "cortex-m4");
  CHECK(im2col_cols(m4, "c3") == 0);
  CHECK(m4.program.arena_bytes == 16384);
  for (auto& n : m4.model.graph.nodes)  // the direct kernel reads the weights as the model has them
    CHECK(n->attr_int(onnxc::kPackedWeightsAttr, 0) == (n->name == "c3" ? 0 : 1));
  CHECK(node_named(m4, "c3").attr_string(onnxc::kScratchNoteAttr, "").find("direct kernel") == 0);
  CHECK(onnxc::conv_algorithm(node_named(m4, "c3")) == onnxc::ConvAlgorithm::Direct);
  auto avx2 = compile(path, "avx2");  // im2col blocks on the stack: the weights packed as for the product
  CHECK(node_named(avx2, "c3").attr_int(onnxc::kPackedWeightsAttr, 0) == 1);
  CHECK(onnxc::conv_algorithm(node_named(avx2, "c3")) == onnxc::ConvAlgorithm::Stacked);
  CHECK(avx2.program.arena_bytes == 16384);
  auto speed = compile(path, "avx2", onnxc::ScratchPolicy::Speed);
  CHECK(im2col_cols(speed, "c3") == 96);
  CHECK(speed.program.arena_bytes == 16384 + 96 * 288);
}

namespace {

// x (in_channels of size x size) -> 3x3 Conv "c" with padding 1 and `stride` to out_channels -> y,
// written as `name`.
std::string conv_3x3(const std::string& name, int64_t in_channels, int64_t out_channels, int64_t size,
                     int64_t stride) {
  ModelBuilder b;
  b.input("x", {1, in_channels, size, size}).output("y");
  b.floats("c_w", {out_channels, in_channels, 3, 3}, filled(out_channels * in_channels * 9, 0.01f));
  auto& c = b.node("Conv", {"x", "c_w"}, {"y"}, "c");
  ModelBuilder::attr_ints(c, "pads", {1, 1, 1, 1});
  ModelBuilder::attr_ints(c, "strides", {stride, stride});
  return b.write(name);
}

}  // namespace

TEST_CASE("on SIMD targets a Conv with at most 4 vectors of output positions takes the packed direct kernel, room or not") {
  // x (8 x 8 x 8) -> 3x3 Conv "c" -> y: nothing else in the arena, so all of it is room, and
  // 64 output columns: 4 AVX-512 vectors, 8 AVX2 ones (the product with --scratch speed; one
  // layer alone on AVX2: 1.5 against 4.3 us).
  const std::string path = conv_3x3("direct_packed_narrow", 8, 8, 8, 1);
  for (auto policy : {onnxc::ScratchPolicy::Fit, onnxc::ScratchPolicy::Speed}) {
    for (const char* target : {"avx512"}) {  // (not native: AVX2 on some hosts); 8 x 3 x 3 take the padded copy's room
      auto simd = compile(path, target, policy);
      CHECK(onnxc::conv_algorithm(node_named(simd, "c")) == onnxc::ConvAlgorithm::DirectPacked);
      CHECK(simd.program.arena_bytes == 0);
    }
    auto avx2 = compile(path, "avx2", policy);
    CHECK(onnxc::conv_algorithm(node_named(avx2, "c")) ==
          (policy == onnxc::ScratchPolicy::Speed ? onnxc::ConvAlgorithm::Gemm : onnxc::ConvAlgorithm::DirectPacked));
  }
  // 6 x 6 (36 columns) on AVX2: more than 4 vectors too; 5 x 5 (25) the packed direct kernel.
  for (int64_t side : {6, 5}) {
    auto avx2 = compile(conv_3x3("direct_packed_avx2_" + std::to_string(side), 8, 8, side, 1), "avx2",
                        onnxc::ScratchPolicy::Speed);
    CHECK(onnxc::conv_algorithm(node_named(avx2, "c")) ==
          (side == 6 ? onnxc::ConvAlgorithm::Gemm : onnxc::ConvAlgorithm::DirectPacked));
  }
  auto generic = compile(path, "generic", onnxc::ScratchPolicy::Speed);  // no SIMD: the matrix product
  CHECK(onnxc::conv_algorithm(node_named(generic, "c")) == onnxc::ConvAlgorithm::Gemm);
}

TEST_CASE("with AVX-512, 64 output positions and 16 output channels or more take the products of tall tiles") {
  // The same 8 x 8 'same' Conv with 16 output channels: AVX-512 reads the input in place
  // (rt::conv_shifted, no scratch); AVX2 keeps the packed direct kernel where it has no room, the
  // product over im2col with --scratch speed (64 columns: 8 AVX2 vectors). A stride-2 32 -> 64 Conv
  // to 8 x 8 (resnet8-cifar's) takes its phase planes under --scratch speed.
  const std::string path = conv_3x3("tall_same", 8, 16, 8, 1);
  for (auto policy : {onnxc::ScratchPolicy::Fit, onnxc::ScratchPolicy::Speed}) {
    auto avx512 = compile(path, "avx512", policy);
    CHECK(onnxc::conv_algorithm(node_named(avx512, "c")) == onnxc::ConvAlgorithm::Shifted);
    CHECK(avx512.program.arena_bytes == 0);
    auto avx2 = compile(path, "avx2", policy);
    CHECK(onnxc::conv_algorithm(node_named(avx2, "c")) ==
          (policy == onnxc::ScratchPolicy::Speed ? onnxc::ConvAlgorithm::Gemm : onnxc::ConvAlgorithm::DirectPacked));
  }
  auto speed = compile(conv_3x3("tall_phase", 32, 64, 16, 2), "avx512", onnxc::ScratchPolicy::Speed);
  CHECK(onnxc::conv_algorithm(node_named(speed, "c")) == onnxc::ConvAlgorithm::Gemm);
  // 32 channels x 4 phases x 64 floats and 32 of slack, in im2col columns of 288 floats
  CHECK(im2col_cols(speed, "c") == (32 * 4 * 64 + 32 + 287) / 288);
  CHECK(node_named(speed, "c").attr_string(onnxc::kScratchNoteAttr, "").find("phase planes") != std::string::npos);
}

TEST_CASE("with AVX-512, a stride-2 3x3 Conv gets the scratch of its input's phase planes where they fit") {
  // x (16 x 32 x 32) -> 3x3 stride-2 Conv "c" to 32 x 16 x 16 -> y: graph inputs and outputs are
  // not in the arena, so there is no room. Fitting: rt::conv_direct_packed; for speed the phase
  // planes (16 x 4 x 256 floats and 32 of slack in im2col blocks of 144 floats: 114 columns).
  const std::string path = conv_3x3("phase_planes", 16, 32, 32, 2);
  auto speed = compile(path, "avx512", onnxc::ScratchPolicy::Speed);
  CHECK(im2col_cols(speed, "c") == 114);
  CHECK(node_named(speed, "c").attr_string(onnxc::kScratchNoteAttr, "").find("phase planes") != std::string::npos);
  CHECK(speed.program.arena_bytes == 114 * 144 * 4);
  auto fit = compile(path, "avx512");
  CHECK(onnxc::conv_algorithm(node_named(fit, "c")) == onnxc::ConvAlgorithm::DirectPacked);
  CHECK(fit.program.arena_bytes == 0);
  auto avx2 = compile(path, "avx2", onnxc::ScratchPolicy::Speed);  // no phase planes: a row of tiles
  CHECK(im2col_cols(avx2, "c") == 96);
}

TEST_CASE("a Conv in a control-flow body gets its block from the room in its own block") {
  // y = If(cond, then: Conv3x3(x), else: Conv3x3(x)): each body's only tensor is its output, which
  // its parent holds, so no body has room for an im2col block.
  ModelBuilder b;
  b.input("x", {1, 8, 16, 16}).input("cond", {}, onnx::TensorProto::BOOL).output("y");
  auto& n = b.node("If", {"cond"}, {"y"}, "if");
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* a = n.add_attribute();
    a->set_name(branch);
    a->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto* g = a->mutable_g();
    g->set_name(branch);
    auto* w = g->add_initializer();
    w->set_name(std::string(branch) + "_w");
    w->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : {8, 8, 3, 3}) w->add_dims(d);
    for (int i = 0; i < 8 * 8 * 9; ++i) w->add_float_data(0.01f);
    onnx::NodeProto* conv = g->add_node();
    conv->set_op_type("Conv");
    conv->set_name(std::string(branch) + "_conv");
    conv->add_input("x");
    conv->add_input(w->name());
    conv->add_output(std::string(branch) + "_y");
    ModelBuilder::attr_ints(*conv, "pads", {1, 1, 1, 1});
    auto* out = g->add_output();
    out->set_name(std::string(branch) + "_y");
    out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
  const std::string path = b.write("im2col_in_if");
  auto body_conv_cols = [](const onnxc::Compilation& c) {
    const onnxc::Attribute& then_branch = c.model.graph.nodes.at(0)->attrs.at("then_branch");
    return then_branch.g->nodes.at(0)->attr_int(onnxc::kIm2colColsAttr, -1);
  };
  auto speed = compile(path, "native", onnxc::ScratchPolicy::Speed);
  CHECK(body_conv_cols(speed) == 96);
  CHECK(speed.program.arena_bytes == 96 * 288);
  auto avx2 = compile(path, "avx2");  // im2col blocks on the stack (with AVX-512 rt::conv_shifted, no scratch either)
  CHECK(onnxc::conv_algorithm(*avx2.model.graph.nodes.at(0)->attrs.at("then_branch").g->nodes.at(0)) ==
        onnxc::ConvAlgorithm::Stacked);
  CHECK(avx2.program.arena_bytes == 0);
  CHECK(compile(path, "avx512").program.arena_bytes == 0);
  auto m4 = compile(path, "cortex-m4");
  CHECK(body_conv_cols(m4) == 0);
  CHECK(m4.program.arena_bytes == 0);
}

namespace {

// x -> 1x1 Conv "a" -> depthwise 3x3 "dw" -> 1x1 Conv -> y on `channels` planes of side x side:
// a and dw are live together at dw, the peak.
std::string depthwise_chain(const std::string& name, int64_t channels, int64_t side, int64_t stride = 1) {
  ModelBuilder b;
  const int64_t c = channels;
  b.input("x", {1, c, side, side}).output("y");
  b.floats("a_w", {c, c, 1, 1}, filled(c * c, 0.1f)).floats("dw_w", {c, 1, 3, 3}, filled(c * 9, 0.1f));
  b.floats("y_w", {c, c, 1, 1}, filled(c * c, 0.1f));
  b.node("Conv", {"x", "a_w"}, {"a"}, "a");
  auto& dw = b.node("Conv", {"a", "dw_w"}, {"dw"}, "dw");
  ModelBuilder::attr_ints(dw, "pads", {1, 1, 1, 1});
  ModelBuilder::attr_int(dw, "group", c);
  if (stride != 1) ModelBuilder::attr_ints(dw, "strides", {stride, stride});
  b.node("Conv", {"dw", "y_w"}, {"y"}, "y");
  return b.write(name);
}

}  // namespace

TEST_CASE("a depthwise Conv with no room: the in-place kernel when fitting, its slots for speed") {
  // 8 planes of 16 x 16, a and dw 8 KiB each: too little work to split into tasks
  // (splits_into_tasks), so one slot; 64 planes of 48 x 48 split: a slot per task. Plain C++
  // (generic): SIMD targets compute these 'same' stride-1 planes in place (below).
  const std::string path = depthwise_chain("depthwise_no_room", 8, 16);
  for (const char* target : {"cortex-m4", "native"}) {
    auto fit = compile(path, target, onnxc::ScratchPolicy::Fit);
    CHECK(node_named(fit, "dw").attr_int(onnxc::kParallelSlotsAttr, -1) == 0);
    CHECK(onnxc::conv_algorithm(node_named(fit, "dw")) == onnxc::ConvAlgorithm::Depthwise);
    CHECK(fit.program.arena_bytes == 16384);
  }
  for (auto [channels, side, slots] : {std::tuple<int64_t, int64_t, int64_t>{8, 16, 1},  // 18,432 MACs
                                       {64, 48, onnxc::kDepthwiseParallelSlots}}) {    // 1,327,104 MACs
    const std::string model = depthwise_chain("depthwise_speed", channels, side);
    auto generic = compile(model, "generic", onnxc::ScratchPolicy::Speed);
    const onnxc::Node& dw = node_named(generic, "dw");
    CHECK(dw.attr_int(onnxc::kParallelSlotsAttr, -1) == slots);
    CHECK(onnxc::conv_algorithm(dw) == onnxc::ConvAlgorithm::Depthwise);
    const std::size_t slot_bytes = static_cast<std::size_t>(slots) * onnxc::depthwise_slot_bytes(dw);
    const std::size_t scratch = (slot_bytes + 15) / 16 * 16;  // the arena's alignment
    const std::size_t tensors = static_cast<std::size_t>(2 * channels * side * side * 4);
    CHECK(generic.program.arena_bytes == tensors + scratch);
    // SIMD targets: the flat-plane kernel reads its input in place, no scratch even for speed.
    auto native = compile(model, "native", onnxc::ScratchPolicy::Speed);
    CHECK(node_named(native, "dw").attr_int(onnxc::kParallelSlotsAttr, -1) == 0);
    CHECK(native.program.arena_bytes == tensors);
  }
}

TEST_CASE("an LSTM whose gate buffers do not fit keeps its state in Y and Y_c") {
  // One LSTM, hidden 8, whose outputs are the graph's: the arena holds nothing else, no room.
  auto lstm = [](const std::string& name, bool with_y_c,
                 std::optional<onnxc::ScratchPolicy> policy = std::nullopt) {
    ModelBuilder b;
    b.input("x", {3, 1, 4}).output("y").output("y_h");
    if (with_y_c) b.output("y_c");
    b.floats("w", {1, 32, 4}, filled(128, 0.1f)).floats("r", {1, 32, 8}, filled(256, 0.1f));
    auto& n = b.node("LSTM", {"x", "w", "r"}, with_y_c ? std::vector<std::string>{"y", "y_h", "y_c"}
                                                       : std::vector<std::string>{"y", "y_h"}, "lstm");
    ModelBuilder::attr_int(n, "hidden_size", 8);
    return compile(b.write(name), "native", policy);
  };
  auto in_outputs = lstm("lstm_no_room", true);
  CHECK(node_named(in_outputs, "lstm").attr_int(onnxc::kStateInOutputsAttr, -1) == 1);
  CHECK(node_named(in_outputs, "lstm").attr_int(onnxc::kProjectedAttr, -1) == 0);
  CHECK(in_outputs.program.arena_bytes == 0);
  auto no_y_c = lstm("lstm_no_y_c", false);  // C has nowhere to live: the gates keep their scratch
  CHECK(node_named(no_y_c, "lstm").attr_int(onnxc::kStateInOutputsAttr, -1) == 0);
  CHECK(node_named(no_y_c, "lstm").attr_int(onnxc::kProjectedAttr, -1) == 0);
  CHECK(no_y_c.program.arena_bytes == 6 * 8 * sizeof(float));
  // --scratch speed: the input projections of the 3 steps first (3 rows of 4 x 8 gates), the
  // state still in the outputs (as fast) where it can be.
  auto speed = lstm("lstm_speed", true, onnxc::ScratchPolicy::Speed);
  CHECK(node_named(speed, "lstm").attr_int(onnxc::kStateInOutputsAttr, -1) == 1);
  CHECK(node_named(speed, "lstm").attr_int(onnxc::kProjectedAttr, -1) == 1);
  CHECK(speed.program.arena_bytes == 3 * 32 * sizeof(float));
  auto speed_no_y_c = lstm("lstm_speed_no_y_c", false, onnxc::ScratchPolicy::Speed);
  CHECK(node_named(speed_no_y_c, "lstm").attr_int(onnxc::kProjectedAttr, -1) == 1);
  CHECK(speed_no_y_c.program.arena_bytes == (6 * 8 + 3 * 32) * sizeof(float));
}

TEST_CASE("kernel scratch goes into the gaps the tensors leave at its step") {
  using onnxc::BufferRequest;
  // Steps 0 and 1 each hold two 32-byte tensors, the whole 64-byte arena; step 2 holds one,
  // leaving a 32-byte gap.
  const std::vector<BufferRequest> tensors = {{32, 0, 0}, {32, 0, 2}, {32, 1, 1}};
  const onnxc::MemoryPlan plan = onnxc::plan_memory(tensors, 16);
  REQUIRE(plan.arena_bytes == 64);
  CHECK(onnxc::largest_gap_at(tensors, plan, 0, 16) == 0);
  CHECK(onnxc::largest_gap_at(tensors, plan, 1, 16) == 0);
  CHECK(onnxc::largest_gap_at(tensors, plan, 2, 16) == 32);
  const onnxc::MemoryPlan with_scratch = onnxc::place_into_gaps(tensors, plan, {{32, 2, 2}, {16, 1, 1}}, 16);
  CHECK(with_scratch.offsets[3] == (plan.offsets[1] == 0 ? 32u : 0u));  // the gap at step 2
  CHECK(with_scratch.offsets[4] == 64);  // no gap at step 1: the arena grows
  CHECK(with_scratch.arena_bytes == 80);
}

TEST_CASE("a 3x3 stride-2 depthwise Conv gets no scratch on AVX2 and AVX-512, which read its input in place") {
  // 64 planes of 96 x 96 -> 48 x 48 (1,327,104 MACs: a slot per task for speed where the
  // padded-row kernel computes it); rt::depthwise_stride2_detail needs none, under either policy.
  const std::string model = depthwise_chain("depthwise_stride2", 64, 96, 2);
  for (auto policy : {onnxc::ScratchPolicy::Fit, onnxc::ScratchPolicy::Speed}) {
    for (const char* target : {"avx2", "x86-64-v3", "avx512"}) {
      INFO(target);
      auto c = compile(model, target, policy);
      CHECK(node_named(c, "dw").attr_int(onnxc::kParallelSlotsAttr, -1) == 0);
      CHECK(onnxc::conv_algorithm(node_named(c, "dw")) == onnxc::ConvAlgorithm::Depthwise);
    }
  }
  for (const char* target : {"generic", "x86-64-v2"}) {
    INFO(target);
    auto speed = compile(model, target, onnxc::ScratchPolicy::Speed);
    CHECK(node_named(speed, "dw").attr_int(onnxc::kParallelSlotsAttr, -1) == onnxc::kDepthwiseParallelSlots);
  }
}

TEST_CASE("3x3 stride-1 Convs of 16 or more channels in and out on 8 x 8 or more take Winograd on SIMD targets") {
  // x -> 1x1 Conv to 128 channels (the peak) -> 1x1 Conv to 16 -> 3x3 Conv "w3" (16 -> 64 on 28 x 28,
  // Winograd's shape) -> 3x3 Conv "y" (64 -> 8: too few output channels).
  ModelBuilder b;
  b.input("x", {1, 16, 28, 28}).output("y");
  auto conv = [&b](const std::string& in, const std::string& out, int64_t c, int64_t m, int64_t k) {
    b.floats(out + "_w", {m, c, k, k}, filled(m * c * k * k, 0.01f));
    auto& n = b.node("Conv", {in, out + "_w"}, {out}, out);
    ModelBuilder::attr_ints(n, "pads", {k / 2, k / 2, k / 2, k / 2});
  };
  conv("x", "a", 16, 128, 1);
  conv("a", "b", 128, 16, 1);
  conv("b", "w3", 16, 64, 3);
  conv("w3", "y", 64, 8, 3);
  const std::string path = b.write("winograd_chain");
  for (const char* target : {"avx2", "avx512"}) {
    INFO(target);
    const onnxc::Compilation c = compile(path, target, onnxc::ScratchPolicy::Speed);
    const onnxc::Node& w3 = node_named(c, "w3");
    CHECK(onnxc::conv_algorithm(w3) == onnxc::ConvAlgorithm::Winograd);
    CHECK(w3.attr_int(onnxc::kWinogradRowsAttr, 0) == onnxc::winograd_preferred_rows(w3));
    CHECK(w3.inputs[1]->shape == onnxc::Shape{64, 16, 4, 4});  // the transformed weights
    CHECK(onnxc::float_conv_macs(w3) == 64 * 28 * 28 * 16 * 9);  // the convolution's, not the transform's
    CHECK(onnxc::conv_algorithm(node_named(c, "y")) != onnxc::ConvAlgorithm::Winograd);
  }
  // Plain C++ targets and Cortex-M keep the other kernels.
  for (const char* target : {"generic", "cortex-m7"}) {
    INFO(target);
    const onnxc::Compilation c = compile(path, target, onnxc::ScratchPolicy::Speed);
    CHECK(onnxc::conv_algorithm(node_named(c, "w3")) != onnxc::ConvAlgorithm::Winograd);
  }
  // Fitting: the 200 KiB left at its step (the 128-channel tensor is dead) hold one product
  // buffer, not the four a parallel-for would use.
  const onnxc::Compilation fit = compile(path, "avx2");
  const onnxc::Node& fitted = node_named(fit, "w3");
  CHECK(onnxc::conv_algorithm(fitted) == onnxc::ConvAlgorithm::Winograd);
  CHECK(fitted.attr_int(onnxc::kWinogradRowsAttr, 0) >= 1);
  CHECK(fitted.attr_int(onnxc::kParallelSlotsAttr, 0) < onnxc::kWinogradParallelSlots);
}

TEST_CASE("first layers with 5 x 5 or larger kernels onto rows of 16 or more take the bands even with room") {
  // x -> 1x1 Conv to 32 channels (the peak, dead at the stem) -> 1x1 Conv to c -> the stem "y".
  auto stem = [](int64_t c, int64_t hw, int64_t kh, int64_t kw, int64_t stride) {
    ModelBuilder b;
    b.input("x", {1, c, hw, hw}).output("y");
    b.floats("w1", {32, c, 1, 1}, filled(32 * c, 0.01f));
    b.node("Conv", {"x", "w1"}, {"a"}, "a");
    b.floats("w2", {c, 32, 1, 1}, filled(32 * c, 0.01f));
    b.node("Conv", {"a", "w2"}, {"b"}, "b");
    b.floats("w3", {16, c, kh, kw}, filled(16 * c * kh * kw, 0.01f));
    auto& n = b.node("Conv", {"b", "w3"}, {"y"}, "y");
    ModelBuilder::attr_ints(n, "strides", {stride, stride});
    ModelBuilder::attr_ints(n, "pads", {kh / 2, kw / 2, kh / 2, kw / 2});
    return b.write("stem_" + std::to_string(c) + "_" + std::to_string(hw) + "_" + std::to_string(kh) + "x" +
                   std::to_string(kw));
  };
  for (auto [c, hw, kh, kw, bands] : {std::tuple{3, 64, 7, 7, true}, {3, 64, 5, 5, true}, {1, 40, 5, 5, true},
                                      {3, 64, 3, 3, false}, {8, 64, 7, 7, false}, {1, 20, 10, 4, false}}) {
    INFO(c << " channels on " << hw << " x " << hw << ", kernel " << kh << " x " << kw);
    for (const char* target : {"avx2", "avx512"}) {
      INFO(target);
      const onnxc::Compilation fit = compile(stem(c, hw, kh, kw, 2), target);
      const onnxc::Node& y = node_named(fit, "y");
      CHECK((y.attr_int(onnxc::kBandAttr, 0) == 1) == bands);
      if (bands) CHECK(onnxc::conv_algorithm(y) == onnxc::ConvAlgorithm::Band);
    }
  }
}

TEST_CASE("fitted Winograd blocks take rows of tiles that fill whole vectors where fewer rows do") {
  // x -> 1x1 Conv to 64 channels on 16 x 16 -> 1x1 Conv to 32 (the peak: 96 KiB with its input;
  // the model's input and output are the caller's) -> 3x3 Conv "y" (32 -> 32, 8 x 8 tiles): 64 KiB
  // free at "y", room for 3 rows of tiles (24 tiles) but not 4. 24 tiles fill three AVX2 vectors but only 75 % of two AVX-512 ones: there
  // the block takes 2 rows (16 tiles, one whole vector; resnet8-cifar's 16 x 16 layer 37 -> 33 us).
  ModelBuilder b;
  b.input("x", {1, 32, 16, 16}).output("y");
  auto conv = [&b](const std::string& in, const std::string& out, int64_t c, int64_t m, int64_t k) {
    b.floats(out + "_w", {m, c, k, k}, filled(m * c * k * k, 0.01f));
    auto& n = b.node("Conv", {in, out + "_w"}, {out}, out);
    ModelBuilder::attr_ints(n, "pads", {k / 2, k / 2, k / 2, k / 2});
  };
  conv("x", "e", 32, 64, 1);
  conv("e", "s", 64, 32, 1);
  conv("s", "y", 32, 32, 3);
  const std::string path = b.write("winograd_whole_rows");
  const onnxc::Compilation avx512 = compile(path, "avx512");
  CHECK(onnxc::conv_algorithm(node_named(avx512, "y")) == onnxc::ConvAlgorithm::Winograd);
  CHECK(node_named(avx512, "y").attr_int(onnxc::kWinogradRowsAttr, 0) == 2);
  const onnxc::Compilation avx2 = compile(path, "avx2");
  CHECK(onnxc::conv_algorithm(node_named(avx2, "y")) == onnxc::ConvAlgorithm::Winograd);
  CHECK(node_named(avx2, "y").attr_int(onnxc::kWinogradRowsAttr, 0) == 3);
  // --scratch speed: the preferred block (all 8 rows), whatever the room.
  const onnxc::Compilation speed = compile(path, "avx512", onnxc::ScratchPolicy::Speed);
  CHECK(node_named(speed, "y").attr_int(onnxc::kWinogradRowsAttr, 0) == 8);
}

TEST_CASE("a deep product over few output positions (a 16 x 16 stride-16 patch embedding) takes im2col where it fits") {
  // 3 -> 192 channels, 96 x 96 in 16 x 16 patches, no padding: 36 output columns of depth 768.
  ModelBuilder b;
  b.input("x", {1, 3, 96, 96}).output("y");
  b.floats("c_w", {192, 3, 16, 16}, filled(192 * 3 * 16 * 16, 0.01f));
  auto& c = b.node("Conv", {"x", "c_w"}, {"y"}, "c");
  ModelBuilder::attr_ints(c, "strides", {16, 16});
  ModelBuilder::attr_ints(c, "kernel_shape", {16, 16});
  const std::string path = b.write("patch_embedding");
  for (const char* target : {"avx2", "avx512"}) {
    auto speed = compile(path, target, onnxc::ScratchPolicy::Speed);
    // A product over im2col: 36 positions fill 75 % of three AVX-512 vectors, 192 output channels
    // all of theirs: the output channels in the lanes; on AVX2 the positions fill 90 % of five
    // vectors, and its channel tiles are the slower (kChannelLanesSmallTilePercent).
    CHECK(onnxc::conv_algorithm(node_named(speed, "c")) ==
          (std::string(target) == "avx512" ? onnxc::ConvAlgorithm::ChannelLanes : onnxc::ConvAlgorithm::Gemm));
    CHECK(im2col_cols(speed, "c") >= 36);
    // Alone in the arena there is no room for a block when fitting: on AVX2 the product over
    // im2col blocks on the stack (one layer alone: 275.5 against the packed direct kernel's
    // 377.3 us), on AVX-512 the packed direct kernel (its 16 output channels a vector; the stacked
    // kernel's estimate is not 5 % under it there).
    auto fit = compile(path, target, onnxc::ScratchPolicy::Fit);
    CHECK(onnxc::conv_algorithm(node_named(fit, "c")) ==
          (std::string(target) == "avx2" ? onnxc::ConvAlgorithm::Stacked : onnxc::ConvAlgorithm::DirectPacked));
  }
}

TEST_CASE("small planes take the output channels in the lanes where the cost model says they fill more of them") {
  // 400 -> 400 1x1 on 7 x 7 (49 positions: 77 % of four AVX-512 vectors, 88 % of seven AVX2 ones)
  // and 1x1 stride 2 onto it; a squeeze-excite 1x1 on 1 x 1 (one position); 64 -> 64 on 28 x 28
  // (784 positions: whole vectors, 64 channels a short depth).
  ModelBuilder b;
  b.input("x", {1, 400, 7, 7}).input("z", {1, 64, 28, 28}).input("s", {1, 160, 14, 14}).input("q", {1, 240, 1, 1});
  b.output("y").output("v").output("t").output("r");
  b.floats("a_w", {400, 400, 1, 1}, filled(400 * 400, 0.01f));
  b.floats("b_w", {64, 64, 1, 1}, filled(64 * 64, 0.01f));
  b.floats("c_w", {400, 160, 1, 1}, filled(400 * 160, 0.01f));
  b.floats("d_w", {10, 240, 1, 1}, filled(10 * 240, 0.01f));
  b.node("Conv", {"x", "a_w"}, {"y"}, "a");
  b.node("Conv", {"z", "b_w"}, {"v"}, "b");
  auto& c = b.node("Conv", {"s", "c_w"}, {"t"}, "c");
  ModelBuilder::attr_ints(c, "strides", {2, 2});
  b.node("Conv", {"q", "d_w"}, {"r"}, "d");
  const std::string path = b.write("small_planes");
  const onnxc::Compilation avx512 = compile(path, "avx512", onnxc::ScratchPolicy::Speed);
  CHECK(onnxc::conv_algorithm(node_named(avx512, "a")) == onnxc::ConvAlgorithm::ChannelLanes);
  CHECK(node_named(avx512, "a").inputs[1]->shape == onnxc::Shape{400, 400, 1, 1});  // 25 whole panels
  CHECK(onnxc::conv_algorithm(node_named(avx512, "c")) == onnxc::ConvAlgorithm::ChannelLanes);
  CHECK(im2col_cols(avx512, "c") >= 49);
  CHECK(node_named(avx512, "d").inputs[1]->shape == onnxc::Shape{16, 240, 1, 1});  // one panel, 6 zero rows
  // AVX2's 6 x 2 channel tiles beat its position tiles on 88 % filled vectors where those read the
  // input as their matrix (kChannelLanesAvx2InPlacePercent), not over im2col (the stride-2 one);
  // 49 columns are more than four AVX2 vectors, so that one is no packed direct kernel's.
  const onnxc::Compilation avx2 = compile(path, "avx2", onnxc::ScratchPolicy::Speed);
  CHECK(onnxc::conv_algorithm(node_named(avx2, "a")) == onnxc::ConvAlgorithm::ChannelLanes);
  CHECK(onnxc::conv_algorithm(node_named(avx2, "c")) == onnxc::ConvAlgorithm::Gemm);
  CHECK(im2col_cols(avx2, "c") >= 49);
  for (const onnxc::Compilation* c : {&avx512, &avx2}) {
    CHECK(onnxc::conv_algorithm(node_named(*c, "b")) == onnxc::ConvAlgorithm::Gemm);
    CHECK(onnxc::conv_algorithm(node_named(*c, "d")) == onnxc::ConvAlgorithm::ChannelLanes);
  }
  // Plain C++ has no vector lanes to fill: the product as before.
  const onnxc::Compilation generic = compile(path, "generic", onnxc::ScratchPolicy::Speed);
  CHECK(onnxc::conv_algorithm(node_named(generic, "a")) == onnxc::ConvAlgorithm::Gemm);
  CHECK(onnxc::conv_algorithm(node_named(generic, "d")) == onnxc::ConvAlgorithm::Gemm);
}

TEST_CASE("on AArch64 a pointwise QLinearConv takes the integer im2col tiles, not the plane kernel, as for speed") {
  // kws_dscnn_int8's four 1x1 QLinearConvs (64 -> 64 channels on 25 x 5): the plane kernel's
  // accumulator plane (500 B) holds less than a row of tiles, so fitting kept that kernel; on
  // neon (SDOT or SMULL tiles, quant_gemm_neon.h) they take a row of tiles like --scratch speed.
  const std::string path = std::string(ONNXC_TEST_DIR) + "/models/quant/kws_dscnn_int8/model.onnx";
  auto neon = compile(path, "neon");
  auto speed = compile(path, "neon", onnxc::ScratchPolicy::Speed);
  auto generic = compile(path, "generic");
  for (const char* conv : {"/f/f.6/Conv", "/f/f.12/Conv", "/f/f.18/Conv", "/f/f.24/Conv"}) {
    INFO(conv);
    CHECK(im2col_cols(neon, conv) > 0);
    CHECK(im2col_cols(neon, conv) == im2col_cols(speed, conv));
    CHECK(node_named(neon, conv).attr_string(onnxc::kScratchNoteAttr, "").find("AArch64 integer tiles") !=
          std::string::npos);
    CHECK(im2col_cols(generic, conv) == 0);
  }
  CHECK(neon.program.arena_bytes == speed.program.arena_bytes);
}
