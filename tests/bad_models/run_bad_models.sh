#!/bin/bash
# Runs onnxc on every malformed model listed in cases.txt (made by make_bad_models.py), twice:
# `onnxc --check MODEL` and a plain compile. Each run must exit with status 1 (not crash, not
# be killed by a signal), print no sanitizer report, and print the case's expected fragment. A
# case with options in a third column (--strict) is run with them.
#
#   tests/bad_models/run_bad_models.sh path/to/onnxc [CASE_FILTER]
set -u
onnxc=$(realpath "${1:?usage: run_bad_models.sh ONNXC [FILTER]}")
filter=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

passed=0
failed=0
fail() {
  failed=$((failed + 1))
  echo "FAIL $1: $2"
  sed 's/^/    | /' "$work/stderr" | head -20
}

check_run() {  # case-file fragment mode...
  local file=$1 fragment=$2
  shift 2
  (cd "$work" && timeout 120 "$onnxc" "$@" >"$work/stdout" 2>"$work/stderr")
  local rc=$?
  local label="$file ($*)"
  if [ $rc -ne 1 ]; then
    fail "$label" "exit status $rc, expected 1"
  elif grep -qE "Sanitizer|runtime error:|LeakSanitizer" "$work/stderr"; then
    fail "$label" "sanitizer report"
  elif ! grep -qF -- "$fragment" "$work/stderr"; then
    fail "$label" "stderr lacks: $fragment"
  else
    passed=$((passed + 1))
  fi
}

while IFS=$'\t' read -r file fragment options; do
  case "$file" in '#'* | '') continue ;; esac
  [ -n "$filter" ] && [[ "$file" != *"$filter"* ]] && continue
  model="$here/models/$file"
  # shellcheck disable=SC2086  # options: words
  check_run "$file" "$fragment" "$model" --check $options
  check_run "$file" "$fragment" "$model" -o "$work/out.cpp" $options
done <"$here/cases.txt"

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
