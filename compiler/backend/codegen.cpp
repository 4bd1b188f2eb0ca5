#include "backend/codegen.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <string_view>

#include <fmt/args.h>
#include <fmt/format.h>

#include "onnxc/base.h"
#include "ops/emitter.h"
#include "support/diagnostics.h"
#include "support/names.h"
#include "support/version.h"

namespace onnxc {
namespace {

std::string int_literal(int64_t v) {
  if (v == INT64_MIN) return "(-9223372036854775807 - 1)";
  return fmt::format("{}", v);
}

// One element of a constant as a C++ initializer.
std::string element_literal(const Tensor& t, int64_t i) {
  switch (t.dtype) {
    case DType::Float: return float_literal(t.data<float>()[i]);
    case DType::Double: return double_literal(t.data<double>()[i]);
    case DType::Float16:
    case DType::BFloat16: return fmt::format("{{0x{:04x}}}", t.data<uint16_t>()[i]);
    case DType::Bool: return t.data<uint8_t>()[i] ? "true" : "false";
    case DType::Uint64: return fmt::format("{}u", t.data<uint64_t>()[i]);
    case DType::Uint32: return fmt::format("{}u", t.data<uint32_t>()[i]);
    default: return int_literal(t.int_at(i));
  }
}

// A string constant: its text as string literals (the compiler places them), the array of
// pointers to them in the weights.
std::string string_element_literal(const Value& v, const Tensor& t, int64_t i) {
  const std::string& s = t.strings[static_cast<std::size_t>(i)];
  if (s.find('\0') != std::string::npos)
    throw CompileError(ErrorKind::Unsupported, fmt::format("constant '{}'", v.name),
                       fmt::format("string {} holds a NUL byte, which ends a C string", i),
                       "remove the NUL bytes from the model's strings");
  return string_literal(s);
}

// section: the linker section to put the array in (onnxc --weights-section); empty: the default.
std::string render_weight(const std::string& cname, const Value& v, std::size_t alignment, const std::string& section) {
  const Tensor& t = *v.constant;
  int64_t n = t.numel();
  std::string s = fmt::format("// '{}': {} {}\n", v.name, dtype_name(t.dtype), shape_str(t.shape));
  std::string attribute = section.empty() ? "" : fmt::format(" __attribute__((section(\"{}\")))", section);
  s += fmt::format("alignas({}) const {} {}[{}]{} = {{", alignment, dtype_ctype(t.dtype), cname, std::max<int64_t>(n, 1),
                   attribute);
  const int per_line = t.dtype == DType::Bool ? 16 : 8;
  for (int64_t i = 0; i < n; ++i) {
    if (i % per_line == 0) s += "\n   ";
    s += " " + (t.dtype == DType::String ? string_element_literal(v, t, i) : element_literal(t, i)) + ",";
  }
  s += n ? "\n};\n" : "};\n";
  return s;
}

std::string shape_list(const Node& n, bool inputs) {
  std::vector<std::string> parts;
  for (const Value* v : inputs ? n.inputs : n.outputs)
    parts.push_back(v ? shape_str(v->shape) : "-");
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string tensor_info(const Value& v) {
  std::vector<int64_t> dims(v.shape.begin(), v.shape.end());
  if (dims.empty()) dims.push_back(0);
  return fmt::format("    {{\"{}\", {}, {}, {{{}}}, {}, {}, {}}},", v.name, static_cast<int>(v.dtype), v.shape.size(),
                     fmt::join(dims, ", "), v.numel(), v.byte_size(), v.dynamic_axis);
}

// The C API's parameter for a tensor of type t: `const T* name` for inputs, `T* name` for outputs.
std::string c_param(DType t, bool input, const std::string& name);

std::string c_type(DType t) {
  switch (t) {
    case DType::Float16:
    case DType::BFloat16: return "uint16_t";
    case DType::Bool: return "bool";
    default: {
      std::string s = dtype_ctype(t);
      return s.rfind("std::", 0) == 0 ? s.substr(5) : s;
    }
  }
}

std::string c_param(DType t, bool input, const std::string& name) {
  if (t == DType::String) return fmt::format("{} {}", input ? "const char* const*" : "const char**", name);
  return fmt::format("{}{}* {}", input ? "const " : "", c_type(t), name);
}

}  // namespace

std::string render_template(const std::string& name, const std::vector<std::pair<std::string, std::string>>& vars) {
  fmt::dynamic_format_arg_store<fmt::format_context> args;
  for (const auto& [key, value] : vars) args.push_back(fmt::arg(key.c_str(), value));
  return fmt::vformat(template_text(name), args);
}

namespace {

// Renders blocks (the main graph and nested subgraphs) into statements.
class BlockRenderer {
 public:
  BlockRenderer(const Program& prog, std::set<std::string>& headers, const CodegenOptions& opts)
      : prog_(prog), T(prog.tensors), headers_(headers), step_hooks_(opts.step_hooks), trace_(opts.trace),
        profile_(opts.profile), model_name_(sanitize_identifier(opts.name)) {
    const Graph& g = *prog.main.graph;
    for (std::size_t i = 0; i < g.outputs.size() && i < prog.main.output_shape_params.size(); ++i)
      if (g.outputs[i]->is_bounded())
        extent_of_[g.outputs[i]] =
            fmt::format("{}[{}]", prog.main.output_shape_params[i], g.outputs[i]->dynamic_axis);
  }

  // Where the code stores a bounded value's run-time extent: its element of the shape array run()
  // reports it in, or "" when it is not an output of the model (nothing reads it then).
  std::string extent_of(const Value* v) const {
    auto it = extent_of_.find(v);
    return it == extent_of_.end() ? "" : it->second;
  }

  std::string name_of(const Value* v) const {
    const TensorPlace& tp = T.at(v);
    if (tp.storage != Storage::Constant) return tp.cname;
    used_weights_.insert(v);
    return tp.weight_cname;
  }

  // The weights the rendered code refers to: operators read some constant inputs (shapes,
  // axes, ...) at compile time only, and an array nobody reads is dead weight (and a warning).
  const std::set<const Value*>& used_weights() const { return used_weights_; }

  // Pointer declarations of the block's arena tensors, then of the views (a view may be
  // computed before the tensor it is part of: a slab of a Concat's output). A view that no
  // statement names is left out: one only other views read (a Reshape of a Reshape) is
  // declared in terms of its root, and its own pointer would be an unused variable.
  std::vector<std::string> declarations(const Block& b, const std::vector<std::string>& statements) const {
    std::set<std::string> named;
    for (const std::string& line : statements)
      for (std::size_t i = 0; i < line.size();) {
        std::size_t j = i;
        while (j < line.size() && (std::isalnum(static_cast<unsigned char>(line[j])) || line[j] == '_')) ++j;
        if (j > i) named.insert(line.substr(i, j - i));
        i = j + 1;
      }
    std::vector<std::string> lines;
    for (Storage kind : {Storage::Arena, Storage::Alias})
      for (const Step& s : b.steps)
        for (const Value* v : s.node->outputs)
          if (v && T.at(v).storage == kind && (kind == Storage::Arena || named.count(T.at(v).cname)))
            lines.push_back(declaration(b, v));
    return lines;
  }

  std::string declaration(const Block& b, const Value* v) const {
    const TensorPlace& tp = T.at(v);
    std::string ct = dtype_ctype(v->dtype);
    if (tp.storage == Storage::Arena)
      return fmt::format("{}* const {} = reinterpret_cast<{}*>({} + {});  // {} {}, {} bytes", ct, tp.cname, ct, b.base,
                         tp.offset, dtype_name(v->dtype), shape_str(v->shape), v->byte_size());
    const TensorPlace& root = T.at(tp.alias_of);
    std::string cq = root.storage == Storage::Input ? "const " : "";
    if (tp.alias_offset || tp.concat_slab)
      return fmt::format("{}{}* const {} = {} + {};  // {} {}, {} '{}' at byte {}", cq, ct, tp.cname, root.cname,
                         tp.alias_offset / dtype_size(v->dtype), dtype_name(v->dtype), shape_str(v->shape),
                         tp.concat_slab ? "its slab of" : "a view in", tp.alias_of->name, tp.alias_offset);
    return fmt::format("{}{}* const {} = {};  // {} {}, {} '{}'", cq, ct, tp.cname, root.cname, dtype_name(v->dtype),
                       shape_str(v->shape), tp.in_place ? "computed in place of" : "a view of", tp.alias_of->name);
  }

  // The block's statements: pass-through outputs, then every step.
  std::vector<std::string> statements(const Block& b) const {
    std::vector<std::string> lines;
    const Graph& g = *b.graph;
    for (std::size_t i = 0; i < g.outputs.size(); ++i) {
      const Value* v = g.outputs[i];
      if (v->constant) {
        used_weights_.insert(v);
        lines.push_back(fmt::format("// output '{}' is a constant", v->name));
        lines.push_back(fmt::format("rt::copy({}, {}, {});", T.at(v).weight_cname, b.output_params[i], v->numel()));
      } else if (T.count(v) && (T.at(v).storage == Storage::Input || T.at(v).storage == Storage::Outer)) {
        lines.push_back(fmt::format("// output '{}' is passed through unchanged", v->name));
        lines.push_back(fmt::format("rt::copy({}, {}, {});", name_of(v), b.output_params[i], v->numel()));
      } else {
        continue;
      }
      lines.push_back("");
    }
    for (std::size_t si = 0; si < b.steps.size(); ++si) {
      const Step& s = b.steps[si];
      const Node& n = *s.node;
      lines.push_back(fmt::format("// {}. '{}' {}-{}: ({}) -> ({})", si, n.name, n.op_type, n.version,
                                  shape_list(n, true), shape_list(n, false)));
      const Value* out0 = n.has_output(0) ? n.outputs[0] : nullptr;
      const bool main = &b == &prog_.main;
      if (s.op->is_view && out0 && T.at(out0).storage == Storage::Alias) {
        lines.push_back("// (a view: no code)");
        if (main) append_hooks(lines, si, n, false);
        lines.push_back("");
        continue;
      }
      if (s.elided) {
        lines.push_back("// (its inputs were computed in place: no code)");
        if (main) append_hooks(lines, si, n, false);
        lines.push_back("");
        continue;
      }
      std::string scratch = s.op_scratch_bytes ? fmt::format("({} + {})", b.base, s.scratch_offset) : "nullptr";
      Emitter e(n, [this](const Value* v) { return name_of(v); }, scratch);
      e.set_extent_namer([this](const Value* v) { return extent_of(v); });
      e.set_subgraph_renderer([this, &s, &b](std::size_t k, const std::vector<std::string>& inputs,
                                             const std::vector<std::string>& outputs) {
        return subgraph(b, s, k, inputs, outputs);
      });
      s.op->emit(n, e);
      headers_.insert(e.headers().begin(), e.headers().end());
      if (step_hooks_ && main) lines.push_back(fmt::format("onnxc_bench_step({});", si));
      if (profile_ && main) lines.push_back(fmt::format("const auto step_{}_start = ONNXC_PROFILE_COUNTER();", si));
      lines.push_back("{");
      for (const std::string& l : e.lines()) lines.push_back(l.empty() ? l : "  " + l);
      lines.push_back("}");
      if (main) append_hooks(lines, si, n, true);
      lines.push_back("");
    }
    if (!lines.empty() && lines.back().empty()) lines.pop_back();
    if (step_hooks_ && &b == &prog_.main) lines.push_back(fmt::format("onnxc_bench_step({});", b.steps.size()));
    return lines;
  }

 private:
  // --trace and --profile: after main step si, a block that hands the step's counter ticks to
  // onnxc_profile (only when the step has code: `timed`) and each output the step produced to
  // onnxc_trace. Its first line names it, so the hooks can be told from the model's code.
  void append_hooks(std::vector<std::string>& lines, std::size_t si, const Node& n, bool timed) const {
    std::vector<std::string> hook;
    if (profile_ && timed)
      hook.push_back(fmt::format("onnxc_profile(&step, static_cast<std::uint64_t>(ONNXC_PROFILE_COUNTER() - step_{}_start));", si));
    for (std::size_t k = 0; trace_ && k < n.outputs.size(); ++k) {
      const Value* v = n.outputs[k];
      if (!v || !T.count(v)) continue;  // an optional output nobody reads: never computed
      std::vector<std::string> dims;
      for (int64_t d : v->shape) dims.push_back(std::to_string(d));
      std::string shape = "nullptr";
      if (!dims.empty()) {
        shape = fmt::format("shape_{}", k);
        hook.push_back(fmt::format("const std::int64_t {}[] = {{{}}};", shape, fmt::join(dims, ", ")));
      }
      hook.push_back(fmt::format("const onnxc_trace_info trace_{} = {{step, {}, {}, {}, {}, {}, {}, {}}};", k, k,
                                 string_literal(v->name), static_cast<int>(v->dtype), v->shape.size(), shape,
                                 name_of(v), v->byte_size()));
      hook.push_back(fmt::format("onnxc_trace(&trace_{});", k));
    }
    if (hook.empty()) return;
    lines.push_back(fmt::format("{{  // step {}'s hooks (--trace, --profile)", si));
    lines.push_back(fmt::format("  constexpr onnxc_step_info step = {{{}, {}, {}, {}}};", string_literal(model_name_),
                                si, string_literal(n.name), string_literal(n.op_type)));
    for (const std::string& l : hook) lines.push_back("  " + l);
    lines.push_back("}");
  }

  // A nested block, with its inputs and outputs bound to the given pointer expressions.
  std::vector<std::string> subgraph(const Block& parent, const Step& s, std::size_t k,
                                    const std::vector<std::string>& inputs,
                                    const std::vector<std::string>& outputs) const {
    const Block& b = *s.subgraphs.at(k);
    const Graph& g = *b.graph;
    std::vector<std::string> lines;
    if (b.arena_bytes) {
      std::size_t off = s.scratch_offset + (s.op_scratch_bytes + prog_.alignment - 1) / prog_.alignment * prog_.alignment;
      lines.push_back(fmt::format("unsigned char* const {} = {} + {};", b.base, parent.base, off));
    }
    for (std::size_t i = 0; i < g.inputs.size() && i < inputs.size(); ++i) {
      const Value* v = g.inputs[i];
      lines.push_back(fmt::format("const {}* const {} = {};  // '{}' {} {}", dtype_ctype(v->dtype), b.input_params[i],
                                  inputs[i], v->name, dtype_name(v->dtype), shape_str(v->shape)));
      lines.push_back(fmt::format("(void){};", b.input_params[i]));
    }
    for (std::size_t i = 0; i < g.outputs.size() && i < outputs.size(); ++i) {
      const Value* v = g.outputs[i];
      lines.push_back(fmt::format("{}* const {} = {};  // '{}' {} {}", dtype_ctype(v->dtype), b.output_params[i],
                                  outputs[i], v->name, dtype_name(v->dtype), shape_str(v->shape)));
    }
    const std::vector<std::string> body = statements(b);
    for (auto& l : declarations(b, body)) lines.push_back(l);
    lines.push_back("");
    for (auto& l : body) lines.push_back(l);
    return lines;
  }

  const Program& prog_;
  const std::map<const Value*, TensorPlace>& T;
  std::set<std::string>& headers_;
  bool step_hooks_ = false;
  bool trace_ = false, profile_ = false;
  std::string model_name_;
  mutable std::set<const Value*> used_weights_;
  std::map<const Value*, std::string> extent_of_;
};

// Whether the C++ `code` uses the identifier `name`: as a whole identifier, outside comments.
// (Emitters may ask for a tensor's name and then emit nothing, e.g. for an empty output, so
// only the text tells whether a run() parameter is read.)
bool uses_identifier(const std::string& code, const std::string& name) {
  auto is_ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (std::size_t at = code.find(name); at != std::string::npos; at = code.find(name, at + 1)) {
    if ((at > 0 && is_ident(code[at - 1])) || (at + name.size() < code.size() && is_ident(code[at + name.size()])))
      continue;  // part of a longer identifier
    const std::size_t newline = code.rfind('\n', at);
    const std::size_t line_start = newline == std::string::npos ? 0 : newline + 1;
    if (std::string_view(code).substr(line_start, at - line_start).find("//") == std::string_view::npos) return true;
  }
  return false;
}

std::string indent_lines(const std::vector<std::string>& lines, const std::string& pad) {
  std::string s;
  for (const std::string& l : lines) s += l.empty() ? "\n" : pad + l + "\n";
  return s;
}

// run() starts by writing each bounded output's shape array: the static dims, and the bound as
// the dynamic dim's extent until the operator stores the actual one.
std::string bounded_shape_setup(const Graph& g, const std::vector<std::string>& shape_params) {
  std::string s;
  for (std::size_t i = 0; i < g.outputs.size(); ++i) {
    const Value* v = g.outputs[i];
    if (!v->is_bounded()) continue;
    s += fmt::format("  // '{}' is bounded by {}: its dim {} is set when it is computed\n", v->name, shape_str(v->shape),
                     v->dynamic_axis);
    for (std::size_t d = 0; d < v->shape.size(); ++d)
      s += fmt::format("  {}[{}] = {};\n", shape_params[i], d, v->shape[d]);
  }
  return s;
}

// The header's description of the bounded outputs, after run()'s comment ("" when none).
std::string bounded_outputs_doc(const Graph& g, const std::vector<std::string>& shape_params) {
  std::string s;
  for (std::size_t i = 0; i < g.outputs.size(); ++i) {
    const Value* v = g.outputs[i];
    if (!v->is_bounded()) continue;
    s += fmt::format("\n//   {} (kOutputs[{}]): at most {}; dim {} is known only at run time.\n"
                     "//     Its buffer must hold the bound; run() stores the actual shape ({} values) in\n"
                     "//     {} and the tensor, packed in that shape, at the buffer's start.",
                     v->name, i, shape_str(v->shape), v->dynamic_axis, v->shape.size(), shape_params[i]);
  }
  if (s.empty()) return s;
  return "\n//\n// Outputs whose size depends on the input values (bounded outputs):" + s +
         "\n// run_generic takes their shape arrays in output_shapes (kOutputs order; null for the others).";
}

// The header's description of string inputs and outputs, after run()'s comment ("" when none).
std::string string_tensors_doc(const Graph& g) {
  auto is_string = [](const Value* v) { return v->dtype == DType::String; };
  const bool inputs = std::any_of(g.inputs.begin(), g.inputs.end(), is_string);
  const bool outputs = std::any_of(g.outputs.begin(), g.outputs.end(), is_string);
  if (!inputs && !outputs) return "";
  std::string s = "\n//\n// String tensors are arrays of onnxc::rt::cstring (const char*, NUL-terminated UTF-8).";
  if (inputs) s += "\n// A string input is the caller's array of pointers to its strings.";
  if (outputs)
    s += "\n// A string output's buffer must hold kOutputs[i].bytes bytes: its pointer slots, then the text\n"
         "// storage run() writes new strings into. Its elements may also point to constants, to the\n"
         "// inputs' text or into the arena, so read them before the inputs or the arena are reused. A\n"
         "// null element is a string that did not fit in its text storage: compile with a larger\n"
         "// --string-bytes.";
  return s;
}

// The header's description of the --trace and --profile hooks ("" without them).
std::string hooks_doc(const CodegenOptions& opts) {
  std::string s;
  if (opts.trace)
    s += "\n//\n// Compiled with --trace: run() calls onnxc_trace(const onnxc_trace_info*) (onnxc/trace.h) after\n"
         "// every step, once per value the step produced. The program defines it.";
  if (opts.profile)
    s += "\n//\n// Compiled with --profile: run() calls onnxc_profile(const onnxc_step_info*, uint64_t ticks)\n"
         "// (onnxc/trace.h) after every step that has code, with the ticks of ONNXC_PROFILE_COUNTER()\n"
         "// (onnxc/profile.h: DWT CYCCNT on Cortex-M, rdcycle on RISC-V, steady_clock ns on hosts) the\n"
         "// step took. The program defines it.";
  return s;
}

}  // namespace

bool has_bounded_outputs(const Program& prog) {
  for (const std::string& p : prog.main.output_shape_params)
    if (!p.empty()) return true;
  return false;
}

std::string run_generic_forward_args(const Program& prog) {
  return has_bounded_outputs(prog) ? "inputs, outputs, output_shapes, arena" : "inputs, outputs, arena";
}

GeneratedCode generate_code(const Model& m, const Program& prog, const CodegenOptions& opts) {
  const Graph& g = m.graph;
  const auto& T = prog.tensors;
  std::string ns = sanitize_identifier(opts.name);

  std::set<std::string> headers = {"onnxc/layout.h"};
  if (opts.profile) headers.insert("onnxc/profile.h");
  BlockRenderer renderer(prog, headers, opts);
  const std::vector<std::string> statements = renderer.statements(prog.main);
  std::string tensors = indent_lines(renderer.declarations(prog.main, statements), "  ");
  std::string body = indent_lines(statements, "  ");
  // Parameters the code never reads (inputs only their shape matters for, --constant inputs).
  std::string unused;
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    const std::string& p = prog.main.input_params[i];
    if (g.inputs[i]->constant)
      unused += fmt::format("  (void){};  // bound at compile time (--constant)\n", p);
    else if (!uses_identifier(body, p) && !uses_identifier(tensors, p))
      unused += fmt::format("  (void){};  // only its shape matters\n", p);
  }
  for (const std::string& p : prog.main.output_params)
    if (!uses_identifier(body, p) && !uses_identifier(tensors, p))
      unused += fmt::format("  (void){};  // empty output\n", p);
  tensors = unused + tensors;

  // Weights, in first-use order, keeping only those the code reads.
  std::vector<const Value*> used;
  std::size_t weight_bytes = 0;
  for (const Value* w : prog.weights)
    if (renderer.used_weights().count(w)) {
      used.push_back(w);
      weight_bytes += w->byte_size();
    }
  std::string weights, weights_file;
  if (opts.weights_format == WeightsFormat::Incbin) {
    // String tensors are pointers to text, not bytes to include: they stay arrays in the source.
    std::vector<const Value*> binary, text;
    for (const Value* w : used) (w->constant->dtype == DType::String ? text : binary).push_back(w);
    IncbinWeights incbin = render_incbin_weights(prog, binary, ns, opts.weights_file_name, opts.weights_section);
    weights = std::move(incbin.declarations);
    for (const Value* w : text) weights += render_weight(T.at(w).weight_cname, *w, prog.alignment, opts.weights_section) + "\n";
    weights_file = std::move(incbin.bytes);
  } else {
    for (const Value* w : used)
      weights += render_weight(T.at(w).weight_cname, *w, prog.alignment, opts.weights_section) + "\n";
  }

  // Parameters.
  std::vector<std::string> run_params, c_run_params, usage_args, generic_args, c_forward;
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    const Value* v = g.inputs[i];
    const std::string& p = prog.main.input_params[i];
    run_params.push_back(fmt::format("const {}* {}", dtype_ctype(v->dtype), p));
    c_run_params.push_back(c_param(v->dtype, true, p));
    usage_args.push_back(p);
    generic_args.push_back(fmt::format("static_cast<const {}*>(inputs[{}])", dtype_ctype(v->dtype), i));
    c_forward.push_back(dtype_size(v->dtype) == 2 && dtype_is_float(v->dtype)
                            ? fmt::format("reinterpret_cast<const {}*>({})", dtype_ctype(v->dtype), p)
                            : p);
  }
  for (std::size_t i = 0; i < g.outputs.size(); ++i) {
    const Value* v = g.outputs[i];
    const std::string& p = prog.main.output_params[i];
    run_params.push_back(fmt::format("{}* {}", dtype_ctype(v->dtype), p));
    c_run_params.push_back(c_param(v->dtype, false, p));
    usage_args.push_back(p);
    generic_args.push_back(fmt::format("static_cast<{}*>(outputs[{}])", dtype_ctype(v->dtype), i));
    c_forward.push_back(dtype_size(v->dtype) == 2 && dtype_is_float(v->dtype)
                            ? fmt::format("reinterpret_cast<{}*>({})", dtype_ctype(v->dtype), p)
                            : p);
    if (!v->is_bounded()) continue;
    // A bounded output: its shape array follows it.
    const std::string& shape = prog.main.output_shape_params[i];
    run_params.push_back(fmt::format("std::int64_t* {}", shape));
    c_run_params.push_back(fmt::format("int64_t* {}", shape));
    usage_args.push_back(shape);
    generic_args.push_back(fmt::format("output_shapes[{}]", i));
    c_forward.push_back(shape);
  }
  const bool bounded = has_bounded_outputs(prog);
  std::string generic_params = "const void* const* inputs, void* const* outputs, void* arena";
  if (bounded) generic_params = "const void* const* inputs, void* const* outputs, std::int64_t* const* output_shapes, void* arena";
  std::string c_generic_params = generic_params;
  if (bounded) c_generic_params = "const void* const* inputs, void* const* outputs, int64_t* const* output_shapes, void* arena";
  tensors = bounded_shape_setup(g, prog.main.output_shape_params) + tensors;
  std::vector<std::string> in_infos, out_infos, in_desc, out_desc;
  for (const Value* v : g.inputs) {
    in_infos.push_back(tensor_info(*v));
    in_desc.push_back(fmt::format("{} {} {}", v->name, dtype_name(v->dtype), shape_str(v->shape)));
  }
  for (const Value* v : g.outputs) {
    out_infos.push_back(tensor_info(*v));
    out_desc.push_back(fmt::format("{} {} {}{}", v->name, dtype_name(v->dtype), v->is_bounded() ? "at most " : "",
                                   shape_str(v->shape)));
  }
  // C++ has no empty arrays: a model without inputs (or outputs) gets one unused entry.
  if (in_infos.empty()) in_infos.push_back("    {\"\", 0, 0, {0}, 0, 0, -1},  // (no inputs)");
  if (out_infos.empty()) out_infos.push_back("    {\"\", 0, 0, {0}, 0, 0, -1},  // (no outputs)");
  std::string kernel_includes = opts.preamble;
  for (const std::string& h : headers) kernel_includes += fmt::format("#include \"{}\"\n", h);
  if (opts.step_hooks) kernel_includes += "extern \"C\" void onnxc_bench_step(int step);  // onnxc bench --layers\n";

  std::string prefix = ns;
  std::string c_prefix = prefix;
  std::transform(c_prefix.begin(), c_prefix.end(), c_prefix.begin(), [](unsigned char c) { return std::toupper(c); });
  std::string guard = c_prefix + "_" + sanitize_identifier(opts.header_name) + "_";
  std::transform(guard.begin(), guard.end(), guard.begin(), [](unsigned char c) { return std::toupper(c); });
  std::string summary = fmt::format("{} steps; arena {} bytes; weights {} bytes.\n// inputs: {}\n// outputs: {}",
                                    prog.main.steps.size(), prog.arena_bytes, weight_bytes,
                                    fmt::join(in_desc, "; "), fmt::join(out_desc, "; "));

  std::vector<std::pair<std::string, std::string>> vars = {
      {"onnxc_version", fmt::format("{}", kOnnxcVersion)},
      {"model_file", opts.model_file},
      {"summary", summary},
      {"ns", ns},
      {"prefix", prefix},
      {"c_prefix", c_prefix},
      {"guard", guard},
      {"header_name", opts.header_name},
      {"arena_bytes", fmt::format("{}", std::max<std::size_t>(prog.arena_bytes, 1))},
      {"arena_alignment", fmt::format("{}", prog.alignment)},
      {"weight_bytes", fmt::format("{}", weight_bytes)},
      {"weight_count", fmt::format("{}", used.size())},
      {"num_inputs", fmt::format("{}", g.inputs.size())},
      {"num_outputs", fmt::format("{}", g.outputs.size())},
      {"input_infos", fmt::format("{}", fmt::join(in_infos, "\n"))},
      {"output_infos", fmt::format("{}", fmt::join(out_infos, "\n"))},
      {"run_params", fmt::format("{}", fmt::join(run_params, ", "))},
      {"c_run_params", fmt::format("{}", fmt::join(c_run_params, ", "))},
      {"usage_args", fmt::format("{}", fmt::join(usage_args, ", "))},
      {"generic_args", fmt::format("{}", fmt::join(generic_args, ", "))},
      {"generic_params", generic_params},
      {"c_generic_params", c_generic_params},
      {"generic_forward_args", run_generic_forward_args(prog)},
      {"bounded_doc", bounded_outputs_doc(g, prog.main.output_shape_params) + string_tensors_doc(g)},
      {"c_forward_args", fmt::format("{}", fmt::join(c_forward, ", "))},
      {"kernel_includes", kernel_includes},
      {"hooks_include", opts.trace || opts.profile ? "\n#include \"onnxc/trace.h\"" : ""},
      {"hooks_doc", hooks_doc(opts)},
      {"weights", weights},
      {"tensors", tensors},
      {"body", body},
  };
  GeneratedCode out;
  vars.emplace_back("file_name", opts.header_name);
  out.header = render_template("model.h.tmpl", vars);
  vars.back().second = opts.source_name;
  out.source = render_template("model.cpp.tmpl", vars);
  out.weights_file = std::move(weights_file);
  return out;
}

}  // namespace onnxc
