// parallel_for: run independent work items on a few threads, for CPU-bound loops such as
// decoding the columns of a file or reading the files of a dataset.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace canrun {

//! Calls work(idx) for every idx in [0, count), on up to hardware_concurrency threads (the
//! calling thread included). Items must be independent; returns when all are done.
template <typename Work>
void parallel_for(std::size_t count, Work&& work) {
  const std::size_t threads =
      std::min<std::size_t>(count, std::max(1u, std::thread::hardware_concurrency()));
  std::atomic<std::size_t> next{0};
  auto drain = [&] {
    for (std::size_t idx = next++; idx < count; idx = next++) work(idx);
  };
  std::vector<std::thread> pool;
  for (std::size_t thread = 1; thread < threads; ++thread) pool.emplace_back(drain);
  drain();
  for (auto& worker : pool) worker.join();
}

}  // namespace canrun
