#!/bin/sh
# The kernels of other architectures' targets (issue #22): the kernel test files that cover their
# variants cross-built and run under QEMU's user mode. Skipped (exit 77) without the cross compiler
# or QEMU's user mode.
#   tests/cross_unit_tests.sh SOURCE_DIR WORK_DIR NAME "TESTS" [FLAGS...]
# NAME names the program, TESTS the tests/unit files (without .cpp) it is made of; FLAGS are the
# target's (e.g. -march=armv8.2-a+dotprod). ONNXC_CROSS_TEST_SPEC, when set, is the Catch2 test spec
# the program runs (a subset of the files' test cases: emulated vector code is slow).
# AArch64 (NAME neon...): aarch64-linux-gnu-g++ (-O2 -static, ONNXC_SIMD), run under qemu-aarch64.
# RISC-V vectors (NAME rvv...): clang++ -march=rv64gcv with Debian's riscv64-linux-gnu headers and
# GCC libraries (what `onnxc --target riscv64-rvv` builds with), no ONNXC_SIMD (the RVV kernels are
# the portable ones' variants), run under qemu-riscv64 at VLEN 128 and again at 256.
set -e
src=$1 work=$2 name=$3 tests=$4
shift 4
case $name in
  rvv*)
    cxx=clang++ qemu=qemu-riscv64 packages="clang g++-riscv64-linux-gnu qemu-user" simd=""
    gcc=$(ls -d /usr/lib/gcc-cross/riscv64-linux-gnu/* 2>/dev/null | sort -V | tail -n 1)
    [ -n "$gcc" ] || { echo "skipped: riscv64-linux-gnu GCC not found (Debian: $packages)"; exit 77; }
    inc=/usr/riscv64-linux-gnu/include/c++/$(basename "$gcc")
    mkdir -p "$work/include"
    ln -sfn /usr/include/catch2 "$work/include/catch2"  # (the sysroot hides the host's headers)
    set -- --target=riscv64-linux-gnu --sysroot=/usr/riscv64-linux-gnu -nostdinc++ -isystem "$inc" \
        -isystem "$inc/riscv64-linux-gnu" "-B$gcc" "-L$gcc" --ld-path=/usr/bin/riscv64-linux-gnu-ld \
        -Wno-unused-command-line-argument -march=rv64gcv -I"$work/include" "$@"
    runs="rv64,v=true,vext_spec=v1.0,vlen=128 rv64,v=true,vext_spec=v1.0,vlen=256"
    # Catch2's main has no vector code: GCC builds it for the same ABI in a third of clang's time.
    maincxx="riscv64-linux-gnu-g++" ;;
  *)
    cxx=aarch64-linux-gnu-g++ qemu=qemu-aarch64 packages="g++-aarch64-linux-gnu qemu-user" simd=-DONNXC_SIMD
    runs="" maincxx=$cxx ;;
esac
for tool in $cxx $maincxx $qemu; do
  command -v $tool >/dev/null 2>&1 || { echo "skipped: $tool not found (Debian: $packages)"; exit 77; }
done
mkdir -p "$work"
common="-std=c++17 -O2 -Wall -Wextra -Werror -I$src/runtime-support/include -I$src/tests/unit"
# Catch2's main (the slow part) once for every target of the architecture: it has no SIMD code.
main="$work/main.$maincxx.o"
[ -f "$main" ] || $maincxx $common -c "$src/tests/unit/main.cpp" -o "$main"
# The test files compiled as one translation unit: their time is parsing the runtime's and xsimd's
# headers (25 s of CPU for packed_gemm_test.cpp alone with aarch64-linux-gnu-g++, 26 s for the three
# files of unit.neon together).
unit="$work/$name.all.cpp"
: > "$unit"
for test in $tests; do
  echo "#include \"$src/tests/unit/$test.cpp\"" >> "$unit"
done
$cxx $common $simd "$@" -c "$unit" -o "$work/$name.o"
$cxx "$@" -static -o "$work/$name" "$main" "$work/$name.o"
[ -n "$runs" ] || exec $qemu "$work/$name" ${ONNXC_CROSS_TEST_SPEC:+"$ONNXC_CROSS_TEST_SPEC"}
for cpu in $runs; do
  echo "$qemu -cpu $cpu"
  $qemu -cpu "$cpu" "$work/$name" ${ONNXC_CROSS_TEST_SPEC:+"$ONNXC_CROSS_TEST_SPEC"}
done
