#ifndef CLBAYES_MCMC_WARMUP_SCHEDULE_HPP
#define CLBAYES_MCMC_WARMUP_SCHEDULE_HPP

// Windowed adaptation in the manner of Stan (Stan Reference Manual,
// "HMC algorithm parameters: automatic parameter tuning"): warmup is cut
// into a fast initial buffer (chains move towards the typical set, only
// step sizes or widths adapt), a run of slow windows that double in length
// (each ends with a new metric estimated from its own draws only, so draws
// from before the chains converged are discarded), and a fast terminal
// buffer (step sizes or widths adapt to the final metric). The last slow
// window is stretched to reach the terminal buffer.

#include <algorithm>
#include <vector>

namespace clbayes {
namespace mcmc {

class warmup_schedule {
 public:
  /** Stan's defaults: 75 initial, windows from 25, 50 terminal; warmups
   *  too short for them get 15% / 75% / 10%. Fewer than 20 iterations of
   *  warmup: no slow windows at all. */
  explicit warmup_schedule(int warmup, int init_buffer = 75, int first_window = 25,
                           int term_buffer = 50)
      : warmup_(std::max(0, warmup)) {
    if (warmup_ < 20) {
      init_ = warmup_;
      return;
    }
    if (init_buffer + first_window + term_buffer > warmup_) {
      init_buffer = static_cast<int>(0.15 * warmup_);
      term_buffer = static_cast<int>(0.1 * warmup_);
      first_window = warmup_ - init_buffer - term_buffer;
    }
    init_ = init_buffer;
    const int slow_end = warmup_ - term_buffer;
    int start = init_buffer, length = first_window;
    while (start < slow_end) {
      int end = start + length;
      // Stretch the last window when the next one would not fit.
      if (end + 2 * length > slow_end) end = slow_end;
      ends_.push_back(end);
      start = end;
      length *= 2;
    }
  }

  int warmup() const { return warmup_; }
  /** Iterations of the initial fast buffer. */
  int init_buffer() const { return init_; }
  /** The iteration counts (1-based ends) at which slow windows close; each
   *  window starts where the one before ends (the first at init_buffer()). */
  const std::vector<int>& window_ends() const { return ends_; }

 private:
  int warmup_;
  int init_ = 0;
  std::vector<int> ends_;
};

}  // namespace mcmc
}  // namespace clbayes

#endif
