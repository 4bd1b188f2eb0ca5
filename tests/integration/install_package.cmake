# Installs the main build (BUILD_DIR) as a user would, `cmake --install`, into WORK/prefix, by
# way of another directory that is then renamed: the package must not depend on where it was
# installed. Checks the layout, and that the installed onnxc runs.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)

file(REMOVE_RECURSE "${WORK}")
run_step("installing" COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${WORK}/staging")
file(RENAME "${WORK}/staging" "${WORK}/prefix")
set(prefix "${WORK}/prefix")
foreach(file bin/onnxc include/onnxc/base.h lib/cmake/onnxc/onnxcConfig.cmake
        lib/cmake/onnxc/onnxcConfigVersion.cmake lib/cmake/onnxc/onnxcTargets.cmake lib/cmake/onnxc/Onnxc.cmake)
  if(NOT EXISTS "${prefix}/${file}")
    message(FATAL_ERROR "the install has no ${file}")
  endif()
endforeach()
run_step("running the installed onnxc" COMMAND "${prefix}/bin/onnxc" --version OUTPUT version)
expect_match("onnxc --version" "${version}" "^onnxc ${VERSION}\n$")
