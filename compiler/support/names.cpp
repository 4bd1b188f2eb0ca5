#include "support/names.h"

#include <cctype>

#include <fmt/format.h>

namespace onnxc {

std::string sanitize_identifier(const std::string& name) {
  std::string s;
  for (char c : name) {
    unsigned char u = static_cast<unsigned char>(c);
    s += (std::isalnum(u) && u < 128) ? c : '_';
  }
  // Collapse runs of '_' for readability; identifiers with "__" are reserved in C++.
  std::string out;
  for (char c : s)
    if (!(c == '_' && !out.empty() && out.back() == '_')) out += c;
  while (!out.empty() && out.front() == '_') out.erase(out.begin());
  while (!out.empty() && out.back() == '_') out.pop_back();
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "v" + out;
  return out;
}

IdentifierPool::IdentifierPool() {
  // C++ keywords and names the generated code uses itself.
  for (const char* k :
       {"alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
        "char", "char16_t", "char32_t", "char8_t", "class", "compl", "concept", "const", "consteval", "constexpr",
        "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete",
        "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
        "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
        "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
        "requires", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
        "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid", "typename",
        "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq", "arena",
        "base", "rt", "std", "onnxc", "run", "main", "p", "inputs", "outputs"})
    used_.insert(k);
}

std::string IdentifierPool::make(const std::string& prefix, const std::string& name) {
  std::string base = prefix + sanitize_identifier(name);
  if (base.size() > 60) base = base.substr(0, 60);
  std::string id = base;
  for (int i = 2; used_.count(id); ++i) id = fmt::format("{}_{}", base, i);
  used_.insert(id);
  return id;
}

}  // namespace onnxc
