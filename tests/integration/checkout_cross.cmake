# A firmware-style project: cross-compiling (cross-to-this-host.cmake), using this checkout's
# cmake/Onnxc.cmake on its own. onnxc must run on the build machine: without
# ONNXC_HOST_EXECUTABLE the configure step must stop and say what to set; with it, the project
# builds (with the weights in a .incbin file) and computes the model's reference outputs.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)

set(project "${CMAKE_CURRENT_LIST_DIR}/model_project")
set(args "-DCMAKE_TOOLCHAIN_FILE=${CMAKE_CURRENT_LIST_DIR}/cross-to-this-host.cmake" "-DONNXC_CHECKOUT=${SOURCE_DIR}"
         "-DMODEL=${SOURCE_DIR}/tests/models/mnist-cnn/model.onnx" -DWEIGHTS=incbin)

file(REMOVE_RECURSE "${WORK}")
execute_process(COMMAND "${CMAKE_COMMAND}" -S "${project}" -B "${WORK}/no-host-onnxc" -G "${GENERATOR}"
                        "-DCMAKE_CXX_COMPILER=${CXX}" ${args}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc EQUAL 0)
  message(FATAL_ERROR "configuring without a host onnxc succeeded:\n${out}")
endif()
expect_match("configuring without a host onnxc" "${out}" "no onnxc to run.*ONNXC_HOST_EXECUTABLE")

configure_project("model_project" "${project}" "${WORK}/build" ${args} "-DONNXC_HOST_EXECUTABLE=${ONNXC}")
build_project("model_project" "${WORK}/build")
run_step("running run_net" COMMAND "${WORK}/build/run_net" "${mnist_input}" OUTPUT output)
message("${output}")
expect_match("run_net's output" "${output}" "${mnist_reference}")
