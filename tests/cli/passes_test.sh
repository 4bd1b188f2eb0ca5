#!/bin/bash
# --time-passes and --dump-after (issue #27): every pass of the table reported once, in order;
# the graph text after fuse-activation shows mnist-cnn's three Relus merged into the Conv and
# Gemm before them (the file: 10 nodes, 2 Conv + Relu, Gemm + Relu: 7 left); a disabled pass is
# not run; an unknown pass name is a usage error listing the passes; neither option changes the
# generated code.
#
#   tests/cli/passes_test.sh ONNXC MODEL_DIR   (tests/models/mnist-cnn)
set -u
onnxc=$1 model=$2/model.onnx
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

mkdir "$work/plain" "$work/timed"
"$onnxc" "$model" -o "$work/plain/model.cpp" > /dev/null 2>&1 || fail "plain compile"
"$onnxc" "$model" -o "$work/timed/model.cpp" --time-passes --dump-after fold-affine --dump-after fuse-activation \
  > /dev/null 2> "$work/stderr" || fail "compile with --time-passes --dump-after"
diff -r "$work/plain" "$work/timed" > /dev/null || fail "--time-passes/--dump-after changed the generated code"

# Every pass --help lists, once each and in that order (the table is the one source of both).
listed=$("$onnxc" --help | tr -d '\n' | sed -e 's/.*Passes: //' -e 's/\. Repeatable\..*//' -e 's/ \+/ /g' | tr -d ' ' | tr ',' '\n')
timed=$(sed -n 's/^pass \([a-z0-9-]*\) .*/\1/p' "$work/stderr")
[ -n "$listed" ] && [ "$listed" = "$timed" ] || { echo "listed: $listed"; echo "timed: $timed"; fail "passes timed differ from those listed"; }
grep -q "^pass fuse-activation .* 7 nodes$" "$work/stderr" || fail "fuse-activation should leave 7 nodes"
grep -q "^pass fold-affine .* 10 nodes$" "$work/stderr" || fail "fold-affine should leave the file's 10 nodes"

before=$(sed -n '/^--- graph after fold-affine ---$/,/^--- graph after/p' "$work/stderr")
after=$(sed -n '/^--- graph after fuse-activation ---$/,$p' "$work/stderr")
[ "$(grep -c '^  \[[0-9]*\] Relu ' <<< "$before")" = 3 ] || fail "the dump before fuse-activation should hold 3 Relu nodes"
[ "$(grep -c '^  \[[0-9]*\] Relu ' <<< "$after")" = 0 ] || fail "the dump after fuse-activation should hold no Relu node"
[ "$(grep -c 'onnxc.merged_ops = \["Relu"\]' <<< "$after")" = 3 ] || fail "three steps should carry the merged Relu"
grep -q "^  \[0\] Conv '/f/f.0/Conv' (input: float \[1, 1, 28, 28\], f.0.weight: const float \[8, 1, 5, 5\]" <<< "$after" ||
  fail "the first Conv's line (inputs with types and shapes)"

"$onnxc" "$model" -o "$work/off.cpp" --disable-pass fuse-activation --time-passes > /dev/null 2> "$work/off" || fail "--disable-pass"
grep -q "^pass fuse-activation " "$work/off" && fail "a disabled pass ran"
grep -q "^pass plan-program .* 10 nodes$" "$work/off" || fail "without fuse-activation the 10 nodes stay"

"$onnxc" "$model" -o "$work/x.cpp" --dump-after no-such-pass > /dev/null 2> "$work/bad"
rc=$?
[ $rc = 2 ] && grep -q "no such pass" "$work/bad" && grep -q "fuse-activation" "$work/bad" || fail "unknown pass: exit $rc"
echo "PASS"
