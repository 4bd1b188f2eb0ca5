#include "driver/report.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "ops/conv_algorithm.h"
#include "ops/cost.h"
#include "ops/fused_elementwise.h"
#include "passes/qdq_patterns.h"

namespace onnxc {
namespace {

const char* storage_name(Storage s) {
  switch (s) {
    case Storage::Constant: return "weights";
    case Storage::Input: return "input";
    case Storage::Output: return "output";
    case Storage::Arena: return "arena";
    case Storage::Alias: return "alias";
    case Storage::Outer: return "outer";
  }
  return "?";
}

struct StepFacts {
  const Step* step;
  int depth;
  int64_t macs;
  int64_t bytes_moved;  // bytes read plus bytes written
};

void collect_steps(const Block& b, int depth, std::vector<StepFacts>& out) {
  for (const Step& s : b.steps) {
    const Node& n = *s.node;
    out.push_back({&s, depth, node_macs(n, *s.op), node_bytes_moved(n)});
    for (const auto& sub : s.subgraphs)
      if (sub) collect_steps(*sub, depth + 1, out);  // null: an If branch that never runs
  }
}

std::vector<std::string> json_strings(const std::vector<std::string>& v) {
  std::vector<std::string> out;
  for (const std::string& s : v) out.push_back(json_string(s));
  return out;
}

std::string shapes(const std::vector<Value*>& vs) {
  std::vector<std::string> parts;
  for (const Value* v : vs) parts.push_back(v ? shape_str(v->shape) : "-");
  return fmt::format("{}", fmt::join(parts, " "));
}

// Tensors in a stable order: by block, then by where they live.
std::vector<std::pair<const Value*, const TensorPlace*>> tensor_rows(const Compilation& c) {
  std::vector<std::pair<const Value*, const TensorPlace*>> rows;
  for (const Value* v : c.model.graph.inputs)  // an input pinned by --constant has no place
    if (c.program.tensors.count(v)) rows.emplace_back(v, &c.program.tensors.at(v));
  std::vector<StepFacts> steps;
  collect_steps(c.program.main, 0, steps);
  for (const StepFacts& f : steps)
    for (const Value* v : f.step->node->outputs)
      if (v && c.program.tensors.count(v)) rows.emplace_back(v, &c.program.tensors.at(v));
  return rows;
}

// The largest sum of tensor sizes live at one step of block b, without kernel scratch: its own
// tensors, plus at a control-flow step the largest such peak of its bodies.
std::size_t peak_tensor_bytes(const Block& b, std::size_t alignment) {
  std::size_t peak = 0;
  for (std::size_t i = 0; i < b.steps.size() && i < b.live_bytes.size(); ++i) {
    const Step& s = b.steps[i];
    std::size_t bodies = 0;
    for (const auto& sub : s.subgraphs)
      if (sub) bodies = std::max(bodies, peak_tensor_bytes(*sub, alignment));
    const std::size_t scratch = (s.scratch_bytes + alignment - 1) / alignment * alignment;
    peak = std::max(peak, b.live_bytes[i] - scratch + bodies);
  }
  // One past the last step: the block's results, read by its caller.
  if (!b.live_bytes.empty()) peak = std::max(peak, b.live_bytes.back());
  return peak;
}

// A step's kernel scratch, the room the tensors leave at it, and why it has that much.
std::string scratch_note(const Step& step) {
  if (!step.op_scratch_bytes && !step.node->has_attr(kScratchNoteAttr)) return "";
  std::string why = step.node->attr_string(kScratchNoteAttr, "");
  if (why.empty()) why = fmt::format("{} B free", step.room_bytes);
  const char* grows = step.op_scratch_bytes > step.room_bytes ? ", grows the arena" : "";
  return fmt::format("  (scratch {} B: {}{})", step.op_scratch_bytes, why, grows);
}

// The matrix-product kernel of a Gemm or MatMul (pack-weights' choice), or "".
std::string kernel_of(const Node& n) {
  if ((n.op_type != "Gemm" && n.op_type != "MatMul") || !n.domain.empty()) return "";
  return matrix_product_kernel(n);
}

// The nodes merged into n, in order: those a FusedElementwise computes, and those
// fold-batchnorm, fold-affine and fuse-activation folded into it (kMergedOpsAttr).
std::vector<std::string> fused_ops(const Node& n) {
  std::vector<std::string> ops;
  if (n.op_type == kFusedElementwiseOp && n.domain == kFusedElementwiseDomain)
    for (const FusedStep& s : fused_steps(n)) ops.push_back(s.op_type);
  for (const std::string& op : n.attr_strings(kMergedOpsAttr)) ops.push_back(op);
  return ops;
}

}  // namespace

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<int>(c));
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string report_text(const Compilation& c) {
  const Program& p = c.program;
  std::vector<StepFacts> steps;
  collect_steps(p.main, 0, steps);
  int64_t total_macs = 0, total_bytes = 0;
  for (const StepFacts& f : steps) {
    total_macs += f.macs;
    total_bytes += f.bytes_moved;
  }
  std::string s;
  s += fmt::format("{}: {} nodes in the file, {} steps after folding\n",
                   std::filesystem::path(c.model.path).filename().string(), c.model.graph.nodes.size(), steps.size());
  s += fmt::format("arena:   {:>12} bytes (peak live {} bytes, {:.3f}x; packing: {}; alignment {})\n", p.arena_bytes,
                   p.peak_live_bytes, p.peak_live_bytes ? double(p.arena_bytes) / double(p.peak_live_bytes) : 1.0,
                   p.main.plan.strategy.empty() ? "-" : p.main.plan.strategy, p.alignment);
  s += fmt::format("weights: {:>12} bytes in {} arrays\n", p.weights_bytes, p.weights.size());
  s += fmt::format("work:    {:>12} MACs, {} bytes moved\n\n", total_macs, total_bytes);
  s += fmt::format("{:>4}  {:<32} {:<22} {:>12} {:>12}  {}\n", "step", "node", "op", "MACs", "bytes", "output shapes");
  std::map<const Node*, std::string> float_steps;
  for (const FloatStep& f : float_steps_between_integers(c.model.graph)) float_steps[f.node] = f.why;
  int index = 0;
  for (const StepFacts& f : steps) {
    const Node& n = *f.step->node;
    std::string name = std::string(static_cast<std::size_t>(2 * f.depth), ' ') + n.name;
    std::string notes;
    const Value* out0 = n.has_output(0) ? n.outputs[0] : nullptr;
    if (out0 && p.tensors.count(out0)) {
      const TensorPlace& tp = p.tensors.at(out0);
      if (tp.storage == Storage::Alias)
        notes = tp.in_place ? "  (in place)" : tp.concat_slab ? "  (into a Concat's output)" : "  (view, no code)";
      if (tp.overlap_bytes) notes = fmt::format("  (over {} B of its input)", tp.overlap_bytes);
    }
    if (f.step->elided) notes = "  (inputs written in place, no code)";
    if (const std::vector<std::string> fused = fused_ops(n); !fused.empty())
      notes += fmt::format("  (fused: {})", fmt::join(fused, ", "));
    notes += scratch_note(*f.step);
    if (float_steps.count(&n)) notes += fmt::format("  (FLOAT between integer steps: {})", float_steps.at(&n));
    if (const std::string kernel = kernel_of(n); !kernel.empty()) notes += fmt::format("  (kernel: {})", kernel);
    s += fmt::format("{:>4}  {:<32} {:<22} {:>12} {:>12}  {}{}\n", index++, name,
                     fmt::format("{}-{}", n.op_type, n.version), f.macs, f.bytes_moved, shapes(n.outputs), notes);
  }
  s += fmt::format("\n{:<40} {:<8} {:<18} {:>25} {:>10} {:>9}\n", "tensor", "storage", "shape", "offset", "bytes",
                   "live");
  for (auto& [v, tp] : tensor_rows(c)) {
    std::string where = tp->storage == Storage::Arena ? fmt::format("{}", tp->offset)
                        : tp->storage == Storage::Alias && tp->alias_offset
                            ? fmt::format("={}+{}", tp->alias_of->name.substr(0, 16), tp->alias_offset)
                        : tp->storage == Storage::Alias ? "=" + tp->alias_of->name.substr(0, 24)
                                                        : "-";
    s += fmt::format("{:<40} {:<8} {:<18} {:>25} {:>10} {:>9}\n", v->name.substr(0, 40), storage_name(tp->storage),
                     shape_str(v->shape), where, v->byte_size(),
                     tp->storage == Storage::Input || tp->storage == Storage::Output ? "-"
                                                                                   : fmt::format("{}..{}", tp->first, tp->last));
  }
  return s;
}

std::string report_json(const Compilation& c) {
  const Program& p = c.program;
  std::vector<StepFacts> steps;
  collect_steps(p.main, 0, steps);
  std::string s = "{\n";
  s += fmt::format("  \"model\": {},\n", json_string(std::filesystem::path(c.model.path).filename().string()));
  s += fmt::format("  \"arena_bytes\": {},\n  \"weights_bytes\": {},\n  \"peak_live_bytes\": {},\n", p.arena_bytes,
                   p.weights_bytes, p.peak_live_bytes);
  s += fmt::format("  \"alignment\": {},\n  \"packing\": {},\n", p.alignment, json_string(p.main.plan.strategy));
  s += fmt::format("  \"peak_tensor_bytes\": {},\n", peak_tensor_bytes(p.main, std::max<std::size_t>(p.alignment, 1)));
  s += "  \"steps\": [\n";
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Node& n = *steps[i].step->node;
    std::vector<std::string> outs;
    for (const Value* v : n.outputs) outs.push_back(v ? json_string(shape_str(v->shape)) : "null");
    const Step& step = *steps[i].step;
    s += fmt::format("    {{\"node\": {}, \"op\": {}, \"version\": {}, \"depth\": {}, \"macs\": {}, \"bytes_moved\": {}, "
                     "\"output_shapes\": [{}], \"scratch_bytes\": {}, \"room_bytes\": {}, \"scratch_note\": {}, "
                     "\"fused\": [{}], \"kernel\": {}}}{}\n",
                     json_string(n.name), json_string(n.op_type), n.version, steps[i].depth, steps[i].macs,
                     steps[i].bytes_moved, fmt::join(outs, ", "), step.op_scratch_bytes, step.room_bytes,
                     json_string(n.attr_string(kScratchNoteAttr, "")), fmt::join(json_strings(fused_ops(n)), ", "),
                     json_string(kernel_of(n)), i + 1 < steps.size() ? "," : "");
  }
  s += "  ],\n  \"tensors\": [\n";
  auto rows = tensor_rows(c);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Value* v = rows[i].first;
    const TensorPlace* tp = rows[i].second;
    s += fmt::format("    {{\"name\": {}, \"dtype\": {}, \"shape\": {}, \"bytes\": {}, \"storage\": \"{}\", \"offset\": {}, "
                     "\"alias_of\": {}, \"first\": {}, \"last\": {}}}{}\n",
                     json_string(v->name), json_string(dtype_name(v->dtype)), json_string(shape_str(v->shape)),
                     v->byte_size(), storage_name(tp->storage), tp->storage == Storage::Arena ? fmt::format("{}", tp->offset) : "null",
                     tp->alias_of ? json_string(tp->alias_of->name) : "null", tp->first, tp->last,
                     i + 1 < rows.size() ? "," : "");
  }
  s += "  ]\n}\n";
  return s;
}

std::string inferred_values_json(const Model& m) {
  std::vector<std::string> rows;
  for (const auto& v : m.graph.values) {
    if (v->dtype == DType::Undefined && !v->has_shape) continue;  // an unused optional slot
    if (v->is_sequence || v->is_optional) continue;  // not a tensor; its elements are listed
    std::vector<std::string> dims;
    for (int64_t d : v->shape) dims.push_back(std::to_string(d));
    // A bounded value (Value::dynamic_axis) adds the dim its shape only bounds.
    const std::string bounded = v->is_bounded() ? fmt::format(", \"dynamic_axis\": {}", v->dynamic_axis) : "";
    rows.push_back(fmt::format("    {{\"name\": {}, \"dtype\": {}, \"shape\": [{}], \"constant\": {}{}}}",
                               json_string(v->name), json_string(dtype_name(v->dtype)), fmt::join(dims, ", "),
                               v->is_constant() ? "true" : "false", bounded));
  }
  return fmt::format("{{\n  \"model\": {},\n  \"values\": [\n{}\n  ]\n}}\n",
                     json_string(std::filesystem::path(m.path).filename().string()), fmt::join(rows, ",\n"));
}

}  // namespace onnxc
