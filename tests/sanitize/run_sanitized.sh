#!/bin/bash
# The compiler under AddressSanitizer and UndefinedBehaviorSanitizer (ctest label `sanitize`).
#
# Builds onnxc and the compiler fuzzer with clang, -fsanitize=address,undefined and
# -fno-sanitize-recover (the first report aborts), in their own build directory, then:
#   1. fuzzes the whole compiler for a bounded time (tests/fuzz/run_fuzz.sh), seeded with the test models;
#   2. runs the malformed-model corpus (tests/bad_models) with the sanitized onnxc;
#   3. compiles every model of the test suite with the sanitized onnxc, with --report and
#      --report-json (the bundled test models,
#      every third ONNX backend test, the shared models when present) and fails on any sanitizer report
#      or signal. Compiling is what the compiler does; building the generated code is the other
#      tests' business.
#
#   tests/sanitize/run_sanitized.sh [FUZZ_SECONDS] [BUILD_DIR]   (defaults: 60, build-sanitize)
set -u
fuzz_seconds=${1:-60}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${2:-$root/build-sanitize}

if ! command -v clang++ >/dev/null; then
  echo "skipped: clang++ is not installed (tools/install-deps.sh installs it)"
  exit 77
fi

# 1. Build (the fuzz configuration builds onnxc with the same sanitizers) and fuzz.
"$root/tests/fuzz/run_fuzz.sh" "$fuzz_seconds" "$build" 2>&1 | tail -n 25
if [ "${PIPESTATUS[0]}" -ne 0 ]; then
  echo "FAIL: the fuzzer found a crash, leak or sanitizer report (inputs in $build/fuzz-artifacts/)"
  exit 1
fi
ninja -C "$build" -j2 onnxc >/dev/null || exit 1
onnxc=$build/onnxc

# 2. Malformed models.
"$root/tests/bad_models/run_bad_models.sh" "$onnxc" | tail -n 5
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "FAIL: malformed-model corpus under the sanitizers"; exit 1; }

# 3. Every model of the suite. Exit status 0 (compiled) and 1 (refused with a message) are both
# fine here; a signal, a sanitizer report or any other status is not.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
models=()
for f in "$root"/tests/models/*/model.onnx "$root"/tests/models/*/*/model.onnx "$root"/../shared/models/*/model.onnx; do
  [ -f "$f" ] && models+=("$f")
done
# Every third ONNX backend test (CI time; the others are the same operators at other attributes,
# and the fuzzer's seeds include them).
backend=(/usr/share/libonnx-testdata/data/*/*/model.onnx)
for ((i = 0; i < ${#backend[@]}; i += 3)); do
  [ -f "${backend[i]}" ] && models+=("${backend[i]}")
done
compiled=0 refused=0 failed=0
for model in "${models[@]}"; do
  flags=()
  case "$model" in */silero-vad-v5/*) flags=(--shape input=1x512 --shape state=2x1x128 --constant sr=16000) ;; esac
  case "$model" in */mnist-cnn-batchN/*) flags=(--dim N=2) ;; esac
  timeout 600 "$onnxc" "$model" -o "$work/model.cpp" --report --report-json "$work/report.json" "${flags[@]}" \
    >/dev/null 2>"$work/stderr"
  rc=$?
  if grep -qE "Sanitizer|runtime error:" "$work/stderr" || { [ $rc -ne 0 ] && [ $rc -ne 1 ]; }; then
    failed=$((failed + 1))
    echo "FAIL $model: exit status $rc"
    head -n 30 "$work/stderr" | sed 's/^/    | /'
  elif [ $rc -eq 0 ]; then
    compiled=$((compiled + 1))
  else
    refused=$((refused + 1))
  fi
done
echo "sanitized compiles: ${#models[@]} models, $compiled compiled, $refused refused with a message, $failed failed"
[ "$failed" -eq 0 ]
