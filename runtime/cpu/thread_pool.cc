#include "runtime/cpu/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <memory>

namespace hloc::runtime {

ThreadPool::ThreadPool(int num_threads) {
  if (num_threads <= 0) num_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 0; i + 1 < num_threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::Schedule(std::function<void()> task) {
  if (workers_.empty()) {
    task();
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(task));
  }
  cv_.notify_one();
}

void ThreadPool::WorkerLoop() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      // Drain the queue before stopping so no ParallelFor waits on a dropped helper.
      if (queue_.empty()) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

void ThreadPool::ParallelFor(int64_t n, const std::function<void(int64_t)>& fn) {
  if (n <= 0) return;
  if (n == 1 || workers_.empty()) {
    for (int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  // Shared by the helpers; they may outlive this call (a helper that starts after all parts
  // are taken finds nothing to do), so the state is reference counted.
  struct State {
    std::atomic<int64_t> next{0};
    std::atomic<int64_t> done{0};
    int64_t n = 0;
    const std::function<void(int64_t)>* fn = nullptr;
    std::mutex mu;
    std::condition_variable cv;
  };
  auto state = std::make_shared<State>();
  state->n = n;
  state->fn = &fn;
  // Runs parts until none are left; the thread finishing the last part wakes the caller.
  auto work = [](State& s) {
    for (;;) {
      int64_t i = s.next.fetch_add(1, std::memory_order_relaxed);
      if (i >= s.n) return;
      (*s.fn)(i);
      if (s.done.fetch_add(1, std::memory_order_acq_rel) + 1 == s.n) {
        std::lock_guard<std::mutex> lock(s.mu);
        s.cv.notify_all();
      }
    }
  };
  const int64_t helpers = std::min<int64_t>(n - 1, static_cast<int64_t>(workers_.size()));
  for (int64_t h = 0; h < helpers; ++h) Schedule([state, work] { work(*state); });
  work(*state);
  std::unique_lock<std::mutex> lock(state->mu);
  state->cv.wait(lock, [&] { return state->done.load(std::memory_order_acquire) == n; });
}

}  // namespace hloc::runtime
