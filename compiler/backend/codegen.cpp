#include "backend/codegen.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/args.h>
#include <fmt/format.h>

#include "onnxc/base.h"
#include "ops/emitter.h"
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

std::string render_weight(const std::string& cname, const Value& v, std::size_t alignment) {
  const Tensor& t = *v.constant;
  int64_t n = t.numel();
  std::string s = fmt::format("// '{}': {} {}\n", v.name, dtype_name(t.dtype), shape_str(t.shape));
  s += fmt::format("alignas({}) const {} {}[{}] = {{", alignment, dtype_ctype(t.dtype), cname, std::max<int64_t>(n, 1));
  const int per_line = t.dtype == DType::Bool ? 16 : 8;
  for (int64_t i = 0; i < n; ++i) {
    if (i % per_line == 0) s += "\n   ";
    s += " " + element_literal(t, i) + ",";
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
  return fmt::format("    {{\"{}\", {}, {}, {{{}}}, {}, {}}},", v.name, static_cast<int>(v.dtype), v.shape.size(),
                     fmt::join(dims, ", "), v.numel(), v.byte_size());
}

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

}  // namespace

std::string render_template(const std::string& name, const std::vector<std::pair<std::string, std::string>>& vars) {
  fmt::dynamic_format_arg_store<fmt::format_context> args;
  for (const auto& [key, value] : vars) args.push_back(fmt::arg(key.c_str(), value));
  return fmt::vformat(template_text(name), args);
}

GeneratedCode generate_code(const Model& m, const Program& prog, const CodegenOptions& opts) {
  const Graph& g = m.graph;
  const auto& T = prog.tensors;
  std::string ns = sanitize_identifier(opts.name);

  auto name_of = [&](const Value* v) -> std::string {
    const TensorPlace& tp = T.at(v);
    return tp.storage == Storage::Constant ? tp.weight_cname : tp.cname;
  };

  // Weights.
  std::string weights;
  for (const Value* w : prog.weights) weights += render_weight(T.at(w).weight_cname, *w, prog.alignment) + "\n";

  // Tensor pointers in the arena and aliases.
  std::string tensors;
  for (const Step& s : prog.steps)
    for (const Value* v : s.node->outputs) {
      if (!v) continue;
      const TensorPlace& tp = T.at(v);
      std::string ct = dtype_ctype(v->dtype);
      if (tp.storage == Storage::Arena) {
        tensors += fmt::format("  {}* const {} = reinterpret_cast<{}*>(base + {});  // {} {}, {} bytes\n", ct, tp.cname,
                               ct, tp.offset, dtype_name(v->dtype), shape_str(v->shape), v->byte_size());
      } else if (tp.storage == Storage::Alias) {
        const TensorPlace& root = T.at(tp.alias_of);
        std::string cq = root.storage == Storage::Input ? "const " : "";
        tensors += fmt::format("  {}{}* const {} = {};  // {} {}, a view of '{}'\n", cq, ct, tp.cname, root.cname,
                               dtype_name(v->dtype), shape_str(v->shape), tp.alias_of->name);
      }
    }

  std::set<std::string> headers = {"onnxc/layout.h"};
  std::string body;
  // Outputs that are constants or inputs passed straight through are copied first.
  for (std::size_t i = 0; i < g.outputs.size(); ++i) {
    const Value* v = g.outputs[i];
    const TensorPlace& tp = T.at(v);
    if (v->constant)
      body += fmt::format("  // output '{}' is a constant\n  rt::copy({}, {}, {});\n\n", v->name, tp.weight_cname,
                          prog.output_params[i], v->numel());
    else if (tp.storage == Storage::Input)
      body += fmt::format("  // output '{}' is input '{}' unchanged\n  rt::copy({}, {}, {});\n\n", v->name, v->name,
                          tp.cname, prog.output_params[i], v->numel());
  }
  for (std::size_t si = 0; si < prog.steps.size(); ++si) {
    const Step& s = prog.steps[si];
    const Node& n = *s.node;
    body += fmt::format("  // {}. '{}' {}-{}: ({}) -> ({})\n", si, n.name, n.op_type, n.version, shape_list(n, true),
                        shape_list(n, false));
    const Value* out0 = n.has_output(0) ? n.outputs[0] : nullptr;
    if (s.op->is_view && out0 && T.at(out0).storage == Storage::Alias) {
      body += "  // (a view: no code)\n\n";
      continue;
    }
    std::string scratch = s.scratch_bytes ? fmt::format("(base + {})", s.scratch_offset) : "nullptr";
    Emitter e(n, name_of, scratch);
    s.op->emit(n, e);
    headers.insert(e.headers().begin(), e.headers().end());
    body += "  {\n";
    for (const std::string& l : e.lines()) body += "    " + l + "\n";
    body += "  }\n\n";
  }
  if (!body.empty() && body.back() == '\n') body.pop_back();

  // Parameters.
  std::vector<std::string> run_params, c_run_params, usage_args, generic_args, c_forward;
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    const Value* v = g.inputs[i];
    const std::string& p = prog.input_params[i];
    run_params.push_back(fmt::format("const {}* {}", dtype_ctype(v->dtype), p));
    c_run_params.push_back(fmt::format("const {}* {}", c_type(v->dtype), p));
    usage_args.push_back(p);
    generic_args.push_back(fmt::format("static_cast<const {}*>(inputs[{}])", dtype_ctype(v->dtype), i));
    c_forward.push_back(dtype_size(v->dtype) == 2 && dtype_is_float(v->dtype)
                            ? fmt::format("reinterpret_cast<const {}*>({})", dtype_ctype(v->dtype), p)
                            : p);
  }
  for (std::size_t i = 0; i < g.outputs.size(); ++i) {
    const Value* v = g.outputs[i];
    const std::string& p = prog.output_params[i];
    run_params.push_back(fmt::format("{}* {}", dtype_ctype(v->dtype), p));
    c_run_params.push_back(fmt::format("{}* {}", c_type(v->dtype), p));
    usage_args.push_back(p);
    generic_args.push_back(fmt::format("static_cast<{}*>(outputs[{}])", dtype_ctype(v->dtype), i));
    c_forward.push_back(dtype_size(v->dtype) == 2 && dtype_is_float(v->dtype)
                            ? fmt::format("reinterpret_cast<{}*>({})", dtype_ctype(v->dtype), p)
                            : p);
  }
  std::vector<std::string> in_infos, out_infos, in_desc, out_desc;
  for (const Value* v : g.inputs) {
    in_infos.push_back(tensor_info(*v));
    in_desc.push_back(fmt::format("{} {} {}", v->name, dtype_name(v->dtype), shape_str(v->shape)));
  }
  for (const Value* v : g.outputs) {
    out_infos.push_back(tensor_info(*v));
    out_desc.push_back(fmt::format("{} {} {}", v->name, dtype_name(v->dtype), shape_str(v->shape)));
  }
  // C++ has no empty arrays: a model without inputs (or outputs) gets one unused entry.
  if (in_infos.empty()) in_infos.push_back("    {\"\", 0, 0, {0}, 0, 0},  // (no inputs)");
  if (out_infos.empty()) out_infos.push_back("    {\"\", 0, 0, {0}, 0, 0},  // (no outputs)");
  std::string kernel_includes;
  for (const std::string& h : headers) kernel_includes += fmt::format("#include \"{}\"\n", h);

  std::string prefix = ns;
  std::string c_prefix = prefix;
  std::transform(c_prefix.begin(), c_prefix.end(), c_prefix.begin(), [](unsigned char c) { return std::toupper(c); });
  std::string guard = c_prefix + "_" + sanitize_identifier(opts.header_name) + "_";
  std::transform(guard.begin(), guard.end(), guard.begin(), [](unsigned char c) { return std::toupper(c); });
  std::string summary = fmt::format("{} steps; arena {} bytes; weights {} bytes.\n// inputs: {}\n// outputs: {}",
                                    prog.steps.size(), prog.arena_bytes, prog.weights_bytes,
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
      {"weight_bytes", fmt::format("{}", prog.weights_bytes)},
      {"weight_count", fmt::format("{}", prog.weights.size())},
      {"num_inputs", fmt::format("{}", g.inputs.size())},
      {"num_outputs", fmt::format("{}", g.outputs.size())},
      {"input_infos", fmt::format("{}", fmt::join(in_infos, "\n"))},
      {"output_infos", fmt::format("{}", fmt::join(out_infos, "\n"))},
      {"run_params", fmt::format("{}", fmt::join(run_params, ", "))},
      {"c_run_params", fmt::format("{}", fmt::join(c_run_params, ", "))},
      {"usage_args", fmt::format("{}", fmt::join(usage_args, ", "))},
      {"generic_args", fmt::format("{}", fmt::join(generic_args, ", "))},
      {"c_forward_args", fmt::format("{}", fmt::join(c_forward, ", "))},
      {"kernel_includes", kernel_includes},
      {"weights", weights},
      {"tensors", tensors},
      {"body", body},
  };
  GeneratedCode out;
  vars.emplace_back("file_name", opts.header_name);
  out.header = render_template("model.h.tmpl", vars);
  vars.back().second = opts.source_name;
  out.source = render_template("model.cpp.tmpl", vars);
  return out;
}

}  // namespace onnxc
