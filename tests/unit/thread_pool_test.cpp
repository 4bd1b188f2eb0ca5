// onnxc::ThreadPool (onnxc/thread_pool.h), the pool `onnxc validate/bench --threads` give
// run_parallel: every task of every loop runs exactly once, loops follow each other without
// mixing, and rt::parallel_for over it computes what the serial loop computes.
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "onnxc/thread_pool.h"

namespace {

// Per loop, how many times each task index ran.
struct Counts {
  std::vector<std::atomic<int>> hits;
  explicit Counts(std::size_t n) : hits(n) {}
  static void task(void* self, std::size_t i) { static_cast<Counts*>(self)->hits[i].fetch_add(1); }
};

}  // namespace

TEST_CASE("ThreadPool runs every task of every loop exactly once", "[thread_pool]") {
  for (int threads : {1, 2, 3}) {
    onnxc::ThreadPool pool(threads);
    const onnxc_parallel_for parallel = pool.parallel_for();
    // Many short loops back to back: a worker still finishing one loop must not take tasks of the next.
    for (int round = 0; round < 300; ++round) {
      const std::size_t n = static_cast<std::size_t>(round % 37);
      Counts counts(n);
      parallel.run(parallel.context, n, &Counts::task, &counts);
      for (std::size_t i = 0; i < n; ++i) {
        INFO("threads " << threads << ", round " << round << ", task " << i << " of " << n);
        REQUIRE(counts.hits[i].load() == 1);
      }
    }
  }
}

TEST_CASE("ThreadPool's worker starts on its own block of the loop's tasks", "[thread_pool]") {
  // Task 0 (the calling thread's first) holds on until another task has started, so the worker
  // claims first: it must take the first task of its block, task n / 2 (the second of 2 blocks),
  // not the next index after task 0. Then the threads run consecutive steps cut alike over the
  // same data, each in its own cache. After a pause of 20 ms the worker has gone to sleep and
  // must be woken (else task 0 gives up after 10 s and the check fails).
  onnxc::ThreadPool pool(2);
  const onnxc_parallel_for parallel = pool.parallel_for();
  for (int pause_ms : {0, 20}) {
    for (std::size_t n : {2, 7, 8, 100}) {
      struct Order {
        std::atomic<long> first_other{-1};
        static void task(void* self, std::size_t i) {
          auto& o = *static_cast<Order*>(self);
          if (i != 0) {
            long none = -1;
            o.first_other.compare_exchange_strong(none, static_cast<long>(i));
            return;
          }
          const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
          while (o.first_other.load() < 0 && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
        }
      } order;
      std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
      parallel.run(parallel.context, n, &Order::task, &order);
      INFO("tasks " << n << ", after a pause of " << pause_ms << " ms");
      REQUIRE(order.first_other.load() == static_cast<long>(n / 2));
    }
  }
}

TEST_CASE("rt::parallel_for over a ThreadPool gives the serial loop's result", "[thread_pool]") {
  onnxc::ThreadPool pool(2);
  const onnxc_parallel_for parallel = pool.parallel_for();
  const onnxc::rt::index_t n = 1000;
  std::vector<long> parallel_squares(n, -1), serial_squares(n, -1);
  auto square_into = [](std::vector<long>& out) {
    return [&out](onnxc::rt::index_t i) { out[static_cast<std::size_t>(i)] = static_cast<long>(i) * i; };
  };
  onnxc::rt::parallel_for(&parallel, n, square_into(parallel_squares));
  onnxc::rt::parallel_for(nullptr, n, square_into(serial_squares));
  REQUIRE(parallel_squares == serial_squares);
  REQUIRE(parallel_squares[999] == 998001);  // 999 * 999
}

TEST_CASE("rt::parallel_ranges covers every item once, in ranges cut at multiples of the alignment", "[thread_pool]") {
  using onnxc::rt::index_t;
  onnxc::ThreadPool pool(3);
  const onnxc_parallel_for parallel = pool.parallel_for();
  for (index_t count : {1, 15, 16, 17, 100, 1000, 4099}) {
    for (index_t tasks : {1, 2, 3, 8}) {
      for (index_t align : {1, 16}) {
        std::vector<std::atomic<int>> seen(static_cast<std::size_t>(count));
        std::atomic<int> misaligned{0};
        onnxc::rt::parallel_ranges(&parallel, count, tasks, align, [&](onnxc::rt::Range r) {
          if (r.begin % align != 0 || (r.end != count && r.end % align != 0)) ++misaligned;
          for (index_t i = r.begin; i < r.end; ++i) ++seen[static_cast<std::size_t>(i)];
        });
        INFO("count " << count << " tasks " << tasks << " align " << align);
        CHECK(misaligned.load() == 0);
        int once = 0;
        for (auto& s : seen) once += s.load() == 1;
        CHECK(once == count);
      }
    }
  }
  int calls = 0;  // without a parallel-for: the whole range in one call
  onnxc::rt::parallel_ranges(nullptr, 100, 8, 16, [&](onnxc::rt::Range r) {
    CHECK((r.begin == 0 && r.end == 100));
    ++calls;
  });
  CHECK(calls == 1);
}
