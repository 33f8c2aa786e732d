#ifndef CLBAYES_BATCHED_SETTINGS_HPP
#define CLBAYES_BATCHED_SETTINGS_HPP

// Tuned settings of the batched device routines (chol_batched.hpp,
// chol_blocked.hpp, solve_batched.hpp, apply_op.hpp, gp_loglik.hpp).
// tuned_settings() looks the selected device up in the table below
// (opencl/device_table.hpp); every routine takes the settings as an
// argument whose default is that lookup, so that the tests and
// bench/bench_batched reach other paths by passing a modified copy.

#include "../opencl/device_table.hpp"

#include <cstddef>

#ifdef CLBAYES_OPENCL
#include "../opencl/context.hpp"
#endif

namespace clbayes {
namespace batched {

struct batched_settings {
  int serial_max_m = 8;      // m up to this: one work item per matrix
  int staged_items = 64;     // items per work group of the staged serial kernel
  int team_size_max = 256;   // largest work group of a team kernel
  /** Bytes of local memory a kernel may use: the device's, less a reserve
   *  for the runtime; 0 means "ask the device". */
  std::size_t local_budget = 0;
  /** Bytes of global scratch one gp_loglik launch may use (rows are split
   *  over launches beyond it); 0 means a quarter of the device's memory. */
  std::size_t gp_scratch_budget = 0;
  /** The blocked multi-work-group Cholesky (chol_blocked.hpp): used for m
   *  at or above blocked_min_m (and by gp_loglik for n at or above
   *  gp_blocked_min_n); block width (0: blocked_width_for(m)), rows per
   *  panel work group, and the trailing update's square tile and register
   *  block (tile / wpt work items per side). From bench/bench_batched
   *  on the H200 (2026-11-22; RESULTS.md, "Batched Cholesky"): the team
   *  kernel won up to m = 128 (1000 x 128: 0.455 against 0.58 ms), the
   *  blocked path from 256 (200 x 256: 0.53 against 0.97; 60 x 500:
   *  1.03-1.11 against 4.36); for the GP the blocked path won from n = 100
   *  (0.15 against 0.29 ms at 30 rows). */
  int blocked_min_m = 192;
  int gp_blocked_min_n = 100;
  int blocked_nb = 0;
  int blocked_rows = 64;
  int blocked_tile = 64;
  int blocked_wpt = 4;
};

/** The settings for device `d`. Every value was measured on the H200, the
 *  only device swept so far; every device gets them (a CPU device's work
 *  groups are capped apart, in team_size_limit()). */
inline batched_settings tuned_settings(const opencl::device_info& d) {
  static const opencl::device_entry<batched_settings> table[] = {
      {"", "", 0, batched_settings()},  // any device
  };
  return opencl::lookup(table, d);
}

#ifdef CLBAYES_OPENCL
/** The settings for the selected device. */
inline batched_settings tuned_settings() {
  return tuned_settings(opencl::context::instance().info());
}
#endif

}  // namespace batched
}  // namespace clbayes

#endif
