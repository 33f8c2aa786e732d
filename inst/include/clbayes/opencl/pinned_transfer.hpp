#ifndef CLBAYES_OPENCL_PINNED_TRANSFER_HPP
#define CLBAYES_OPENCL_PINNED_TRANSFER_HPP

// Large host <-> device copies through pinned staging buffers: two buffers
// allocated with CL_MEM_ALLOC_HOST_PTR and mapped once (page-locked memory,
// which the DMA engines read and write at full bus speed, where a pageable
// pointer goes through the driver's own smaller staging), kept between
// calls, filled or drained by a team of host threads while the other
// buffer is in flight.
// The whole matrix crosses the bus in chunks; the in-order queue orders
// the chunks before any later kernel.

#include "copy_team.hpp"
#include "matrix_cl.hpp"
#include "transfer.hpp"

#include <algorithm>
#include <functional>
#include <vector>

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {

/** Chunk size of the pinned copies (bytes; H200 host, streamed Cholesky at
 *  n = 8192: 16 MB 24.7-27.1 ms, 32 MB 24.9-32.3, 8 MB 27.8, 3 or 4
 *  buffers no faster; RESULTS.md, "Dense linear algebra defaults") and host threads that copy
 *  into and out of the staging buffers (0: up to 8, as the host has). The
 *  copies take them as an argument, by default these. */
struct pinned_tuning {
  std::size_t chunk_bytes = std::size_t(16) << 20;
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

// Where a read may take bytes only once the device has finished them:
// gate(end, wait, after) sets `after` to the event after which the bytes
// before `end` (from the read's start) are final, or leaves it null when
// they are already. With `wait` false it returns false at once where that
// event is not known yet; otherwise it waits until it is (and returns true).
using read_gate = std::function<bool(std::size_t end, bool wait, cl::Event& after)>;

// Copies between host memory and device buffers on one queue through the
// session's staging pair, chunk by chunk: while one staging buffer is in
// flight, the host fills (or drains) the other, by a team of threads kept
// for the stream's lifetime. A stream's writes and reads share the pair,
// so a chunk waits for the last one that used its buffer. Made on the main
// thread; then used by one host thread at a time.
class pinned_stream {
 public:
  pinned_stream(cl::CommandQueue& q, const pinned_tuning& tune,
                staging_use use = staging_use::upload)
      : q_(q), pins_(staging(tune.chunk_bytes, use)), chunk_(tune.chunk_bytes),
        huge_pages_(tune.huge_pages), src_locked_(tune.source_page_locked),
        dst_locked_(tune.destination_page_locked),
        team_(src_locked_ && dst_locked_ ? 1 : tune.threads) {}
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
      team_.copy(pins_.ptr(slot_), src + done, part);
      q_.enqueueWriteBuffer(buf, CL_FALSE, offset + done, part, pins_.ptr(slot_), nullptr, &e);
      last = e;
      slot_ ^= 1;
    }
    return last;
  }

  /** Copy `len` bytes of `buf` at byte `offset` into dst, after everything
   *  enqueued on the queue so far and, chunk by chunk, after the gate's
   *  events; returns when dst holds them. Two chunks are in flight
   *  wherever the gate allows, also where a block of the device's work
   *  ends, so the bus does not wait for the host's last copy of a block. */
  void read(const cl::Buffer& buf, std::size_t offset, char* dst, std::size_t len,
            const read_gate& gate = nullptr) {
    if (huge_pages_ && !dst_locked_) advise_huge_pages(dst, len);
    std::size_t next = 0;  // bytes whose read is enqueued
    std::size_t at[2] = {0, 0};
    bool queued[2] = {false, false};
    // The next chunk into staging buffer s, or straight into dst where it
    // is page-locked (not a blocking read: that stalls other threads'
    // enqueues); nothing where the gate does not know its event yet.
    auto enqueue = [&](int s, bool wait) {
      const std::size_t part = std::min(chunk_, len - next);
      cl::Event after;
      if (gate && !gate(next + part, wait, after)) return;
      const std::vector<cl::Event> waits(after() != nullptr ? 1 : 0, after);
      if (ev_[s]() != nullptr) ev_[s].wait();
      q_.enqueueReadBuffer(buf, CL_FALSE, offset + next, part,
                           dst_locked_ ? dst + next : pins_.ptr(s),
                           waits.empty() ? nullptr : &waits, &ev_[s]);
      at[s] = next;
      next += part;
      queued[s] = true;
    };
    for (std::size_t done = 0; done < len; slot_ ^= 1) {
      const int s = slot_;
      if (!queued[s]) enqueue(s, true);
      if (next < len && !queued[s ^ 1]) enqueue(s ^ 1, false);  // the one after, if it may go
      ev_[s].wait();
      ev_[s] = cl::Event();
      queued[s] = false;
      const std::size_t part = std::min(chunk_, len - at[s]);
      if (!dst_locked_) team_.copy(dst + at[s], pins_.ptr(s), part);
      done += part;
    }
  }

 private:
  cl::CommandQueue& q_;
  pinned_pair& pins_;
  std::size_t chunk_;
  bool huge_pages_, src_locked_, dst_locked_;
  copy_team team_;
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
 *  direct copies at n = 1024 (8 MB; RESULTS.md, "Dense linear algebra defaults"). */
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
 *  n (bench_linalg: 2.6 against 3.8 ms at n = 1024; RESULTS.md, "Dense linear algebra defaults"). */
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
