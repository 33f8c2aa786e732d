#ifndef CLBAYES_LINALG_CHOLESKY_HOST_HPP
#define CLBAYES_LINALG_CHOLESKY_HOST_HPP

// The Cholesky factor of a matrix in host memory, computed on the device
// with its transfers overlapped: A crosses the bus by block columns
// (cholesky_settings::host_block) on the transfer queue
// (opencl/context.hpp), the left-looking schedule of
// linalg/cholesky_panel.hpp updates and factors each block column as soon
// as it has arrived, and each block column of L (or of U = L^T) is copied back as
// soon as it is final, by a second host thread on the download queue with
// its own pinned staging, while the first thread still uploads A and the
// device factors the rest (the bus is full duplex). Host to host then
// takes about the larger of the transfers and the factorisation rather
// than their sum. The checks of linalg::cholesky happen on the way in: NaN
// and Inf in the kernel that copies each block column into the working
// matrix, symmetry over all of A once it is on the device (beside the
// factorisation, on the transfer queue); every flag comes back in one read
// at the end.

#include "../error.hpp"
#include "../kernels/check.hpp"
#include "../kernels/transpose.hpp"
#include "../opencl/pinned_transfer.hpp"
#include "cholesky.hpp"
#include "settings.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace linalg {
namespace internal {

// Copies the block columns of an n x n device matrix (columns of nb) into
// the host array out on a second host thread, each once its event has been
// pushed and has completed, on the download queue through the download
// staging pair. The thread calls no R and launches no kernel (kernel_cl's
// state belongs to the main thread): it enqueues reads only. An exception
// in it is kept and rethrown by finish() on the main thread. The
// destructor stops the thread (after the block column in flight) and
// joins it before the staging's stream goes, so no copy outlives it.
class block_downloader {
 public:
  block_downloader(const cl::Buffer& src, double* out, int n, int nb,
                   const opencl::pinned_tuning& pin)
      : queue_(opencl::context::instance().download_queue()),
        stream_(queue_, pin, opencl::internal::staging_use::download), src_(src), out_(out),
        n_(n), nb_(nb), blocks_((n + nb - 1) / nb) {
    thread_ = std::thread([this] { run(); });
  }
  block_downloader(const block_downloader&) = delete;
  block_downloader& operator=(const block_downloader&) = delete;
  ~block_downloader() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  /** Block column events.size() of src is final after `e` (flushed). */
  void push(const cl::Event& e) {
    {
      std::lock_guard<std::mutex> lock(m_);
      events_.push_back(e);
    }
    cv_.notify_all();
  }

  /** Returns once every block column is in out, checking for interrupts
   *  meanwhile; rethrows what the thread threw. */
  void finish() {
    std::unique_lock<std::mutex> lock(m_);
    while (!cv_.wait_for(lock, std::chrono::milliseconds(20), [this] { return finished_; })) {
      lock.unlock();
      check_interrupt();
      lock.lock();
    }
    lock.unlock();
    thread_.join();
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void run() {
    try {
      const std::size_t column_bytes = sizeof(double) * static_cast<std::size_t>(n_);
      for (int k = 0; k < blocks_; ++k) {
        cl::Event final_k;
        {
          std::unique_lock<std::mutex> lock(m_);
          cv_.wait(lock, [&] { return stop_ || static_cast<int>(events_.size()) > k; });
          if (stop_) break;
          final_k = events_[k];
        }
        const int c0 = k * nb_, width = std::min(nb_, n_ - c0);
        queue_wait(queue_, {final_k});
        stream_.read(src_, c0 * column_bytes,
                     reinterpret_cast<char*>(out_ + static_cast<std::size_t>(c0) * n_),
                     width * column_bytes);
      }
    } catch (...) {  // no check_interrupt() here: rethrown by finish()
      error_ = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(m_);
      finished_ = true;
    }
    cv_.notify_all();
  }

  cl::CommandQueue& queue_;
  opencl::internal::pinned_stream stream_;
  cl::Buffer src_;
  double* out_;
  int n_, nb_, blocks_;
  std::mutex m_;
  std::condition_variable cv_;
  std::vector<cl::Event> events_;
  bool stop_ = false, finished_ = false;
  std::exception_ptr error_;
  std::thread thread_;  // last: started once everything above exists
};

}  // namespace internal

/** The Cholesky factor of the rows x cols host matrix a (column-major),
 *  written whole into out (rows * cols doubles): L with zeros above the
 *  diagonal, or with `upper` U = L^T (what base::chol() returns). Checks
 *  and errors as linalg::cholesky; the schedule's settings `s` default to
 *  the selected device's, the pinned staging's `pin` to its defaults. */
inline void cholesky_host(const double* a, int rows, int cols, bool upper, double* out,
                          const linalg_settings& s = tuned_settings(),
                          const opencl::pinned_tuning& pin = opencl::pinned_tuning()) {
  if (rows != cols)
    throw invalid_argument("x", "must be square (it is " + std::to_string(rows) + " x " +
                                    std::to_string(cols) + ")");
  const int n = rows;
  if (n == 0) return;
  opencl::context& ctx = opencl::context::instance();
  matrix_cl a_dev(n, n);  // A as it arrives, read by the checks only
  matrix_cl w(n, n);      // the working matrix: A's lower triangle, then L
  matrix_cl u = upper ? matrix_cl(n, n) : matrix_cl();
  const cl::Buffer flag = internal::new_flags();
  const internal::schedule_shape sh = internal::shape_for(s.cholesky, n, s.cholesky.host_block);
  cl::CommandQueue& tq = ctx.transfer_queue();
  const std::size_t column_bytes = sizeof(double) * static_cast<std::size_t>(n);
  auto columns = [&](int j) {  // first column and width of block column j
    const int c0 = j * sh.nb;
    return std::make_pair(c0, std::min(sh.nb, n - c0));
  };
  try {
    opencl::untracked_scope untracked;  // ordered by the queues and markers below
    opencl::internal::pinned_stream stream(tq, pin);
    internal::block_downloader down((upper ? u : w).buffer(), out, n, sh.nb, pin);
    // Block column j: A's columns into a_dev, then into w with the NaN
    // check, and after the last one the symmetry check over all of A.
    auto arrive = [&](int j) {
      ctx.main_queue().flush();  // what is enqueued runs while the host copies
      const auto cc = columns(j);
      stream.write(a_dev.buffer(), cc.first * column_bytes,
                   reinterpret_cast<const char*>(a + static_cast<std::size_t>(cc.first) * n),
                   cc.second * column_bytes);
      opencl::queue_scope transfer(opencl::queue_role::transfer);
      opencl::kernels::copy_columns_checked(cl::NDRange(n, cc.second), a_dev, w, n, cc.first,
                                            cc.second, flag);
      cl::Event there = internal::queue_marker(tq);
      if (cc.first + cc.second == n) {  // after the marker: the schedule need not wait for it
        const int tile = opencl::kernels::check_symmetric.option("SYM_TILE");
        const int tile_rows = opencl::kernels::check_symmetric.option("SYM_ROWS");
        const std::size_t tiles = (n + tile - 1) / tile;
        opencl::kernels::check_symmetric(cl::NDRange(tiles * tile, tiles * tile_rows),
                                         cl::NDRange(tile, tile_rows), a_dev, n,
                                         symmetry_tolerance, flag, 2);
      }
      tq.flush();
      return there;
    };
    // Block column k of L is final once panel k is; block column k of U
    // reads row block k of L, final then too: made on the main queue (the
    // schedule's only one), right after the panel.
    auto finished = [&](int k, const cl::Event& done) {
      cl::Event ready = done;
      if (upper) {
        const auto cc = columns(k);
        opencl::kernels::upper_columns_of_lower(cl::NDRange(n, cc.second), u, w, n, cc.first,
                                                cc.second);
        ready = internal::queue_marker(ctx.main_queue());
      }
      // The download thread waits for `ready`: submitted before it sees it.
      ctx.main_queue().flush();
      down.push(ready);
    };
    internal::cholesky_left_looking(w, sh.nb, sh.ib, flag, s.gemm, arrive, finished);
    ctx.main_queue().flush();
    down.finish();
    ctx.finish_all();
  } catch (const cl::Error& e) {
    throw opencl_error(std::string(e.what()) + " in the Cholesky of a host matrix", e.err());
  }
  internal::check_flags(tq, flag);
}

}  // namespace linalg
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
