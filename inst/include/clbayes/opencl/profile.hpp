#ifndef CLBAYES_OPENCL_PROFILE_HPP
#define CLBAYES_OPENCL_PROFILE_HPP

// Launch counts and per-phase device times of an algorithm, for the
// benchmark drivers, compiled only under CLBAYES_PROFILE (bench/Makefile
// defines it; the package does not). With it, kernel_cl counts every launch
// (launch_count) and, while a sink is installed, records its event under the
// current phase name (phase_scope); the times are read from the events
// afterwards, which needs queues made with context::set_profiling(true).
// Without it, phase_scope is empty and a launch pays nothing.

#include "../config.hpp"

#include <vector>

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {

#ifdef CLBAYES_PROFILE

struct launch_record {
  const char* phase;
  cl::Event event;
};

inline std::vector<launch_record>*& profile_sink() {
  static std::vector<launch_record>* sink = nullptr;
  return sink;
}

inline const char*& profile_phase() {
  static const char* phase = "other";
  return phase;
}

/** Kernels enqueued so far (all kernel_cl objects): the benchmarks read it
 *  to count the launches of one algorithm. */
inline unsigned long long& launch_count() {
  static unsigned long long count = 0;
  return count;
}

/** Launches while alive are recorded under `phase` (a string literal). */
class phase_scope {
 public:
  explicit phase_scope(const char* phase) : was_(profile_phase()) { profile_phase() = phase; }
  ~phase_scope() { profile_phase() = was_; }
  phase_scope(const phase_scope&) = delete;
  phase_scope& operator=(const phase_scope&) = delete;

 private:
  const char* was_;
};

/** Whether a launch that needs no event must still make one. */
inline bool profile_wants_events() { return profile_sink() != nullptr; }

/** Called by kernel_cl after each launch. */
inline void profile_launch(const cl::Event& event) {
  ++launch_count();
  if (profile_sink() != nullptr) profile_sink()->push_back({profile_phase(), event});
}

#else

class phase_scope {
 public:
  explicit phase_scope(const char*) {}
  phase_scope(const phase_scope&) = delete;
  phase_scope& operator=(const phase_scope&) = delete;
};

inline bool profile_wants_events() { return false; }
inline void profile_launch(const cl::Event&) {}

#endif  // CLBAYES_PROFILE

}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
