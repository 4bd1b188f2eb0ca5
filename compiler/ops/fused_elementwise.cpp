// onnxc.FusedElementwise (see fused_elementwise.h): made by fuse-elementwise after inference and
// folding, so it only infers (to check its attributes) and emits.
#include "ops/fused_elementwise.h"

#include <set>

#include "ops/elementwise.h"

namespace onnxc {
namespace {

// The steps, one entry per step in each attribute; `args` holds every step's operands in turn,
// `arity` how many each step has.
constexpr const char* kOpsAttr = "ops";
constexpr const char* kFunctorsAttr = "functors";
constexpr const char* kDTypesAttr = "dtypes";
constexpr const char* kArityAttr = "arity";
constexpr const char* kArgsAttr = "args";

std::vector<std::string> strings_of(const Node& n, const char* name) {
  const Attribute* a = n.attr(name);
  return a ? a->strings : std::vector<std::string>{};
}

void infer_fused(Node& n) {
  const std::vector<FusedStep> steps = fused_steps(n);
  if (steps.empty()) fail_invalid(n, "no steps: the node is made by fuse-elementwise only");
  for (std::size_t k = 0; k < steps.size(); ++k)
    for (int64_t a : steps[k].args)
      if (a >= static_cast<int64_t>(n.inputs.size()) || (a < 0 && -1 - a >= static_cast<int64_t>(k)))
        fail_invalid(n, fmt::format("step {} ({}) reads operand {}, which is neither an input nor an earlier step", k,
                                    steps[k].op_type, a));
  for (std::size_t i = 0; i < n.inputs.size(); ++i) input(n, i);
  set_output(n, 0, steps.back().dtype, broadcast_inputs(n));
}

// Ops whose functor has a vector form for floats (`vec`, runtime-support's eltwise headers), and
// among them those whose scalar form calls a libm function (std::exp, std::tanh, std::erf,
// std::log), which keeps compilers from vectorising the loop.
const std::set<std::string> kVectorFormOps = {"Add", "Sub", "Mul", "Div", "Relu", "Neg", "Sqrt",
                                              "Sigmoid", "Tanh", "Exp", "Log", "Erf"};
const std::set<std::string> kLibmOps = {"Sigmoid", "Tanh", "Exp", "Log", "Erf"};

// Writes the loop nest of one node: the outer loops position a row pointer into every operand
// that moves along the inner loop and load the others (constant along it) once; the inner loop
// is a plain counted loop over contiguous elements, with the steps as straight-line code, which
// compilers vectorise. A float chain with a libm step (x * Sigmoid(x), say) first goes a vector
// at a time through the steps' vector forms on SIMD targets (the generated source defines
// ONNXC_SIMD there), the scalar loop taking the rest. Locals end in '_': the pointer expressions
// of tensors never do.
class FusedLoopWriter {
 public:
  FusedLoopWriter(const Node& n, Emitter& e) : n_(n), e_(e), steps_(fused_steps(n)) {
    std::vector<Shape> shapes;
    for (const Value* v : n.inputs) shapes.push_back(v->shape);
    shapes.push_back(n.outputs[0]->shape);  // the output, written like an operand read in full
    nest_ = elementwise_loops(shapes, n.outputs[0]->shape);
    split_for_tasks();
  }

  void write() {
    if (n_.outputs[0]->numel() == 0) return;
    e_.include("onnxc/eltwise_math.h");
    const std::size_t outer = nest_.extents.size() - 1;
    e_.open_ranges(nest_.extents[0], tasks_);
    // The functors inside the task's lambda: captured by reference, their parameters (floats) would be
    // read through the closure on every element, as the output's float stores might change them, and
    // GCC left the loop scalar (lraspp's HardSwish passes 24 -> 130 us at one thread).
    for (std::size_t k = 0; k < steps_.size(); ++k) e_.linef("const auto f{}_ = {};", k, steps_[k].functor);
    for (std::size_t d = 0; d < outer; ++d)
      line(d, fmt::format(d == 0 && tasks_ > 1 ? "for (rt::index_t i{0}_ = r_.begin; i{0}_ < r_.end; ++i{0}_) {{"
                                               : "for (rt::index_t i{0}_ = 0; i{0}_ < {1}; ++i{0}_) {{",
                          d, nest_.extents[d]));
    write_row(outer);
    for (std::size_t d = outer; d-- > 0;) line(d, "}");
    e_.close_ranges();
  }

 private:
  void line(std::size_t depth, const std::string& code) { e_.line(std::string(2 * depth, ' ') + code); }

  // A step that splits into tasks (Emitter::tasks) cuts its outermost loop into ranges. A single
  // loop over every element is first cut into rows of the output's trailing dims (planes, say),
  // so the inner loop keeps a constant extent (whole vectors and a constant tail, as
  // write_vector_loop needs): the longest rows that still leave kMaxRangeTasks of them (the
  // fewest scalar tails), else the shortest (the most rows, at least two).
  void split_for_tasks() {
    const int64_t work = n_.outputs[0]->numel() * static_cast<int64_t>(steps_.size());
    if (nest_.extents.size() == 1) {
      const Shape& out = n_.outputs[0]->shape;
      const int64_t all = nest_.extents[0];
      int64_t row = 0, suffix = 1;
      for (std::size_t d = out.size(); d-- > 1;) {
        suffix *= out[d];
        if (all / suffix >= kMaxRangeTasks || (row == 0 && all / suffix >= 2)) row = suffix;
      }
      if (row == 0) return;
      const int64_t rows = all / row;
      if (e_.tasks(work, rows) < 2) return;
      nest_.extents = {rows, row};
      for (auto& st : nest_.strides) st = {st[0] * row, st[0]};
    }
    tasks_ = e_.tasks(work, nest_.extents[0]);
    if (nest_.extents.size() == 1) tasks_ = 1;  // a single row too short to cut
  }

  bool moves_in_inner_loop(std::size_t operand) const { return nest_.strides[operand].back() != 0; }

  // Operand j's element offset at the current outer loop indices ("" when 0).
  std::string row_offset(std::size_t operand) const {
    std::vector<std::string> terms;
    for (std::size_t d = 0; d + 1 < nest_.extents.size(); ++d)
      if (int64_t s = nest_.strides[operand][d]) terms.push_back(s == 1 ? fmt::format("i{}_", d) : fmt::format("i{}_ * {}", d, s));
    return fmt::format("{}", fmt::join(terms, " + "));
  }

  // Operand j's row: its pointer moved to the current outer loop indices.
  std::string row(const std::string& ptr, std::size_t operand) const {
    const std::string offset = row_offset(operand);
    return offset.empty() ? ptr : fmt::format("{} + {}", ptr, offset);
  }

  // Whether step `s` converts an int32 input of the node to float (the int32 accumulators of
  // MatMulInteger / ConvInteger in a dynamically quantized model): its vector form converts a
  // whole vector (round to nearest even, as the scalar conversion does).
  bool int32_to_float(const FusedStep& s) const {
    return s.op_type == "Cast" && s.dtype == DType::Float && s.args.size() == 1 && s.args[0] >= 0 &&
           n_.inputs[static_cast<std::size_t>(s.args[0])]->dtype == DType::Int32;
  }

  // Whether the steps go through their vector forms (see kVectorFormOps).
  bool vector_loop() const {
    bool libm = false;
    std::set<int64_t> converted;  // int32 inputs read only through int32_to_float steps
    for (const FusedStep& st : steps_) {
      if (int32_to_float(st)) {
        converted.insert(st.args[0]);
        continue;
      }
      if (st.dtype != DType::Float || !kVectorFormOps.count(st.op_type)) return false;
      libm = libm || kLibmOps.count(st.op_type);
    }
    for (const FusedStep& st : steps_)
      for (int64_t a : st.args)
        if (a >= 0 && converted.count(a) && !int32_to_float(st)) return false;
    for (std::size_t j = 0; j < n_.inputs.size(); ++j)
      if (n_.inputs[j]->dtype != DType::Float && !converted.count(static_cast<int64_t>(j))) return false;
    return libm;
  }

  // The vector loop covers [0, tail_), tail_ a constant: the scalar loop after it starts at
  // tail_, not at an index carried out of the vector loop. With the carried index GCC's -O3 could
  // not bound the scalar loop's count from below and warned (-Werror=aggressive-loop-optimizations,
  // "iteration 4611686018427387903 invokes undefined behavior", issue #28); with constant bounds
  // it runs fewer than kFloatLanes iterations, as GCC can see.
  void write_vector_loop(std::size_t depth) {
    const int64_t extent = nest_.extents.back();
    e_.line("#if defined(ONNXC_SIMD)");
    line(depth, fmt::format("constexpr rt::index_t tail_ = {0} - {0} % rt::kFloatLanes;", extent));
    line(depth, "for (rt::index_t i_ = 0; i_ < tail_; i_ += rt::kFloatLanes) {");
    for (std::size_t k = 0; k < steps_.size(); ++k) {
      std::vector<std::string> args;
      for (int64_t a : steps_[k].args) {
        if (a < 0) {
          args.push_back(fmt::format("w{}_", -1 - a));
        } else {
          const auto j = static_cast<std::size_t>(a);
          args.push_back(moves_in_inner_loop(j) ? fmt::format("rt::vfloat::load_unaligned(x{}_ + i_)", j)
                                                : fmt::format("rt::vfloat(x{}_)", j));
        }
      }
      std::string value = fmt::format("f{}_.vec({})", k, fmt::join(args, ", "));
      if (int32_to_float(steps_[k])) {
        const auto j = static_cast<std::size_t>(steps_[k].args[0]);
        value = moves_in_inner_loop(j)
                    ? fmt::format("xsimd::batch_cast<float>(xsimd::batch<std::int32_t>::load_unaligned(x{}_ + i_))", j)
                    : fmt::format("rt::vfloat(f{}_(x{}_))", k, j);
      }
      if (k + 1 < steps_.size())
        line(depth + 1, fmt::format("const rt::vfloat w{}_ = {};", k, value));
      else
        line(depth + 1, fmt::format("{}.store_unaligned(y_ + i_);", value));
    }
    line(depth, "}");
    e_.line("#else");
    line(depth, "constexpr rt::index_t tail_ = 0;");
    e_.line("#endif");
  }

  void write_row(std::size_t depth) {
    const std::size_t out = n_.inputs.size();
    for (std::size_t j = 0; j < out; ++j) {
      const std::string ptr = e_.in(j);
      const std::string offset = row_offset(j);
      if (moves_in_inner_loop(j))
        line(depth, fmt::format("const {}* const x{}_ = {};", ctype_of(*n_.inputs[j]), j, row(ptr, j)));
      else
        line(depth, fmt::format("const auto x{}_ = rt::load({}[{}]);", j, ptr, offset.empty() ? "0" : offset));
    }
    line(depth, fmt::format("{}* const y_ = {};", ctype_of(*n_.outputs[0]), row(e_.out(0), out)));
    if (vector_loop()) {
      write_vector_loop(depth);
      line(depth, fmt::format("for (rt::index_t i_ = tail_; i_ < {}; ++i_) {{", nest_.extents.back()));
    } else {
      line(depth, fmt::format("for (rt::index_t i_ = 0; i_ < {}; ++i_) {{", nest_.extents.back()));
    }
    for (std::size_t k = 0; k < steps_.size(); ++k) {
      const std::string ctype = dtype_ctype(steps_[k].dtype);
      const std::string value = fmt::format("rt::store<{}>(f{}_({}))", ctype, k, args_text(steps_[k]));
      if (k + 1 < steps_.size())
        line(depth + 1, fmt::format("const {} v{}_ = {};", ctype, k, value));
      else
        line(depth + 1, fmt::format("y_[i_] = {};", value));
    }
    line(depth, "}");
  }

  std::string args_text(const FusedStep& s) const {
    std::vector<std::string> args;
    for (int64_t a : s.args) {
      if (a < 0) {
        args.push_back(fmt::format("rt::load(v{}_)", -1 - a));
      } else {
        const auto j = static_cast<std::size_t>(a);
        args.push_back(moves_in_inner_loop(j) ? fmt::format("rt::load(x{}_[i_])", j) : fmt::format("x{}_", j));
      }
    }
    return fmt::format("{}", fmt::join(args, ", "));
  }

  const Node& n_;
  Emitter& e_;
  std::vector<FusedStep> steps_;
  LoopNest nest_;
  int64_t tasks_ = 1;
};

OpDef fused_elementwise_op() {
  OpDef d;
  d.domain = kFusedElementwiseDomain;
  d.op_type = kFusedElementwiseOp;
  d.versions = {1};
  // Input 0, when it has the output's size, is read at each element just before the element is
  // written (fuse-elementwise puts such an input first).
  d.inplace = true;
  d.infer = infer_fused;
  d.emit = [](const Node& n, Emitter& e) { FusedLoopWriter(n, e).write(); };
  // One operation per output element and fused step.
  d.macs = [](const Node& n) { return n.outputs[0]->numel() * static_cast<int64_t>(fused_steps(n).size()); };
  return d;
}
const OpRegistrar fused_elementwise(fused_elementwise_op());

}  // namespace

void set_fused_steps(Node& n, const std::vector<FusedStep>& steps) {
  std::vector<std::string> ops, functors;
  std::vector<int64_t> dtypes, arity, args;
  for (const FusedStep& s : steps) {
    ops.push_back(s.op_type);
    functors.push_back(s.functor);
    dtypes.push_back(static_cast<int64_t>(s.dtype));
    arity.push_back(static_cast<int64_t>(s.args.size()));
    args.insert(args.end(), s.args.begin(), s.args.end());
  }
  n.set_attr_strings(kOpsAttr, std::move(ops));
  n.set_attr_strings(kFunctorsAttr, std::move(functors));
  n.set_attr_ints(kDTypesAttr, std::move(dtypes));
  n.set_attr_ints(kArityAttr, std::move(arity));
  n.set_attr_ints(kArgsAttr, std::move(args));
}

std::vector<FusedStep> fused_steps(const Node& n) {
  const std::vector<std::string> ops = strings_of(n, kOpsAttr), functors = strings_of(n, kFunctorsAttr);
  const std::vector<int64_t> dtypes = n.attr_ints(kDTypesAttr), arity = n.attr_ints(kArityAttr),
                             args = n.attr_ints(kArgsAttr);
  const std::size_t count = ops.size();
  if (functors.size() != count || dtypes.size() != count || arity.size() != count)
    fail_invalid(n, "its step attributes (ops, functors, dtypes, arity) differ in length");
  std::vector<FusedStep> steps(count);
  std::size_t next = 0;
  for (std::size_t k = 0; k < count; ++k) {
    steps[k].op_type = ops[k];
    steps[k].functor = functors[k];
    steps[k].dtype = static_cast<DType>(dtypes[k]);
    const auto m = static_cast<std::size_t>(arity[k]);
    if (arity[k] < 0 || next + m > args.size()) fail_invalid(n, "its args attribute is shorter than arity says");
    steps[k].args.assign(args.begin() + static_cast<std::ptrdiff_t>(next),
                         args.begin() + static_cast<std::ptrdiff_t>(next + m));
    next += m;
  }
  return steps;
}

LoopNest elementwise_loops(const std::vector<Shape>& operands, const Shape& out) {
  std::vector<std::vector<int64_t>> strides;
  for (const Shape& s : operands) strides.push_back(broadcast_strides(s, out));
  LoopNest nest;
  nest.strides.resize(operands.size());
  for (std::size_t d = 0; d < out.size(); ++d) {
    if (out[d] == 1) continue;  // no loop: every operand is at index 0 along it
    // Merges into the loop before when every operand steps over it exactly as over a run of
    // this dim: stride(loop) == stride(d) * extent(d), broadcast operands 0 == 0.
    bool merges = !nest.extents.empty();
    for (std::size_t j = 0; j < operands.size() && merges; ++j)
      merges = nest.strides[j].back() == strides[j][d] * out[d];
    if (merges) {
      nest.extents.back() *= out[d];
      for (std::size_t j = 0; j < operands.size(); ++j) nest.strides[j].back() = strides[j][d];
      continue;
    }
    nest.extents.push_back(out[d]);
    for (std::size_t j = 0; j < operands.size(); ++j) nest.strides[j].push_back(strides[j][d]);
  }
  if (nest.extents.empty()) {  // a single element
    nest.extents.push_back(1);
    for (auto& s : nest.strides) s.push_back(0);
  }
  return nest;
}

}  // namespace onnxc
