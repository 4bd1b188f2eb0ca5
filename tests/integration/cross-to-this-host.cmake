# A toolchain file that makes CMake cross-compile for this very machine. Setting
# CMAKE_SYSTEM_NAME turns CMAKE_CROSSCOMPILING on, so onnxc_add_model() must treat onnxc as a
# build-machine tool; the compilers stay the host's so the programs still run here for checking.
# Like a real toolchain file, it confines find_package() to the (empty) target sysroot, so the
# onnxc package must be named with onnxc_DIR.
set(CMAKE_SYSTEM_NAME ${CMAKE_HOST_SYSTEM_NAME})
set(CMAKE_SYSTEM_PROCESSOR ${CMAKE_HOST_SYSTEM_PROCESSOR})
set(CMAKE_FIND_ROOT_PATH ${CMAKE_CURRENT_LIST_DIR}/no-sysroot)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
