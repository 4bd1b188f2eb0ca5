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
// `threads` - 1 workers and the thread that calls run_parallel share each parallel loop's tasks:
// thread t (the calling thread is 0) owns the t-th of `threads` contiguous blocks of task indices
// and takes them in order from a counter of its own, then helps the others by taking from theirs.
// So a thread claims its tasks without fighting the others for one cache line (a loop of a
// hundred 2-us product panels paid for one shared counter's line at every claim), and in a loop of
// equal tasks each thread runs the same part of every loop, the part of the data its own core
// wrote in the loop before when consecutive steps are cut alike. A model makes a few parallel
// loops per layer, so between loops the workers spin for a while (a condition variable's wake-up
// would cost more than a small layer) before they sleep. One pool serves one run_parallel call at
// a time.
#ifndef ONNXC_THREAD_POOL_H
#define ONNXC_THREAD_POOL_H

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "onnxc/parallel.h"

namespace onnxc {

// A pool of `threads` - 1 worker threads; run_parallel's calling thread is the other one.
class ThreadPool {
 public:
  explicit ThreadPool(int threads)
      : threads_(threads < 1 ? 1 : threads), claims_(new Claim[static_cast<std::size_t>(threads_)]) {
    for (int i = 1; i < threads_; ++i) workers_.emplace_back([this, i] { work(i); });
  }
  ~ThreadPool() {
    stopping_.store(true);
    publish(nullptr, nullptr, 0);
    {
      std::lock_guard<std::mutex> lock(mutex_);  // a worker between its last look and its wait sees the
    }                                            // new sequence number once it holds the lock
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
  }
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // What run_parallel takes; valid while the pool lives.
  onnxc_parallel_for parallel_for() { return {&ThreadPool::run, this}; }

 private:
  // A parallel loop as a worker copies it.
  struct Loop {
    onnxc_task_fn task = nullptr;
    void* context = nullptr;
    std::uint64_t tasks = 0, generation = 0;
  };
  // Thread t's block of a loop's tasks: the next unclaimed index in the low 32 bits, the loop's
  // generation in the high ones (its low 32 bits: the comparison must still hold after 2^32
  // loops, which a server running a model a thousand times a second makes in about half a day),
  // so a worker still holding an older loop can never claim a task of the current one. One cache
  // line each: the owner's claims stay in its own cache.
  struct alignas(64) Claim {
    std::atomic<std::uint64_t> next{0};
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

  // Makes a new loop the current one without a lock (a sequence lock: the number is odd while the
  // loop is written, 2 * generation once it is whole), so a worker that sees it never waits for a
  // lock the calling thread holds. With a lock there, a worker spinning on the generation saw it
  // change while the calling thread still held the lock, and slept in the kernel until the
  // unlock woke it: a wake-up across vCPUs of tens of microseconds, at some loops of every run.
  // Returns the loop as published.
  Loop publish(onnxc_task_fn task, void* task_context, std::size_t n_tasks) {
    const Loop loop = {task, task_context, n_tasks, ++generation_};
    sequence_.store(2 * loop.generation - 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    task_.store(loop.task, std::memory_order_relaxed);
    context_.store(loop.context, std::memory_order_relaxed);
    tasks_.store(loop.tasks, std::memory_order_relaxed);
    done_.store(0, std::memory_order_relaxed);
    for (int t = 0; t < threads_; ++t) claims_[t].next.store(loop.generation << 32 | block_begin(loop, t));
    sequence_.store(2 * loop.generation);  // release, and ordered before the load of sleepers_
    return loop;
  }

  void run_loop(std::size_t n_tasks, onnxc_task_fn task, void* task_context) {
    const Loop loop = publish(task, task_context, n_tasks);
    if (sleepers_.load() > 0) {  // a worker sleeping (or about to): wake it under the lock it checks in
      { std::lock_guard<std::mutex> lock(mutex_); }
      wake_.notify_all();
    }
    take_tasks(loop, 0);
    for (int spin = 0; done_.load(std::memory_order_acquire) != loop.tasks; ++spin) {
      if (spin > kSpins) std::this_thread::yield();
      else cpu_relax();
    }
  }

  // The first task index of thread t's block: blocks of nearly equal size, in thread order.
  std::uint64_t block_begin(const Loop& loop, int t) const {
    return loop.tasks * static_cast<std::uint64_t>(t) / static_cast<std::uint64_t>(threads_);
  }

  // Thread `self` runs what is left of its own block, then of the next threads' blocks.
  void take_tasks(const Loop& loop, int self) {
    std::uint64_t ran = 0;
    for (int k = 0; k < threads_; ++k) {
      const int t = (self + k) % threads_;
      const std::uint64_t end = block_begin(loop, t + 1);
      std::atomic<std::uint64_t>& claim = claims_[t].next;
      std::uint64_t next = claim.load();
      while ((next >> 32) == (loop.generation & 0xffffffffu) && (next & 0xffffffffu) < end) {
        if (!claim.compare_exchange_weak(next, next + 1)) continue;
        loop.task(loop.context, static_cast<std::size_t>(next & 0xffffffffu));
        ++ran;
        next = claim.load();
      }
    }
    // Once per thread and loop: the calling thread waits for the count to reach the loop's tasks.
    if (ran) done_.fetch_add(ran, std::memory_order_release);
  }

  // The loop published after sequence number `seen`, once it is whole (a loop read while the
  // calling thread wrote the next one is read again).
  bool read_loop(std::uint64_t seen, Loop* loop) {
    const std::uint64_t before = sequence_.load(std::memory_order_acquire);
    if (before == seen || (before & 1)) return false;
    loop->task = task_.load(std::memory_order_relaxed);
    loop->context = context_.load(std::memory_order_relaxed);
    loop->tasks = tasks_.load(std::memory_order_relaxed);
    loop->generation = before / 2;
    std::atomic_thread_fence(std::memory_order_acquire);
    return sequence_.load(std::memory_order_relaxed) == before;
  }

  void work(int self) {
    std::uint64_t seen = 0;
    for (;;) {
      Loop loop;
      for (int spin = 0; !read_loop(seen, &loop); ++spin) {
        if (spin < kSpins) {
          cpu_relax();
          continue;
        }
        std::unique_lock<std::mutex> lock(mutex_);
        sleepers_.fetch_add(1);  // before the last look: run_loop then sees it and wakes this thread
        wake_.wait(lock, [&] { return sequence_.load() != seen; });
        sleepers_.fetch_sub(1);
        spin = 0;
      }
      seen = 2 * loop.generation;
      if (stopping_.load()) return;
      take_tasks(loop, self);
    }
  }

  const int threads_;
  std::unique_ptr<Claim[]> claims_;  // one per thread, the calling thread's first
  std::vector<std::thread> workers_;
  std::uint64_t generation_ = 0;     // the current loop's (only the calling thread writes it)
  // The current loop, written by publish() under sequence_.
  std::atomic<std::uint64_t> sequence_{0};
  std::atomic<onnxc_task_fn> task_{nullptr};
  std::atomic<void*> context_{nullptr};
  std::atomic<std::uint64_t> tasks_{0};
  std::atomic<std::uint64_t> done_{0};  // tasks of the current loop that have returned
  std::atomic<bool> stopping_{false};
  // Sleeping workers: a worker that spun kSpins times without a new loop waits on wake_.
  std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<int> sleepers_{0};
};

}  // namespace onnxc

#endif  // ONNXC_THREAD_POOL_H
