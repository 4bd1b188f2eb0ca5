#!/bin/sh
# The AArch64 kernels' unit tests (issue #22): the kernel test files that cover the NEON variants
# cross-built with aarch64-linux-gnu-g++ (-O2 -static, ONNXC_SIMD, plus the target's flags) and run
# under qemu-aarch64. Skipped (exit 77) without the cross compiler or QEMU's user mode.
#   tests/cross_unit_tests.sh SOURCE_DIR WORK_DIR NAME "TESTS" [FLAGS...]
# NAME names the program, TESTS the tests/unit files (without .cpp) it is made of; FLAGS are the
# target's (e.g. -march=armv8.2-a+dotprod).
set -e
src=$1 work=$2 name=$3 tests=$4
shift 4
cxx=aarch64-linux-gnu-g++ qemu=qemu-aarch64
for tool in $cxx $qemu; do
  command -v $tool >/dev/null 2>&1 || { echo "skipped: $tool not found (Debian: g++-aarch64-linux-gnu qemu-user)"; exit 77; }
done
mkdir -p "$work"
common="-std=c++17 -O2 -Wall -Wextra -Werror -I$src/runtime-support/include -I$src/tests/unit"
# Catch2's main (the slow part) once for every target: it has no SIMD code.
[ -f "$work/main.o" ] || $cxx $common -c "$src/tests/unit/main.cpp" -o "$work/main.o"
# The test files compiled as one translation unit: their time is parsing the runtime's and xsimd's
# headers (25 s of CPU for packed_gemm_test.cpp alone, 26 s for the three together).
unit="$work/$name.all.cpp"
: > "$unit"
for test in $tests; do
  echo "#include \"$src/tests/unit/$test.cpp\"" >> "$unit"
done
$cxx $common -DONNXC_SIMD "$@" -c "$unit" -o "$work/$name.o"
$cxx -static -o "$work/$name" "$work/main.o" "$work/$name.o"
exec $qemu "$work/$name"
