# Helpers for the integration tests: CMake scripts (cmake -P) that ctest runs. They configure,
# build and run small CMake projects the way a user would, with the generator and compiler of
# the main build. Every script takes:
#   GENERATOR, MAKE_PROGRAM, CXX   of the main build (tests/CMakeLists.txt passes them)
#   SOURCE_DIR                     the onnxc checkout
#   WORK                           a scratch directory of its own (emptied first)

foreach(var GENERATOR CXX SOURCE_DIR WORK)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "${CMAKE_SCRIPT_MODE_FILE}: -D${var}=... is required")
  endif()
endforeach()

# Inputs of the bundled models with the outputs ONNX Runtime computed for them
# (tests/models/*/test_data_set_0), as model_project's run_net prints them.
set(mnist_input "${SOURCE_DIR}/examples/consumer/input.f32")
set(mnist_reference "output 'output' \\(10 values\\): 0.0061 -0.1376 0.0965 0.0272 0.0522 -0.0786 0.1025 0.1423 0.0050 0.0111\n")
set(kws_input "${SOURCE_DIR}/examples/classify/sample.f32")
set(kws_reference "output 'output' \\(12 values\\): 0.0798 0.0768 0.0926 0.0820 0.0831 0.0914 0.0761 0.0762 0.0755 0.0933 0.0844 0.0887\n")

# Runs COMMAND; on failure ends the test with its output. OUTPUT (optional) receives stdout
# and stderr together.
function(run_step what)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "OUTPUT" "COMMAND")
  execute_process(COMMAND ${ARG_COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " command "${ARG_COMMAND}")
    message(FATAL_ERROR "${what} failed (${rc}):\n$ ${command}\n${out}")
  endif()
  if(ARG_OUTPUT)
    set(${ARG_OUTPUT} "${out}" PARENT_SCOPE)
  endif()
endfunction()

# Configures <source> into <build> (a fresh directory) with the main build's generator and
# compiler, Release, and any further -D arguments.
function(configure_project what source build)
  file(REMOVE_RECURSE "${build}")
  set(args -S "${source}" -B "${build}" -G "${GENERATOR}" "-DCMAKE_CXX_COMPILER=${CXX}" -DCMAKE_BUILD_TYPE=Release)
  if(MAKE_PROGRAM)
    list(APPEND args "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
  endif()
  run_step("configuring ${what}" COMMAND "${CMAKE_COMMAND}" ${args} ${ARGN})
endfunction()

# Builds <build>; OUTPUT (optional) receives the build log.
function(build_project what build)
  cmake_parse_arguments(PARSE_ARGV 2 ARG "" "OUTPUT" "")
  run_step("building ${what}" COMMAND "${CMAKE_COMMAND}" --build "${build}" -j 2 OUTPUT log)
  if(ARG_OUTPUT)
    set(${ARG_OUTPUT} "${log}" PARENT_SCOPE)
  endif()
endfunction()

# Fails unless <text> matches <regex>.
function(expect_match what text regex)
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "${what}: expected a match for\n  ${regex}\nin:\n${text}")
  endif()
endfunction()

# <text> with the characters a regex treats specially escaped.
function(regex_escape out text)
  string(REGEX REPLACE "([][.*+?^$()|\\])" "\\\\\\1" escaped "${text}")
  set(${out} "${escaped}" PARENT_SCOPE)
endfunction()
