#ifndef CLBAYES_OPENCL_BUFFER_POOL_HPP
#define CLBAYES_OPENCL_BUFFER_POOL_HPP

// Device buffers of released matrices, kept for the next matrix of the
// same size (as torch's caching allocator keeps CUDA memory). A fresh
// buffer costs the driver's allocation, the mapping of its pages at the
// first kernel that touches it, and its release; NVIDIA's OpenCL may also
// wait for the queues when a buffer is released (linalg/cholesky_panel.hpp,
// panel_work). Together 0.4-0.9 ms per 8192 x 8192 Cholesky on an H200
// (RESULTS.md, "Dense linear algebra defaults"), against a factorisation of 10 ms.
//
// A kept buffer carries one marker per queue of the context, enqueued when
// its matrix let go of it: it is handed out again only once every marker
// has completed, so no work on any queue can still read or write it, and
// the new owner needs no events from the old one.

#include <algorithm>
#include <cstddef>
#include <deque>
#include <vector>

#include "../config.hpp"

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {

/** True once the command behind `e` has completed (false while it is
 *  pending, and if the status cannot be read). */
inline bool event_complete(const cl::Event& e) {
  cl_int status = CL_QUEUED;
  return ::clGetEventInfo(e(), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status,
                          nullptr) == CL_SUCCESS &&
         status == CL_COMPLETE;
}

class buffer_pool {
 public:
  /** Buffers below this size are not kept: allocating them costs little. */
  static constexpr std::size_t smallest = std::size_t(1) << 20;

  /** An idle kept buffer of exactly `bytes`, or a null one. */
  cl::Buffer take(std::size_t bytes) {
    if (bytes < smallest) return cl::Buffer();  // never kept
    for (auto it = kept_.begin(); it != kept_.end(); ++it) {
      if (it->bytes != bytes || !idle(*it)) continue;
      cl::Buffer b = it->buffer;
      kept_bytes_ -= it->bytes;
      kept_.erase(it);
      ++hits_;
      return b;
    }
    ++misses_;
    return cl::Buffer();
  }

  /** Keep `buffer` of `bytes`, in use until `markers` complete; the oldest
   *  kept buffers are released while more than `cap` bytes are kept. */
  void keep(const cl::Buffer& buffer, std::size_t bytes, std::vector<cl::Event> markers,
            std::size_t cap) {
    kept_.push_back(entry{buffer, bytes, std::move(markers)});
    kept_bytes_ += bytes;
    trim(cap);
  }

  /** Release the oldest kept buffers until at most `bytes` are kept. OpenCL
   *  frees a released buffer only after the work queued on it is done. */
  void trim(std::size_t bytes) {
    while (kept_bytes_ > bytes && !kept_.empty()) {
      kept_bytes_ -= kept_.front().bytes;
      kept_.pop_front();
    }
  }

  /** Release every kept buffer; returns the bytes they held. */
  std::size_t clear() {
    const std::size_t was = kept_bytes_;
    trim(0);
    return was;
  }

  /** Release the oldest kept buffers until a new buffer of `bytes` fits in
   *  `capacity` beside the live matrices and the buffers still kept. */
  void make_room(std::size_t bytes, std::size_t capacity) {
    const std::size_t need = live_bytes_ + bytes;
    trim(need < capacity ? capacity - need : 0);
  }

  /** Count the device bytes of a matrix that came alive / let go (kept
   *  buffers are not live). */
  void add_live(std::size_t bytes) { live_bytes_ += bytes; }
  void remove_live(std::size_t bytes) { live_bytes_ -= std::min(live_bytes_, bytes); }

  std::size_t kept_bytes() const { return kept_bytes_; }
  /** Buffers of at least `smallest` bytes served from the pool / freshly. */
  unsigned long long hits() const { return hits_; }
  unsigned long long misses() const { return misses_; }

 private:
  struct entry {
    cl::Buffer buffer;
    std::size_t bytes;
    std::vector<cl::Event> markers;
  };

  static bool idle(entry& e) {
    e.markers.erase(std::remove_if(e.markers.begin(), e.markers.end(), event_complete),
                    e.markers.end());
    return e.markers.empty();
  }

  std::deque<entry> kept_;
  std::size_t kept_bytes_ = 0;
  std::size_t live_bytes_ = 0;
  unsigned long long hits_ = 0;
  unsigned long long misses_ = 0;
};

}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
