#ifndef CLBAYES_OPENCL_COPY_TEAM_HPP
#define CLBAYES_OPENCL_COPY_TEAM_HPP

// Large host copies by a team of threads kept for the team's lifetime:
// one thread copies at a fraction of a server host's memory bandwidth, and
// starting threads for every copy costs a good part of what a chunk of the
// pinned staging takes to copy (opencl/pinned_transfer.hpp).

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace clbayes {
namespace opencl {
namespace internal {

class copy_team {
 public:
  /** `threads` copy at once, the calling thread among them (0: up to 8,
   *  as the host has). */
  explicit copy_team(int threads) {
    if (threads <= 0) threads = std::min(8, std::max(1, int(std::thread::hardware_concurrency())));
    try {
      for (int t = 1; t < threads; ++t) workers_.emplace_back([this, t] { work(t); });
    } catch (...) {
      stop();
      throw;
    }
  }
  copy_team(const copy_team&) = delete;
  copy_team& operator=(const copy_team&) = delete;
  ~copy_team() { stop(); }

  /** memcpy(dst, src, bytes), in parts of at least min_part bytes. */
  void copy(char* dst, const char* src, std::size_t bytes) {
    const std::size_t size = workers_.size() + 1;
    const std::size_t parts = std::max<std::size_t>(1, std::min(size, bytes / min_part));
    if (parts == 1) {
      std::memcpy(dst, src, bytes);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(m_);
      dst_ = dst;
      src_ = src;
      bytes_ = bytes;
      part_ = (bytes + parts - 1) / parts;
      pending_ = static_cast<int>(workers_.size());
      ++round_;
    }
    start_.notify_all();
    copy_part(0);
    std::unique_lock<std::mutex> lock(m_);
    done_.wait(lock, [&] { return pending_ == 0; });
  }

 private:
  static constexpr std::size_t min_part = std::size_t(512) << 10;

  // Part t of the current copy (nothing where the copy has fewer parts).
  void copy_part(int t) {
    const std::size_t lo = std::min(bytes_, t * part_), hi = std::min(bytes_, lo + part_);
    if (hi > lo) std::memcpy(dst_ + lo, src_ + lo, hi - lo);
  }

  void work(int t) {
    unsigned seen = 0;
    std::unique_lock<std::mutex> lock(m_);
    for (;;) {
      start_.wait(lock, [&] { return stop_ || round_ != seen; });
      if (stop_) return;
      seen = round_;
      lock.unlock();
      copy_part(t);  // the job's fields do not change before every part is done
      lock.lock();
      if (--pending_ == 0) done_.notify_one();
    }
  }

  void stop() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    start_.notify_all();
    for (std::thread& w : workers_) w.join();
    workers_.clear();
  }

  std::vector<std::thread> workers_;
  std::mutex m_;
  std::condition_variable start_, done_;
  char* dst_ = nullptr;
  const char* src_ = nullptr;
  std::size_t bytes_ = 0, part_ = 0;
  unsigned round_ = 0;
  int pending_ = 0;
  bool stop_ = false;
};

}  // namespace internal
}  // namespace opencl
}  // namespace clbayes

#endif
