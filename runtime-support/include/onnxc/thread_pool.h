// onnxc runtime support, for hosted programs only: a small thread pool to give run_parallel.
//
// The generated code never includes this header and never starts a thread (onnxc/parallel.h).
// A program on an operating system with C++ threads that has no pool of its own can use this
// one; `onnxc validate --threads N` and `onnxc bench --threads N` do:
//
//   onnxc::ThreadPool pool(2);                       // the calling thread and one worker
//   const onnxc_parallel_for parallel = pool.parallel_for();
//   model::run_parallel(input, output, arena, &parallel);
//
// `threads` - 1 workers and the thread that calls run_parallel take the tasks of each parallel
// loop from a shared counter. A model makes a few parallel loops per layer, so between loops the
// workers spin for a while (a condition variable's wake-up would cost more than a small layer)
// before they sleep. One pool serves one run_parallel call at a time.
#ifndef ONNXC_THREAD_POOL_H
#define ONNXC_THREAD_POOL_H

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "onnxc/parallel.h"

namespace onnxc {

// A pool of `threads` - 1 worker threads; run_parallel's calling thread is the other one.
class ThreadPool {
 public:
  explicit ThreadPool(int threads) {
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { work(); });
  }
  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
      generation_.fetch_add(1);
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
  }
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // What run_parallel takes; valid while the pool lives.
  onnxc_parallel_for parallel_for() { return {&ThreadPool::run, this}; }

 private:
  // A parallel loop as a worker copies it; `next` counts its claimed tasks in the low 32 bits
  // and holds the loop's generation in the high ones, so a worker still holding an older loop
  // can never claim a task of the current one.
  struct Loop {
    onnxc_task_fn task = nullptr;
    void* context = nullptr;
    std::uint64_t tasks = 0, generation = 0;
  };
  static constexpr int kSpins = 20000;

  // One iteration of a spin-wait: a hint that lets a core's other hardware thread (a vCPU may be
  // one) run meanwhile, instead of competing for the core with a tight loop of loads.
  static void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
  }

  static void run(void* self, std::size_t n_tasks, onnxc_task_fn task, void* task_context) {
    static_cast<ThreadPool*>(self)->run_loop(n_tasks, task, task_context);
  }

  void run_loop(std::size_t n_tasks, onnxc_task_fn task, void* task_context) {
    Loop loop;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      loop_ = {task, task_context, n_tasks, loop_.generation + 1};
      loop = loop_;
      done_.store(0);
      next_.store(loop.generation << 32);
      generation_.store(loop.generation);
    }
    wake_.notify_all();
    take_tasks(loop);
    for (int spin = 0; done_.load(std::memory_order_acquire) != loop.tasks; ++spin) {
      if (spin > kSpins) std::this_thread::yield();
      else cpu_relax();
    }
  }

  void take_tasks(const Loop& loop) {
    std::uint64_t next = next_.load();
    while ((next >> 32) == loop.generation && (next & 0xffffffffu) < loop.tasks) {
      if (!next_.compare_exchange_weak(next, next + 1)) continue;
      loop.task(loop.context, static_cast<std::size_t>(next & 0xffffffffu));
      done_.fetch_add(1, std::memory_order_release);
      next = next_.load();
    }
  }

  void work() {
    std::uint64_t seen = 0;
    for (;;) {
      for (int spin = 0; spin < kSpins && generation_.load(std::memory_order_acquire) == seen; ++spin) cpu_relax();
      Loop loop;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return generation_.load() != seen; });
        if (stopping_) return;
        loop = loop_;
        seen = loop.generation;
      }
      take_tasks(loop);
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  Loop loop_;                                  // the current loop (under mutex_)
  bool stopping_ = false;                      // (under mutex_)
  std::atomic<std::uint64_t> generation_{0};   // loop_.generation, readable without the lock
  std::atomic<std::uint64_t> next_{0};
  std::atomic<std::uint64_t> done_{0};         // tasks of the current loop that have returned
};

}  // namespace onnxc

#endif  // ONNXC_THREAD_POOL_H
