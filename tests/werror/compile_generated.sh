#!/bin/sh
# ctest: a model's generated code must compile warning-free at every optimisation level users
# build with (issue #28: GCC's -Werror=aggressive-loop-optimizations broke -O3 builds that -O1
# validation passed). Compiles only (-c); the weights go into a .incbin file so large models take
# seconds, not minutes.
#
#   compile_generated.sh ONNXC CXX RUNTIME_INCLUDE MODEL_DIR "LEVELS" [onnxc flags...]
#
# LEVELS: the builds to try, space-separated, each its flags joined by commas, e.g.
# "-O2 -O3 -Os -O3,-march=native"; a level with -fsyntax-only stops after the front end. A missing
# model FAILS (it never passes unseen):
# point CMake's ONNXC_SHARED_MODELS at the corpus.
onnxc="$1"; cxx="$2"; include="$3"; dir="$4"; levels="$5"; shift 5
if [ ! -f "$dir/model.onnx" ]; then
  echo "FAIL: $dir/model.onnx not found: the model corpus is not where CMake's ONNXC_SHARED_MODELS points"
  exit 1
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/onnxc-werror-XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
if ! "$onnxc" "$dir/model.onnx" -o "$work/model.cpp" --weights-format incbin "$@"; then
  echo "FAIL: onnxc could not compile $dir/model.onnx"
  exit 1
fi
status=0
for level in $levels; do
  flags=$(echo "$level" | tr ',' ' ')
  # A level with -fsyntax-only (clang++: its -Wall/-Wextra warnings all come from the front end,
  # templates instantiated) checks the code without generating it: no -c/-o, no object.
  case "$flags" in
    *-fsyntax-only*) output="" ;;
    *) output="-c -o model.o" ;;
  esac
  if (cd "$work" && "$cxx" -std=c++17 -Wall -Wextra -Werror $flags -I "$include" $output model.cpp) \
       > "$work/log" 2>&1; then
    echo "ok   $cxx $flags"
  else
    echo "FAIL $cxx $flags:"
    head -c 4000 "$work/log"
    status=1
  fi
done
exit $status
