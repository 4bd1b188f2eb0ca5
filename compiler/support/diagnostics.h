// Errors the compiler reports to its user.
//
// Every message says where (file, node or value), what is wrong and, where possible, what to
// change. Independent problems are collected and reported together; a CompileError ends the
// compilation.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace onnxc {

enum class ErrorKind {
  Invalid,      // the model breaks the ONNX spec (or the file is damaged)
  Unsupported,  // valid ONNX that onnxc cannot compile (yet)
  Usage,        // bad command line
};

struct Problem {
  ErrorKind kind = ErrorKind::Invalid;
  std::string where;  // "node 3 'conv1' (Conv version 11, opset 13)", "input 'x'", ...
  std::string what;
  std::string fix;    // may be empty
  // Graph inputs whose values, known at compile time, would make this problem go away (a
  // Reshape's target shape computed from an input, say): what `--constant NAME=VALUE.pb` pins.
  // Empty when pinning inputs would not help.
  std::vector<std::string> inputs_to_pin;
};

std::string format_problem(const std::string& file, const Problem& p);

class CompileError : public std::runtime_error {
 public:
  explicit CompileError(std::vector<Problem> problems, std::string file = {});
  CompileError(ErrorKind kind, std::string where, std::string what, std::string fix = {});
  const std::vector<Problem>& problems() const { return problems_; }
  bool unsupported() const;  // every problem is an Unsupported one
  // The graph inputs that, pinned to values, would let the compilation get further: the union of
  // every problem's inputs_to_pin, or empty unless every problem has some.
  std::vector<std::string> inputs_to_pin() const;
  std::string file;

 private:
  std::vector<Problem> problems_;
};

// Collects problems; throw_if_any() raises them all at once.
class Diagnostics {
 public:
  void add(ErrorKind kind, std::string where, std::string what, std::string fix = {});
  void invalid(std::string where, std::string what, std::string fix = {}) {
    add(ErrorKind::Invalid, std::move(where), std::move(what), std::move(fix));
  }
  void unsupported(std::string where, std::string what, std::string fix = {}) {
    add(ErrorKind::Unsupported, std::move(where), std::move(what), std::move(fix));
  }
  bool empty() const { return problems_.empty(); }
  std::size_t size() const { return problems_.size(); }
  void throw_if_any() const;

 private:
  std::vector<Problem> problems_;
};

}  // namespace onnxc
