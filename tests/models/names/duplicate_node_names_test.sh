#!/bin/bash
# A model whose nodes share names (tests/models/names/make.py) compiles with a warning, computes
# the hand-computed output, names every step uniquely in the generated code (the same bytes on
# every run), and is refused with --strict.
#
#   tests/models/names/duplicate_node_names_test.sh path/to/onnxc
set -u
onnxc=$(realpath "${1:?usage: duplicate_node_names_test.sh ONNXC}")
dir=$(cd "$(dirname "$0")" && pwd)/duplicate_node_names
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
fail() { echo "FAIL: $1"; sed 's/^/    | /' "$work/err" | head -15; failed=1; }

"$onnxc" validate "$dir" >"$work/out" 2>"$work/err"
rc=$?
if [ $rc -ne 0 ]; then fail "validate: exit status $rc"
elif ! grep -q "^warning: .*node 1 'dup' (Mul.*shares its name with an earlier node" "$work/err"; then
  fail "validate: no warning about node 1 'dup'"
fi

for run in 1 2; do
  mkdir -p "$work/$run"
  if ! (cd "$work/$run" && "$onnxc" "$dir/model.onnx" -o m.cpp 2>"$work/err"); then fail "compile $run"; fi
done
cmp -s "$work/1/m.cpp" "$work/2/m.cpp" || fail "two compiles of the same model differ"
# The steps' comments ("// 0. 'name' Relu-...") name each node once.
names=$(grep -oE "^ *// [0-9]+\. '[^']*'" "$work/1/m.cpp" | sed -E "s/^ *\/\/ [0-9]+\. //")
if [ -z "$names" ]; then fail "no step comments in the generated code"
elif [ -n "$(sort <<<"$names" | uniq -d)" ]; then fail "generated code repeats a node name: $(sort <<<"$names" | uniq -d)"
fi

"$onnxc" "$dir/model.onnx" --check --strict >"$work/out" 2>"$work/err"
rc=$?
if [ $rc -ne 1 ]; then fail "--strict: exit status $rc, expected 1"
elif ! grep -q "error: .*node 1 'dup' (Mul.*shares its name with an earlier node" "$work/err"; then
  fail "--strict: no error about node 1 'dup'"
fi

[ $failed -eq 0 ] && echo "duplicate node names: ok"
exit $failed
