#ifndef CLBAYES_OPENCL_PROFILE_HPP
#define CLBAYES_OPENCL_PROFILE_HPP

// Per-phase device times of an algorithm, for the benchmark drivers: while
// a sink is installed, kernel_cl records the event of every launch under
// the current phase name (phase_scope). The times are read from the events
// afterwards, which needs queues made with context::set_profiling(true).
// Without a sink this costs one pointer test per launch.

#include "../config.hpp"

#include <vector>

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {

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

}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
