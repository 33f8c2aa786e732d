#ifndef CLBAYES_REDUCE_DEVICE_TUNING_HPP
#define CLBAYES_REDUCE_DEVICE_TUNING_HPP

// The tuned settings of gpu_sum()'s device path (reduce/sum_device.hpp: the
// multi-level launch sequence of accurate-reduction.txt, Fig. 2), one row
// per device family (opencl/device_table.hpp), and the scratch buffers it
// keeps between calls.

#include "../error.hpp"
#include "../opencl/context.hpp"
#include "../opencl/device_table.hpp"
#include "../opencl/memory.hpp"
#include "method.hpp"

#include <cstddef>

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace reduce {
namespace device {

/** The launch shape: elements per work group at level 0 (the paper's
 *  block size B, a power of two), the largest work group at level 0, and
 *  the block of the later levels (a power of two, capped by local memory). */
struct settings {
  int block = 2048;
  int work_group = 128;
  int p_max = 1024;
};

/** The settings for device `d`: measured on the H200 (bench_reduce sweeps,
 *  2026-11-22: 5 separate medians of 101 whole calls at 2^27 doubles,
 *  4.06 TB/s kahan and 4.12 TB/s div2; RESULTS.md, "Reductions" and
 *  "Kernels"), the only device swept so far, and used on every device. */
inline settings tuned_settings(const opencl::device_info& d) {
  static const opencl::device_entry<settings> table[] = {
      {"", "", 0, settings()},  // any device
  };
  return opencl::lookup(table, d);
}

/** The settings for the selected device. */
inline settings tuned_settings() { return tuned_settings(opencl::context::instance().info()); }

/** Scratch buffers for the partial results, kept between calls (grown when
 *  too small): slots 0-3 partials; and a few bytes of pinned host memory
 *  that the root is read into. gpu_sum() uses default_workspace(), so a user's calls
 *  allocate nothing after the first. */
class workspace {
 public:
  static constexpr int slots = 4;

  workspace() = default;
  workspace(const workspace&) = delete;
  workspace& operator=(const workspace&) = delete;
  ~workspace() {
    if (pin_host_ == nullptr) return;
    try {
      opencl::context& ctx = opencl::context::instance();
      if (generation_ == ctx.generation()) ctx.queue().enqueueUnmapMemObject(pin_, pin_host_);
    } catch (const cl::Error&) {  // nothing useful to do in a destructor
    }
  }

  cl::Buffer& get(int slot, std::size_t bytes) {
    refresh();
    if (cap_[slot] < bytes) {
      try {
        buf_[slot] = cl::Buffer(opencl::context::instance().cl_context(), CL_MEM_READ_WRITE,
                                bytes);
      } catch (const cl::Error& e) {
        throw opencl::cl_failure("allocating " + format_bytes(static_cast<double>(bytes)) +
                                     " of reduction scratch",
                                 e.err());
      }
      cap_[slot] = bytes;
    }
    return buf_[slot];
  }

  /** pinned_bytes of page-locked host memory (a CL_MEM_ALLOC_HOST_PTR
   *  buffer mapped once): the DMA engine writes it directly, where a copy
   *  into pageable memory goes through the driver's staging. */
  static constexpr std::size_t pinned_bytes = 64;
  void* pinned_host() {
    refresh();
    if (pin_host_ == nullptr) {
      opencl::context& ctx = opencl::context::instance();
      try {
        pin_ = cl::Buffer(ctx.cl_context(), CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                          pinned_bytes);
        pin_host_ = ctx.queue().enqueueMapBuffer(pin_, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                                 pinned_bytes);
      } catch (const cl::Error& e) {
        pin_ = cl::Buffer();
        throw opencl_error("allocating pinned memory for a reduction result", e.err());
      }
    }
    return pin_host_;
  }

 private:
  // A new device (context::select) drops every buffer of the old one.
  void refresh() {
    opencl::context& ctx = opencl::context::instance();
    if (generation_ == ctx.generation()) return;
    for (auto& b : buf_) b = cl::Buffer();
    for (auto& c : cap_) c = 0;
    pin_ = cl::Buffer();
    pin_host_ = nullptr;
    generation_ = ctx.generation();
  }

  cl::Buffer buf_[slots];
  std::size_t cap_[slots] = {0, 0, 0, 0};
  cl::Buffer pin_;
  void* pin_host_ = nullptr;
  unsigned generation_ = 0;
};

/** The workspace of gpu_sum() calls that bring none: kept for the session
 *  and never destroyed (at exit the OpenCL runtime may already be gone). */
inline workspace& default_workspace() {
  static workspace* w = new workspace;
  return *w;
}

inline bool is_pow2(long long v) { return v > 0 && (v & (v - 1)) == 0; }

inline int method_code(sum_method m) {
  switch (m) {
    case sum_method::pairwise: return 0;
    case sum_method::div2: return 1;
    case sum_method::kahan: return 2;
    default:
      throw invalid_argument("method", "\"naive\" runs on the CPU only; use "
                                       "backend = \"cpu\"");
  }
}

}  // namespace device
}  // namespace reduce
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
