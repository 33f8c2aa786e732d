#ifndef CLBAYES_OPENCL_QUEUE_ORDER_HPP
#define CLBAYES_OPENCL_QUEUE_ORDER_HPP

// Ordering between the context's in-order queues (the Cholesky's and its
// gradient's look-ahead schedules): a marker on one queue, a barrier on
// another that waits for it.

#include "../error.hpp"
#include "context.hpp"

#include <vector>

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {

/** Makes `q` wait for `events` (enqueued on any queue of the context). */
inline void queue_wait(cl::CommandQueue& q, const std::vector<cl::Event>& events) {
  if (events.empty()) return;
  try {
    q.enqueueBarrierWithWaitList(&events);
  } catch (const cl::Error& e) {
    throw opencl_error("ordering two queues", e.err());
  }
}

/** An event that completes when everything enqueued on `q` so far has. */
inline cl::Event queue_marker(cl::CommandQueue& q) {
  cl::Event e;
  try {
    q.enqueueMarkerWithWaitList(nullptr, &e);
  } catch (const cl::Error& err) {
    throw opencl_error("marking a queue", err.err());
  }
  return e;
}

}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
