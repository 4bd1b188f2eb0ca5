#include "ops/emitter.h"

#include <cmath>
#include <cstring>

namespace onnxc {

std::string float_literal(float v) {
  if (std::isnan(v)) return "std::numeric_limits<float>::quiet_NaN()";
  if (std::isinf(v)) return v > 0 ? "std::numeric_limits<float>::infinity()" : "-std::numeric_limits<float>::infinity()";
  // fmt prints the shortest decimal that reads back to the same float.
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".eE") == std::string::npos) s += ".";
  return s + "f";
}

std::string double_literal(double v) {
  if (std::isnan(v)) return "std::numeric_limits<double>::quiet_NaN()";
  if (std::isinf(v)) return v > 0 ? "std::numeric_limits<double>::infinity()" : "-std::numeric_limits<double>::infinity()";
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".eE") == std::string::npos) s += ".";
  return s;
}

std::string string_literal(const std::string& text) {
  std::string s = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') s += fmt::format("\\{}", static_cast<char>(c));
    else if (c >= 0x20 && c < 0x7f && c != '?') s += static_cast<char>(c);  // '?': no trigraphs
    else s += fmt::format("\\{:03o}", c);  // three octal digits: a following digit cannot join it
  }
  return s + "\"";
}

Emitter::Emitter(const Node& node, std::function<std::string(const Value*)> name_of, std::string scratch)
    : node_(node), name_of_(std::move(name_of)), scratch_(std::move(scratch)) {}

std::string Emitter::in(std::size_t i) const {
  return node_.has_input(i) ? name_of_(node_.inputs[i]) : "nullptr";
}

std::string Emitter::in_or_null(std::size_t i, DType t) const {
  return node_.has_input(i) ? name_of_(node_.inputs[i]) : fmt::format("static_cast<const {}*>(nullptr)", dtype_ctype(t));
}

std::string Emitter::out(std::size_t i) const {
  return node_.has_output(i) ? name_of_(node_.outputs[i]) : "nullptr";
}

std::string Emitter::out_extent(std::size_t i) const {
  if (!node_.has_output(i) || !node_.outputs[i]->is_bounded() || !extent_of_) return "";
  return extent_of_(node_.outputs[i]);
}

void Emitter::bounded_call(const std::string& call, const std::vector<std::size_t>& outputs) {
  std::vector<std::string> targets;
  for (std::size_t i : outputs)
    if (std::string t = out_extent(i); !t.empty()) targets.push_back(t);
  if (targets.empty()) return linef("{};", call);
  // No local variable: it could shadow a tensor of the same name that `call` reads.
  linef("{} = static_cast<std::int64_t>({});", targets[0], call);
  for (std::size_t t = 1; t < targets.size(); ++t) linef("{} = {};", targets[t], targets[0]);
}

void Emitter::line(const std::string& code) {
  lines_.push_back(ranges_open_ && !code.empty() && code[0] != '#' ? "  " + code : code);
}

std::string moved(const std::string& ptr, const std::string& offset) {
  const bool name = !ptr.empty() && ptr.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == std::string::npos;
  return fmt::format(name ? "{} + {}" : "({}) + {}", ptr, offset);
}

std::string range_offset(int64_t stride) {
  return stride == 1 ? "r_.begin" : fmt::format("r_.begin * {}", stride);
}

void Emitter::open_ranges(int64_t items, int64_t tasks, int64_t align) {
  if (tasks < 2) return;
  include("onnxc/parallel.h");
  linef("rt::parallel_ranges(parallel, {}, {}, {}, [&](const rt::Range r_) {{", items, tasks, align);
  ranges_open_ = true;
}

void Emitter::close_ranges() {
  if (!ranges_open_) return;
  ranges_open_ = false;
  line("});");
}

std::string Emitter::index_array(const std::string& name, const std::vector<int64_t>& v) {
  if (v.empty()) {
    linef("constexpr rt::index_t {}[] = {{0}};", name);
  } else {
    linef("constexpr rt::index_t {}[] = {{{}}};", name, fmt::join(v, ", "));
  }
  return name;
}

std::string ctype_of(const Value& v) { return dtype_ctype(v.dtype); }

std::string params_literal(const std::string& type, const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string s = type + "{";
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i) s += ", ";
    s += fmt::format("/*{}=*/{}", fields[i].first, fields[i].second);
  }
  return s + "}";
}

}  // namespace onnxc
