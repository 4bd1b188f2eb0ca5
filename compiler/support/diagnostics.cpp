#include "support/diagnostics.h"

#include <algorithm>

#include <fmt/format.h>

namespace onnxc {

std::string format_problem(const std::string& file, const Problem& p) {
  std::string s = "error: ";
  if (p.kind == ErrorKind::Unsupported) s = "error: unsupported: ";
  if (!file.empty()) s += file + ": ";
  if (!p.where.empty()) s += p.where + ": ";
  s += p.what;
  if (!p.fix.empty()) s += "\n  fix: " + p.fix;
  return s;
}

static std::string join_problems(const std::vector<Problem>& ps, const std::string& file) {
  std::string s;
  for (const Problem& p : ps) {
    if (!s.empty()) s += '\n';
    s += format_problem(file, p);
  }
  return s;
}

CompileError::CompileError(std::vector<Problem> problems, std::string f)
    : std::runtime_error(join_problems(problems, f)), file(std::move(f)), problems_(std::move(problems)) {}

CompileError::CompileError(ErrorKind kind, std::string where, std::string what, std::string fix)
    : CompileError(std::vector<Problem>{Problem{kind, std::move(where), std::move(what), std::move(fix), {}}}) {}

bool CompileError::unsupported() const {
  return !problems_.empty() && std::all_of(problems_.begin(), problems_.end(), [](const Problem& p) {
    return p.kind == ErrorKind::Unsupported;
  });
}

std::vector<std::string> CompileError::inputs_to_pin() const {
  std::vector<std::string> names;
  for (const Problem& p : problems_) {
    if (p.inputs_to_pin.empty()) return {};
    names.insert(names.end(), p.inputs_to_pin.begin(), p.inputs_to_pin.end());
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

void Diagnostics::add(ErrorKind kind, std::string where, std::string what, std::string fix) {
  problems_.push_back(Problem{kind, std::move(where), std::move(what), std::move(fix), {}});
}

void Diagnostics::throw_if_any() const {
  if (!problems_.empty()) throw CompileError(problems_);
}

}  // namespace onnxc
