// The feature operators of ai.onnx.ml (issue #24), lowered into ai.onnx nodes: Imputer (a
// replaced value, or NaN, to a value per feature: Equal or IsNaN, Where), ArrayFeatureExtractor
// (Gather along the last axis with constant indices), OneHotEncoder (Equal with the categories,
// Cast to float) and LabelEncoder versions 2 and 4 with int64 or float keys and values, as lists
// or tensors (Equal with the keys, the first match's value by ArgMax and Gather, the default where
// none matches; between strings and int64 a CategoryMapper), FeatureVectorizer (Cast, Slice or
// Pad, Concat).
//
// Not built (refused with a message): string mappings other than between strings and int64, string
// categories and inputs of the others; indices of
// ArrayFeatureExtractor computed at run time; OneHotEncoder zeros=0 (an unknown category is a run
// time error in ONNX Runtime); NaN keys of LabelEncoder; LabelEncoder version 1.
#include <cmath>

#include "ops/ml_lowering.h"

namespace onnxc {
namespace {

using namespace ml;

Value* one_input(const Node& n) {
  if (n.inputs.empty() || !n.has_input(0)) fail_invalid(n, "needs an input X");
  return n.inputs[0];
}

Value* typed_scalar(Lowering& l, const char* hint, DType t, double v) {
  Tensor s(t, {});
  if (t == DType::Float)
    s.data<float>()[0] = static_cast<float>(v);
  else
    s.data<int64_t>()[0] = static_cast<int64_t>(v);
  Value* c = l.value(hint);
  set_constant_output(*c, std::move(s));
  return c;
}

// x == each of `keys` along a new last axis: [..., K] bool.
Value* matches(Lowering& l, Value* x, Value* keys) {
  Value* xe = l.unsqueeze(x, static_cast<int64_t>(x->shape.size()));
  return binary(l, "Equal", xe, keys, "matches");
}

Nodes lower_imputer(Node& n, Graph& g) {
  Lowering l(n, g, kLoweredOpset);
  Value* x = one_input(n);
  if (x->shape.empty() || x->shape.size() > 2)
    fail_unsupported(n, fmt::format("X has shape {}; onnxc takes [C] or [N, C] features", shape_str(x->shape)));
  const int64_t c = x->shape.back();
  Value* replaced = nullptr;
  Value* imputed = nullptr;
  if (x->dtype == DType::Float) {
    std::vector<float> v = n.attr_floats("imputed_value_floats");
    if (v.size() != 1 && static_cast<int64_t>(v.size()) != c)
      fail_invalid(n, fmt::format("imputed_value_floats has {} values for {} features (give 1 or {})", v.size(), c, c));
    imputed = l.float_constant("imputed", {static_cast<int64_t>(v.size())}, v);
    const float r = n.attr_float("replaced_value_float", 0.0f);
    replaced = std::isnan(r) ? unary(l, "IsNaN", x, "missing")
                             : binary(l, "Equal", x, l.float_constant("replaced", {}, {r}), "missing");
  } else if (x->dtype == DType::Int64) {
    std::vector<int64_t> v = n.attr_ints("imputed_value_int64s");
    if (v.size() != 1 && static_cast<int64_t>(v.size()) != c)
      fail_invalid(n, fmt::format("imputed_value_int64s has {} values for {} features (give 1 or {})", v.size(), c, c));
    imputed = l.int64_constant("imputed", {static_cast<int64_t>(v.size())}, v);
    Value* r = l.int64_constant("replaced", {}, {n.attr_int("replaced_value_int64", 0)});
    replaced = binary(l, "Equal", x, r, "missing");
  } else {
    fail_unsupported(n, fmt::format("X is {}; onnxc imputes float and int64", dtype_name(x->dtype)), "cast X to float");
  }
  l.add("Where", {replaced, imputed, x}, {n.outputs[0]});
  return l.take();
}

Nodes lower_array_feature_extractor(Node& n, Graph& g) {
  Lowering l(n, g, kLoweredOpset);
  Value* x = one_input(n);
  if (!n.has_input(1)) fail_invalid(n, "needs the indices Y");
  const Value* y = n.inputs[1];
  if (!y->is_constant())
    fail_unsupported(n, "indices Y computed at run time are not supported", "give Y as an initializer");
  if (x->shape.empty()) fail_invalid(n, "X is a scalar");
  if (x->dtype == DType::String) fail_unsupported(n, "string X is not supported", "extract from a numeric tensor");
  const int64_t c = x->shape.back();
  std::vector<int64_t> indices;
  for (int64_t i = 0; i < y->constant->numel(); ++i) {
    const int64_t k = y->constant->int_at(i);
    if (k < 0 || k >= c) fail_invalid(n, fmt::format("index {} is outside the {} features", k, c));
    indices.push_back(k);
  }
  // A [C] input gives [1, K], as ONNX Runtime does.
  Value* rows = x->shape.size() == 1 ? l.unsqueeze(x, 0) : x;
  Value* table = l.int64_constant("indices", {static_cast<int64_t>(indices.size())}, indices);
  l.add("Gather", {rows, table}, {n.outputs[0]}).set_attr_int("axis", -1);
  return l.take();
}

Nodes lower_one_hot_encoder(Node& n, Graph& g) {
  Lowering l(n, g, kLoweredOpset);
  Value* x = one_input(n);
  if (n.has_attr("cats_strings")) fail_unsupported(n, "string categories are not supported", "use cats_int64s");
  if (n.attr_int("zeros", 1) == 0)
    fail_unsupported(n, "zeros=0 (an unknown category is an error) is not supported", "use zeros=1");
  const std::vector<int64_t> cats = n.attr_ints("cats_int64s");
  if (cats.empty()) fail_invalid(n, "needs cats_int64s");
  if (x->dtype == DType::Int32) {
    Value* wide = l.value("x_int64");
    l.add("Cast", {x}, {wide}).set_attr_int("to", static_cast<int64_t>(DType::Int64));
    x = wide;
  } else if (x->dtype != DType::Int64) {
    fail_unsupported(n, fmt::format("X is {}; onnxc encodes int64 and int32", dtype_name(x->dtype)), "cast X to int64");
  }
  Value* hot = matches(l, x, l.int64_constant("categories", {static_cast<int64_t>(cats.size())}, cats));
  l.add("Cast", {hot}, {n.outputs[0]}).set_attr_int("to", static_cast<int64_t>(DType::Float));
  return l.take();
}

// LabelEncoder's keys or values: `<what>_int64s`, `<what>_floats` or (version 4) `<what>_tensor`.
struct Column {
  DType type = DType::Undefined;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  int64_t size() const { return static_cast<int64_t>(type == DType::Int64 ? ints.size() : floats.size()); }
};

Column column(const Node& n, const std::string& what) {
  Column c;
  if (n.has_attr(what + "_strings")) {
    fail_unsupported(n, fmt::format("string {} are not supported", what), "map strings to int64 before the model");
  } else if (const Attribute* t = n.attr(what + "_tensor"); t && t->t) {
    c.type = t->t->dtype;
    if (c.type != DType::Int64 && c.type != DType::Float)
      fail_unsupported(n, fmt::format("{}_tensor of {} is not supported", what, dtype_name(c.type)), "use int64 or float");
    for (int64_t i = 0; i < t->t->numel(); ++i) {
      if (c.type == DType::Int64)
        c.ints.push_back(t->t->int_at(i));
      else
        c.floats.push_back(static_cast<float>(t->t->float_at(i)));
    }
  } else if (n.has_attr(what + "_int64s")) {
    c.type = DType::Int64;
    c.ints = n.attr_ints(what + "_int64s");
  } else if (n.has_attr(what + "_floats")) {
    c.type = DType::Float;
    c.floats = n.attr_floats(what + "_floats");
  } else {
    fail_invalid(n, fmt::format("needs {0}_int64s, {0}_floats or {0}_tensor", what));
  }
  return c;
}

Value* column_constant(Lowering& l, const Column& c, const char* hint) {
  if (c.type == DType::Int64) return l.int64_constant(hint, {c.size()}, c.ints);
  return l.float_constant(hint, {c.size()}, c.floats);
}

// Keys to values by Equal with the keys, the first match's value (ArgMax, Gather), the default
// where none matches. Versions 2 and 4 (tensor attributes) with int64 or float keys and values.
// A LabelEncoder between strings and int64 (lists of keys and values) is a CategoryMapper
// (ml_category_mapper.cpp); other string mappings are refused.
Nodes string_label_encoder(Lowering& l, Node& n) {
  const bool from_strings = n.has_attr("keys_strings") && n.has_attr("values_int64s"),
             to_strings = n.has_attr("keys_int64s") && n.has_attr("values_strings");
  if (!from_strings && !to_strings)
    fail_unsupported(n, "string keys or values are supported from strings to int64 and from int64 to strings only",
                     "give keys_strings with values_int64s, or keys_int64s with values_strings");
  const std::vector<std::string> strings = n.attr_strings(from_strings ? "keys_strings" : "values_strings");
  const std::vector<int64_t> ints = n.attr_ints(from_strings ? "values_int64s" : "keys_int64s");
  if (strings.empty() || strings.size() != ints.size())
    fail_invalid(n, fmt::format("{} keys and {} values", from_strings ? strings.size() : ints.size(),
                                from_strings ? ints.size() : strings.size()));
  Node& map = l.add("CategoryMapper", {n.inputs[0]}, {n.outputs[0]});
  map.domain = kMl;
  map.version = 1;
  map.opset = 1;
  map.set_attr_strings("cats_strings", strings);
  map.set_attr_ints("cats_int64s", ints);
  if (from_strings)
    map.set_attr_int("default_int64", n.attr_int("default_int64", -1));
  else
    map.set_attr_string("default_string", n.attr_string("default_string", "_Unused"));
  return l.take();
}

Nodes lower_label_encoder(Node& n, Graph& g) {
  Lowering l(n, g, kLoweredOpset);
  Value* x = one_input(n);
  if (n.version < 2)
    fail_unsupported(n, "LabelEncoder version 1 (string classes) is not supported",
                     "use version 2 or 4 with int64 or float keys and values");
  if (n.has_attr("keys_strings") || n.has_attr("values_strings")) return string_label_encoder(l, n);
  const Column keys = column(n, "keys");
  const Column values = column(n, "values");
  for (float v : keys.floats)
    if (std::isnan(v)) fail_unsupported(n, "a NaN key is not supported", "map NaN with an Imputer first");
  if (x->dtype != keys.type)
    fail_invalid(n, fmt::format("{} keys with X {}", dtype_name(keys.type), dtype_name(x->dtype)));
  if (keys.size() == 0 || keys.size() != values.size())
    fail_invalid(n, fmt::format("{} keys and {} values", keys.size(), values.size()));
  double fallback = values.type == DType::Int64 ? static_cast<double>(n.attr_int("default_int64", -1))
                                                : static_cast<double>(n.attr_float("default_float", -0.0f));
  if (const Attribute* t = n.attr("default_tensor"); t && t->t) {
    if (t->t->dtype != values.type || t->t->numel() != 1)
      fail_invalid(n, "default_tensor is not one value of the values' type");
    fallback = values.type == DType::Int64 ? static_cast<double>(t->t->int_at(0)) : t->t->float_at(0);
  }
  Value* hit = l.value("hit");
  l.add("Cast", {matches(l, x, column_constant(l, keys, "keys"))}, {hit})
      .set_attr_int("to", static_cast<int64_t>(DType::Float));
  const int64_t last = static_cast<int64_t>(x->shape.size());
  Value* first = l.value("first");
  Node& am = l.add("ArgMax", {hit}, {first});
  am.set_attr_int("axis", last);
  am.set_attr_int("keepdims", 0);
  Value* any = l.value("any");
  Node& rm = l.add("ReduceMax", {hit}, {any});
  rm.set_attr_ints("axes", {last});
  rm.set_attr_int("keepdims", 0);
  Value* found = binary(l, "Greater", any, l.float_constant("half", {}, {0.5f}), "found");
  Value* mapped = l.value("mapped");
  l.add("Gather", {column_constant(l, values, "values"), first}, {mapped}).set_attr_int("axis", 0);
  l.add("Where", {found, mapped, typed_scalar(l, "default", values.type, fallback)}, {n.outputs[0]});
  return l.take();
}

// FeatureVectorizer: each input as float rows ([C] is one row), cut or zero-padded to its
// inputdimensions entry, the inputs side by side: [N, sum of inputdimensions].
Nodes lower_feature_vectorizer(Node& n, Graph& g) {
  Lowering l(n, g, kLoweredOpset);
  const std::vector<int64_t> dims = n.attr_ints("inputdimensions");
  if (n.inputs.empty() || dims.size() != n.inputs.size())
    fail_invalid(n, fmt::format("has {} inputs and {} inputdimensions", n.inputs.size(), dims.size()));
  std::vector<Value*> parts;
  for (std::size_t i = 0; i < n.inputs.size(); ++i) {
    Value* x = n.inputs[i];
    if (!x) fail_invalid(n, fmt::format("input {} is missing", i));
    const DType t = x->dtype;
    if (t != DType::Float && t != DType::Double && t != DType::Int64 && t != DType::Int32)
      fail_unsupported(n, fmt::format("input {} is {}; FeatureVectorizer takes int32, int64, float or double", i, dtype_name(t)));
    if (x->shape.empty() || x->shape.size() > 2)
      fail_unsupported(n, fmt::format("input {} has shape {}; onnxc takes [C] or [N, C]", i, shape_str(x->shape)));
    if (dims[i] < 1) fail_invalid(n, fmt::format("inputdimensions[{}] is {}", i, dims[i]));
    if (t != DType::Float) {
      Value* f = l.value("as_float");
      l.add("Cast", {x}, {f}).set_attr_int("to", 1);
      x = f;
    }
    if (n.inputs[i]->shape.size() == 1) x = l.unsqueeze(x, 0);
    const int64_t have = n.inputs[i]->shape.back();
    if (have > dims[i]) {
      Value* cut = l.value("cut");
      l.add("Slice", {x, l.int64_constant("start", {1}, {0}), l.int64_constant("end", {1}, {dims[i]}),
                      l.int64_constant("axis", {1}, {1})}, {cut});
      x = cut;
    } else if (have < dims[i]) {
      Value* padded = l.value("padded");
      l.add("Pad", {x, l.int64_constant("pads", {4}, {0, 0, 0, dims[i] - have})}, {padded});
      x = padded;
    }
    parts.push_back(x);
  }
  l.add("Concat", parts, {n.outputs[0]}).set_attr_int("axis", 1);
  return l.take();
}

const OpRegistrar imputer(ml_op("Imputer", {1}, lower_imputer));
const OpRegistrar array_feature_extractor(ml_op("ArrayFeatureExtractor", {1}, lower_array_feature_extractor));
const OpRegistrar one_hot_encoder(ml_op("OneHotEncoder", {1}, lower_one_hot_encoder));
const OpRegistrar label_encoder(ml_op("LabelEncoder", {1, 2, 4}, lower_label_encoder));
const OpRegistrar feature_vectorizer(ml_op("FeatureVectorizer", {1}, lower_feature_vectorizer));

}  // namespace
}  // namespace onnxc
