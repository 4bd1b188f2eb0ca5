// onnxc runtime support: the caller's parallel-for, through which run() may split its heavy
// kernels into tasks.
//
// Generated code never starts threads. A caller that has a thread pool passes run() an
// onnxc_parallel_for; the kernels hand it a number of independent tasks (output tiles of a
// matrix product, channel ranges of a depthwise convolution, ...) and it runs them on its
// threads. Without one (the plain run(), or a null pointer) every kernel runs its loops on the
// calling thread exactly as before: the only cost is a null test per kernel.
//
// This header is C as well as C++: the generated header's C API uses the struct.
#ifndef ONNXC_PARALLEL_H
#define ONNXC_PARALLEL_H

#ifdef __cplusplus
#include <cstddef>
extern "C" {
#else
#include <stddef.h>
#endif

// One task of a parallel loop: task_index in [0, n_tasks).
typedef void (*onnxc_task_fn)(void* task_context, size_t task_index);

// The caller's parallel-for. run(context, n_tasks, task, task_context) must call
// task(task_context, i) exactly once for every i in [0, n_tasks), in any order and on any of
// its threads (the calling thread included), and return only when all of them have returned.
// Tasks of one call never write the same memory. run() is called from the thread that called
// the model's run(), never from inside a task.
typedef struct onnxc_parallel_for {
  void (*run)(void* context, size_t n_tasks, onnxc_task_fn task, void* task_context);
  void* context;
} onnxc_parallel_for;

#ifdef __cplusplus
}  // extern "C"

#include "onnxc/base.h"

namespace onnxc {
namespace rt {

// What kernels take: the caller's parallel-for, or nullptr to run serially.
using Parallel = const onnxc_parallel_for*;

// body(i) for every i in [0, tasks): on the caller's threads when it gave some, else in order
// on this thread (with no indirect call).
template <class Body>
inline void parallel_for(Parallel parallel, index_t tasks, const Body& body) {
  if (!parallel || !parallel->run || tasks < 2) {
    for (index_t i = 0; i < tasks; ++i) body(i);
    return;
  }
  const onnxc_task_fn task = [](void* context, size_t i) {
    (*static_cast<const Body*>(context))(static_cast<index_t>(i));
  };
  parallel->run(parallel->context, static_cast<size_t>(tasks), task, const_cast<Body*>(&body));
}

// [begin, end) of part `part` when `count` items are cut into `parts` nearly equal parts.
struct Range {
  index_t begin, end;
};
inline Range part_of(index_t count, index_t parts, index_t part) {
  return {count * part / parts, count * (part + 1) / parts};
}

// body(range) over [0, count) cut into `tasks` nearly equal ranges whose boundaries fall on
// multiples of `align` items (whole vectors or cache lines: no two tasks write one line), as
// tasks of the caller's parallel-for; without one, body({0, count}) once. For kernels whose
// items are independent (rows, planes, runs of elements), so the bits do not depend on the cut.
// The compiler picks `tasks` from the step's cost (range_tasks in compiler/ops/op.h).
template <class Body>
inline void parallel_ranges(Parallel parallel, index_t count, index_t tasks, index_t align, const Body& body) {
  if (!parallel || !parallel->run || tasks < 2) return body(Range{0, count});
  const index_t units = (count + align - 1) / align;
  parallel_for(parallel, tasks, [&](index_t t) {
    const Range r = part_of(units, tasks, t);
    const index_t end = r.end * align < count ? r.end * align : count;
    if (r.begin * align < end) body(Range{r.begin * align, end});
  });
}

}  // namespace rt
}  // namespace onnxc
#endif  // __cplusplus

#endif  // ONNXC_PARALLEL_H
