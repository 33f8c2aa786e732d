#ifndef CLBAYES_REDUCE_SUM_STREAM_HPP
#define CLBAYES_REDUCE_SUM_STREAM_HPP

// The streaming level of gpu_sum()'s device path (kernels/reduce_stream.hpp):
// the shape of its grid and its launch. Why it is faster than Fig. 2's
// sequence for long inputs: one launch instead of three, and the last group
// writes the root, so a sum is one kernel plus one read of two values; a
// grid of a few resident groups per compute unit, each item with UNROLL
// independent vector loads in flight, keeps enough bytes in flight to
// saturate HBM without the tails and per-group trees of 2^16 short groups.
//
// Shape, all powers of two: work items T = groups * WG, each loading
// UNROLL vectors of VW values per iteration for `iters` iterations, with
// T * UNROLL * VW * iters = N = 2^D, D = ceil(log2 n). The host keeps
// iters <= 2^stream_lstack (the binary counter lives in registers) by
// growing the grid, compiles the counter with just the levels log2(iters)
// needs (rounded up to even, so that a session builds few variants), and
// fuses the last level while groups <= WG * RMAX.

#include "../kernels/reduce_stream.hpp"
#include "device_tuning.hpp"
#include "method.hpp"

#include <algorithm>
#include <cstdint>

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace reduce {
namespace device {

// Register budget of the kernel: levels of the binary counter, and
// partials per work item in the last group (compile-time array sizes).
constexpr int stream_lstack = 8;
constexpr int stream_rmax = 16;

struct stream_shape {
  int work_group = 0;
  int unroll = 0;
  int vw = 0;            // values per vector load
  int lstack = 0;        // levels of the binary counter (0 for kahan)
  long long groups = 0;
  long long iters = 0;
  bool fuse = false;
  int depth = 0;         // depth of each group partial's tree
};

inline long long floor_pow2(long long v) {
  long long p = 1;
  while (p * 2 <= v) p *= 2;
  return p;
}

/** The stream kernel's grid for n values, or false when n is too short for
 *  one group's first iteration (the legacy sequence then does it). */
inline bool choose_stream(const tuning& tune, bool single, bool kahan, std::uint64_t n,
                          stream_shape& s) {
  const opencl::device_info& info = opencl::context::instance().info();
  s.vw = tune.vector_width > 0
             ? tune.vector_width
             : (single ? default_vector_width_float : default_vector_width_double);
  if (!is_pow2(s.vw) || s.vw > 8)
    throw invalid_argument("vector_width", "must be 1, 2, 4 or 8");
  long long wg = tune.work_group > 0 ? tune.work_group : default_stream_work_group;
  if (!is_pow2(wg)) throw invalid_argument("work_group", "must be a power of two");
  wg = std::min<long long>(wg, floor_pow2(static_cast<long long>(info.max_work_group_size)));
  s.work_group = static_cast<int>(wg);
  s.unroll = tune.unroll > 0 ? tune.unroll : default_unroll;
  if (!is_pow2(s.unroll) || s.unroll > 32)
    throw invalid_argument("unroll", "must be a power of two <= 32");
  const int D = ceil_log2(n);
  if (D > 62) return false;
  const long long N = 1LL << D;
  const long long per_iter = wg * s.unroll * s.vw;  // values one group loads per iteration
  if (N < per_iter) return false;
  const int per_cu = tune.groups_per_cu > 0 ? tune.groups_per_cu : default_groups_per_cu;
  long long groups =
      tune.groups > 0
          ? tune.groups
          : floor_pow2(std::max(1LL, static_cast<long long>(per_cu) * info.compute_units));
  if (!is_pow2(groups)) throw invalid_argument("groups", "must be a power of two");
  groups = std::min(groups, N / per_iter);
  long long iters = N / (groups * per_iter);
  if (iters > (1LL << stream_lstack)) {
    iters = 1LL << stream_lstack;
    groups = N / (per_iter * iters);
  }
  s.groups = groups;
  s.iters = iters;
  const int levels = ceil_log2(static_cast<std::uint64_t>(iters));
  s.lstack = kahan ? 0 : std::min(stream_lstack, (levels + 1) / 2 * 2);
  s.depth = D - ceil_log2(static_cast<std::uint64_t>(groups));
  s.fuse = (tune.fuse >= 0 ? tune.fuse : default_fuse) != 0 && groups <= wg * stream_rmax;
  return true;
}

/**
 * Launch the stream kernel over the n values of x: the group partials go to
 * part_s (part_c), and with s.fuse the root to result[0] (+ result[1]).
 * counter must hold 0 (it does again after a fused launch).
 */
inline cl::Event launch_stream(const stream_shape& s, const cl::Buffer& x,
                               std::uint64_t n, bool x_double, int method,
                               bool single, cl::Buffer& part_s, cl::Buffer& part_c,
                               cl::Buffer& counter, cl::Buffer& result) {
  // One copy kept between calls: set_option only touches what changed, and
  // a call does not copy the option map (a few microseconds a call).
  static opencl::kernel_cl<cl::Buffer, cl_long, cl_int, cl::Buffer, cl::Buffer, cl::Buffer,
                           cl::Buffer>
      k = opencl::kernels::reduce_stream;
  k.set_option("METHOD", method);
  k.set_option("REAL_FLOAT", single ? 1 : 0);
  k.set_option("SRC_DOUBLE", x_double ? 1 : 0);
  k.set_option("VW", s.vw);
  k.set_option("WG", s.work_group);
  k.set_option("UNROLL", s.unroll);
  k.set_option("LSTACK", s.lstack);
  k.set_option("RMAX", stream_rmax);
  k.set_option("FUSE", s.fuse ? 1 : 0);
  return k(cl::NDRange(static_cast<std::size_t>(s.groups) * s.work_group),
           cl::NDRange(s.work_group), x, static_cast<cl_long>(n),
           static_cast<cl_int>(s.iters), part_s, part_c, counter, result);
}

}  // namespace device
}  // namespace reduce
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
