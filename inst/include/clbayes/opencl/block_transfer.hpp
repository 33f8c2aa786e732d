#ifndef CLBAYES_OPENCL_BLOCK_TRANSFER_HPP
#define CLBAYES_OPENCL_BLOCK_TRANSFER_HPP

// Block columns of a square matrix between host and device on host threads
// of their own, so that the thread which enqueues the kernels never copies:
// block_uploader brings the columns of a host matrix to the device in
// order, as fast as the pinned staging goes, on the transfer queue;
// block_downloader copies each block column back once an event says it is
// final, on the download queue with its own staging (the bus is full
// duplex). linalg/cholesky_host.hpp factors a matrix between the two.
// Those threads enqueue copies only (kernel_cl's state belongs to the main
// thread) and never call R: only the main thread's waits check for
// interrupts, and they rethrow what a copying thread threw.

#include "../error.hpp"
#include "../interrupt.hpp"
#include "pinned_transfer.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {

/** The block columns of an n x n column-major matrix of doubles, nb
 *  columns each (the last may be narrower). */
struct block_columns {
  int n, nb;
  int first(int j) const { return j * nb; }
  int width(int j) const { return std::min(nb, n - j * nb); }
  int count() const { return (n + nb - 1) / nb; }
  std::size_t offset(int j) const { return sizeof(double) * std::size_t(first(j)) * n; }
  std::size_t bytes(int j) const { return sizeof(double) * std::size_t(width(j)) * n; }
  std::size_t total_bytes() const { return sizeof(double) * std::size_t(n) * n; }
  /** The block column that holds byte b of the matrix. */
  int of_byte(std::size_t b) const { return static_cast<int>(b / offset(1)); }
};

namespace internal {

// The events of block columns, handed from one host thread to another in
// order, with the first thread's failure: push() appends the event of the
// next block column, the waits return that of block column k once it is
// there. The thread that copies never calls R: only the main thread's wait
// checks for interrupts, and it rethrows what the copying thread threw.
class block_events {
 public:
  void push(const cl::Event& e) {
    {
      std::lock_guard<std::mutex> lock(m_);
      events_.push_back(e);
    }
    cv_.notify_all();
  }
  void fail(std::exception_ptr error) {
    {
      std::lock_guard<std::mutex> lock(m_);
      error_ = error;
    }
    cv_.notify_all();
  }
  void stop() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    cv_.notify_all();
  }
  /** On the main thread. */
  cl::Event wait_main(int k) {
    std::unique_lock<std::mutex> lock(m_);
    auto ready = [&] { return error_ || static_cast<int>(events_.size()) > k; };
    while (!cv_.wait_for(lock, std::chrono::milliseconds(20), ready)) {
      lock.unlock();
      check_interrupt();
      lock.lock();
    }
    if (error_) std::rethrow_exception(error_);
    return events_[k];
  }
  /** On the copying thread: false once stopped. */
  bool wait_worker(int k, cl::Event& e) {
    std::unique_lock<std::mutex> lock(m_);
    cv_.wait(lock, [&] { return stop_ || static_cast<int>(events_.size()) > k; });
    if (stop_) return false;
    e = events_[k];
    return true;
  }
  /** The event of block column k if it is there already. */
  bool try_get(int k, cl::Event& e) {
    std::lock_guard<std::mutex> lock(m_);
    if (static_cast<int>(events_.size()) <= k) return false;
    e = events_[k];
    return true;
  }
  bool stopped() {
    std::lock_guard<std::mutex> lock(m_);
    return stop_;
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  std::vector<cl::Event> events_;
  bool stop_ = false;
  std::exception_ptr error_;
};


// Copies the block columns of the host matrix a into the device buffer
// dst, in order and as fast as the staging goes, on a thread of its own
// with the transfer queue. The thread enqueues copies only (kernel_cl's
// state belongs to the main thread). The destructor stops it (after the
// block column in flight) and joins it before the staging's stream goes.
class block_uploader {
 public:
  block_uploader(const double* a, const cl::Buffer& dst, block_columns blocks,
                 const pinned_tuning& pin)
      : queue_(context::instance().transfer_queue()), stream_(queue_, pin), a_(a),
        dst_(dst), blocks_(blocks) {
    thread_ = std::thread([this] { run(); });
  }
  block_uploader(const block_uploader&) = delete;
  block_uploader& operator=(const block_uploader&) = delete;
  ~block_uploader() {
    uploaded_.stop();
    if (thread_.joinable()) thread_.join();
  }
  /** An event after which block column j is in dst (main thread). */
  cl::Event arrived(int j) { return uploaded_.wait_main(j); }

 private:
  void run() {
    try {
      std::vector<cl::Event> sent;
      for (int j = 0; j < blocks_.count() && !uploaded_.stopped(); ++j) {
        // At most two block columns in flight: NVIDIA's driver completes
        // the first copy of a longer burst from page-locked memory only
        // with the last (RESULTS.md, "Dense linear algebra defaults").
        if (j >= 2) sent[j - 2].wait();
        cl::Event e = stream_.write(dst_, blocks_.offset(j),
                                    reinterpret_cast<const char*>(a_) + blocks_.offset(j),
                                    blocks_.bytes(j));
        queue_.flush();
        sent.push_back(e);
        uploaded_.push(e);
      }
    } catch (...) {  // no check_interrupt() here: rethrown by arrived()
      uploaded_.fail(std::current_exception());
    }
  }

  cl::CommandQueue& queue_;
  pinned_stream stream_;
  const double* a_;
  cl::Buffer dst_;
  block_columns blocks_;
  block_events uploaded_;
  std::thread thread_;  // last: started once everything above exists
};

// Copies the block columns of an n x n device buffer into the host array
// out, each once its event has been pushed and has completed, on a thread
// of its own with the download queue and its own staging: one read of the
// whole matrix whose chunks wait for their block column's event, so that
// the bus carries the next block column while the host copies out the end
// of the one before. Stopped and joined by the destructor as block_uploader.
class block_downloader {
 public:
  block_downloader(const cl::Buffer& src, double* out, block_columns blocks,
                   const pinned_tuning& pin)
      : queue_(context::instance().download_queue()),
        stream_(queue_, pin, staging_use::download), src_(src), out_(out),
        blocks_(blocks) {
    thread_ = std::thread([this] { run(); });
  }
  block_downloader(const block_downloader&) = delete;
  block_downloader& operator=(const block_downloader&) = delete;
  ~block_downloader() {
    final_.stop();
    if (thread_.joinable()) thread_.join();
  }
  /** Block column k of src is final after `e` (flushed), k = the number
   *  of earlier pushes. */
  void push(const cl::Event& e) { final_.push(e); }
  /** Returns once every block column is in out (main thread). */
  void finish() { copied_.wait_main(0); }

 private:
  struct stopped {};

  void run() {
    try {
      // Block columns are final in order: the chunk up to byte `end` waits
      // for the event of the block column that holds its last byte.
      stream_.read(src_, 0, reinterpret_cast<char*>(out_), blocks_.total_bytes(),
                   [this](std::size_t end, bool wait, cl::Event& after) {
                     const int k = blocks_.of_byte(end - 1);
                     if (!wait) return final_.try_get(k, after);
                     if (!final_.wait_worker(k, after)) throw stopped();
                     return true;
                   });
      copied_.push(cl::Event());
    } catch (const stopped&) {  // the destructor's: nothing waits any more
    } catch (...) {  // no check_interrupt() here: rethrown by finish()
      copied_.fail(std::current_exception());
    }
  }

  cl::CommandQueue& queue_;
  pinned_stream stream_;
  cl::Buffer src_;
  double* out_;
  block_columns blocks_;
  block_events final_, copied_;
  std::thread thread_;  // last: started once everything above exists
};

}  // namespace internal

}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
