// Constant folding against the ONNX backend tests: every graph input is bound to its test
// data as a constant, so each node folds (through the same runtime-support kernels the
// generated code calls) and the folded outputs must equal the expected outputs.
//
// This covers the shape and data-movement operators whose node tests pass shapes, axes or
// indices as graph inputs: generated code cannot take those at run time (output shapes must
// be static), but folding — what happens to exporters' shape subgraphs — can.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <regex>

#include "frontend/load.h"
#include "ops/op.h"
#include "passes/passes.h"
#include "support/diagnostics.h"

namespace fs = std::filesystem;

namespace {

const char* kNodeTests = "/usr/share/libonnx-testdata/data/node";

// Node tests of the operators covered here ("_expanded" variants, which use Loop, are left out).
const std::regex kFoldedTests(
    "test_(shape|size|gather|unsqueeze|squeeze|slice|split|expand_dim|tile|constantofshape|range|"
    "depthtospace|spacetodepth|tril|triu|eyelike|onehot|scatter|compress|reversesequence|cumsum|resize|upsample|"
    "reshape|flatten|transpose|concat|nonzero|edge_pad|reflect_pad|constant_pad|wrap_pad)[a-z0-9_]*");

// Describes the first mismatch between a folded output and the expected tensor, "" if none.
std::string mismatch(const onnxc::Tensor& got, const onnxc::Tensor& want) {
  if (got.dtype != want.dtype)
    return "type " + onnxc::dtype_name(got.dtype) + ", expected " + onnxc::dtype_name(want.dtype);
  if (got.shape != want.shape) return "shape " + onnxc::shape_str(got.shape) + ", expected " + onnxc::shape_str(want.shape);
  for (int64_t i = 0; i < want.numel(); ++i) {
    double g = got.float_at(i), w = want.float_at(i);
    bool ok = onnxc::dtype_is_float(want.dtype) ? std::fabs(g - w) <= 1e-5 + 1e-3 * std::fabs(w)
                                                : got.int_at(i) == want.int_at(i);
    if (!ok) return "element " + std::to_string(i) + " is " + std::to_string(g) + ", expected " + std::to_string(w);
  }
  return "";
}

// Folds the model in `dir` with its first data set's inputs bound; returns "" or the problem.
std::string fold_and_compare(const fs::path& dir) {
  onnxc::Model m = onnxc::load_model((dir / "model.onnx").string());
  onnxc::resolve_operators(m);
  onnxc::Graph& g = m.graph;
  const fs::path data = dir / "test_data_set_0";
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    onnxc::Value* v = g.inputs[i];
    auto t = std::make_shared<onnxc::Tensor>(onnxc::load_tensor_file((data / ("input_" + std::to_string(i) + ".pb")).string()));
    v->dtype = t->dtype;
    v->shape = t->shape;
    v->has_shape = true;
    v->constant = t;
  }
  onnxc::infer_and_fold(g, true);
  for (std::size_t i = 0; i < g.outputs.size(); ++i) {
    const onnxc::Value* v = g.outputs[i];
    if (!v->constant) return "output '" + v->name + "' did not fold";
    onnxc::Tensor want = onnxc::load_tensor_file((data / ("output_" + std::to_string(i) + ".pb")).string());
    std::string why = mismatch(*v->constant, want);
    if (!why.empty()) return "output '" + v->name + "': " + why;
  }
  return "";
}

}  // namespace

TEST_CASE("Shape and data-movement operators fold to the ONNX backend tests' expected outputs") {
  REQUIRE(fs::is_directory(kNodeTests));  // Debian's libonnx-testdata (tools/install-deps.sh)
  int checked = 0;
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(kNodeTests))
    if (std::regex_match(entry.path().filename().string(), kFoldedTests) &&
        entry.path().filename().string().find("_expanded") == std::string::npos)
      dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());
  for (const fs::path& dir : dirs) {
    std::string problem;
    try {
      problem = fold_and_compare(dir);
    } catch (const onnxc::CompileError& e) {
      problem = e.what();
    }
    CHECK(dir.filename().string() + problem == dir.filename().string());
    ++checked;
  }
  CHECK(checked > 150);
}
