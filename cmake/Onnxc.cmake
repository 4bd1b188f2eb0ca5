# onnxc_add_model(): compile an ONNX model to C++ as part of a CMake build.
#
#   onnxc_add_model(<target> MODEL <file.onnx>
#                   [NAME <ns>] [TARGET <isa>] [WEIGHTS array|incbin]
#                   [SHAPES <input>=<dims> ...] [DIMS <param>=<value> ...]
#                   [OPTIONS <more onnxc arguments> ...])
#
# Defines the static library <target>: the code onnxc generates from the model (<target>.cpp,
# <target>.h, and <target>.weights.bin with WEIGHTS incbin), with the generated header and
# runtime-support's headers on its PUBLIC include path. Link it and `#include "<target>.h"`.
# The code is generated at build time; the model file and the onnxc binary are dependencies,
# so editing the model or upgrading onnxc regenerates and rebuilds it.
#
#   MODEL    the .onnx file (relative paths are relative to the current source directory)
#   NAME     the C++ namespace and C prefix of the generated code (default: <target>)
#   TARGET   the ISA the code is for, passed as `onnxc --target` (`onnxc --help` lists them;
#            default generic, portable C++). The library is compiled with the flags an x86 target
#            needs (avx2: -march=x86-64-v3, native: -march=native, ...); Arm targets take theirs
#            from the toolchain (-mcpu).
#   WEIGHTS  `array` (default): weights as const arrays in the source; `incbin`: weights in a
#            binary file the assembler includes, for large models (GNU as or clang, ELF targets)
#   SHAPES   bind input shapes (onnxc --shape), DIMS symbolic dims (onnxc --dim)
#   OPTIONS  passed to onnxc unchanged, e.g. --disable-pass fold-constants
#
# Which onnxc runs (it always runs on the build machine, also when cross-compiling):
#   1. ONNXC_HOST_EXECUTABLE, when set (a cache variable: -DONNXC_HOST_EXECUTABLE=/path/onnxc);
#   2. the onnxc target of this build tree, unless cross-compiling (a cross build would build it
#      for the target machine, where it cannot run here);
#   3. onnxc::onnxc from find_package(onnxc), which is a host program by construction.
# Cross-compiling firmware in this repository therefore takes a host build of onnxc first:
#   cmake -S . -B build && cmake --build build --target onnxc
#   cmake -S <firmware> -B build-fw -DCMAKE_TOOLCHAIN_FILE=... -DONNXC_HOST_EXECUTABLE=$PWD/build/onnxc
# This file works in three settings: included by this repository's CMakeLists.txt, installed
# with the onnxc package (find_package(onnxc) includes it), or included on its own from a
# checkout (include(<checkout>/cmake/Onnxc.cmake), which then needs ONNXC_HOST_EXECUTABLE).

include_guard(GLOBAL)

set(ONNXC_HOST_EXECUTABLE "" CACHE FILEPATH
    "The onnxc that onnxc_add_model() runs (default: this tree's onnxc target or the package's onnxc::onnxc)")

# runtime-support's headers as onnxc::runtime. The package and this repository's build define
# it; included on its own from a checkout, this file takes the checkout's headers.
if(NOT TARGET onnxc::runtime AND EXISTS "${CMAKE_CURRENT_LIST_DIR}/../runtime-support/include/onnxc/base.h")
  add_library(onnxc::runtime INTERFACE IMPORTED GLOBAL)
  get_filename_component(_onnxc_runtime_include "${CMAKE_CURRENT_LIST_DIR}/../runtime-support/include" ABSOLUTE)
  set_target_properties(onnxc::runtime PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_onnxc_runtime_include}")
  unset(_onnxc_runtime_include)
endif()

# Sets <out_command> to the onnxc to run and <out_depends> to what the custom command must
# depend on so that a new onnxc regenerates the code.
function(_onnxc_host_compiler caller out_command out_depends)
  if(ONNXC_HOST_EXECUTABLE)
    if(NOT EXISTS "${ONNXC_HOST_EXECUTABLE}")
      message(WARNING "${caller}: ONNXC_HOST_EXECUTABLE=${ONNXC_HOST_EXECUTABLE} does not exist (yet)")
    endif()
    set(command "${ONNXC_HOST_EXECUTABLE}")
    set(depends "${ONNXC_HOST_EXECUTABLE}")
  elseif(TARGET onnxc AND NOT CMAKE_CROSSCOMPILING)
    set(command "$<TARGET_FILE:onnxc>")
    set(depends onnxc)  # a target: built first, and a file dependency on its binary
  elseif(TARGET onnxc::onnxc)
    set(command "$<TARGET_FILE:onnxc::onnxc>")
    set(depends "$<TARGET_FILE:onnxc::onnxc>")
  elseif(TARGET onnxc)
    message(FATAL_ERROR "${caller}: cross-compiling, so this tree's onnxc would be built for the target machine "
            "and cannot run here. Build onnxc for this machine first and pass it: "
            "-DONNXC_HOST_EXECUTABLE=/path/to/host/build/onnxc")
  else()
    message(FATAL_ERROR "${caller}: no onnxc to run. Use find_package(onnxc CONFIG REQUIRED) (with "
            "CMAKE_PREFIX_PATH or onnxc_DIR pointing at an onnxc install) or set -DONNXC_HOST_EXECUTABLE=/path/to/onnxc")
  endif()
  set(${out_command} "${command}" PARENT_SCOPE)
  set(${out_depends} "${depends}" PARENT_SCOPE)
endfunction()

# The compiler flags code generated for an onnxc --target needs (compiler/backend/target.cpp
# names the same ones; the generated source stops with #error when they are missing). Arm
# targets and generic need none beyond the toolchain's own.
function(_onnxc_target_flags isa out)
  set(flags "")
  if(isa STREQUAL "native")
    set(flags -march=native)
  elseif(isa STREQUAL "x86-64-v2")
    set(flags -march=x86-64-v2)
  elseif(isa MATCHES "^(x86-64-v3|avx2)$")
    set(flags -march=x86-64-v3)
  elseif(isa STREQUAL "avx512")
    set(flags -march=x86-64-v4)
  elseif(isa STREQUAL "avx512-vnni")
    set(flags -march=x86-64-v4 -mavx512vnni)
  endif()
  set(${out} ${flags} PARENT_SCOPE)
endfunction()

function(onnxc_add_model target)
  set(caller "onnxc_add_model(${target})")
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "MODEL;NAME;TARGET;WEIGHTS" "SHAPES;DIMS;OPTIONS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${caller}: unexpected arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_MODEL)
    message(FATAL_ERROR "${caller}: MODEL <file.onnx> is required")
  endif()
  if(NOT ARG_NAME)
    set(ARG_NAME ${target})
  endif()
  if(NOT ARG_WEIGHTS)
    set(ARG_WEIGHTS array)
  elseif(NOT ARG_WEIGHTS MATCHES "^(array|incbin)$")
    message(FATAL_ERROR "${caller}: WEIGHTS must be array or incbin, not '${ARG_WEIGHTS}'")
  endif()
  if(ARG_OPTIONS MATCHES "--weights-format|(^|;)(-o|--output|--header|--name)(;|$)")
    message(FATAL_ERROR "${caller}: give the weights format with WEIGHTS and the name with NAME; "
            "onnxc_add_model chooses the output files itself")
  endif()
  if(NOT TARGET onnxc::runtime)
    message(FATAL_ERROR "${caller}: no onnxc::runtime (runtime-support's headers): use find_package(onnxc)")
  endif()
  _onnxc_host_compiler("${caller}" onnxc_command onnxc_depends)

  get_filename_component(model "${ARG_MODEL}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT EXISTS "${model}")
    message(FATAL_ERROR "${caller}: MODEL ${model} does not exist")
  endif()
  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/onnxc_${target}")
  set(source "${out_dir}/${target}.cpp")
  set(header "${out_dir}/${target}.h")
  set(outputs "${source}" "${header}")
  set(args "${model}" -o "${source}" --name "${ARG_NAME}" --weights-format ${ARG_WEIGHTS})
  if(ARG_TARGET)
    list(APPEND args --target "${ARG_TARGET}")
    _onnxc_target_flags("${ARG_TARGET}" target_flags)
  endif()
  foreach(shape IN LISTS ARG_SHAPES)
    list(APPEND args --shape "${shape}")
  endforeach()
  foreach(dim IN LISTS ARG_DIMS)
    list(APPEND args --dim "${dim}")
  endforeach()
  list(APPEND args ${ARG_OPTIONS})
  if(ARG_WEIGHTS STREQUAL "incbin")
    set(weights_file "${out_dir}/${target}.weights.bin")
    list(APPEND outputs "${weights_file}")
  endif()

  add_custom_command(
    OUTPUT ${outputs}
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${out_dir}"
    COMMAND "${onnxc_command}" ${args}
    DEPENDS "${model}" "${onnxc_depends}"
    COMMENT "onnxc: compiling ${ARG_MODEL} to ${target}.cpp"
    VERBATIM)
  add_library(${target} STATIC "${source}" "${header}")
  target_include_directories(${target} PUBLIC "${out_dir}")
  target_link_libraries(${target} PUBLIC onnxc::runtime)
  target_compile_features(${target} PUBLIC cxx_std_17)
  target_compile_options(${target} PRIVATE ${target_flags})
  if(weights_file)
    # The assembler reads the weights while compiling the source: tell it where they are, and
    # recompile when they change.
    target_compile_definitions(${target} PRIVATE "ONNXC_WEIGHTS_FILE=\"${weights_file}\"")
    set_source_files_properties("${source}" PROPERTIES OBJECT_DEPENDS "${weights_file}")
  endif()
endfunction()
