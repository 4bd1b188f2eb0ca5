# Builds the project SOURCE against the installed package in PREFIX (see install_package.cmake)
# and runs its PROGRAM, whose output must match EXPECT.
#   TOOLCHAIN  optional: cross-compile with this toolchain file; the package is then named with
#              onnxc_DIR, as toolchain files confine find_package() to the target's sysroot
#   ARG        optional: one argument for PROGRAM
# Checks that the package came from PREFIX and that the onnxc which ran is PREFIX/bin/onnxc.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)

set(package_dir "${PREFIX}/lib/cmake/onnxc")
if(TOOLCHAIN)
  set(locate "-DCMAKE_TOOLCHAIN_FILE=${TOOLCHAIN}" "-Donnxc_DIR=${package_dir}")
else()
  set(locate "-DCMAKE_PREFIX_PATH=${PREFIX}")
endif()
configure_project("${SOURCE}" "${SOURCE}" "${WORK}" ${locate})
file(STRINGS "${WORK}/CMakeCache.txt" found REGEX "^onnxc_DIR:")
regex_escape(package_dir_regex "${package_dir}")
expect_match("the package used" "${found}" "=${package_dir_regex}$")
if(TOOLCHAIN)
  file(GLOB system_file "${WORK}/CMakeFiles/*/CMakeSystem.cmake")
  file(STRINGS "${system_file}" crossing REGEX "CMAKE_CROSSCOMPILING")
  expect_match("cross-compiling" "${crossing}" "\"TRUE\"")
endif()

run_step("building ${SOURCE}" COMMAND "${CMAKE_COMMAND}" --build "${WORK}" -j 2 --verbose OUTPUT log)
regex_escape(prefix_regex "${PREFIX}")
expect_match("the onnxc that ran" "${log}" "${prefix_regex}/bin/onnxc ")
run_step("running ${PROGRAM}" COMMAND "${WORK}/${PROGRAM}" ${ARG} OUTPUT output)
message("${output}")
expect_match("${PROGRAM}'s output" "${output}" "${EXPECT}")
