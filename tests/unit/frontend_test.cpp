#include <catch2/catch.hpp>

#include <fstream>

#include "frontend/load.h"
#include "model_builder.h"
#include "ops/onnx_schemas.h"
#include "passes/pipeline.h"
#include "support/diagnostics.h"

using testing::ModelBuilder;

namespace {

// Compiles and returns every problem's text, or "" when it compiles.
std::string compile_errors(const std::string& path, onnxc::CompileOptions o = {}) {
  try {
    onnxc::compile_model(path, o);
    return "";
  } catch (const onnxc::CompileError& e) {
    std::string s;
    for (auto& p : e.problems()) s += onnxc::format_problem(path, p) + "\n";
    return s;
  }
}

}  // namespace

TEST_CASE("Conv infers its output shape from pads, strides and dilations") {
  ModelBuilder b;
  b.input("x", {1, 3, 32, 32}).output("y");
  b.floats("w", {8, 3, 3, 3}, std::vector<float>(8 * 27, 0.5f));
  auto& conv = b.node("Conv", {"x", "w"}, {"y"});
  ModelBuilder::attr_ints(conv, "pads", {1, 1, 1, 1});
  ModelBuilder::attr_ints(conv, "strides", {2, 2});
  ModelBuilder::attr_ints(conv, "dilations", {2, 1});
  onnxc::Model m = onnxc::check_model(b.write("conv_shape"), {});
  // height: (32 + 2 - (3-1)*2 - 1) / 2 + 1 = 15; width: (32 + 2 - 3) / 2 + 1 = 16
  CHECK(m.graph.outputs[0]->shape == onnxc::Shape{1, 8, 15, 16});
}

TEST_CASE("Reshape infers -1 from the other dims and copies 0 from the input") {
  ModelBuilder b;
  b.input("x", {2, 3, 4}).output("y").ints("shape", {3}, {0, -1, 2});
  b.node("Reshape", {"x", "shape"}, {"y"});
  onnxc::Model m = onnxc::check_model(b.write("reshape"), {});
  CHECK(m.graph.outputs[0]->shape == onnxc::Shape{2, 6, 2});
}

TEST_CASE("a cycle is refused, naming a node on it") {
  ModelBuilder b;
  b.input("x", {1}).output("c");
  b.node("Add", {"x", "c"}, {"a"}, "first");
  b.node("Relu", {"a"}, {"c"}, "second");
  std::string err = compile_errors(b.write("cycle"));
  CHECK_THAT(err, Catch::Contains("cycle"));
  CHECK_THAT(err, Catch::Contains("'first'"));
}

TEST_CASE("several independent problems are reported together") {
  ModelBuilder b;
  b.input("x", {1}).output("y");
  b.node("Relu", {"missing"}, {"a"}, "r1");
  b.node("Relu", {"x"}, {"a"}, "r2");  // 'a' assigned twice
  b.node("Relu", {"a"}, {"y"}, "r3");
  std::string err = compile_errors(b.write("many"));
  CHECK_THAT(err, Catch::Contains("input 'missing' is not defined"));
  CHECK_THAT(err, Catch::Contains("output 'a' is already defined"));
}

TEST_CASE("an unknown operator is refused as unsupported, naming node, op and opset") {
  ModelBuilder b;
  b.input("x", {1}).output("y");
  b.node("FancyOp", {"x"}, {"y"}, "mystery");
  std::string err = compile_errors(b.write("unknown_op"));
  CHECK_THAT(err, Catch::Contains("'mystery'"));
  CHECK_THAT(err, Catch::Contains("FancyOp"));
  CHECK_THAT(err, Catch::Contains("opset 13"));
}

TEST_CASE("an opset newer than onnxc knows is refused with what to do") {
  ModelBuilder b(99);
  b.input("x", {1}).output("y");
  b.node("Relu", {"x"}, {"y"});
  std::string err = compile_errors(b.write("new_opset"));
  CHECK_THAT(err, Catch::Contains("opset 99"));
  CHECK_THAT(err, Catch::Contains("fix:"));
}

TEST_CASE("a symbolic dim must be bound, and --dim binds it") {
  ModelBuilder b;
  b.input("x", {-1, 4}).output("y");
  b.node("Relu", {"x"}, {"y"});
  std::string path = b.write("symbolic");
  CHECK_THAT(compile_errors(path), Catch::Contains("'N'"));
  onnxc::CompileOptions o;
  o.dims["N"] = 3;
  onnxc::Model m = onnxc::check_model(path, o);
  CHECK(m.graph.outputs[0]->shape == onnxc::Shape{3, 4});
}

TEST_CASE("truncated and random files are refused with a clear error") {
  std::string path = "/tmp/onnxc-unit-garbage.onnx";
  {
    std::ofstream f(path, std::ios::binary);
    f << "\x08\x07\x12\xff\xff\xff\xff\x0f this is not a model";
  }
  CHECK_THAT(compile_errors(path), Catch::Contains("not a valid ONNX protobuf"));
  { std::ofstream f(path, std::ios::binary); }
  CHECK_THAT(compile_errors(path), Catch::Contains("empty"));
}

TEST_CASE("generated code is byte-identical for the same model and options") {
  std::string path = std::string(ONNXC_TEST_DIR) + "/models/mnist-cnn/model.onnx";
  onnxc::CompileOptions o;
  o.name = "m";
  auto a = onnxc::emit_code(onnxc::compile_model(path, o), o, "m.h", "m.cpp");
  auto b = onnxc::emit_code(onnxc::compile_model(path, o), o, "m.h", "m.cpp");
  CHECK(a.source == b.source);
  CHECK(a.header == b.header);
  CHECK_THAT(a.source, Catch::Contains("rt::conv_gemm("));  // float Conv with constant weights
}

namespace {

// The kernel call of node `name`'s step in the generated run_parallel: the statement after its
// `constexpr rt::...Params p` line.
std::string kernel_call_of(const std::string& source, const std::string& name) {
  std::size_t at = source.find("'" + name + "'", source.find("void run_parallel("));
  REQUIRE(at != std::string::npos);
  at = source.find("rt::", source.find('\n', source.find("constexpr rt::", at)));
  return source.substr(at, source.find('\n', at) - at);
}

}  // namespace

TEST_CASE("run_parallel hands the caller's parallel-for to steps of a million multiply-adds, or of 512 KiB of activations") {
  // Multiply-adds (kMinParallelWork 1M), or activation bytes read and written (kMinParallelBytes
  // 512 KiB; weights not counted):
  // small: 8 -> 8 channels, 3 x 3 on 16 x 16: 147,456 MACs (too few);
  // big: 8 -> 64 channels, 3 x 3 on 16 x 16: 1,179,648 MACs;
  // wide: 64 -> 64 channels, 1 x 1 on 16 x 16: 1,048,576 MACs;
  // streaming: 64 -> 8 channels, 1 x 1 on 64 x 64: 2,097,152 MACs over 1 MiB + 128 KiB (1.7 per
  // byte: it splits too, since two cores stream twice the bytes of one);
  // pool: 2 x 2 windows of 8 x 32 x 32: 32,768 comparisons over 32 + 8 KiB (too few);
  // bigpool: 2 x 2 windows of 64 x 64 x 64: 262,144 comparisons over 1 MiB + 256 KiB.
  ModelBuilder b;
  b.input("x", {1, 8, 16, 16}).input("x2", {1, 64, 64, 64}).output("w").output("y").output("z").output("q");
  b.floats("small_w", {8, 8, 3, 3}, std::vector<float>(576, 0.1f));
  b.floats("big_w", {64, 8, 3, 3}, std::vector<float>(4608, 0.1f));
  b.floats("wide_w", {64, 64, 1, 1}, std::vector<float>(4096, 0.1f));
  b.floats("streaming_w", {8, 64, 1, 1}, std::vector<float>(512, 0.1f));
  ModelBuilder::attr_ints(b.node("Conv", {"x", "small_w"}, {"s"}, "small"), "pads", {1, 1, 1, 1});
  ModelBuilder::attr_ints(b.node("Conv", {"s", "big_w"}, {"g"}, "big"), "pads", {1, 1, 1, 1});
  b.node("Conv", {"g", "wide_w"}, {"w"}, "wide");
  b.node("Conv", {"x2", "streaming_w"}, {"t"}, "streaming");
  auto& pool = b.node("MaxPool", {"t"}, {"z"}, "pool");
  ModelBuilder::attr_ints(pool, "kernel_shape", {2, 2});
  ModelBuilder::attr_ints(pool, "strides", {2, 2});
  auto& bigpool = b.node("MaxPool", {"x2"}, {"q"}, "bigpool");
  ModelBuilder::attr_ints(bigpool, "kernel_shape", {2, 2});
  ModelBuilder::attr_ints(bigpool, "strides", {2, 2});
  b.node("Identity", {"g"}, {"y"}, "keep_g");
  onnxc::CompileOptions o;
  o.target = "native";
  const auto code = onnxc::emit_code(onnxc::compile_model(b.write("parallel_threshold"), o), o, "m.h", "m.cpp");
  CHECK_THAT(kernel_call_of(code.source, "small"), Catch::EndsWith(", nullptr);"));
  CHECK_THAT(kernel_call_of(code.source, "big"), Catch::EndsWith(", parallel);"));
  CHECK_THAT(kernel_call_of(code.source, "wide"), Catch::EndsWith(", parallel);"));
  CHECK_THAT(kernel_call_of(code.source, "streaming"), Catch::EndsWith(", parallel);"));
  CHECK_THAT(kernel_call_of(code.source, "pool"), Catch::StartsWith("rt::max_pool(") && Catch::EndsWith(", nullptr);"));
  CHECK_THAT(kernel_call_of(code.source, "bigpool"), Catch::StartsWith("rt::max_pool(") && Catch::EndsWith(", parallel);"));
}

TEST_CASE("a squeeze-excite 1x1 Conv splits where the model's weights exceed a core's cache, not where they fit") {
  // se: 480 -> 120 channels on a 1 x 1 plane: 57,600 MACs, 230 KB of weights (under 512 KiB, but
  // 4 x over it when they come from memory, kWeightsFromMemoryFactor); with the classifier's
  // 1024 -> 520 weights (2.1 MB) the model's weights exceed kCoreCacheBytes.
  auto se_call = [](bool with_classifier, bool pass_enabled) {
    ModelBuilder b;
    b.input("x", {1, 480, 1, 1}).output("s");
    b.floats("se_w", {120, 480, 1, 1}, std::vector<float>(120 * 480, 0.1f));
    b.node("Conv", {"x", "se_w"}, {"s"}, "se");
    if (with_classifier) {
      b.input("f", {1, 1024, 1, 1}).output("c");
      b.floats("fc_w", {520, 1024, 1, 1}, std::vector<float>(520 * 1024, 0.1f));
      b.node("Conv", {"f", "fc_w"}, {"c"}, "fc");
    }
    onnxc::CompileOptions o;
    o.target = "native";
    if (!pass_enabled) o.disabled_passes.insert("mark-weights-from-memory");
    const auto code = onnxc::emit_code(onnxc::compile_model(b.write(with_classifier ? "se_big" : "se_small"), o), o,
                                       "m.h", "m.cpp");
    return kernel_call_of(code.source, "se");
  };
  CHECK_THAT(se_call(true, true), Catch::EndsWith(", parallel);"));
  CHECK_THAT(se_call(false, true), Catch::EndsWith(", nullptr);"));
  CHECK_THAT(se_call(true, false), Catch::EndsWith(", nullptr);"));
}

TEST_CASE("weights are written with exact bit patterns") {
  ModelBuilder b;
  b.input("x", {3}).output("y").floats("c", {3}, {0.1f, -3.4028235e38f, 1.17549435e-38f});
  b.node("Add", {"x", "c"}, {"y"});
  onnxc::CompileOptions o;
  auto code = onnxc::emit_code(onnxc::compile_model(b.write("bits"), o), o, "m.h", "m.cpp");
  CHECK_THAT(code.source, Catch::Contains("0.1f, -3.4028235e+38f, 1.1754944e-38f"));
}

// ---- validation against operator signatures (passes/validate_nodes.cpp) ----

TEST_CASE("the schema table knows each operator version's attributes and arity") {
  const onnxc::OpSchema* conv = onnxc::find_op_schema("", "Conv", 11);
  REQUIRE(conv);
  CHECK(conv->min_inputs == 2);
  CHECK(conv->max_inputs == 3);
  CHECK(conv->exact);
  const onnxc::OpSchema* cast = onnxc::find_op_schema("ai.onnx", "Cast", 13);
  REQUIRE(cast);
  REQUIRE(cast->attributes.size() == 1);
  CHECK(std::string(cast->attributes[0].name) == "to");
  CHECK(cast->attributes[0].required);
  const onnxc::OpSchema* split18 = onnxc::find_op_schema("", "Split", 18);
  REQUIRE(split18);
  CHECK(split18->max_outputs == onnxc::kUnbounded);
  CHECK(onnxc::find_op_schema("", "Conv", 12) == nullptr);  // not a since_version of Conv
  CHECK(onnxc::find_op_schema("", "NoSuchOp", 1) == nullptr);
}

TEST_CASE("every signature problem of every node is reported in one run") {
  ModelBuilder b;
  b.input("x", {1, 4}).output("y");
  b.node("Cast", {"x"}, {"a"}, "no_to");                        // required 'to' missing
  auto& sm = b.node("Softmax", {"a"}, {"b"}, "float_axis");
  auto* axis = sm.add_attribute();                              // axis stored as a float
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::FLOAT);
  axis->set_f(1);
  ModelBuilder::attr_int(b.node("Relu", {"b"}, {"y"}, "extra"), "alpha", 1);  // Relu has no attributes
  std::string err = compile_errors(b.write("signatures"));
  CHECK_THAT(err, Catch::Contains("'no_to'") && Catch::Contains("lacks attribute 'to' (int), which Cast-13 requires"));
  CHECK_THAT(err, Catch::Contains("'float_axis'") && Catch::Contains("attribute 'axis' is of type float"));
  CHECK_THAT(err, Catch::Contains("'extra'") && Catch::Contains("has attribute 'alpha', which Relu-13 does not declare"));
}

TEST_CASE("input counts and required inputs follow the signature") {
  ModelBuilder b;
  b.input("x", {1, 1, 4, 4}).output("y").floats("b", {1}, {0});
  b.node("Conv", {"x", "", "b"}, {"y"}, "conv");
  std::string err = compile_errors(b.write("empty_required"));
  CHECK_THAT(err, Catch::Contains("input 1 (W) of Conv-11 is required but its name is empty"));

  ModelBuilder c;
  c.input("x", {2}).output("y");
  c.node("Add", {"x"}, {"y"}, "add");
  CHECK_THAT(compile_errors(c.write("too_few")), Catch::Contains("has 1 input; Add-13 takes 2 (A, B)"));
}

TEST_CASE("optional inputs may be skipped with an empty name") {
  ModelBuilder b;
  b.input("x", {1, 1, 4, 4}).output("y").floats("w", {1, 1, 1, 1}, {2});
  b.node("Conv", {"x", "w", ""}, {"y"}, "conv");
  CHECK(compile_errors(b.write("empty_optional")).empty());
}

// ---- the loader ----

TEST_CASE("a model loads from memory like from a file") {
  ModelBuilder b;
  b.input("x", {2}).output("y");
  b.node("Relu", {"x"}, {"y"});
  std::string bytes;
  REQUIRE(b.proto().SerializeToString(&bytes));
  onnxc::Model m = onnxc::load_model_from_bytes(bytes, "memory.onnx", "/nonexistent");
  CHECK(m.path == "memory.onnx");
  CHECK(m.graph.nodes.size() == 1);
  CHECK_THROWS_AS(onnxc::load_model_from_bytes(bytes.substr(0, bytes.size() / 2), "half.onnx", "."),
                  onnxc::CompileError);
}

TEST_CASE("repeated node names are renamed NAME_INDEX with a warning, and refused when strict") {
  ModelBuilder b;
  b.input("x", {2}).output("y");
  b.node("Relu", {"x"}, {"a"}, "dup");
  b.node("Neg", {"a"}, {"b"}, "dup");    // a repeat: NAME_INDEX is 'dup_1', which node 3 takes: 'dup_1_2'
  b.node("Relu", {"b"}, {"c"});           // unnamed: 'Relu_2', which node 4 takes: 'Relu_2_2'
  b.node("Neg", {"c"}, {"d"}, "dup_1");
  b.node("Relu", {"d"}, {"y"}, "Relu_2");
  std::string bytes;
  REQUIRE(b.proto().SerializeToString(&bytes));
  std::vector<onnxc::Problem> warnings;
  onnxc::LoadOptions lenient;
  lenient.warn = [&](const onnxc::Problem& p) { warnings.push_back(p); };
  onnxc::Model m = onnxc::load_model_from_bytes(bytes, "names.onnx", ".", lenient);
  std::vector<std::string> names;
  for (const auto& n : m.graph.nodes) names.push_back(n->name);
  CHECK(names == std::vector<std::string>{"dup", "dup_1_2", "Relu_2_2", "dup_1", "Relu_2"});
  REQUIRE(warnings.size() == 1);  // the made-up name is not the file's fault
  CHECK(warnings[0].where == "node 1 'dup' (Neg, opset 13)");
  CHECK_THAT(warnings[0].what, Catch::Contains("onnxc calls it 'dup_1_2'"));

  onnxc::LoadOptions strict;
  strict.strict = true;
  try {
    onnxc::load_model_from_bytes(bytes, "names.onnx", ".", strict);
    FAIL("--strict accepted a repeated node name");
  } catch (const onnxc::CompileError& e) {
    REQUIRE(e.problems().size() == 1);
    CHECK(e.problems()[0].where == "node 1 'dup' (Neg, opset 13)");
    CHECK(e.problems()[0].what == "shares its name with an earlier node");
  }
}

TEST_CASE("a sparse initializer is densified: COO values land at their indices") {
  ModelBuilder b;
  b.input("x", {2, 3}).output("y");
  auto* sp = b.proto().mutable_graph()->add_sparse_initializer();
  sp->add_dims(2);
  sp->add_dims(3);
  auto* values = sp->mutable_values();
  values->set_name("c");
  values->set_data_type(onnx::TensorProto::FLOAT);
  values->add_dims(2);
  values->add_float_data(5);
  values->add_float_data(7);
  auto* indices = sp->mutable_indices();  // [NNZ, rank] coordinates: (0, 1) and (1, 2)
  indices->set_data_type(onnx::TensorProto::INT64);
  indices->add_dims(2);
  indices->add_dims(2);
  for (int64_t i : {0, 1, 1, 2}) indices->add_int64_data(i);
  b.node("Add", {"x", "c"}, {"y"});
  onnxc::Model m = onnxc::load_model(b.write("sparse"));
  const onnxc::Value* c = m.graph.find("c");
  REQUIRE(c);
  REQUIRE(c->constant);
  CHECK(c->constant->shape == onnxc::Shape{2, 3});
  const float* d = c->constant->data<float>();
  CHECK(std::vector<float>(d, d + 6) == std::vector<float>{0, 5, 0, 0, 0, 7});
}

TEST_CASE("external data is read at its offset, inside the model's folder only") {
  {
    std::ofstream f("/tmp/onnxc-unit-ext-weights.bin", std::ios::binary);
    float data[4] = {9, 1.5f, -2, 4};  // the tensor is the last three floats
    f.write(reinterpret_cast<const char*>(data), sizeof data);
  }
  ModelBuilder b;
  b.input("x", {3}).output("y");
  auto* t = b.proto().mutable_graph()->add_initializer();
  t->set_name("c");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(3);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add_entry = [&](const char* key, const char* value) {
    auto* e = t->add_external_data();
    e->set_key(key);
    e->set_value(value);
  };
  add_entry("location", "onnxc-unit-ext-weights.bin");
  add_entry("offset", "4");
  add_entry("length", "12");
  b.node("Add", {"x", "c"}, {"y"});
  onnxc::Model m = onnxc::load_model(b.write("ext"));
  const float* d = m.graph.find("c")->constant->data<float>();
  CHECK(std::vector<float>(d, d + 3) == std::vector<float>{1.5f, -2, 4});

  t->mutable_external_data(0)->set_value("../tmp/onnxc-unit-ext-weights.bin");
  CHECK_THAT(compile_errors(b.write("ext_escape")), Catch::Contains("leaves the model's folder"));
  t->mutable_external_data(0)->set_value("onnxc-unit-ext-weights.bin");
  t->mutable_external_data(1)->set_value("8");  // 8 + 12 > 16 bytes
  CHECK_THAT(compile_errors(b.write("ext_past_end")), Catch::Contains("[8, +12) lies outside"));
}

TEST_CASE("subgraph inputs and outputs may omit their types; the main graph's may not") {
  ModelBuilder b;
  b.input("x", {2}).output("y", {2});
  auto* cond = b.proto().mutable_graph()->add_input();
  cond->set_name("c");
  cond->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::BOOL);
  cond->mutable_type()->mutable_tensor_type()->mutable_shape();
  auto& if_node = b.node("If", {"c"}, {"y"}, "if");
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* a = if_node.add_attribute();
    a->set_name(branch);
    a->set_type(onnx::AttributeProto::GRAPH);
    auto* g = a->mutable_g();
    g->set_name(branch);
    auto* n = g->add_node();
    n->set_op_type(branch[0] == 't' ? "Relu" : "Neg");
    n->add_input("x");
    n->add_output(std::string(branch) + "_out");
    g->add_output()->set_name(std::string(branch) + "_out");  // no type: allowed in a subgraph
  }
  onnxc::Model m = onnxc::load_model(b.write("untyped_subgraph"));
  CHECK(m.graph.nodes.size() == 1);

  b.proto().mutable_graph()->mutable_output(0)->clear_type();
  CHECK_THAT(compile_errors(b.write("untyped_main_output")), Catch::Contains("output 'y': has no type"));
}

TEST_CASE("IR 3 requires initializers to be graph inputs; IR 4 does not") {
  ModelBuilder b(8, 3);
  b.input("x", {2}).output("y").floats("c", {2}, {1, 2});
  b.node("Add", {"x", "c"}, {"y"});
  CHECK_THAT(compile_errors(b.write("ir3")), Catch::Contains("is not a graph input, which IR version 3 requires"));
  b.proto().set_ir_version(4);
  b.proto().mutable_opset_import(0)->set_version(9);
  CHECK(compile_errors(b.write("ir4")).empty());
}

TEST_CASE("declared dims whose product overflows are refused before anything is allocated") {
  ModelBuilder b;
  b.input("x", {int64_t(1) << 40, int64_t(1) << 40}).output("y");
  b.node("Relu", {"x"}, {"y"});
  CHECK_THAT(compile_errors(b.write("overflow_dims")), Catch::Contains("whose product overflows"));
}
