#ifndef CLBAYES_REDUCE_READ_ROOT_HPP
#define CLBAYES_REDUCE_READ_ROOT_HPP

// The last step of gpu_sum()'s device path: the root (and, for kahan, its
// compensation) back to the host. On a GPU this 16-byte trip, not the
// kernel, is what a short sum costs, and at 2^27 doubles it is a tenth of
// the call, so the host
//   - reads into pinned host memory (workspace::pinned_host), which the DMA
//     engine writes directly, and
//   - waits with clFinish by default; polling the read's event after a
//     flush (tuning::wait = poll) measured no faster on the H200.

#include "device_tuning.hpp"

#include <cstring>

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace reduce {
namespace device {

/** The wait tune.wait asks for, with `automatic` resolved for this device. */
inline wait_kind resolve_wait(const tuning& tune) {
  // The H200 latency table (logs/history.md, 2026-11-22): with the root read into
  // pinned memory, polling and clFinish cost the same (291.6 against 293.4
  // us a div2 call at 2^27), so no device spends a host core on polling.
  return tune.wait != wait_kind::automatic ? tune.wait : wait_kind::finish;
}

/** Wait until `ev` (the last command of the in-order queue) is complete. */
inline void wait_for(cl::Event& ev, wait_kind how) {
  cl::CommandQueue& q = opencl::context::instance().queue();
  if (how != wait_kind::poll) {
    q.finish();
    return;
  }
  q.flush();  // a command never flushed may never complete
  while (true) {
    const cl_int status = ev.getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>();
    if (status == CL_COMPLETE) return;
    if (status < 0) throw opencl_error("reading a reduction result", status);
  }
}

/** Read the root s (at byte 0 of `s`; + c, at byte c_off of `c`, for kahan)
 *  in the working precision and add the two as the CPU path does. s and c
 *  may be the same buffer with c right after s: then one read. */
inline double read_root(const cl::Buffer& s, const cl::Buffer& c, std::size_t c_off,
                        bool kahan, bool single, const tuning& tune, workspace& w) {
  cl::CommandQueue& q = opencl::context::instance().queue();
  const bool one_read = kahan && &s == &c && c_off == (single ? sizeof(float) : sizeof(double));
  const std::size_t rs = single ? sizeof(float) : sizeof(double);
  alignas(8) char pageable[16] = {0};
  char* dst = tune.pinned == 0 ? pageable : static_cast<char*>(w.pinned_host());
  std::memset(dst, 0, 2 * rs);
  try {
    cl::Event ev;
    q.enqueueReadBuffer(s, CL_FALSE, 0, (one_read ? 2 : 1) * rs, dst, nullptr, &ev);
    if (kahan && !one_read) q.enqueueReadBuffer(c, CL_FALSE, c_off, rs, dst + rs, nullptr, &ev);
    wait_for(ev, resolve_wait(tune));
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
