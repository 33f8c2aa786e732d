#ifndef CLBAYES_MCMC_RUN_LOOP_HPP
#define CLBAYES_MCMC_RUN_LOOP_HPP

// What every sampler does around its own iteration: check the initial
// points' log densities, and run a piece of iterations with a check for
// Ctrl-C before each (R runs the samplers piece by piece: progress bar,
// chain groups).

#include <clbayes/eigen.hpp>
#include <clbayes/error.hpp>
#include <clbayes/interrupt.hpp>

#include <cmath>
#include <string>

namespace clbayes {
namespace mcmc {

/** Throws invalid_argument naming `init` and the first chain whose log
 *  density is not finite. `what`: what had to be finite, e.g. "log density". */
inline void require_finite_start(const Eigen::VectorXd& logf, const std::string& what) {
  for (Eigen::Index c = 0; c < logf.size(); ++c)
    if (!std::isfinite(logf[c]))
      throw invalid_argument("init", "must have a finite " + what + " (chain " +
                                         std::to_string(c + 1) + " has log density " +
                                         (logf[c] > 0 ? "+Inf" : "-Inf or NaN") + ")");
}

/** Calls `iterate()` until `done()` or `iterations` calls, checking for
 *  Ctrl-C before each; returns how many ran. */
template <class Done, class Iterate>
int run_piece(int iterations, Done done, Iterate iterate) {
  int ran = 0;
  for (; ran < iterations && !done(); ++ran) {
    check_interrupt();
    iterate();
  }
  return ran;
}

}  // namespace mcmc
}  // namespace clbayes

#endif
