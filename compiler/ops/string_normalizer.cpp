// StringNormalizer-10: drops the stopwords from a [C] or [1, C] string tensor and optionally
// changes the case of the others (kernel: rt::string_normalize in onnxc/strings.h).
//
// With stopwords, how many strings remain is known only at run time: the output is bounded by
// the input's shape (Value::dynamic_axis), at least one element for the empty result, [1] or
// [1, 1] holding "". Without a case change the output points to the input's text; a case
// change writes new text into the output's text storage, whose size the --string-bytes option
// sets (input lengths are unknown at compile time). Text kept from an input whose text was
// computed at run time is copied too, into as much storage as that input has.
//
// Case mapping and case-insensitive matching cover the ASCII letters, which is what the default
// locale (en_US) does to them; other locales are refused.
#include <cstring>

#include "onnxc/strings.h"
#include "ops/elementwise.h"
#include "ops/emitter.h"

namespace onnxc {
namespace {

rt::CaseChange case_change(const Node& n) {
  const std::string action = n.attr_string("case_change_action", "NONE");
  if (action == "NONE") return rt::CaseChange::None;
  if (action == "LOWER") return rt::CaseChange::Lower;
  if (action == "UPPER") return rt::CaseChange::Upper;
  fail_invalid(n, fmt::format("case_change_action is '{}'", action), "use NONE, LOWER or UPPER");
}

bool case_sensitive(const Node& n) { return n.attr_int("is_case_sensitive", 0) != 0; }

// The locales whose case rules for the ASCII letters onnxc implements; "" is the runtime's
// default (en_US in onnxruntime).
bool ascii_case_locale(const std::string& locale) {
  for (const char* known : {"", "en_US", "en_US.UTF-8", "en_US.utf8", "C", "C.UTF-8", "POSIX"})
    if (locale == known) return true;
  return false;
}

std::vector<std::string> stopwords(const Node& n) {
  const Attribute* a = n.attr("stopwords");
  return a ? a->strings : std::vector<std::string>{};
}

// The strings are a row: [C] or [1, C]. Returns the axis along which they lie.
int row_axis(const Node& n) {
  const Shape& x = input(n, 0).shape;
  if (x.size() == 1) return 0;
  if (x.size() == 2 && x[0] == 1) return 1;
  fail_invalid(n, fmt::format("the input has shape {}; StringNormalizer takes [C] or [1, C]", shape_str(x)),
               "reshape the input to [C] first");
}

void infer_string_normalizer(Node& n) {
  check_arity(n, 1, 1, 1, 1);
  require_dtype(n, 0, {DType::String});
  const rt::CaseChange change = case_change(n);
  const std::string locale = n.attr_string("locale", "");
  if ((change != rt::CaseChange::None || !case_sensitive(n)) && !ascii_case_locale(locale))
    fail_unsupported(n, fmt::format("locale '{}': onnxc maps the case of ASCII letters only (en_US)", locale),
                     "drop the locale attribute or set it to en_US");
  for (const std::string& w : stopwords(n))
    if (w.find('\0') != std::string::npos) fail_unsupported(n, "a stopword holds a NUL byte");
  const int axis = row_axis(n);
  Shape y = input(n, 0).shape;
  if (stopwords(n).empty() && y[static_cast<std::size_t>(axis)] > 0) {
    set_output(n, 0, DType::String, y);
  } else {
    y[static_cast<std::size_t>(axis)] = std::max<int64_t>(y[static_cast<std::size_t>(axis)], 1);
    set_bounded_output(n, 0, DType::String, y, axis);
  }
  // New text needs text storage; so does text kept from an input whose text is in its own
  // buffer (the arena reuses it), as much per element as that input has.
  const std::size_t input_text = input(n, 0).text_bytes_per_element;
  if (n.has_output(0) && (change != rt::CaseChange::None || input_text != 0))
    n.outputs[0]->text_bytes_per_element = input_text != 0 ? input_text : Value::kTextBytesFromOption;
}

std::string case_change_name(rt::CaseChange c) {
  switch (c) {
    case rt::CaseChange::Lower: return "rt::CaseChange::Lower";
    case rt::CaseChange::Upper: return "rt::CaseChange::Upper";
    default: return "rt::CaseChange::None";
  }
}

void emit_string_normalizer(const Node& n, Emitter& e) {
  e.include("onnxc/strings.h");
  const Value& y = *n.outputs[0];
  const std::vector<std::string> words = stopwords(n);
  std::string stopword_array = "nullptr";
  if (!words.empty()) {
    std::vector<std::string> literals;
    for (const std::string& w : words) literals.push_back(string_literal(w));
    e.linef("constexpr rt::cstring stopwords[] = {{{}}};", fmt::join(literals, ", "));
    stopword_array = "stopwords";
  }
  e.linef("const rt::StringNormalizerParams params{{{}, {}, {}, {}}};", stopword_array, words.size(),
          case_sensitive(n) ? "true" : "false", case_change_name(case_change(n)));
  const std::string text = y.text_bytes() ? fmt::format("reinterpret_cast<char*>({} + {})", e.out(0), y.numel())
                                          : std::string("nullptr");
  const std::string call = fmt::format("rt::string_normalize({}, {}, params, {}, {}, {})", e.in(0),
                                       n.inputs[0]->numel(), e.out(0), text, y.text_bytes());
  if (y.is_bounded()) e.bounded_call(call, {0});
  else e.linef("{};", call);
}

// Runs the kernel on the constant strings, with text storage for all of them.
void fold_string_normalizer(const Node& n, std::vector<Tensor>& outs) {
  const Tensor& x = *n.inputs[0]->constant;
  const Value& y_value = *n.outputs[0];
  std::vector<rt::cstring> x_ptrs, y_ptrs(static_cast<std::size_t>(y_value.numel()));
  std::size_t text_bytes = 0;
  for (const std::string& s : x.strings) {
    x_ptrs.push_back(s.c_str());
    text_bytes += s.size() + 1;
  }
  const std::vector<std::string> words = stopwords(n);
  std::vector<rt::cstring> word_ptrs;
  for (const std::string& w : words) word_ptrs.push_back(w.c_str());
  const rt::StringNormalizerParams params{word_ptrs.data(), static_cast<rt::index_t>(word_ptrs.size()),
                                          case_sensitive(n), case_change(n)};
  std::vector<char> text(text_bytes);
  const rt::index_t kept = rt::string_normalize(x_ptrs.data(), static_cast<rt::index_t>(x_ptrs.size()), params,
                                                y_ptrs.data(), text.data(), static_cast<rt::index_t>(text.size()));
  Tensor& y = fold_output(n, outs);
  if (y_value.is_bounded()) shrink_to_extent(y, y_value, kept);
  for (std::size_t i = 0; i < y.strings.size(); ++i) y.strings[i] = y_ptrs[i];
}

const OpRegistrar string_normalizer_op([] {
  OpDef d;
  d.op_type = "StringNormalizer";
  d.versions = {10};
  d.infer = infer_string_normalizer;
  d.emit = emit_string_normalizer;
  d.fold = fold_string_normalizer;
  return d;
}());

}  // namespace
}  // namespace onnxc
