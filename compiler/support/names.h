// Turning ONNX names (any string) into unique, readable C++ identifiers.
#pragma once

#include <set>
#include <string>

namespace onnxc {

// Letters, digits and '_' kept; everything else becomes '_'; a leading digit gets a prefix.
std::string sanitize_identifier(const std::string& name);

class IdentifierPool {
 public:
  IdentifierPool();
  // prefix + sanitized name, made unique by a numeric suffix; never a C++ keyword.
  std::string make(const std::string& prefix, const std::string& name);

 private:
  std::set<std::string> used_;
};

}  // namespace onnxc
