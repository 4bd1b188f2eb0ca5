// im2col-blocks: the width of each Conv's im2col block, chosen from the room the scratch-free
// plan leaves at its step (passes/im2col_blocks.cpp).
#include <catch2/catch.hpp>

#include "model_builder.h"
#include "passes/kernel_passes.h"
#include "passes/pipeline.h"

using testing::ModelBuilder;

namespace {

// A 3x3 Conv over 8 channels of 16x16: 72 floats (288 bytes) per im2col column, 256 columns.
const onnxc::Im2colShape kConv3x3{288, 256, 864, 96};

// x -> 1x1 Conv to `wide` channels -> 1x1 Conv to 8 -> 3x3 Conv "c3" -> 1x1 Conv -> y. The wide
// tensor makes the peak; at the 3x3 Conv only two 8-channel tensors (16 KiB) are live.
std::string conv_chain(const std::string& name, int64_t wide) {
  ModelBuilder b;
  b.input("x", {1, 8, 16, 16}).output("y");
  auto conv = [&b](const std::string& in, const std::string& out, int64_t c, int64_t m, int64_t k) {
    b.floats(out + "_w", {m, c, k, k}, std::vector<float>(static_cast<std::size_t>(m * c * k * k), 0.01f));
    auto& n = b.node("Conv", {in, out + "_w"}, {out}, out);
    ModelBuilder::attr_ints(n, "pads", {k / 2, k / 2, k / 2, k / 2});
  };
  conv("x", "a", 8, wide, 1);
  conv("a", "b", wide, 8, 1);
  conv("b", "c3", 8, 8, 3);
  conv("c3", "y", 8, 8, 1);
  return b.write(name);
}

onnxc::Compilation compile(const std::string& path, const std::string& target) {
  onnxc::CompileOptions o;
  o.target = target;
  return onnxc::compile_model(path, o);
}

int64_t im2col_cols(const onnxc::Compilation& c, const std::string& conv) {
  for (auto& n : c.model.graph.nodes)
    if (n->name == conv) return n->attr_int(onnxc::kIm2colColsAttr, -1);
  FAIL("no node " << conv);
  return -1;
}

}  // namespace

TEST_CASE("the fastest im2col block when it fits in the slack, else whole rows of register tiles") {
  using onnxc::choose_im2col_cols;
  CHECK(choose_im2col_cols(kConv3x3, 256 * 288, false) == 864);  // the whole output fits
  CHECK(choose_im2col_cols(kConv3x3, 255 * 288, false) == 192);
  CHECK(choose_im2col_cols(kConv3x3, 96 * 288, true) == 96);
}

TEST_CASE("with no room for one row of tiles: the smallest block, or the direct kernel when memory comes first") {
  using onnxc::choose_im2col_cols;
  CHECK(choose_im2col_cols(kConv3x3, 95 * 288, false) == 96);
  CHECK(choose_im2col_cols(kConv3x3, 95 * 288, true) == 0);
  const onnxc::Im2colShape narrow{288, 16, 864, 96};  // a 4x4 output: 16 columns in all
  CHECK(choose_im2col_cols(narrow, 0, false) == 16);
  CHECK(choose_im2col_cols(narrow, 16 * 288, true) == 864);
}

TEST_CASE("a Conv's im2col block fills the room under the peak and the arena does not grow") {
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
  off.disabled_passes.insert("im2col-blocks");  // the fastest block: 256 columns of 288 bytes
  CHECK(onnxc::compile_model(path, off).program.peak_live_bytes == 16384 + 256 * 288);
}

TEST_CASE("with no room, a memory-first target keeps the direct kernel and the arena of the scratch-free plan") {
  // Peak 16 KiB + 8 KiB at b; at c3 16 KiB: 8 KiB free, less than 96 columns (27 KiB).
  const std::string path = conv_chain("im2col_no_slack", 16);
  auto native = compile(path, "native");
  CHECK(im2col_cols(native, "c3") == 96);
  CHECK(native.program.arena_bytes == 16384 + 96 * 288);
  auto m4 = compile(path, "cortex-m4");
  CHECK(im2col_cols(m4, "c3") == 0);
  CHECK(m4.program.arena_bytes == 24576);
  for (auto& n : m4.model.graph.nodes)  // the direct kernel reads the weights as the model has them
    CHECK(n->attr_int(onnxc::kPackedWeightsAttr, 0) == (n->name == "c3" ? 0 : 1));
}

TEST_CASE("a Conv in a control-flow body gets its block from the room under its own block's peak") {
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
  auto native = compile(path, "native");
  CHECK(body_conv_cols(native) == 96);
  CHECK(native.program.arena_bytes == 96 * 288);
  auto m4 = compile(path, "cortex-m4");
  CHECK(body_conv_cols(m4) == 0);
  CHECK(m4.program.arena_bytes == 0);
}
