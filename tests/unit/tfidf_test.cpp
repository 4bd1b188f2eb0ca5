// TfIdfVectorizer through the compiler: the pool attributes as the compiler sorts and validates
// them, and the kernel on constant rows (the node folds with the generated code's kernel).
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "model_builder.h"
#include "passes/pipeline.h"

using namespace onnxc;
using testing::ModelBuilder;

namespace {

void attr(onnx::NodeProto& n, const std::string& name, const std::string& s) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(s);
}

void attr(onnx::NodeProto& n, const std::string& name, std::vector<float> v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOATS);
  for (float f : v) a->add_floats(f);
}

// TfIdfVectorizer-9 on constant rows; the pool's unigrams are out of order (the compiler sorts
// them) and map to output positions out of order.
std::vector<double> tfidf(const std::string& mode, std::vector<int64_t> rows, bool weighted) {
  ModelBuilder b(11);
  b.ints("x", {2, 6}, rows).output("y", {2, 7});
  onnx::NodeProto& n = b.node("TfIdfVectorizer", {"x"}, {"y"});
  ModelBuilder::attr_int(n, "min_gram_length", 1);
  ModelBuilder::attr_int(n, "max_gram_length", 2);
  ModelBuilder::attr_int(n, "max_skip_count", 5);
  ModelBuilder::attr_ints(n, "pool_int64s", {5, 3, 2, 4, /**/ 5, 6, 7, 8, 6, 7});
  ModelBuilder::attr_ints(n, "ngram_counts", {0, 4});
  ModelBuilder::attr_ints(n, "ngram_indexes", {2, 1, 0, 3, 4, 5, 6});
  attr(n, "mode", mode);
  if (weighted) attr(n, "weights", std::vector<float>{1, 2, 3, 4, 5, 6, 7});
  Compilation c = compile_model(b.write("tfidf_" + mode), {});
  const Value& y = *c.model.graph.outputs[0];
  REQUIRE(y.constant);
  std::vector<double> values;
  for (int64_t i = 0; i < y.numel(); ++i) values.push_back(y.constant->float_at(i));
  return values;
}

}  // namespace

TEST_CASE("TfIdfVectorizer: counts with skips, IDF and TF-IDF weights", "[tfidf]") {
  // Row 0: the 1-gram 3 three times. Row 1: the 1-gram 5 once; the 2-grams (5, 6) at skip 0,
  // (7, 8) at skip 2 and (6, 7) at skip 0 once each. 1-grams count once, not once per skip.
  const std::vector<int64_t> rows = {1, 1, 3, 3, 3, 7, /**/ 8, 6, 7, 5, 6, 8};
  CHECK(tfidf("TF", rows, false) == std::vector<double>{0, 3, 0, 0, 0, 0, 0, /**/ 0, 0, 1, 0, 1, 1, 1});
  // Weights by pool order: 3 is n-gram 1 (weight 2), 5 n-gram 0 (weight 1), (5, 6) 4, ...
  CHECK(tfidf("IDF", rows, true) == std::vector<double>{0, 2, 0, 0, 0, 0, 0, /**/ 0, 0, 1, 0, 5, 6, 7});
  CHECK(tfidf("TFIDF", rows, true) == std::vector<double>{0, 6, 0, 0, 0, 0, 0, /**/ 0, 0, 1, 0, 5, 6, 7});
  CHECK(tfidf("IDF", rows, false) == std::vector<double>{0, 1, 0, 0, 0, 0, 0, /**/ 0, 0, 1, 0, 1, 1, 1});
}
