#ifndef CLBAYES_OPENCL_PINNED_TRANSFER_HPP
#define CLBAYES_OPENCL_PINNED_TRANSFER_HPP

// Large host <-> device copies through pinned staging buffers: two buffers
// allocated with CL_MEM_ALLOC_HOST_PTR and mapped once (page-locked memory,
// which the DMA engines read and write at full bus speed, where a pageable
// pointer goes through the driver's own smaller staging), kept between
// calls, filled or drained by several host threads while the other buffer
// is in flight.
// The whole matrix crosses the bus in chunks; the in-order queue orders
// the chunks before any later kernel.

#include "matrix_cl.hpp"
#include "transfer.hpp"

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {

/** Chunk size of the pinned copies (bytes) and host threads that copy
 *  into and out of the staging buffers (0: up to 8, as the host has). The
 *  copies take them as an argument, by default these. */
struct pinned_tuning {
  std::size_t chunk_bytes = std::size_t(32) << 20;
  int threads = 0;
  /** Ask for huge pages under the host arrays the copies back write
   *  (advise_huge_pages). */
  bool huge_pages = true;
  /** The host arrays are page-locked already (a page_locked_buffer's
   *  memory): the copies from (into) them go straight to (from) the
   *  device, not through the staging. */
  bool source_page_locked = false;       // what the uploads read
  bool destination_page_locked = false;  // what the copies back write
};

namespace internal {

// memcpy with several threads: one thread copies at a fraction of the
// memory bandwidth of a server host.
inline void parallel_copy(char* dst, const char* src, std::size_t bytes, int threads) {
  if (threads <= 0) threads = std::min(8, std::max(1, int(std::thread::hardware_concurrency())));
  const std::size_t min_part = std::size_t(4) << 20;
  threads = int(std::max<std::size_t>(1, std::min<std::size_t>(threads, bytes / min_part)));
  if (threads == 1) {
    std::memcpy(dst, src, bytes);
    return;
  }
  std::vector<std::thread> pool;
  const std::size_t part = (bytes + threads - 1) / threads;
  for (int t = 1; t < threads; ++t) {
    const std::size_t lo = std::min(bytes, t * part), hi = std::min(bytes, lo + part);
    pool.emplace_back([=] { std::memcpy(dst + lo, src + lo, hi - lo); });
  }
  std::memcpy(dst, src, std::min(bytes, part));
  for (auto& th : pool) th.join();
}

}  // namespace internal

/** Host memory that the DMA engines read and write at full bus speed: a
 *  buffer allocated with CL_MEM_ALLOC_HOST_PTR (page-locked by the
 *  drivers that matter) and mapped for its lifetime; unmapped when
 *  destroyed. Allocating one takes time (the pages are locked), so keep
 *  it for many copies. */
class page_locked_buffer {
 public:
  page_locked_buffer() = default;
  explicit page_locked_buffer(std::size_t bytes) : bytes_(bytes) {
    context& ctx = context::instance();
    try {
      buf_ = cl::Buffer(ctx.cl_context(), CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes);
      ptr_ = static_cast<char*>(ctx.queue().enqueueMapBuffer(
          buf_, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes));
    } catch (const cl::Error& e) {
      throw cl_failure("allocating " + format_bytes(static_cast<double>(bytes)) +
                           " of page-locked host memory",
                       e.err());
    }
  }
  page_locked_buffer(const page_locked_buffer&) = delete;
  page_locked_buffer& operator=(const page_locked_buffer&) = delete;
  ~page_locked_buffer() {
    if (ptr_ == nullptr) return;
    try {
      cl::CommandQueue& q = context::instance().queue();
      q.enqueueUnmapMemObject(buf_, ptr_);
      q.finish();
    } catch (const cl::Error&) {  // nothing useful to do in a destructor
    }
  }
  char* data() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }

 private:
  cl::Buffer buf_;
  char* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

namespace internal {

// Two page-locked buffers of `bytes` each: the staging of a pinned_stream.
class pinned_pair {
 public:
  explicit pinned_pair(std::size_t bytes) : buf_{page_locked_buffer(bytes), page_locked_buffer(bytes)} {}
  char* ptr(int s) const { return buf_[s].data(); }

 private:
  page_locked_buffer buf_[2];
};

// Which staging pair a stream uses: `upload` serves every copy of one
// host thread (to_matrix_cl_pinned, from_matrix_cl_pinned, the uploads of
// linalg/cholesky_host.hpp), `download` the copies back to the host that a
// second thread runs while the first is still uploading.
enum class staging_use { upload, download };

// The staging pair of `bytes` for `use`, kept between copies: page-locking
// memory takes milliseconds per call. Replaced when the size or the
// selected device changes, on the main thread (the streams are made there);
// never destroyed at exit (the OpenCL runtime may already be gone then),
// the process's end frees it.
inline pinned_pair& staging(std::size_t bytes, staging_use use = staging_use::upload) {
  static pinned_pair* pairs[2] = {nullptr, nullptr};
  static std::size_t sizes[2] = {0, 0};
  static unsigned generations[2] = {0, 0};
  const int i = use == staging_use::upload ? 0 : 1;
  pinned_pair*& pair = pairs[i];
  const unsigned g = context::instance().generation();
  if (pair == nullptr || sizes[i] != bytes || generations[i] != g) {
    if (generations[i] == g) delete pair;  // else its context is gone: leak it
    pair = nullptr;
    pair = new pinned_pair(bytes);
    sizes[i] = bytes;
    generations[i] = g;
  }
  return *pair;
}

// Copies between host memory and device buffers on one queue through the
// session's staging pair, chunk by chunk: while one staging buffer is in
// flight, the host fills (or drains) the other. A stream's writes and reads
// share the pair, so a chunk waits for the last one that used its buffer.
// Made on the main thread; then used by one host thread at a time.
class pinned_stream {
 public:
  pinned_stream(cl::CommandQueue& q, const pinned_tuning& tune,
                staging_use use = staging_use::upload)
      : q_(q), pins_(staging(tune.chunk_bytes, use)), chunk_(tune.chunk_bytes),
        threads_(tune.threads), huge_pages_(tune.huge_pages),
        src_locked_(tune.source_page_locked), dst_locked_(tune.destination_page_locked) {}
  pinned_stream(const pinned_stream&) = delete;
  pinned_stream& operator=(const pinned_stream&) = delete;
  // The staging pair outlives the stream: nothing may still be copying
  // into or out of it (after an error or an interrupt too).
  ~pinned_stream() {
    for (cl::Event& e : ev_) {
      try {
        if (e() != nullptr) e.wait();
      } catch (const cl::Error&) {  // nothing useful to do in a destructor
      }
    }
  }

  /** Enqueue the copy of `len` bytes at src into `buf` at byte `offset`;
   *  src may change once this returns, unless it is page-locked (then
   *  once the queue has run the copy). The event of the last chunk. */
  cl::Event write(const cl::Buffer& buf, std::size_t offset, const char* src, std::size_t len) {
    cl::Event last;
    if (src_locked_) {
      q_.enqueueWriteBuffer(buf, CL_FALSE, offset, len, src, nullptr, &last);
      return last;
    }
    for (std::size_t done = 0; done < len; done += chunk_) {
      const std::size_t part = std::min(chunk_, len - done);
      cl::Event& e = ev_[slot_];
      if (e() != nullptr) e.wait();  // this buffer's previous chunk has left
      parallel_copy(pins_.ptr(slot_), src + done, part, threads_);
      q_.enqueueWriteBuffer(buf, CL_FALSE, offset + done, part, pins_.ptr(slot_), nullptr, &e);
      last = e;
      slot_ ^= 1;
    }
    return last;
  }

  /** Copy `len` bytes of `buf` at byte `offset` into dst, after everything
   *  enqueued on the queue so far; returns when dst holds them. */
  void read(const cl::Buffer& buf, std::size_t offset, char* dst, std::size_t len) {
    if (dst_locked_) {  // not a blocking read: that stalls other threads' enqueues
      cl::Event e;
      q_.enqueueReadBuffer(buf, CL_FALSE, offset, len, dst, nullptr, &e);
      e.wait();
      return;
    }
    if (huge_pages_) advise_huge_pages(dst, len);
    std::size_t next = 0;  // bytes whose read is enqueued
    std::size_t at[2] = {0, 0};
    auto enqueue = [&](int s) {
      if (ev_[s]() != nullptr) ev_[s].wait();
      at[s] = next;
      const std::size_t part = std::min(chunk_, len - next);
      q_.enqueueReadBuffer(buf, CL_FALSE, offset + next, part, pins_.ptr(s), nullptr, &ev_[s]);
      next += part;
    };
    const int first = slot_;
    for (int i = 0; i < 2 && next < len; ++i) enqueue(first ^ i);
    for (std::size_t done = 0, i = 0; done < len; ++i) {
      const int s = first ^ static_cast<int>(i & 1);
      ev_[s].wait();
      ev_[s] = cl::Event();
      const std::size_t part = std::min(chunk_, len - at[s]);
      parallel_copy(dst + at[s], pins_.ptr(s), part, threads_);
      done += part;
      if (next < len) enqueue(s);  // refill this buffer while the other drains
    }
  }

 private:
  cl::CommandQueue& q_;
  pinned_pair& pins_;
  std::size_t chunk_;
  int threads_;
  bool huge_pages_, src_locked_, dst_locked_;
  cl::Event ev_[2];
  int slot_ = 0;
};

}  // namespace internal

/** The rows x cols host matrix a as a new device matrix, through pinned
 *  staging (entire view). */
inline matrix_cl to_matrix_cl_pinned(const double* a, int rows, int cols,
                                     const pinned_tuning& tune = pinned_tuning()) {
  matrix_cl m(rows, cols);
  const std::size_t total = sizeof(double) * static_cast<std::size_t>(m.size());
  if (total == 0) return m;
  cl::CommandQueue& q = context::instance().queue();
  try {
    internal::pinned_stream stream(q, tune);
    stream.write(m.buffer(), 0, reinterpret_cast<const char*>(a), total);
    q.finish();
  } catch (const cl::Error& e) {
    throw opencl_error(std::string(e.what()) + " copying a matrix to the device", e.err());
  }
  return m;
}

/** Copy the whole device matrix m (every element, whatever its view) into
 *  the host array a through pinned staging. */
inline void from_matrix_cl_pinned(const matrix_cl& m, double* a,
                                  const pinned_tuning& tune = pinned_tuning()) {
  m.check_device("x");
  const std::size_t total = sizeof(double) * static_cast<std::size_t>(m.size());
  if (total == 0) return;
  m.wait();
  try {
    internal::pinned_stream stream(context::instance().queue(), tune);
    stream.read(m.buffer(), 0, reinterpret_cast<char*>(a), total);
  } catch (const cl::Error& e) {
    throw opencl_error(std::string(e.what()) + " copying a matrix from the device", e.err());
  }
}

/** Host matrices of at least this many bytes cross the bus through the
 *  pinned staging buffers, smaller ones directly: bench_linalg on the H200
 *  has the pinned path ahead from n = 2048 (32 MB) and even with the
 *  direct copies at n = 1024 (8 MB; logs/history.md, H200 runs of 2026-11-22 and 2026-11-24). */
constexpr std::size_t pinned_min_bytes = std::size_t(16) << 20;

inline bool use_pinned(long long elements) {
  return sizeof(double) * static_cast<std::size_t>(elements) >= pinned_min_bytes;
}

/** The rows x cols host matrix a as a new device matrix, as clbayes's R
 *  functions copy it: through pinned staging when large. */
inline matrix_cl to_matrix_cl_staged(const double* a, int rows, int cols) {
  if (use_pinned(static_cast<long long>(rows) * cols)) return to_matrix_cl_pinned(a, rows, cols);
  return to_matrix_cl(a, rows, cols);
}

/** Copy the whole device matrix m into the host array a (rows * cols
 *  doubles, the zeros outside a triangular view included), as clbayes's R
 *  functions read it: a large one through pinned staging. Whole, because
 *  on the H200 reading every element beats packing the triangle at every
 *  n (bench_linalg: 2.6 against 3.8 ms at n = 1024, logs/history.md). */
inline void from_matrix_cl_staged(const matrix_cl& m, double* a) {
  if (use_pinned(m.size())) {
    from_matrix_cl_pinned(m, a);
  } else {
    from_matrix_cl_whole(m, a);
  }
}

}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
