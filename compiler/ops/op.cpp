#include "ops/op.h"

#include <cmath>

#include <algorithm>
#include <map>
#include <set>

namespace onnxc {

namespace {
std::map<std::pair<std::string, std::string>, OpDef>& registry() {
  static std::map<std::pair<std::string, std::string>, OpDef> r;
  return r;
}
}  // namespace

// Constant inputs count too: a step whose weights come from memory (a squeeze-excite 1x1 Conv on
// a 1 x 1 plane: lraspp_mobilenet_v3's 960 -> 240 and 240 -> 960 read 921 KB of weights for 230 K
// multiply-accumulates, 63-69 us on one thread under load) reads half of them on each thread
// (onnxc bench --predict-threads 2: such steps were 6 % of lraspp's one-thread time, all serial).
int64_t streamed_bytes(const Node& n) {
  const int64_t constant_factor = n.attr_int(kWeightsFromMemoryAttr, 0) == 1 ? kWeightsFromMemoryFactor : 1;
  int64_t bytes = 0;
  for (const Value* v : n.inputs)
    if (v) bytes += static_cast<int64_t>(v->byte_size()) * (v->constant ? constant_factor : 1);
  for (const Value* v : n.outputs)
    if (v) bytes += static_cast<int64_t>(v->byte_size());
  return bytes;
}

int64_t range_tasks(const Node& n, int64_t work, int64_t items) {
  if (items < 2 || !splits_into_tasks(n, work)) return 1;
  const int64_t by_work = work / (kMinParallelWork / 4), by_bytes = streamed_bytes(n) / (kMinParallelBytes / 4);
  return std::min({items, kMaxRangeTasks, std::max<int64_t>({2, by_work, by_bytes})});
}

OpRegistrar::OpRegistrar(OpDef def) {
  auto key = std::make_pair(def.domain, def.op_type);
  registry()[key] = std::move(def);
}

const OpDef* find_op(const std::string& domain, const std::string& op_type) {
  auto it = registry().find({domain, op_type});
  return it == registry().end() ? nullptr : &it->second;
}

std::vector<const OpDef*> all_ops() {
  std::vector<const OpDef*> v;
  for (auto& kv : registry()) v.push_back(&kv.second);
  return v;
}

void fail_invalid(const Node& n, const std::string& what, const std::string& fix) {
  throw CompileError(ErrorKind::Invalid, n.describe(), what, fix);
}

void fail_unsupported(const Node& n, const std::string& what, const std::string& fix) {
  throw CompileError(ErrorKind::Unsupported, n.describe(), what, fix);
}

void check_arity(const Node& n, int min_in, int max_in, int min_out, int max_out) {
  int nin = static_cast<int>(n.inputs.size()), nout = static_cast<int>(n.outputs.size());
  if (nin < min_in || (max_in >= 0 && nin > max_in))
    fail_invalid(n, max_in < 0 ? fmt::format("has {} inputs; expected at least {}", nin, min_in)
                               : fmt::format("has {} inputs; expected {} to {}", nin, min_in, max_in));
  if (nout < min_out || (max_out >= 0 && nout > max_out))
    fail_invalid(n, max_out < 0 ? fmt::format("has {} outputs; expected at least {}", nout, min_out)
                                : fmt::format("has {} outputs; expected {} to {}", nout, min_out, max_out));
  for (int i = 0; i < min_in; ++i)
    if (!n.inputs[static_cast<std::size_t>(i)]) fail_invalid(n, fmt::format("required input {} is empty", i));
}

const Value& input(const Node& n, std::size_t i) {
  if (!n.has_input(i)) fail_invalid(n, fmt::format("required input {} is missing", i));
  return *n.inputs[i];
}

const Tensor* const_input(const Node& n, std::size_t i) {
  return n.has_input(i) ? n.inputs[i]->constant.get() : nullptr;
}

const Tensor& require_const_input(const Node& n, std::size_t i, const char* what) {
  const Tensor* t = const_input(n, i);
  if (!t)
    fail_needs_compile_time_values(
        n, n.has_input(i) ? std::vector<const Value*>{n.inputs[i]} : std::vector<const Value*>{},
        fmt::format("input {} ('{}', the {}) is computed at run time; onnxc needs it at compile time", i,
                    n.has_input(i) ? n.inputs[i]->name : "", what),
        "make it an initializer or a constant expression, or bind the model's dims with --dim/--shape");
  return *t;
}

void fail_needs_compile_time_values(const Node& n, const std::vector<const Value*>& needed, const std::string& what,
                                    const std::string& fix) {
  Problem p{ErrorKind::Unsupported, n.describe(), what, fix, {}};
  for (const Value* v : needed) {
    if (v->constant) continue;
    std::vector<std::string> sources = graph_inputs_behind(*v);
    if (sources.empty()) {  // pinning inputs would not make every needed value known
      p.inputs_to_pin.clear();
      break;
    }
    p.inputs_to_pin.insert(p.inputs_to_pin.end(), sources.begin(), sources.end());
  }
  throw CompileError({std::move(p)});
}

std::vector<std::string> graph_inputs_behind(const Value& v) {
  std::set<std::string> inputs;
  std::set<const Value*> seen;
  std::vector<const Value*> pending = {&v};
  while (!pending.empty()) {
    const Value* x = pending.back();
    pending.pop_back();
    while (x->outer) x = x->outer;  // a subgraph's name for an outer value
    if (x->constant || !seen.insert(x).second) continue;
    if (x->is_graph_input) {
      inputs.insert(x->name);
      continue;
    }
    const Node* p = x->producer;
    const OpDef* def = p ? find_op(p->domain, p->op_type) : nullptr;
    if (!def || !def->fold || p->has_subgraphs()) return {};
    for (const Value* in : p->inputs)
      if (in) pending.push_back(in);
  }
  return {inputs.begin(), inputs.end()};
}

// Largest tensor an operator may produce. Inference refuses bigger (or overflowing) shapes before
// folding or planning allocates anything for them.
constexpr uint64_t kMaxOutputBytes = uint64_t(1) << 31;

void require_tensor_fits(const Node& n, const Shape& shape, DType dtype, const std::string& what) {
  uint64_t elements = 1;
  for (int64_t d : shape) {
    if (d < 0) fail_invalid(n, fmt::format("{} would have a negative dim: {}", what, shape_str(shape)));
    if (d != 0 && elements > kMaxOutputBytes / static_cast<uint64_t>(d)) elements = kMaxOutputBytes + 1;
    else elements *= static_cast<uint64_t>(d);
  }
  if (elements > kMaxOutputBytes / std::max<std::size_t>(dtype_size(dtype), 1))
    fail_unsupported(n, fmt::format("{} of shape {} ({}) would exceed the {} bytes onnxc allows for one tensor", what,
                                    shape_str(shape), dtype_name(dtype), kMaxOutputBytes),
                     "check the shapes feeding this node");
}

int64_t dim_from_double(const Node& n, double v, const std::string& what) {
  if (!std::isfinite(v) || std::fabs(v) > static_cast<double>(kMaxOutputBytes))
    fail_unsupported(n, fmt::format("{} is {}, beyond the {} elements onnxc allows for one tensor", what, v, kMaxOutputBytes),
                     "check the scales, sizes or bounds feeding this node");
  return static_cast<int64_t>(v);
}

void set_output(Node& n, std::size_t i, DType dtype, Shape shape) {
  if (!n.has_output(i)) return;
  require_tensor_fits(n, shape, dtype, fmt::format("output {}", i));
  Value* v = n.outputs[i];
  v->dtype = dtype;
  v->shape = std::move(shape);
  v->has_shape = true;
  v->dynamic_axis = -1;
  v->text_bytes_per_element = 0;
}

void set_bounded_output(Node& n, std::size_t i, DType dtype, Shape bound, int dynamic_axis) {
  if (dynamic_axis < 0 || static_cast<std::size_t>(dynamic_axis) >= bound.size())
    fail_invalid(n, fmt::format("internal: dynamic axis {} of output {} is outside its bound {}", dynamic_axis, i,
                                shape_str(bound)));
  set_output(n, i, dtype, std::move(bound));
  if (n.has_output(i)) n.outputs[i]->dynamic_axis = dynamic_axis;
}

void shrink_to_extent(Tensor& t, const Value& v, int64_t extent) {
  t.shape[static_cast<std::size_t>(v.dynamic_axis)] = extent;
  if (t.dtype == DType::String) t.strings.resize(static_cast<std::size_t>(t.numel()));
  else t.bytes.resize(static_cast<std::size_t>(t.numel()) * dtype_size(t.dtype));
}

int64_t normalize_axis(const Node& n, int64_t axis, int64_t rank, const char* what) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
    fail_invalid(n, fmt::format("{} {} is out of range for rank {}", what, axis, rank),
                 fmt::format("use a value in [{}, {}]", -rank, rank - 1));
  return axis < 0 ? axis + rank : axis;
}

void require_dtype(const Node& n, std::size_t i, std::initializer_list<DType> allowed) {
  require_dtype(n, i, std::vector<DType>(allowed));
}

void require_dtype(const Node& n, std::size_t i, const std::vector<DType>& allowed) {
  DType t = input(n, i).dtype;
  if (std::find(allowed.begin(), allowed.end(), t) != allowed.end()) return;
  std::vector<std::string> names;
  for (DType a : allowed) names.push_back(dtype_name(a));
  fail_unsupported(n, fmt::format("input {} has element type {}; onnxc supports {} here", i, dtype_name(t),
                                  fmt::join(names, ", ")));
}

void require_float(const Node& n, std::size_t i) {
  require_dtype(n, i, {DType::Float, DType::Double, DType::Float16, DType::BFloat16});
}

Shape broadcast_shapes(const Node& n, const Shape& a, const Shape& b) {
  std::size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (std::size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1)
      fail_invalid(n, fmt::format("shapes {} and {} do not broadcast (dim {}: {} vs {})", shape_str(a), shape_str(b), i,
                                  da, db));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::vector<int64_t> contiguous_strides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (std::size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  std::vector<int64_t> st(out.size(), 0);
  std::vector<int64_t> cs = contiguous_strides(in);
  std::size_t off = out.size() - in.size();
  for (std::size_t i = 0; i < in.size(); ++i) st[off + i] = in[i] == 1 ? 0 : cs[i];
  return st;
}

}  // namespace onnxc
