// CategoryMapper (ai.onnx.ml 1; issue #24): int64 to string or string to int64 through the pairs
// (cats_int64s[k], cats_strings[k]), default_string / default_int64 where no key matches (the
// first match where keys repeat). Kernels rt::map_int64_to_string / rt::map_string_to_int64
// (onnxc/strings.h): a string output points to the compiled-in strings, so it needs no text
// storage.
#include <limits>

#include "onnxc/strings.h"
#include "ops/emitter.h"
#include "ops/ml_lowering.h"

namespace onnxc {
namespace {

void infer_category_mapper(Node& n) {
  check_arity(n, 1, 1, 1, 1);
  require_dtype(n, 0, {DType::Int64, DType::String});
  const std::vector<int64_t> ints = n.attr_ints("cats_int64s");
  const std::vector<std::string> strings = n.attr_strings("cats_strings");
  if (ints.size() != strings.size())
    fail_invalid(n, fmt::format("cats_int64s has {} values and cats_strings {}", ints.size(), strings.size()));
  for (const std::string& s : strings)
    if (s.find('\0') != std::string::npos) fail_unsupported(n, "a category string holds a NUL character");
  set_output(n, 0, n.inputs[0]->dtype == DType::Int64 ? DType::String : DType::Int64, n.inputs[0]->shape);
}

// An int64 as C++ source (the lowest one has no literal of its own).
std::string int64_literal(int64_t v) {
  return v == std::numeric_limits<int64_t>::min() ? "(-9223372036854775807 - 1)" : fmt::format("{}", v);
}

void emit_category_mapper(const Node& n, Emitter& e) {
  e.include("onnxc/strings.h");
  const std::vector<int64_t> ints = n.attr_ints("cats_int64s");
  const std::vector<std::string> strings = n.attr_strings("cats_strings");
  std::vector<std::string> literals;
  for (const std::string& s : strings) literals.push_back(string_literal(s));
  // Empty category lists: one placeholder entry, never read (count 0).
  std::vector<std::string> int_literals;
  for (int64_t v : ints) int_literals.push_back(int64_literal(v));
  e.linef("constexpr int64_t int_keys[] = {{{}}};", ints.empty() ? "0" : fmt::format("{}", fmt::join(int_literals, ", ")));
  e.linef("constexpr rt::cstring string_keys[] = {{{}}};", literals.empty() ? "\"\"" : fmt::format("{}", fmt::join(literals, ", ")));
  if (n.inputs[0]->dtype == DType::Int64)
    e.linef("rt::map_int64_to_string({}, {}, int_keys, string_keys, {}, {}, {});", e.in(0), n.inputs[0]->numel(),
            ints.size(), string_literal(n.attr_string("default_string", "_Unused")), e.out(0));
  else
    e.linef("rt::map_string_to_int64({}, {}, string_keys, int_keys, {}, {}, {});", e.in(0), n.inputs[0]->numel(),
            ints.size(), int64_literal(n.attr_int("default_int64", -1)), e.out(0));
}

const OpRegistrar category_mapper([] {
  OpDef d;
  d.domain = ml::kMl;
  d.op_type = "CategoryMapper";
  d.versions = {1};
  d.infer = infer_category_mapper;
  d.emit = emit_category_mapper;
  return d;
}());

}  // namespace
}  // namespace onnxc
