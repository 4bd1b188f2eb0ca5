# Editing the model regenerates the code and rebuilds the program; so does a new onnxc; an
# unchanged build does nothing.
#
# A project using onnxc_add_model() (model_project, with this checkout's cmake/Onnxc.cmake and
# a copy of ONNXC as its host onnxc) is built with the MNIST CNN as its model and run; then the
# model file is replaced by the keyword-spotting CNN, and the next build must regenerate the
# code and the program must compute the new model (checked against the ONNX Runtime outputs
# in tests/models/*/test_data_set_0).
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)

set(models "${SOURCE_DIR}/tests/models")
set(model "${WORK}/model.onnx")
set(onnxc "${WORK}/bin/onnxc")
set(build "${WORK}/build")
set(generated "${build}/onnxc_net/net.cpp")
set(regenerated "onnxc: compiling")  # the custom command's comment

file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/bin")
file(COPY_FILE "${ONNXC}" "${onnxc}")
file(COPY_FILE "${models}/mnist-cnn/model.onnx" "${model}")
configure_project("model_project" "${CMAKE_CURRENT_LIST_DIR}/model_project" "${build}" "-DMODEL=${model}"
                  "-DONNXC_CHECKOUT=${SOURCE_DIR}" "-DONNXC_HOST_EXECUTABLE=${onnxc}")

# Runs the program on <input> and checks its output against <reference>.
function(check_program input reference)
  run_step("running run_net" COMMAND "${build}/run_net" "${input}" OUTPUT output)
  message("${output}")
  expect_match("run_net's output" "${output}" "${reference}")
endfunction()

build_project("the first build" "${build}" OUTPUT log)
expect_match("the first build" "${log}" "${regenerated}")
file(SHA256 "${generated}" mnist_code)
check_program("${mnist_input}" "${mnist_reference}")

build_project("a build with nothing changed" "${build}" OUTPUT log)
if(log MATCHES "${regenerated}")
  message(FATAL_ERROR "nothing changed, yet the code was regenerated:\n${log}")
endif()

# Edit the model. The sleep keeps the new time stamp apart on file systems with coarse ones.
execute_process(COMMAND "${CMAKE_COMMAND}" -E sleep 1)
file(COPY_FILE "${models}/kws-dscnn/model.onnx" "${model}")
file(TOUCH "${model}")
build_project("the build after editing the model" "${build}" OUTPUT log)
expect_match("the build after editing the model" "${log}" "${regenerated}")
file(SHA256 "${generated}" kws_code)
if(kws_code STREQUAL mnist_code)
  message(FATAL_ERROR "the model changed but ${generated} did not")
endif()
check_program("${kws_input}" "${kws_reference}")

# A new onnxc regenerates too.
execute_process(COMMAND "${CMAKE_COMMAND}" -E sleep 1)
file(TOUCH "${onnxc}")
build_project("the build after updating onnxc" "${build}" OUTPUT log)
expect_match("the build after updating onnxc" "${log}" "${regenerated}")
check_program("${kws_input}" "${kws_reference}")
