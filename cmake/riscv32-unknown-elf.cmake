# CMake toolchain file: bare-metal 32-bit RISC-V with Debian's riscv64-unknown-elf-gcc and picolibc,
# for firmware that links onnxc-generated code (examples/firmware).
#
#   cmake -S <project> -B <build> -DCMAKE_TOOLCHAIN_FILE=<onnxc>/cmake/riscv32-unknown-elf.cmake \
#         -DONNXC_CORE=riscv32f -DONNXC_HOST_EXECUTABLE=<host build>/onnxc
#
# ONNXC_CORE picks the core: riscv32 (rv32imac, no FPU; default) or riscv32f (rv32imafc). The flags
# match `onnxc validate --target` (compiler/driver/firmware.cpp). Debian's compiler has no C++
# library: C++ sources are compiled and linked by the gcc driver (no libstdc++ is linked; the
# generated code needs none), with the target-neutral C++ standard headers of the Arm toolchain's
# libstdc++ (libstdc++-arm-none-eabi-newlib). Link with -lm for the libm functions kernels call.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR riscv32)

set(CMAKE_C_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_CXX_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_ASM_COMPILER riscv64-unknown-elf-gcc)
# Without startup code and a linker script, a test executable cannot link: test a library.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(ONNXC_CORE riscv32 CACHE STRING "The RISC-V core: riscv32 (rv32imac) or riscv32f (rv32imafc)")
set(_onnxc_arch_riscv32 "-march=rv32imac -mabi=ilp32")
set(_onnxc_arch_riscv32f "-march=rv32imafc -mabi=ilp32f")
if(NOT DEFINED _onnxc_arch_${ONNXC_CORE})
  message(FATAL_ERROR "ONNXC_CORE=${ONNXC_CORE}: expected riscv32 or riscv32f")
endif()

file(GLOB _onnxc_cxx_headers LIST_DIRECTORIES true /usr/include/newlib/c++/*)
list(SORT _onnxc_cxx_headers COMPARE NATURAL)
list(POP_BACK _onnxc_cxx_headers _onnxc_cxx_header_dir)
if(NOT _onnxc_cxx_header_dir OR NOT EXISTS "${_onnxc_cxx_header_dir}/arm-none-eabi/bits/c++config.h")
  message(FATAL_ERROR "riscv64-unknown-elf-gcc needs C++ standard headers: install libstdc++-arm-none-eabi-newlib "
                      "(Debian; tools/install-deps.sh does)")
endif()
set(_onnxc_flags "${_onnxc_arch_${ONNXC_CORE}} --specs=picolibc.specs -ffunction-sections -fdata-sections")
set(CMAKE_C_FLAGS_INIT "${_onnxc_flags}")
set(CMAKE_CXX_FLAGS_INIT "${_onnxc_flags} -fno-exceptions -fno-rtti -isystem ${_onnxc_cxx_header_dir} \
-isystem ${_onnxc_cxx_header_dir}/arm-none-eabi")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,--gc-sections")

# Look for libraries and headers in the toolchain, programs on the build machine.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
