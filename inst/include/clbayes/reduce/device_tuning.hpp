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
#include "method.hpp"

#include <cstddef>

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace reduce {
namespace device {

/** Which kernel reduces the input (tuning::kernel). */
enum class kernel_kind { automatic = 0, legacy = 1, stream = 2 };

/** Tuning knobs; 0 (or -1 for fuse) means "the default for this device". */
struct tuning {
  int block = 0;       // legacy: elements per work group at level 0 (power of two)
  int work_group = 0;  // legacy: largest group at level 0; stream: the group
  int p_max = 0;       // legacy (and stream with fuse = 0): block of the later levels
  kernel_kind kernel = kernel_kind::automatic;
  int groups = 0;      // stream: work groups (power of two); 0: groups_per_cu per unit
  int unroll = 0;      // stream: vector loads in flight per work item (power of two)
  int fuse = -1;       // stream: 1 the last group combines, 0 a launch more
};

// Defaults: the kernel used by gpu_sum() and the knobs of each kernel, set
// from the H200 sweeps of inst/bench/bench_reduce (RESULTS.md, 2026-11-22):
// at 2^27 doubles kahan was fastest with the stream kernel (1024 groups of
// 512, 4 loads in flight: 3619 GB/s), div2 and pairwise with the legacy
// sequence (block 2048, groups of 128: 3585 GB/s; stream at best 3303).
inline kernel_kind default_kernel(sum_method m) {
  return m == sum_method::kahan ? kernel_kind::stream : kernel_kind::legacy;
}
constexpr int default_block = 2048;
constexpr int default_work_group = 128;
constexpr int default_p_max = 1024;
constexpr int default_stream_work_group = 512;
constexpr int default_groups_per_cu = 8;
constexpr int default_unroll = 4;
constexpr int default_fuse = 1;

/** Scratch buffers for the partial results, kept between calls by a caller
 *  that sums repeatedly (the benchmark); grown when too small. Slots 0-3:
 *  partials, 4: the stream kernel's counter (zero when idle), 5: its root. */
class workspace {
 public:
  static constexpr int slots = 6;

  cl::Buffer& get(int slot, std::size_t bytes) {
    opencl::context& ctx = opencl::context::instance();
    if (generation_ != ctx.generation()) {
      for (auto& b : buf_) b = cl::Buffer();
      for (auto& c : cap_) c = 0;
      generation_ = ctx.generation();
    }
    if (cap_[slot] < bytes) {
      try {
        buf_[slot] = cl::Buffer(ctx.cl_context(), CL_MEM_READ_WRITE, bytes);
      } catch (const cl::Error& e) {
        throw opencl_error("allocating reduction scratch", e.err());
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

 private:
  cl::Buffer buf_[slots];
  std::size_t cap_[slots] = {0, 0, 0, 0, 0, 0};
  bool fresh_[slots] = {false, false, false, false, false, false};
  unsigned generation_ = 0;
};

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
