#ifndef CLBAYES_REDUCE_READ_ROOT_HPP
#define CLBAYES_REDUCE_READ_ROOT_HPP

// The last step of gpu_sum()'s device path: the root (and, for kahan, its
// compensation) back to the host. On a GPU this 16-byte trip, not the
// kernel, is what a short sum costs, and at 2^27 doubles it is a tenth of
// the call, so the host reads into pinned host memory
// (workspace::pinned_host), which the DMA engine writes directly: 7 us
// against 16.5 us through pageable memory on the H200, and polling the
// read's event instead of clFinish measured no faster (latency table, H200,
// 2026-11-22; RESULTS.md, "Reductions").

#include "device_tuning.hpp"

#include <cstring>

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace reduce {
namespace device {

/** Read the root s (the first value of `s`; + c, the first value of `c`,
 *  for kahan) in the working precision and add the two as the CPU path
 *  does. */
inline double read_root(const cl::Buffer& s, const cl::Buffer& c, bool kahan, bool single,
                        workspace& w) {
  cl::CommandQueue& q = opencl::context::instance().queue();
  const std::size_t rs = single ? sizeof(float) : sizeof(double);
  char* dst = static_cast<char*>(w.pinned_host());
  std::memset(dst, 0, 2 * rs);
  try {
    q.enqueueReadBuffer(s, CL_FALSE, 0, rs, dst);
    if (kahan) q.enqueueReadBuffer(c, CL_FALSE, 0, rs, dst + rs);
    q.finish();
  } catch (const cl::Error& e) {
    throw opencl_error(std::string(e.what()) + " reading a reduction result", e.err());
  }
  if (single) {
    float fs[2];
    std::memcpy(fs, dst, sizeof fs);
    return static_cast<double>(fs[0] + fs[1]);  // in float, as the CPU path does
  }
  double ds[2];
  std::memcpy(ds, dst, sizeof ds);
  return ds[0] + ds[1];
}

}  // namespace device
}  // namespace reduce
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
