#!/bin/sh
# Instructions one run() of a model executes under qemu-aarch64 (or another qemu-user):
# a harness kept by `onnxc bench MODEL --target neon --keep DIR` run with 1 and with 3 timed runs,
# counted by templates/qemu_insn_count.c.tmpl; half the difference is one run (the harness's start,
# input loading and warm-up cancel out). Deterministic: the same binary gives the same count.
#   bench/qemu/run_insns.sh DIR [qemu-aarch64]
set -e
dir=$1
qemu=${2:-qemu-aarch64}
here=$(cd "$(dirname "$0")" && pwd)
plugin=${TMPDIR:-/tmp}/onnxc-insn-count.so
source=$here/../../templates/qemu_insn_count.c.tmpl
[ -f "$plugin" ] && [ "$plugin" -nt "$source" ] || cc -x c -shared -fPIC -O2 -o "$plugin" "$source"
inputs=$(ls "$dir"/in_*.bin | sort)
count() { "$qemu" -plugin "$plugin" "$dir/harness" bench "$1" $inputs 2>&1 >/dev/null | sed -n 's/^insns: //p'; }
one=$(count 1)
three=$(count 3)
echo $(( (three - one) / 2 ))
