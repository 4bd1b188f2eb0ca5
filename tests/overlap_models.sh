#!/bin/sh
# ctest check of overlapped buffers (OpDef::overlap_delta, --disable-pass overlap): each model
# compiled with and without them (target $TARGET). The arena never grows; where it is the same
# the generated code is byte-identical; where it shrinks, both builds are validated against the
# model's expected outputs (ONNX Runtime's; exact for the int8 models). And a --memory-budget one
# byte below: validated where onnxc reaches it, else its error names the smallest arena.
#   overlap_models.sh ONNXC OUT_DIR TARGET MODEL_DIR...
onnxc="$1"; out="$2"; target="$3"; shift 3
mkdir -p "$out/with" "$out/without" || exit 1
status=0; checked=0
for dir in "$@"; do
  [ -f "$dir/model.onnx" ] || { echo "skipped (not found): $dir"; continue; }
  name=$(basename "$dir")
  "$onnxc" "$dir/model.onnx" --target "$target" --weights-format array -o "$out/with/$name.cpp" > "$out/with/$name.log" 2>&1 &&
    "$onnxc" "$dir/model.onnx" --target "$target" --weights-format array --disable-pass overlap \
      -o "$out/without/$name.cpp" > "$out/without/$name.log" 2>&1 || { echo "FAIL: $name does not compile"; status=1; continue; }
  a=$(sed -n 's/.*arena \([0-9]*\) bytes.*/\1/p' "$out/with/$name.log" | head -1)
  b=$(sed -n 's/.*arena \([0-9]*\) bytes.*/\1/p' "$out/without/$name.log" | head -1)
  checked=$((checked + 1))
  # Below that: --memory-budget fits the kernels' scratch around the overlaps (slower kernels).
  if "$onnxc" "$dir/model.onnx" --target "$target" --memory-budget $((a - 1)) -o "$out/with/$name.budget.cpp" \
       > "$out/with/$name.budget.log" 2>&1; then
    echo "$name: arena below $a B under --memory-budget $((a - 1)): $(grep -o 'arena [0-9]* bytes' "$out/with/$name.budget.log")"
    "$onnxc" validate "$dir" --target "$target" --memory-budget $((a - 1)) > "$out/validate.log" 2>&1 ||
      { cat "$out/validate.log"; echo "FAIL: $name ($target --memory-budget $((a - 1))) does not validate"; status=1; }
  elif ! grep -q "smallest arena onnxc reaches for this model is" "$out/with/$name.budget.log"; then
    cat "$out/with/$name.budget.log"; echo "FAIL: $name: --memory-budget $((a - 1)) fails without naming the smallest arena"; status=1
  fi
  if [ "$a" = "$b" ]; then
    if cmp -s "$out/with/$name.cpp" "$out/without/$name.cpp" && cmp -s "$out/with/$name.h" "$out/without/$name.h"; then
      echo "$name: arena $a B either way, code identical"
    else
      echo "FAIL: $name: arena $a B either way but the code differs"; status=1
    fi
    continue
  fi
  [ "$a" -lt "$b" ] || { echo "FAIL: $name: arena $b -> $a B with overlap"; status=1; continue; }
  echo "$name: arena $b -> $a B with overlap"
  for pass in "" "--disable-pass overlap"; do
    # shellcheck disable=SC2086
    "$onnxc" validate "$dir" --target "$target" $pass > "$out/validate.log" 2>&1 ||
      { cat "$out/validate.log"; echo "FAIL: $name ($target $pass) does not validate"; status=1; }
  done
done
[ "$checked" -gt 0 ] || { echo "SKIPPED: no model found"; exit 77; }
exit $status
