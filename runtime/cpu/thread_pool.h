// A fixed pool of worker threads with one work queue, for kernel parts and GEMM tiles.
// ParallelFor lets the calling thread take parts too, so a ParallelFor issued from inside a
// worker (nested parallelism) always finishes, even when every worker is busy.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace hloc::runtime {

class ThreadPool {
 public:
  // num_threads <= 0: std::thread::hardware_concurrency(). The pool has num_threads - 1
  // workers; the caller of ParallelFor is the last thread.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Queues `task` to run on a worker (fire and forget).
  void Schedule(std::function<void()> task);

  // Runs fn(i) for every i in [0, n), spread over the workers and the calling thread; returns
  // when all have run.
  void ParallelFor(int64_t n, const std::function<void(int64_t)>& fn);

 private:
  void WorkerLoop();

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
};

}  // namespace hloc::runtime
