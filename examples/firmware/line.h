// The examples' one line of output, built without printf (no stdio in the firmware).
#ifndef ONNXC_EXAMPLE_FIRMWARE_LINE_H
#define ONNXC_EXAMPLE_FIRMWARE_LINE_H

// Appends the decimal digits of n to *out.
inline void append_number(char** out, unsigned n) {
  char digits[12];
  int count = 0;
  do {
    digits[count++] = static_cast<char>('0' + n % 10);
    n /= 10;
  } while (n);
  while (count) *(*out)++ = digits[--count];
}

inline void append_text(char** out, const char* text) {
  while (*text) *(*out)++ = *text++;
}

#endif  // ONNXC_EXAMPLE_FIRMWARE_LINE_H
