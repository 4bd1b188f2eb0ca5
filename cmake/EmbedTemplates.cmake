# Writes OUT, a C++ source that holds every file in TEMPLATES as a string, for
# onnxc::template_text(name). Run by the build with cmake -P.
separate_arguments(TEMPLATES)
set(body "")
set(table "")
foreach(path IN LISTS TEMPLATES)
  get_filename_component(name "${path}" NAME)
  file(READ "${path}" text)
  string(MAKE_C_IDENTIFIER "${name}" id)
  string(APPEND body "const char k_${id}[] = R\"onnxc_template(${text})onnxc_template\";\n\n")
  string(APPEND table "    {\"${name}\", k_${id}},\n")
endforeach()
file(WRITE "${OUT}.tmp" "// Generated from templates/ by cmake/EmbedTemplates.cmake. Do not edit.
#include <cstring>
#include <stdexcept>
#include <string>

namespace onnxc {
namespace {
${body}}  // namespace

const char* template_text(const std::string& name) {
  static const struct { const char* name; const char* text; } table[] = {
${table}  };
  for (const auto& t : table)
    if (name == t.name) return t.text;
  throw std::runtime_error(\"missing template: \" + name);
}

}  // namespace onnxc
")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
