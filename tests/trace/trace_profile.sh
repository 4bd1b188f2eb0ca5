#!/bin/sh
# onnxc --trace and --profile (issue #25):
#  1. without them the generated code is what it was: the traced code with the hook lines taken
#     out (the include, the counter reads, each "step N's hooks" block) is byte for byte the
#     untraced code, header and source;
#  2. a user's program (trace_main.cpp) defining onnxc_trace and onnxc_profile builds with
#     -Wall -Wextra -Werror and sees every step's values (the last the output run() wrote);
#  3. the counters of the microcontrollers compile warning-free: DWT CYCCNT on a Cortex-M4
#     (arm-none-eabi-g++) and rdcycle on RISC-V (riscv64-unknown-elf-gcc), object files only.
# usage: trace_profile.sh ONNXC MODEL_DIR STEPS
set -eu
onnxc=$1 dir=$2 steps=$3
here=$(cd "$(dirname "$0")" && pwd)
runtime=$here/../../runtime-support/include
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
mkdir plain hooked
"$onnxc" "$dir/model.onnx" -o plain/model.cpp --name traced --weights-format array
"$onnxc" "$dir/model.onnx" -o hooked/model.cpp --name traced --weights-format array --trace --profile
/usr/bin/python3 - <<'PY'
import re
def strip(text):
    text = text.replace('#include "onnxc/trace.h"\n', '').replace('#include "onnxc/profile.h"\n', '')
    text = re.sub(r'\n//\n// Compiled with --(trace|profile):.*?The program defines it\.', '', text, flags=re.S)
    text = re.sub(r'\n *const auto step_\d+_start = ONNXC_PROFILE_COUNTER\(\);', '', text)
    text = re.sub(r"\n  \{  // step \d+'s hooks.*?\n  \}(?=\n)", '', text, flags=re.S)
    return text
for name in ('model.h', 'model.cpp'):
    if strip(open('hooked/' + name).read()) != open('plain/' + name).read():
        raise SystemExit('FAIL: hooked/%s without its hooks differs from plain/%s' % (name, name))
PY
grep -q "onnxc_trace(&trace_0)" hooked/model.cpp
echo "without --trace and --profile: the same bytes as the hooked code without its hooks"

"${CXX:-c++}" -std=c++17 -O1 -Wall -Wextra -Werror -I "$runtime" -I hooked hooked/model.cpp "$here/trace_main.cpp" -o traced
/usr/bin/python3 -c "import onnx,sys; sys.stdout.buffer.write(onnx.load_tensor('$dir/test_data_set_0/input_0.pb').raw_data)" > input.bin
./traced input.bin "$steps"

for cross in "arm-none-eabi-g++ -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16" \
             "riscv64-unknown-elf-gcc --specs=picolibc.specs -march=rv32imac -mabi=ilp32 -x c++"; do
  compiler=${cross%% *}
  if ! command -v "$compiler" >/dev/null; then echo "FAIL: $compiler not found"; exit 1; fi
  extra=
  # Debian's riscv64-unknown-elf-gcc has no C++ headers: the Arm toolchain's (as validate does).
  [ "$compiler" = riscv64-unknown-elf-gcc ] && extra="-isystem /usr/include/newlib/c++/$(ls /usr/include/newlib/c++ | head -1) -isystem /usr/include/newlib/c++/$(ls /usr/include/newlib/c++ | head -1)/arm-none-eabi"
  # shellcheck disable=SC2086
  $cross $extra -std=c++17 -O2 -fno-exceptions -fno-rtti -Wall -Wextra -Werror -I "$runtime" -I hooked -c hooked/model.cpp -o "cross-$compiler.o"
  echo "$compiler: --trace --profile code compiles"
done
echo PASS
