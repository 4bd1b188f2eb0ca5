// What unit tests of the compiler ask of a compiled model: the values it folded to constants and
// the message it refuses a model with.
#pragma once

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "ir/ir.h"
#include "passes/pipeline.h"
#include "support/diagnostics.h"

namespace testing {

// The elements of a value the compiler folded to a constant, as doubles.
inline std::vector<double> constant_values(const onnxc::Value& v) {
  REQUIRE(v.constant);
  std::vector<double> out;
  for (int64_t i = 0; i < v.constant->numel(); ++i) out.push_back(v.constant->float_at(i));
  return out;
}

// The message onnxc refuses the model at `path` with, or "" if it compiles.
inline std::string compile_error(const std::string& path) {
  try {
    onnxc::check_model(path, {});
  } catch (const onnxc::CompileError& e) {
    return e.what();
  }
  return "";
}

}  // namespace testing
