#!/bin/sh
# ctest: every runtime header compiles without ONNXC_SIMD (the generic target) when the compiler
# is given the host's ISA flags, as `onnxc bench --target generic` builds it (-march=native): code
# for AVX-512 must sit behind ONNXC_SIMD, which brings in the intrinsics, not behind __AVX512F__
# alone.   headers_portable_native.sh CXX INCLUDE_DIR
cxx="$1"; include="$2"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for h in "$include"/onnxc/*.h; do
  # Parts of another header (the per-ISA kernels a header includes under ONNXC_SIMD, say) are
  # compiled through that header.
  if grep -q "^// Part of a parent header that includes it" "$h"; then continue; fi
  printf '#include "onnxc/%s"\n' "$(basename "$h")" > "$work/h.cpp"
  if ! "$cxx" -std=c++17 -O1 -march=native -Wall -Wextra -Werror -fsyntax-only -I "$include" "$work/h.cpp" > "$work/log" 2>&1; then
    echo "FAIL: onnxc/$(basename "$h") without ONNXC_SIMD, -march=native:"; head -5 "$work/log"; status=1
  fi
done
[ $status = 0 ] && echo PASS
exit $status
