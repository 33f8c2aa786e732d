#ifndef CLBAYES_REDUCE_DEVICE_TUNING_HPP
#define CLBAYES_REDUCE_DEVICE_TUNING_HPP

// The knobs of gpu_sum()'s device path and the scratch buffers it keeps
// between calls. Two kernels can do the work:
//   legacy  the multi-level launch sequence of accurate-reduction.txt,
//           Fig. 2 (reduce/sum_device.hpp): blocks, then partials, then one
//           last block, a launch each;
//   stream  one launch of a grid of a few resident groups per compute unit
//           that streams over the input, the last group combining the
//           partials (reduce/sum_stream.hpp, kernels/reduce_stream.hpp).
// Both walk a perfect binary tree over the input zero-padded to 2^D, D =
// ceil(log2 n), so they agree on the div2 correction C = 2^D / n.

#include "../error.hpp"
#include "../opencl/context.hpp"
#include "../opencl/memory.hpp"
#include "method.hpp"

#include <cstddef>

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace reduce {
namespace device {

/** Which kernel reduces the input (tuning::kernel). */
enum class kernel_kind { automatic = 0, legacy = 1, stream = 2 };

/** How the host waits for the root (tuning::wait). */
enum class wait_kind { automatic = 0, finish = 1, poll = 2 };

/** Tuning knobs; 0 (or -1 for fuse) means "the default for this device". */
struct tuning {
  int block = 0;       // legacy: elements per work group at level 0 (power of two)
  int work_group = 0;  // legacy: largest group at level 0; stream: the group
  int p_max = 0;       // legacy (and stream with fuse = 0): block of the later levels
  kernel_kind kernel = kernel_kind::automatic;
  int groups = 0;         // stream: work groups (power of two); 0: from groups_per_cu
  int groups_per_cu = 0;  // stream: groups = floor_pow2(groups_per_cu * compute units)
  int unroll = 0;         // stream: vector loads in flight per work item (power of two)
  int vector_width = 0;   // stream: values per vector load (1, 2, 4, 8)
  int fuse = -1;          // stream: 1 the last group combines, 0 a launch more
  wait_kind wait = wait_kind::automatic;  // how the host waits for the root
  int pinned = -1;        // 0: read the root into pageable memory; else pinned
};

// Defaults, from the sweeps of inst/bench/bench_reduce on the H200
// (logs/history.md, H200 runs of 2026-11-22: 5 separate medians of 101 whole calls at 2^27
// doubles, data on the device):
//   - the legacy multi-level kernel for every method: 4.06 TB/s (kahan) and
//     4.12 TB/s (div2) against the stream kernel's 3.94 and 3.66, once the
//     root is read into pinned memory; the stream kernel's one-launch design
//     saves a launch, which matters less than its counter and atomics;
//   - the root read into pinned memory: a 16-byte read costs 7 us against
//     16.5 us through pageable memory, which was most of the ~50 us fixed
//     cost per call seen in the first session's Table 3.
// The stream kernel's defaults (for tuning.kernel = stream) come from
// reasoning: 8 loads of double2 in flight per work item (128 bytes), with
// about 1000 items per unit 128 KB per unit, above the ~60 KB that
// 4.8 TB/s times a loaded HBM latency of ~1.5 us asks per unit; groups of
// 256, 4 per unit, one wave of resident groups.
inline kernel_kind default_kernel(sum_method) { return kernel_kind::legacy; }
constexpr int default_block = 2048;
constexpr int default_work_group = 128;
constexpr int default_p_max = 1024;
constexpr int default_stream_work_group = 256;
constexpr int default_groups_per_cu = 4;
constexpr int default_unroll = 8;
constexpr int default_vector_width_double = 2;
constexpr int default_vector_width_float = 4;
constexpr int default_fuse = 1;

/** Scratch buffers for the partial results, kept between calls (grown when
 *  too small): slots 0-3 partials, 4 the stream kernel's counter (zero when
 *  idle), 5 its root; and a few bytes of pinned host memory that the root
 *  is read into. gpu_sum() uses default_workspace(), so a user's calls
 *  allocate nothing after the first. */
class workspace {
 public:
  static constexpr int slots = 6;

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
      fresh_[slot] = true;
    }
    return buf_[slot];
  }

  /** Like get(), but a new buffer is zeroed (in queue order) first. */
  cl::Buffer& get_zeroed(int slot, std::size_t bytes) {
    cl::Buffer& b = get(slot, bytes);
    if (fresh_[slot]) {
      try {
        static const char zeros[64] = {0};
        opencl::context::instance().queue().enqueueWriteBuffer(b, CL_TRUE, 0, bytes, zeros);
      } catch (const cl::Error& e) {
        throw opencl_error("zeroing reduction scratch", e.err());
      }
      fresh_[slot] = false;
    }
    return b;
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
  std::size_t cap_[slots] = {0, 0, 0, 0, 0, 0};
  bool fresh_[slots] = {false, false, false, false, false, false};
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
