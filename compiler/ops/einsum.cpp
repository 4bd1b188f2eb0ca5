// Einsum: the equation is parsed at compile time into labels (one per distinct index letter,
// one per dim an ellipsis stands for) with each operand's stride per label; the kernel then
// walks the output labels and, for every output element, sums the product of the operands
// over the remaining labels. Repeated letters in a term (diagonals) add their strides;
// ellipsis dims broadcast numpy-style (aligned right, extent-1 dims read with stride 0).
#include <algorithm>
#include <map>

#include "onnxc/linalg.h"
#include "ops/elementwise.h"
#include "ops/emitter.h"

namespace onnxc {
namespace {

// One term of the equation: its letters, and where its ellipsis sits (-1: none).
struct Term {
  std::string letters;
  int ellipsis_at = -1;  // number of letters before the ellipsis
};

struct Equation {
  std::vector<Term> inputs;
  bool explicit_output = false;
  Term output;
};

Term parse_term(const Node& n, const std::string& text) {
  Term t;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '.') {
      if (text.compare(i, 3, "...") != 0 || t.ellipsis_at >= 0)
        fail_invalid(n, fmt::format("term '{}' has a stray '.' or more than one ellipsis", text));
      t.ellipsis_at = static_cast<int>(t.letters.size());
      i += 2;
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      t.letters += c;
    } else {
      fail_invalid(n, fmt::format("term '{}' has the character '{}'; only letters and '...' are allowed", text, c));
    }
  }
  return t;
}

Equation parse_equation(const Node& n) {
  if (!n.has_attr("equation")) fail_invalid(n, "required attribute 'equation' is missing");
  std::string eq;
  for (char c : n.attr_string("equation", "")) if (c != ' ') eq += c;
  Equation e;
  std::size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  if (arrow != std::string::npos) {
    e.explicit_output = true;
    e.output = parse_term(n, eq.substr(arrow + 2));
  }
  std::size_t start = 0;
  for (;;) {
    std::size_t comma = lhs.find(',', start);
    e.inputs.push_back(parse_term(n, lhs.substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (e.inputs.size() != n.inputs.size())
    fail_invalid(n, fmt::format("the equation '{}' has {} input terms for {} inputs", eq, e.inputs.size(), n.inputs.size()));
  return e;
}

// The equation resolved against the input shapes.
struct Contraction {
  Shape out_shape;
  std::vector<int64_t> out_dims, sum_dims;
  std::vector<std::vector<int64_t>> out_strides, sum_strides;  // [label][operand]
};

// A label: a letter as its character code, or ellipsis dim j (counted over the broadcast
// ellipsis, left to right) as kEllipsisLabel + j.
using Label = int;
constexpr Label kEllipsisLabel = 256;

Contraction resolve(const Node& n) {
  Equation eq = parse_equation(n);
  std::size_t operands = n.inputs.size();
  // How many dims each operand's ellipsis covers, and their common (broadcast) count.
  std::vector<int64_t> ellipsis_rank(operands);
  int64_t ellipsis_dims = 0;
  for (std::size_t i = 0; i < operands; ++i) {
    const Term& t = eq.inputs[i];
    int64_t rank = static_cast<int64_t>(input(n, i).shape.size()), letters = static_cast<int64_t>(t.letters.size());
    if (t.ellipsis_at < 0 ? rank != letters : rank < letters)
      fail_invalid(n, fmt::format("input {} has rank {} but its term names {} dims", i, rank, letters));
    ellipsis_rank[i] = t.ellipsis_at < 0 ? 0 : rank - letters;
    ellipsis_dims = std::max(ellipsis_dims, ellipsis_rank[i]);
  }
  // Each label's extent and each operand's stride for it.
  std::map<Label, int64_t> extent;
  std::map<Label, std::vector<int64_t>> strides;
  std::map<char, int> occurrences;
  for (std::size_t i = 0; i < operands; ++i) {
    const Term& t = eq.inputs[i];
    const Shape& s = n.inputs[i]->shape;
    std::vector<int64_t> st = contiguous_strides(s);
    auto add = [&](Label l, std::size_t dim, bool broadcastable) {
      auto [it, fresh] = extent.emplace(l, s[dim]);
      if (!fresh && it->second != s[dim]) {
        if (broadcastable && (it->second == 1 || s[dim] == 1)) it->second = std::max(it->second, s[dim]);
        else fail_invalid(n, fmt::format("the index '{}' has extent {} in one place and {} in another",
                                         l < kEllipsisLabel ? std::string(1, static_cast<char>(l)) : "...", it->second, s[dim]));
      }
      auto& v = strides[l];
      v.resize(operands, 0);
      if (s[dim] != 1) v[i] += st[dim];  // extent 1 broadcasts: stride 0
    };
    std::size_t dim = 0;
    for (std::size_t k = 0; k <= t.letters.size(); ++k) {
      if (static_cast<int>(k) == t.ellipsis_at)
        for (int64_t j = 0; j < ellipsis_rank[i]; ++j) add(kEllipsisLabel + static_cast<Label>(ellipsis_dims - ellipsis_rank[i] + j), dim++, true);
      if (k == t.letters.size()) break;
      add(t.letters[k], dim++, false);
      occurrences[t.letters[k]]++;
    }
  }
  // The output labels: as written, or the ellipsis dims then the letters used once, sorted.
  std::vector<Label> out;
  auto add_ellipsis = [&] {
    for (int64_t j = 0; j < ellipsis_dims; ++j) out.push_back(kEllipsisLabel + static_cast<Label>(j));
  };
  if (eq.explicit_output) {
    for (std::size_t k = 0; k <= eq.output.letters.size(); ++k) {
      if (static_cast<int>(k) == eq.output.ellipsis_at) add_ellipsis();
      if (k == eq.output.letters.size()) break;
      char c = eq.output.letters[k];
      if (!extent.count(c)) fail_invalid(n, fmt::format("the output index '{}' appears in no input", c));
      if (std::find(out.begin(), out.end(), c) != out.end()) fail_invalid(n, fmt::format("the output repeats index '{}'", c));
      out.push_back(c);
    }
  } else {
    add_ellipsis();
    for (auto& [c, count] : occurrences)
      if (count == 1) out.push_back(c);
  }
  Contraction r;
  for (Label l : out) {
    r.out_shape.push_back(extent[l]);
    r.out_dims.push_back(extent[l]);
    r.out_strides.push_back(strides[l]);
  }
  for (auto& [l, e] : extent)
    if (std::find(out.begin(), out.end(), l) == out.end()) {
      r.sum_dims.push_back(e);
      r.sum_strides.push_back(strides[l]);
    }
  if (operands > rt::kMaxEinsumOperands || r.out_dims.size() > rt::kMaxEinsumLabels ||
      r.sum_dims.size() > rt::kMaxEinsumLabels)
    fail_unsupported(n, fmt::format("Einsum with more than {} operands or {} indices", rt::kMaxEinsumOperands,
                                    rt::kMaxEinsumLabels));
  return r;
}

void infer_einsum(Node& n) {
  check_arity(n, 1, -1, 1, 1);
  require_dtype(n, 0, {DType::Uint8, DType::Uint16, DType::Uint32, DType::Uint64, DType::Int8, DType::Int16,
                       DType::Int32, DType::Int64, DType::Float16, DType::Float, DType::Double});
  for (std::size_t i = 1; i < n.inputs.size(); ++i) require_same_dtype(n, i, 0);
  set_output(n, 0, n.inputs[0]->dtype, resolve(n).out_shape);
}

rt::EinsumParams params_of(const Contraction& c, std::size_t operands) {
  rt::EinsumParams p{};
  p.operands = static_cast<int>(operands);
  p.out_rank = static_cast<int>(c.out_dims.size());
  p.sum_rank = static_cast<int>(c.sum_dims.size());
  for (std::size_t l = 0; l < c.out_dims.size(); ++l) {
    p.out_dims[l] = c.out_dims[l];
    for (std::size_t i = 0; i < operands; ++i) p.out_strides[l][i] = c.out_strides[l][i];
  }
  for (std::size_t l = 0; l < c.sum_dims.size(); ++l) {
    p.sum_dims[l] = c.sum_dims[l];
    for (std::size_t i = 0; i < operands; ++i) p.sum_strides[l][i] = c.sum_strides[l][i];
  }
  return p;
}

std::string params_literal_of(const rt::EinsumParams& p) {
  auto list = [](const rt::index_t* v, int n) { return fmt::format("{{{}}}", fmt::join(v, v + n, ", ")); };
  auto table = [&](const rt::index_t (*rows)[rt::kMaxEinsumOperands], int n) {
    std::vector<std::string> r;
    for (int l = 0; l < n; ++l) r.push_back(list(rows[l], p.operands));
    return fmt::format("{{{}}}", fmt::join(r, ", "));
  };
  return params_literal("rt::EinsumParams", {{"operands", fmt::format("{}", p.operands)},
                                             {"out_rank", fmt::format("{}", p.out_rank)},
                                             {"out_dims", list(p.out_dims, p.out_rank)},
                                             {"out_strides", table(p.out_strides, p.out_rank)},
                                             {"sum_rank", fmt::format("{}", p.sum_rank)},
                                             {"sum_dims", list(p.sum_dims, p.sum_rank)},
                                             {"sum_strides", table(p.sum_strides, p.sum_rank)}});
}

void emit_einsum(const Node& n, Emitter& e) {
  if (n.outputs[0]->numel() == 0) return;
  e.include("onnxc/linalg.h");
  std::vector<std::string> operands;
  for (std::size_t i = 0; i < n.inputs.size(); ++i) operands.push_back(e.in(i));
  e.linef("const {}* const operands[] = {{{}}};", dtype_ctype(n.inputs[0]->dtype), fmt::join(operands, ", "));
  e.linef("constexpr rt::EinsumParams p = {};", params_literal_of(params_of(resolve(n), n.inputs.size())));
  e.linef("rt::einsum(p, operands, {});", e.out(0));
}

void fold_einsum(const Node& n, std::vector<Tensor>& outs) {
  const Value& y = *n.outputs[0];
  outs.emplace_back(y.dtype, y.shape);
  if (y.numel() == 0) return;
  rt::EinsumParams p = params_of(resolve(n), n.inputs.size());
  dispatch_dtype(n, y.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<const T*> operands;
    for (const Value* v : n.inputs) operands.push_back(v->constant->data<T>());
    rt::einsum(p, operands.data(), outs[0].data<T>());
  });
}

const OpRegistrar einsum_op([] {
  OpDef d;
  d.op_type = "Einsum";
  d.versions = {12};
  d.infer = infer_einsum;
  d.emit = emit_einsum;
  d.fold = fold_einsum;
  return d;
}());

}  // namespace
}  // namespace onnxc
