# CMake toolchain file: bare-metal Arm Cortex-M with Debian's arm-none-eabi-gcc (newlib), for
# firmware that links onnxc-generated code (examples/firmware).
#
#   cmake -S <project> -B <build> -DCMAKE_TOOLCHAIN_FILE=<onnxc>/cmake/arm-none-eabi.cmake \
#         -DONNXC_CORE=cortex-m7 -DONNXC_HOST_EXECUTABLE=<host build>/onnxc
#
# ONNXC_CORE picks the core and its floating-point unit: cortex-m4 (default), cortex-m7 or
# cortex-m55. The flags match `onnxc validate --target` (compiler/driver/firmware.cpp). The C++
# flags are those firmware needs: no exceptions, no RTTI, one section per function and object
# so the linker can drop what is unused.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)

set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
# Without startup code and a linker script, a test executable cannot link: test a library.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(ONNXC_CORE cortex-m4 CACHE STRING "The Cortex-M core: cortex-m4, cortex-m7 or cortex-m55")
set(_onnxc_fpu_cortex-m4 "-mfpu=fpv4-sp-d16")
set(_onnxc_fpu_cortex-m7 "-mfpu=fpv5-d16")
set(_onnxc_fpu_cortex-m55 "")  # -mcpu=cortex-m55 implies its FPU and MVE
if(NOT DEFINED _onnxc_fpu_${ONNXC_CORE})
  message(FATAL_ERROR "ONNXC_CORE=${ONNXC_CORE}: expected cortex-m4, cortex-m7 or cortex-m55")
endif()
set(_onnxc_cpu_flags "-mcpu=${ONNXC_CORE} -mthumb -mfloat-abi=hard ${_onnxc_fpu_${ONNXC_CORE}}")

set(CMAKE_C_FLAGS_INIT "${_onnxc_cpu_flags} -ffunction-sections -fdata-sections")
set(CMAKE_CXX_FLAGS_INIT "${_onnxc_cpu_flags} -ffunction-sections -fdata-sections -fno-exceptions -fno-rtti")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,--gc-sections")

# Look for libraries and headers in the toolchain, programs on the build machine.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
