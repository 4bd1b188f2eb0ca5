#!/bin/bash
# Builds the compiler fuzzer with clang in its own build directory and runs it on a fixed number of
# inputs (within at most SECONDS), seeded with the test models and the malformed-model corpus. Exits non-zero on any
# crash, sanitizer report, leak, timeout or out-of-memory; the input that caused it is kept in
# $BUILD/fuzz-artifacts/ (replay: $BUILD/tests/fuzz/fuzz_compiler FILE).
#
#   tests/fuzz/run_fuzz.sh SECONDS [BUILD_DIR]      (default BUILD_DIR: build-fuzz)
set -eu
seconds=${1:?usage: run_fuzz.sh SECONDS [BUILD_DIR]}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${2:-$root/build-fuzz}

# -O1 with line tables only (not full debug information): the sanitizers' reports keep file and
# line, and the build takes less CPU (it is the sanitize test's longest part on a cold cache).
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DONNXC_FUZZ=ON -DONNXC_BUILD_TESTS=OFF -DONNXC_BUILD_EXAMPLES=OFF >/dev/null
ninja -C "$build" -j2 fuzz_compiler

corpus=$build/fuzz-corpus     # grows across runs
seeds=$build/fuzz-seeds
artifacts=$build/fuzz-artifacts/
mkdir -p "$corpus" "$seeds" "$artifacts"
for f in "$root"/tests/models/*/model.onnx "$root"/tests/models/*/*/model.onnx "$root"/tests/bad_models/models/*.onnx; do
  [ -f "$f" ] && cp "$f" "$seeds/$(echo "${f#$root/}" | tr / _)"
done

# A fixed seed (ONNXC_FUZZ_SEED, default 1) and a fixed number of inputs (ONNXC_FUZZ_RUNS, default
# 6000): the same commit explores the same inputs on every machine, so a run that passed here passes
# in CI. SECONDS only caps a machine too slow to get through them (a time bound alone let a faster
# CI machine go past what a loaded one had checked, and find a Resize scale that overflowed).
# ONNXC_FUZZ_RUNS=-1 fuzzes for SECONDS, as long as it takes.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
"$build/tests/fuzz/fuzz_compiler" "$corpus" "$seeds" \
  -seed="${ONNXC_FUZZ_SEED:-1}" -runs="${ONNXC_FUZZ_RUNS:-6000}" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2560 -max_len=131072 \
  -artifact_prefix="$artifacts" -print_final_stats=1
