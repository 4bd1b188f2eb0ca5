// onnxc runtime support: the hooks code generated with --trace and --profile calls after each
// step of run(). The generated code only declares them; the program that links the model
// defines them (printing, storing, sending: the model does no I/O). docs/debugging.md.
//
// This header is C as well as C++: the generated header's C API uses the structs.
#ifndef ONNXC_TRACE_H
#define ONNXC_TRACE_H

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
extern "C" {
#else
#include <stddef.h>
#include <stdint.h>
#endif

// One step of run(): the model (its --name), the step's number (the "// N." comment in the
// generated source), and the ONNX node it computes. After fusion a step may compute several
// nodes of the file (a Conv with its Relu): it carries the first one's name and op.
typedef struct onnxc_step_info {
  const char* model;
  int step;
  const char* node;
  const char* op;
} onnxc_step_info;

// One value a step produced (--trace), as it is in memory right after the step: `output` is its
// position among the node's outputs, `value` its ONNX name, `dtype` its TensorProto element type
// (1 float, 2 uint8, 3 int8, 6 int32, 7 int64, 9 bool, 10 float16, ...), `shape` its `rank` dims,
// `data` its `bytes` bytes (valid only during the call: the arena is reused by later steps).
typedef struct onnxc_trace_info {
  onnxc_step_info step;
  int output;
  const char* value;
  int dtype;
  int rank;
  const int64_t* shape;
  const void* data;
  size_t bytes;
} onnxc_trace_info;

// Defined by the user's program when the model is compiled with --trace: called after every
// step of run(), once per output of the step.
void onnxc_trace(const onnxc_trace_info* info);

// Defined by the user's program when the model is compiled with --profile: called after every
// step of run() with the counter ticks the step took (ONNXC_PROFILE_COUNTER in onnxc/profile.h:
// processor cycles on Cortex-M and RISC-V, nanoseconds on hosts).
void onnxc_profile(const onnxc_step_info* step, uint64_t ticks);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // ONNXC_TRACE_H
