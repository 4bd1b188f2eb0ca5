// TfIdfVectorizer-9: n-gram counts of integer token rows against a pool of n-grams given as
// attributes (kernel: onnxc/tfidf.h). The pool is sorted at compile time so the generated code
// looks n-grams up by binary search.
//
// The pool attributes: pool_int64s concatenates the 1-grams, then the 2-grams, ...;
// ngram_counts[i] is where the (i+1)-grams start; ngram_indexes[j] is the output position of the
// j-th n-gram in that order, weights[j] its weight.
#include <algorithm>
#include <numeric>

#include "onnxc/tfidf.h"
#include "ops/elementwise.h"
#include "ops/emitter.h"

namespace onnxc {
namespace {

rt::TfIdfMode tfidf_mode(const Node& n) {
  const std::string mode = n.attr_string("mode", "");
  if (mode == "TF") return rt::TfIdfMode::tf;
  if (mode == "IDF") return rt::TfIdfMode::idf;
  if (mode == "TFIDF") return rt::TfIdfMode::tfidf;
  fail_invalid(n, fmt::format("mode '{}' is not one of TF, IDF, TFIDF", mode));
}

const char* tfidf_mode_cname(rt::TfIdfMode m) {
  switch (m) {
    case rt::TfIdfMode::tf: return "rt::TfIdfMode::tf";
    case rt::TfIdfMode::idf: return "rt::TfIdfMode::idf";
    case rt::TfIdfMode::tfidf: return "rt::TfIdfMode::tfidf";
  }
  return "";
}

// The pool as the kernel reads it (rt::NgramPool), built from the attributes.
struct Pool {
  std::vector<int64_t> tokens;
  std::vector<rt::index_t> offset, first, output;
  std::vector<float> weight;  // 1 per n-gram when the model gives no weights

  rt::NgramPool view() const {
    return {tokens.data(), offset.data(), first.data(), static_cast<rt::index_t>(offset.size() - 1), output.data(),
            weight.data()};
  }
};

// One n-gram of the attributes: its tokens, output position and weight.
struct Ngram {
  std::vector<int64_t> tokens;
  int64_t output;
  float weight;
};

// The n-grams of each length 1, 2, ..., in attribute order; validates the pool attributes.
std::vector<std::vector<Ngram>> ngrams_by_length(const Node& n) {
  if (n.has_attr("pool_strings"))
    fail_unsupported(n, "a pool of strings (pool_strings) needs string tensors, which generated code does not have",
                     "map the tokens to integer ids and give the pool as pool_int64s");
  if (!n.has_attr("pool_int64s")) fail_invalid(n, "has neither pool_int64s nor pool_strings");
  const std::vector<int64_t> pool = n.attr_ints("pool_int64s");
  const std::vector<int64_t> starts = n.attr_ints("ngram_counts");
  std::vector<std::vector<Ngram>> by_length;
  std::size_t count = 0;
  for (std::size_t level = 0; level < starts.size(); ++level) {
    const int64_t length = static_cast<int64_t>(level) + 1;
    const int64_t begin = starts[level];
    const int64_t end = level + 1 < starts.size() ? starts[level + 1] : static_cast<int64_t>(pool.size());
    if (begin < 0 || begin > end || end > static_cast<int64_t>(pool.size()) || (end - begin) % length != 0)
      fail_invalid(n, fmt::format("ngram_counts {} does not split pool_int64s ({} tokens) into whole {}-grams",
                                  shape_str(starts), pool.size(), length));
    if (level == 0 && begin != 0) fail_invalid(n, "ngram_counts must start at 0, where the 1-grams begin");
    by_length.emplace_back();
    for (int64_t at = begin; at < end; at += length, ++count)
      by_length.back().push_back(Ngram{{pool.begin() + at, pool.begin() + at + length}, 0, 1.0f});
  }
  const std::vector<int64_t> indexes = n.attr_ints("ngram_indexes");
  const std::vector<float> weights = n.attr_floats("weights");
  if (indexes.size() != count)
    fail_invalid(n, fmt::format("ngram_indexes has {} entries but the pool has {} n-grams", indexes.size(), count));
  if (!weights.empty() && weights.size() != count)
    fail_invalid(n, fmt::format("weights has {} entries but the pool has {} n-grams", weights.size(), count));
  std::size_t j = 0;  // n-gram number, in attribute order
  for (std::vector<Ngram>& grams : by_length)
    for (Ngram& g : grams) {
      if (indexes[j] < 0) fail_invalid(n, fmt::format("ngram_indexes[{}] = {} is negative", j, indexes[j]));
      g.output = indexes[j];
      if (!weights.empty()) g.weight = weights[j];
      ++j;
    }
  return by_length;
}

Pool build_pool(const Node& n) {
  std::vector<std::vector<Ngram>> by_length = ngrams_by_length(n);
  Pool p;
  p.offset.push_back(0);
  p.first.push_back(0);
  std::vector<bool> output_taken;
  for (std::vector<Ngram>& grams : by_length) {
    std::sort(grams.begin(), grams.end(), [](const Ngram& a, const Ngram& b) { return a.tokens < b.tokens; });
    for (std::size_t i = 0; i < grams.size(); ++i) {
      if (i > 0 && grams[i].tokens == grams[i - 1].tokens)
        fail_invalid(n, fmt::format("the pool lists the n-gram {} twice", shape_str(grams[i].tokens)));
      const auto out = static_cast<std::size_t>(grams[i].output);
      if (out >= output_taken.size()) output_taken.resize(out + 1);
      if (output_taken[out])
        fail_unsupported(n, fmt::format("two n-grams share output position {} (ngram_indexes)", out),
                         "give every n-gram its own position");
      output_taken[out] = true;
      p.tokens.insert(p.tokens.end(), grams[i].tokens.begin(), grams[i].tokens.end());
      p.output.push_back(static_cast<rt::index_t>(out));
      p.weight.push_back(grams[i].weight);
    }
    p.offset.push_back(static_cast<rt::index_t>(p.tokens.size()));
    p.first.push_back(static_cast<rt::index_t>(p.output.size()));
  }
  return p;
}

int64_t output_columns(const Node& n) {
  const std::vector<int64_t> indexes = n.attr_ints("ngram_indexes");
  return indexes.empty() ? 0 : *std::max_element(indexes.begin(), indexes.end()) + 1;
}

rt::TfIdfParams tfidf_params(const Node& n) {
  const Shape& x = n.inputs[0]->shape;
  rt::TfIdfParams p{};
  p.rows = x.size() == 2 ? x[0] : 1;
  p.row_length = x.back();
  p.columns = output_columns(n);
  p.min_length = n.attr_int("min_gram_length", 0);
  p.max_length = n.attr_int("max_gram_length", 0);
  p.max_skip = n.attr_int("max_skip_count", 0);
  p.mode = tfidf_mode(n);
  return p;
}

void infer_tfidf(Node& n) {
  check_arity(n, 1, 1, 1, 1);
  const Value& x = input(n, 0);
  if (x.dtype == DType::String)
    fail_unsupported(n, "string tokens need string tensors, which generated code does not have",
                     "map the tokens to integer ids (int32 or int64) and give the pool as pool_int64s");
  require_input_dtype(n, 0, {DType::Int32, DType::Int64});
  if (x.shape.size() != 1 && x.shape.size() != 2)
    fail_invalid(n, fmt::format("the input {} must be [C] or [N, C]", shape_str(x.shape)));
  const rt::TfIdfParams p = tfidf_params(n);
  if (p.min_length < 1 || p.max_length < p.min_length)
    fail_invalid(n, fmt::format("min_gram_length {} and max_gram_length {} must satisfy 1 <= min <= max",
                                p.min_length, p.max_length));
  if (p.max_skip < 0) fail_invalid(n, fmt::format("max_skip_count {} is negative", p.max_skip));
  build_pool(n);  // validates the pool
  Shape y = x.shape;
  y.back() = p.columns;
  set_output(n, 0, DType::Float, y);
}

// `static constexpr`: a pool can be large, and a static array is not rebuilt on every call.
std::string static_array(Emitter& e, const std::string& ctype, const std::string& name,
                         const std::vector<std::string>& values) {
  e.linef("static constexpr {} {}[] = {{{}}};", ctype, name, values.empty() ? "0" : fmt::format("{}", fmt::join(values, ", ")));
  return name;
}

template <class T> std::vector<std::string> int_literals(const std::vector<T>& v) {
  std::vector<std::string> s;
  for (T x : v) s.push_back(std::to_string(x));
  return s;
}

void emit_tfidf(const Node& n, Emitter& e) {
  e.include("onnxc/tfidf.h");
  const Pool pool = build_pool(n);
  const rt::TfIdfParams p = tfidf_params(n);
  std::vector<std::string> weights;
  if (p.mode != rt::TfIdfMode::tf)
    for (float w : pool.weight) weights.push_back(float_literal(w));
  const std::string pool_literal = params_literal(
      "rt::NgramPool",
      {{"tokens", static_array(e, "std::int64_t", "pool_tokens", int_literals(pool.tokens))},
       {"offset", e.index_array("pool_offset", {pool.offset.begin(), pool.offset.end()})},
       {"first", e.index_array("pool_first", {pool.first.begin(), pool.first.end()})},
       {"lengths", std::to_string(pool.offset.size() - 1)},
       {"output", static_array(e, "rt::index_t", "pool_output", int_literals(pool.output))},
       {"weight", weights.empty() ? "nullptr" : static_array(e, "float", "pool_weight", weights)}});
  const std::string params = params_literal("rt::TfIdfParams", {{"rows", std::to_string(p.rows)},
                                                                {"row_length", std::to_string(p.row_length)},
                                                                {"columns", std::to_string(p.columns)},
                                                                {"min_length", std::to_string(p.min_length)},
                                                                {"max_length", std::to_string(p.max_length)},
                                                                {"max_skip", std::to_string(p.max_skip)},
                                                                {"mode", tfidf_mode_cname(p.mode)}});
  e.linef("rt::tfidf_vectorize({}, {}, {}, {});", params, pool_literal, e.in(0), e.out(0));
}

void fold_tfidf(const Node& n, std::vector<Tensor>& outs) {
  Tensor& y = fold_output(n, outs);
  const Pool pool = build_pool(n);
  dispatch_in(n, n.inputs[0]->dtype, TypeList<int32_t, int64_t>{}, [&](auto tag) {
    using T = typename decltype(tag)::type;
    rt::tfidf_vectorize(tfidf_params(n), pool.view(), n.inputs[0]->constant->data<T>(), y.data<float>());
  });
}

const OpRegistrar tfidf_op([] {
  OpDef d;
  d.op_type = "TfIdfVectorizer";
  d.versions = {9};
  d.infer = infer_tfidf;
  d.emit = emit_tfidf;
  d.fold = fold_tfidf;
  return d;
}());

}  // namespace
}  // namespace onnxc
