# onnxc_add_model(<target> MODEL <file.onnx> [NAME <ns>] [SHAPES NAME=DIMS ...] [DIMS PARAM=N ...]
#                 [OPTIONS <extra onnxc args> ...])
#
# Compiles an ONNX model to C++ at build time and defines a static library <target> holding
# the generated code, with runtime-support's headers on its include path. The model file and
# the onnxc binary are dependencies: editing the model or rebuilding onnxc regenerates it.
#
# onnxc is found as the `onnxc` target of this build tree, else as ONNXC_EXECUTABLE.
function(onnxc_add_model target)
  cmake_parse_arguments(ARG "" "MODEL;NAME" "SHAPES;DIMS;OPTIONS" ${ARGN})
  if(NOT ARG_MODEL)
    message(FATAL_ERROR "onnxc_add_model(${target}): MODEL <file.onnx> is required")
  endif()
  if(NOT ARG_NAME)
    set(ARG_NAME ${target})
  endif()
  get_filename_component(model "${ARG_MODEL}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(TARGET onnxc)
    set(onnxc_cmd $<TARGET_FILE:onnxc>)
    set(onnxc_dep onnxc)
  elseif(ONNXC_EXECUTABLE)
    set(onnxc_cmd ${ONNXC_EXECUTABLE})
    set(onnxc_dep ${ONNXC_EXECUTABLE})
  else()
    message(FATAL_ERROR "onnxc_add_model(${target}): no onnxc target or ONNXC_EXECUTABLE")
  endif()
  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/onnxc_${target})
  set(args ${model} -o ${out_dir}/${target}.cpp --name ${ARG_NAME})
  foreach(s IN LISTS ARG_SHAPES)
    list(APPEND args --shape ${s})
  endforeach()
  foreach(d IN LISTS ARG_DIMS)
    list(APPEND args --dim ${d})
  endforeach()
  list(APPEND args ${ARG_OPTIONS})
  add_custom_command(
    OUTPUT ${out_dir}/${target}.cpp ${out_dir}/${target}.h
    COMMAND ${CMAKE_COMMAND} -E make_directory ${out_dir}
    COMMAND ${onnxc_cmd} ${args}
    DEPENDS ${model} ${onnxc_dep}
    COMMENT "onnxc: compiling ${ARG_MODEL}"
    VERBATIM)
  add_library(${target} STATIC ${out_dir}/${target}.cpp ${out_dir}/${target}.h)
  target_include_directories(${target} PUBLIC ${out_dir})
  if(TARGET onnxc_runtime)
    target_link_libraries(${target} PUBLIC onnxc_runtime)
  elseif(TARGET onnxc::runtime)
    target_link_libraries(${target} PUBLIC onnxc::runtime)
  endif()
  target_compile_features(${target} PUBLIC cxx_std_17)
endfunction()
