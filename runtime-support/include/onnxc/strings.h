// onnxc runtime support: string tensors (StringNormalizer, Cast to and from string, CategoryMapper).
//
// A string tensor is an array of rt::cstring: pointers to NUL-terminated UTF-8 text. A kernel
// that only selects strings (StringNormalizer without a case change) copies pointers, so its
// output points into its input's text. A kernel that makes new text writes it into text
// storage: a fixed-size char buffer that follows the output's pointer array in the same buffer
// (the compiler sizes it). A string that does not fit becomes a null pointer, never a truncated
// string, so running out of storage is visible in the output. Null input strings (no text) stay
// null, and read as NaN when cast to float.
//
// Numbers and text convert exactly, without libc's printf/strtod (which may allocate on
// newlib): floats are written as the shortest decimal that reads back to the same float, in the
// spelling of numpy's str() of a float32 (the ONNX test data's); reading rounds correctly to
// nearest-even. Both compare the decimal with float midpoints as exact decimal expansions
// (Decimal below), at most ~120 digits on the stack.
#ifndef ONNXC_STRINGS_H
#define ONNXC_STRINGS_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "onnxc/base.h"

namespace onnxc {
namespace rt {

// Bytes the text of one number may take, NUL included: "-9999999000000000.0" (float),
// "-9223372036854775808" (int64).
constexpr index_t kNumberTextBytes = 24;

// ---- text storage ----

// Bump allocation of new strings in a fixed char buffer.
class TextStorage {
 public:
  TextStorage(char* begin, index_t bytes) : next_(begin), end_(begin + bytes) {}
  // Room for `length` chars and their NUL, or nullptr when the storage cannot hold them.
  char* reserve(index_t length) {
    if (length < 0 || end_ - next_ < length + 1) return nullptr;
    char* s = next_;
    next_ += length + 1;
    s[length] = '\0';
    return s;
  }

 private:
  char* next_;
  char* end_;
};

// ---- exact decimals ----

namespace strings_detail {

// A non-negative number as decimal digits (0-9), most significant first: the value is
// digits * 10^-scale. Sized for the midpoints between floats: (2^26 + 2) * 5^151 has 114 digits.
struct Decimal {
  static constexpr int kDigits = 120;
  unsigned char digit[kDigits];
  int scale = 0;
};

inline void multiply_small(Decimal& d, unsigned factor) {
  unsigned carry = 0;
  for (int i = Decimal::kDigits - 1; i >= 0; --i) {
    const unsigned v = d.digit[i] * factor + carry;
    d.digit[i] = static_cast<unsigned char>(v % 10);
    carry = v / 10;
  }
}

// k * 2^q exactly: k * 2^q for q >= 0, else k * 5^-q / 10^-q.
inline Decimal scaled_binary(std::uint32_t k, int q) {
  Decimal d;
  std::memset(d.digit, 0, sizeof d.digit);
  for (int i = Decimal::kDigits - 1; k != 0; --i, k /= 10) d.digit[i] = static_cast<unsigned char>(k % 10);
  const unsigned factor = q >= 0 ? 2u : 5u;
  for (int i = 0; i < (q >= 0 ? q : -q); ++i) multiply_small(d, factor);
  d.scale = q >= 0 ? 0 : -q;
  return d;
}

// Whether every digit from position `from` on is zero.
inline bool rest_is_zero(const Decimal& d, int from) {
  for (int j = from; j < Decimal::kDigits; ++j)
    if (d.digit[j]) return false;
  return true;
}

// A positive decimal in normalized form: significant digits (no leading or trailing zeros)
// and the power of ten of the first one: 0.0123 is {"123", 3 digits, exponent -2}.
struct Significand {
  unsigned char digit[Decimal::kDigits];
  int count = 0;
  int exponent = 0;
};

inline Significand normalize(const Decimal& d) {
  Significand s;
  int first = 0;
  while (first < Decimal::kDigits && d.digit[first] == 0) ++first;
  int last = Decimal::kDigits;
  while (last > first && d.digit[last - 1] == 0) --last;
  for (int i = first; i < last; ++i) s.digit[s.count++] = d.digit[i];
  s.exponent = Decimal::kDigits - 1 - first - d.scale;
  return s;
}

// -1, 0, 1 as a <, ==, > b (both positive: count > 0).
inline int compare(const Significand& a, const Significand& b) {
  if (a.exponent != b.exponent) return a.exponent < b.exponent ? -1 : 1;
  const int n = a.count > b.count ? a.count : b.count;
  for (int i = 0; i < n; ++i) {
    const int x = i < a.count ? a.digit[i] : 0, y = i < b.count ? b.digit[i] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

// A positive finite float as m * 2^e (m < 2^24), with the midpoints to its neighbours as
// k * 2^(e - 2): (4m - 2) below, or (4m - 1) when m is a power of two above the subnormals
// (the gap below is half as wide), and (4m + 2) above.
struct BinaryFloat {
  std::uint32_t m;
  int e;
  std::uint32_t k_low, k_high;
};

inline BinaryFloat decompose(std::uint32_t bits) {
  const std::uint32_t biased = bits >> 23, fraction = bits & 0x7fffffu;
  BinaryFloat f;
  f.m = biased ? fraction | 0x800000u : fraction;
  f.e = biased ? static_cast<int>(biased) - 150 : -149;
  f.k_low = fraction == 0 && biased > 1 ? 4 * f.m - 1 : 4 * f.m - 2;
  f.k_high = 4 * f.m + 2;
  return f;
}

}  // namespace strings_detail

// ---- float to text ----

// The shortest digits that read back to the positive finite float `bits`, the closest to it
// among those: digits[0..count) (no trailing zeros), `exponent` the power of ten of digits[0].
inline strings_detail::Significand shortest_digits(std::uint32_t bits) {
  using namespace strings_detail;
  const BinaryFloat f = decompose(bits);
  const Decimal low = scaled_binary(f.k_low, f.e - 2), value = scaled_binary(4 * f.m, f.e - 2),
                high = scaled_binary(f.k_high, f.e - 2);
  const bool bounds_round_here = f.m % 2 == 0;  // ties round to even: to this float
  const int n = Decimal::kDigits;
  Decimal result = value;
  int first = 0;
  while (first < n && high.digit[first] == 0) ++first;
  for (int i = first; i < n; ++i) {
    // down: value cut after digit i; up: down plus one unit in digit i.
    int down_vs_low = 0;
    for (int j = 0; j <= i && down_vs_low == 0; ++j)
      if (value.digit[j] != low.digit[j]) down_vs_low = value.digit[j] < low.digit[j] ? -1 : 1;
    if (down_vs_low == 0 && !rest_is_zero(low, i + 1)) down_vs_low = -1;
    Decimal up = value;
    for (int j = i + 1; j < n; ++j) up.digit[j] = 0;
    int j = i;
    while (up.digit[j] == 9) up.digit[j--] = 0;
    ++up.digit[j];
    int up_vs_high = 0;
    for (int t = 0; t <= i && up_vs_high == 0; ++t)
      if (up.digit[t] != high.digit[t]) up_vs_high = up.digit[t] < high.digit[t] ? -1 : 1;
    if (up_vs_high == 0 && !rest_is_zero(high, i + 1)) up_vs_high = -1;
    const bool down_ok = down_vs_low > 0 || (down_vs_low == 0 && bounds_round_here);
    const bool up_ok = up_vs_high < 0 || (up_vs_high == 0 && bounds_round_here);
    if (!down_ok && !up_ok) continue;
    bool take_up = up_ok;
    if (down_ok && up_ok) {  // the closer one: compare the cut-off digits with half a unit
      int rest_vs_half = -1;
      if (i + 1 < n && value.digit[i + 1] != 5) rest_vs_half = value.digit[i + 1] < 5 ? -1 : 1;
      else if (i + 1 < n) rest_vs_half = rest_is_zero(value, i + 2) ? 0 : 1;
      take_up = rest_vs_half > 0 || (rest_vs_half == 0 && value.digit[i] % 2 == 1);
    }
    if (take_up) {
      result = up;
    } else {
      for (int t = i + 1; t < n; ++t) result.digit[t] = 0;
    }
    break;
  }
  return normalize(result);
}

// Writes `v` as numpy's str() of a float32 writes it and returns the length (at most
// kNumberTextBytes - 1; `out` gets a NUL too): positional for 1e-4 <= |v| < 1e16 ("0.5",
// "123.0"), else scientific with a signed two-digit-or-more exponent ("1e-05", "3.4028235e+38");
// "nan", "inf", "-inf", "0.0", "-0.0".
inline index_t format_float(float v, char* out) {
  const std::uint32_t bits = float_to_bits(v);
  const std::uint32_t magnitude = bits & 0x7fffffffu;
  char* p = out;
  auto put = [&p](const char* s) {
    while (*s) *p++ = *s++;
  };
  if (magnitude > 0x7f800000u) {
    put("nan");
  } else {
    if (bits >> 31) *p++ = '-';
    if (magnitude == 0x7f800000u) {
      put("inf");
    } else if (magnitude == 0) {
      put("0.0");
    } else {
      const strings_detail::Significand s = shortest_digits(magnitude);
      // numpy's test 1e-4 <= |v| < 1e16 in doubles, on the bits (no soft-double on FPU-less
      // targets): float(1e-4) is just below 1e-4, float(1e16) just above 1e16.
      constexpr std::uint32_t kLeastPositional = 0x38d1b718u;  // the least float >= 1e-4
      constexpr std::uint32_t kLeastScientificAbove = 0x5a0e1bcau;  // the least float >= 1e16
      if (magnitude >= kLeastPositional && magnitude < kLeastScientificAbove) {  // positional
        if (s.exponent < 0) {
          put("0.");
          for (int i = -1; i > s.exponent; --i) *p++ = '0';
          for (int i = 0; i < s.count; ++i) *p++ = static_cast<char>('0' + s.digit[i]);
        } else {
          for (int i = 0; i <= s.exponent; ++i) *p++ = static_cast<char>('0' + (i < s.count ? s.digit[i] : 0));
          *p++ = '.';
          if (s.count <= s.exponent + 1) *p++ = '0';
          for (int i = s.exponent + 1; i < s.count; ++i) *p++ = static_cast<char>('0' + s.digit[i]);
        }
      } else {  // scientific
        *p++ = static_cast<char>('0' + s.digit[0]);
        if (s.count > 1) *p++ = '.';
        for (int i = 1; i < s.count; ++i) *p++ = static_cast<char>('0' + s.digit[i]);
        *p++ = 'e';
        *p++ = s.exponent < 0 ? '-' : '+';
        const int x = s.exponent < 0 ? -s.exponent : s.exponent;
        *p++ = static_cast<char>('0' + x / 10);
        *p++ = static_cast<char>('0' + x % 10);
      }
    }
  }
  *p = '\0';
  return p - out;
}

// Writes an integer in decimal; returns the length.
template <class T> index_t format_integer(T v, char* out) {
  char digits[24];
  int n = 0;
  // Negate digit by digit: -INT64_MIN overflows.
  const bool negative = v < 0;
  do {
    const int d = static_cast<int>(v % 10);
    digits[n++] = static_cast<char>('0' + (d < 0 ? -d : d));
    v /= 10;
  } while (v != 0);
  char* p = out;
  if (negative) *p++ = '-';
  while (n) *p++ = digits[--n];
  *p = '\0';
  return p - out;
}

// ---- text to float ----

namespace strings_detail {

inline bool equals_ignoring_case(const char* s, const char* lower) {
  for (; *lower; ++s, ++lower)
    if (*s == '\0' || (*s | 0x20) != *lower) return false;
  return *s == '\0';
}

// The decimal number in `s` ([+-]digits[.digits][(e|E)[+-]digits]); false when it is not one.
// Digits beyond what Significand holds are dropped; `inexact` tells whether any was nonzero.
inline bool parse_decimal(const char* s, bool* negative, Significand* out, bool* inexact) {
  *negative = *s == '-';
  if (*s == '-' || *s == '+') ++s;
  Significand& d = *out;
  d.count = 0;
  *inexact = false;
  int point = 0;  // digits before the decimal point, counted from the first significant one
  bool any_digit = false, seen_point = false, seen_significant = false;
  for (;; ++s) {
    if (*s == '.' && !seen_point) {
      seen_point = true;
      continue;
    }
    if (*s < '0' || *s > '9') break;
    any_digit = true;
    const unsigned char digit = static_cast<unsigned char>(*s - '0');
    if (!seen_significant && digit == 0) {
      if (seen_point) --point;  // a leading zero after the point
      continue;
    }
    seen_significant = true;
    if (!seen_point) ++point;
    if (d.count < Decimal::kDigits) d.digit[d.count++] = digit;
    else if (digit != 0) *inexact = true;
  }
  if (!any_digit) return false;
  long exponent = 0;
  if (*s == 'e' || *s == 'E') {
    ++s;
    const bool negative_exponent = *s == '-';
    if (*s == '-' || *s == '+') ++s;
    if (*s < '0' || *s > '9') return false;
    for (; *s >= '0' && *s <= '9'; ++s)
      if (exponent < 100000) exponent = exponent * 10 + (*s - '0');
    if (negative_exponent) exponent = -exponent;
  }
  if (*s != '\0') return false;
  while (d.count > 0 && d.digit[d.count - 1] == 0) --d.count;
  d.exponent = static_cast<int>(point - 1 + exponent);
  return true;
}

// -1, 0, 1 as the parsed decimal (plus a sliver when inexact) is <, ==, > k * 2^q.
inline int compare_with(const Significand& d, bool inexact, std::uint32_t k, int q) {
  const int c = compare(d, normalize(scaled_binary(k, q)));
  return c == 0 && inexact ? 1 : c;
}

}  // namespace strings_detail

// The float nearest to the decimal `s` (ties to even), for Cast from string: "3.14", "-1e-5",
// "1E8", ".5"; "inf", "+inf", "-inf", "infinity" and "nan" in any case. Anything else
// (ONNX: undefined) and a null string read as NaN.
inline float parse_float(const char* s) {
  using namespace strings_detail;
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  if (!s) return nan;
  const bool signed_text = *s == '+' || *s == '-';
  const char* word = signed_text ? s + 1 : s;
  if (equals_ignoring_case(word, "inf") || equals_ignoring_case(word, "infinity")) return *s == '-' ? -inf : inf;
  if (equals_ignoring_case(word, "nan")) return nan;
  bool negative = false, inexact = false;
  Significand d;
  if (!parse_decimal(s, &negative, &d, &inexact)) return nan;
  std::uint32_t bits = 0;
  if (d.count == 0 || d.exponent < -46) {
    bits = 0;
  } else if (d.exponent > 38) {
    bits = 0x7f800000u;
  } else {
    // Start from an estimate within a few floats of the answer, then step to the float whose
    // midpoints enclose the decimal.
    double estimate = 0;
    for (int i = 0; i < d.count && i < 17; ++i) estimate = estimate * 10 + d.digit[i];
    int power = d.exponent - (d.count < 17 ? d.count : 17) + 1;
    for (; power > 0; --power) estimate *= 10;
    for (; power < 0; ++power) estimate /= 10;
    bits = estimate >= 3.5e38 ? 0x7f7fffffu : float_to_bits(static_cast<float>(estimate));
    for (;;) {
      const BinaryFloat f = decompose(bits);
      const bool even = f.m % 2 == 0;
      const int above = compare_with(d, inexact, f.k_high, f.e - 2);
      if (above > 0 || (above == 0 && !even)) {
        if (++bits == 0x7f800000u) break;  // beyond the largest float's upper midpoint
        continue;
      }
      if (bits == 0) break;
      const int below = compare_with(d, inexact, f.k_low, f.e - 2);
      if (below < 0 || (below == 0 && !even)) {
        --bits;
        continue;
      }
      break;
    }
  }
  return bits_to_float(bits | (negative ? 0x80000000u : 0u));
}

// ---- kernels ----

// y[i] = the text of x[i], written into `text` (n * kNumberTextBytes bytes): floats as
// format_float, integers in decimal.
template <class T> void cast_to_string(const T* x, cstring* y, index_t n, char* text) {
  for (index_t i = 0; i < n; ++i) {
    char* s = text + i * kNumberTextBytes;
    if constexpr (std::numeric_limits<T>::is_integer) format_integer(x[i], s);
    else format_float(static_cast<float>(x[i]), s);
    y[i] = s;
  }
}

// y[i] = x[i] read as a float (parse_float).
inline void cast_from_string(const cstring* x, float* y, index_t n) {
  for (index_t i = 0; i < n; ++i) y[i] = parse_float(x[i]);
}

// ---- CategoryMapper (ai.onnx.ml) ----

// y[i] = values[k] for the first k with keys[k] == x[i], else fallback. The strings are the
// compiler's constants: y points to them, no text is written.
inline void map_int64_to_string(const int64_t* x, index_t n, const int64_t* keys, const cstring* values, index_t count,
                                cstring fallback, cstring* y) {
  for (index_t i = 0; i < n; ++i) {
    y[i] = fallback;
    for (index_t k = 0; k < count; ++k)
      if (keys[k] == x[i]) {
        y[i] = values[k];
        break;
      }
  }
}

// y[i] = values[k] for the first k whose key is x[i]'s text, else fallback (a null string too).
inline void map_string_to_int64(const cstring* x, index_t n, const cstring* keys, const int64_t* values, index_t count,
                                int64_t fallback, int64_t* y) {
  for (index_t i = 0; i < n; ++i) {
    y[i] = fallback;
    if (x[i] == nullptr) continue;
    for (index_t k = 0; k < count; ++k)
      if (std::strcmp(keys[k], x[i]) == 0) {
        y[i] = values[k];
        break;
      }
  }
}

// ---- StringNormalizer ----

enum class CaseChange { None, Lower, Upper };

struct StringNormalizerParams {
  const cstring* stopwords;
  index_t stopword_count;
  bool case_sensitive;  // stopword matching
  CaseChange case_change;
};

namespace strings_detail {

inline char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
inline char ascii_upper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }

inline bool same_text(const char* a, const char* b, bool case_sensitive) {
  for (; *a && *b; ++a, ++b)
    if (case_sensitive ? *a != *b : ascii_lower(*a) != ascii_lower(*b)) return false;
  return *a == *b;
}

inline bool is_stopword(const char* s, const StringNormalizerParams& p) {
  for (index_t i = 0; i < p.stopword_count; ++i)
    if (same_text(s, p.stopwords[i], p.case_sensitive)) return true;
  return false;
}

// A copy of s in `text` with its case changed as asked (ASCII letters), or nullptr when it does
// not fit.
inline cstring copy_text(const char* s, CaseChange change, TextStorage& text) {
  char* copy = text.reserve(static_cast<index_t>(std::strlen(s)));
  if (!copy) return nullptr;
  for (char* c = copy; *s; ++s, ++c)
    *c = change == CaseChange::Lower ? ascii_lower(*s) : change == CaseChange::Upper ? ascii_upper(*s) : *s;
  return copy;
}

}  // namespace strings_detail

// y = x, the text copied into `text` (text_bytes bytes; a string that does not fit is a null
// pointer), or y pointing to x's text when `text` is null.
inline void copy_strings(const cstring* x, cstring* y, index_t n, char* text, index_t text_bytes) {
  TextStorage storage(text, text_bytes);
  for (index_t i = 0; i < n; ++i) y[i] = x[i] && text ? strings_detail::copy_text(x[i], CaseChange::None, storage) : x[i];
}

// StringNormalizer: y = the strings of x that are not stopwords, case-changed (ASCII letters;
// other bytes, e.g. UTF-8 sequences, are kept). With text storage (`text`, text_bytes bytes)
// they are copied into it, and one that does not fit is a null pointer; without (null `text`,
// only with CaseChange::None) y points to x's text. Returns how many it wrote; when every
// string is a stopword, y holds one empty string (the ONNX rule). y needs max(n, 1) slots.
inline index_t string_normalize(const cstring* x, index_t n, const StringNormalizerParams& p, cstring* y, char* text,
                                index_t text_bytes) {
  TextStorage storage(text, text_bytes);
  index_t kept = 0;
  for (index_t i = 0; i < n; ++i) {
    const char* s = x[i];
    if (s && strings_detail::is_stopword(s, p)) continue;
    y[kept++] = s && text ? strings_detail::copy_text(s, p.case_change, storage) : s;
  }
  if (kept == 0) y[kept++] = "";
  return kept;
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_STRINGS_H
