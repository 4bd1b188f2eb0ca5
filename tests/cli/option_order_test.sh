#!/bin/bash
# Every repeatable option takes one value per occurrence, before or after the model, in every
# command: compile (with --check and with -o), validate and bench. CLI11's vector options used to
# take every following word, the model's name too ("onnxc --dim N=1 model.onnx" failed: model is
# required). Each command runs with its options before the model and after it; both must
# succeed with the same result.
#
#   tests/cli/option_order_test.sh path/to/onnxc path/to/tests/cli/options_model
set -u
onnxc=$(realpath "${1:?usage: option_order_test.sh ONNXC MODEL_DIR}")
dir=$(realpath "${2:?usage: option_order_test.sh ONNXC MODEL_DIR}")
model=$dir/model.onnx
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0

# run NAME ARGS...: onnxc ARGS in $work/NAME/, stdout and stderr kept there; fails unless exit 0.
run() {
  local name=$1
  shift
  mkdir -p "$work/$name"
  (cd "$work/$name" && "$onnxc" "$@" >stdout 2>stderr)
  local rc=$?
  if [ $rc -ne 0 ]; then
    echo "FAIL $name (exit $rc): onnxc $*"
    sed 's/^/    | /' "$work/$name/stderr" | head -15
    failed=1
    return 1
  fi
}

# expect NAME TEXT: NAME's stdout contains TEXT.
expect() {
  if ! grep -qF -- "$2" "$work/$1/stdout"; then
    echo "FAIL $1: stdout lacks: $2"
    sed 's/^/    | /' "$work/$1/stdout" | head -15
    failed=1
  fi
}

# same FILE NAME1 NAME2: the file is byte-identical in both runs' directories.
same() {
  if ! cmp -s "$work/$2/$1" "$work/$3/$1"; then
    echo "FAIL $2 and $3 differ in $1"
    failed=1
  fi
}

bindings=(--dim N=2 --constant k=2 --sequence s=3 --empty-optional o --disable-pass simplify --disable-pass in-place)

# compile --check: the bindings show in the inferred shapes.
run check_before "${bindings[@]}" "$model" --check && expect check_before "input 'x': float [2, 3]"
run check_after "$model" --check "${bindings[@]}" && expect check_after "input 'x': float [2, 3]"
same stdout check_before check_after
run shape_before --shape x=2x3 --shape k=1 --sequence s=3 "$model" --check && expect shape_before "input 'x': float [2, 3]"
run shape_after "$model" --check --shape x=2x3 --shape k=1 --sequence s=3 && expect shape_after "input 'x': float [2, 3]"

# compile to files: the same code either way.
run compile_before "${bindings[@]}" "$model" -o m.cpp
run compile_after "$model" -o m.cpp "${bindings[@]}"
same m.cpp compile_before compile_after
same m.h compile_before compile_after

# validate: --data and --cxxflags (one flag per occurrence) too. A required positional followed by
# more words was taken too (CLI11 leaves a last positional alone).
vopts=(--cxxflags=-O1 --cxxflags=-DNDEBUG --data "$dir/test_data_set_0")
run validate_before validate "${bindings[@]}" "${vopts[@]}" "$dir" --rtol 1e-4
run validate_after validate "$dir" --rtol 1e-4 "${bindings[@]}" "${vopts[@]}"

# bench (the portable target: quick to build).
bopts=(--target generic --cxxflags=-O1 --cxxflags=-DNDEBUG)
run bench_before bench "${bindings[@]}" "${bopts[@]}" "$model" --runs 3 && expect bench_before "median_us:"
run bench_after bench "$model" --runs 3 "${bindings[@]}" "${bopts[@]}" && expect bench_after "median_us:"

[ $failed -eq 0 ] && echo "options before and after the model: ok"
exit $failed
