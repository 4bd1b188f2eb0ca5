// The interface operator emitters write code through. The back end owns the instance: it
// knows where every tensor lives; operators only ask for names and append statements.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ir/ir.h"
#include "ops/op.h"

namespace onnxc {

// A float as a C++ literal that reads back to the same bits ("0.1f", "-inf" as a
// numeric_limits expression).
std::string float_literal(float v);
std::string double_literal(double v);
// Text as a C++ string literal ("a\"b"), bytes outside printable ASCII as octal escapes. The
// text must hold no NUL byte (a C string ends there).
std::string string_literal(const std::string& text);

class Emitter {
 public:
  // name_of maps a value to the C++ expression of its buffer pointer (typed).
  Emitter(const Node& node, std::function<std::string(const Value*)> name_of, std::string scratch);

  // Pointer expressions for input/output i ("nullptr" for an omitted optional one).
  std::string in(std::size_t i) const;
  std::string out(std::size_t i) const;
  // Input i, or a typed null pointer (`static_cast<const T*>(nullptr)`) when it is omitted.
  std::string in_or_null(std::size_t i, DType t) const;
  // Bounded output i (Value::dynamic_axis): an lvalue of type std::int64_t where the code must
  // store the output's run-time extent along its dynamic axis, or "" when nothing reads it (the
  // output is not an output of the model).
  std::string out_extent(std::size_t i) const;
  // Appends the statement `call;`, a kernel call that returns the run-time extent of the bounded
  // outputs listed, storing the result as their out_extent where the caller reads one.
  void bounded_call(const std::string& call, const std::vector<std::size_t>& outputs);
  // The back end names where a bounded value's extent goes ("" when nowhere).
  void set_extent_namer(std::function<std::string(const Value*)> f) { extent_of_ = std::move(f); }
  // Pointer to this node's scratch memory (unsigned char*), when the op asked for some.
  const std::string& scratch() const { return scratch_; }
  // What a kernel that splits its work into tasks (onnxc/parallel.h) gets for this step of
  // `work` multiply-accumulates (or comparable operations): `parallel`, the caller's
  // parallel-for (an rt::Parallel in scope in every block, null when run() was called without
  // one), or `nullptr` when the step does not gain from threads (splits_into_tasks), so it runs
  // on the calling thread even through run_parallel.
  std::string parallel(int64_t work) const { return splits_into_tasks(node_, work) ? "parallel" : "nullptr"; }
  // For a kernel that runs over `items` independent pieces of equal cost (rows, planes, runs of
  // elements) and `work` operations in all: how many tasks it is cut into (range_tasks; 1 when
  // the step does not split).
  int64_t tasks(int64_t work, int64_t items) const { return range_tasks(node_, work, items); }
  // With `tasks` > 1, the statements appended until close_ranges() run once per task of
  // rt::parallel_ranges over [0, items) (range boundaries at multiples of `align`), inside a
  // lambda where `r_` is the task's rt::Range; with one task they are appended as they are.
  void open_ranges(int64_t items, int64_t tasks, int64_t align = 1);
  void close_ranges();
  // Whether statements are being appended inside open_ranges' lambda.
  bool in_ranges() const { return ranges_open_; }

  // Appends one statement (indentation is added).
  void line(const std::string& code);
  template <class... Args> void linef(fmt::format_string<Args...> f, Args&&... args) {
    line(fmt::format(f, std::forward<Args>(args)...));
  }
  // Declares `constexpr rt::index_t name[] = {...};` and returns name (empty arrays get {0}).
  std::string index_array(const std::string& name, const std::vector<int64_t>& v);
  // Asks for a runtime-support header, e.g. "onnxc/conv.h".
  void include(const std::string& header) { headers_.insert(header); }

  // Control flow: the statements of the node's k-th subgraph (see Node::subgraphs), with its
  // inputs and outputs bound to the given pointer expressions. Append them with lines().
  using SubgraphRenderer = std::function<std::vector<std::string>(std::size_t, const std::vector<std::string>&,
                                                                  const std::vector<std::string>&)>;
  void set_subgraph_renderer(SubgraphRenderer r) { render_subgraph_ = std::move(r); }
  std::vector<std::string> subgraph(std::size_t k, const std::vector<std::string>& inputs,
                                    const std::vector<std::string>& outputs) const {
    return render_subgraph_(k, inputs, outputs);
  }
  // Appends lines with extra indentation (e.g. a subgraph inside a loop body).
  void lines_indented(const std::vector<std::string>& ls, int levels = 1) {
    std::string pad(static_cast<std::size_t>(2 * levels), ' ');
    for (const auto& l : ls) lines_.push_back(l.empty() ? l : pad + l);
  }

  const std::vector<std::string>& lines() const { return lines_; }
  const std::set<std::string>& headers() const { return headers_; }
  const Node& node() const { return node_; }

 private:
  const Node& node_;
  std::function<std::string(const Value*)> name_of_;
  std::string scratch_;
  std::vector<std::string> lines_;
  bool ranges_open_ = false;
  std::set<std::string> headers_;
  SubgraphRenderer render_subgraph_;
  std::function<std::string(const Value*)> extent_of_;
};

// A pointer expression moved `offset` elements on: `ptr + offset`, in parentheses when needed.
std::string moved(const std::string& ptr, const std::string& offset);
// Inside open_ranges' lambda: the element offset of the task's first item, `stride` elements
// per item ("r_.begin * stride").
std::string range_offset(int64_t stride);

// C++ element type of input/output values, e.g. "float".
std::string ctype_of(const Value& v);
// Renders `rt::TypeName{/*field*/value, ...}` for a params struct, one field per pair.
std::string params_literal(const std::string& type, const std::vector<std::pair<std::string, std::string>>& fields);

}  // namespace onnxc
