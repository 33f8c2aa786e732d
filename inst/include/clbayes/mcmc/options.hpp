#ifndef CLBAYES_MCMC_OPTIONS_HPP
#define CLBAYES_MCMC_OPTIONS_HPP

// The settings of a run that the chain engine (engine.hpp) reads, the same
// for every sampler; each transition adds its own few (slice::settings,
// hmc::settings). No field has a default here: the caller (R's sampler
// functions, through their glue; the bench drivers) sets every one, so the
// defaults live in one place, the R functions' arguments.

#include <clbayes/error.hpp>

#include <cstdint>
#include <string>

namespace clbayes {
namespace mcmc {

/** The metric estimated at the end of each slow window: the variances of
 *  the window's draws, or their full covariance. */
enum class metric { diagonal, dense };

inline metric parse_metric(const std::string& s) {
  if (s == "diagonal") return metric::diagonal;
  if (s == "dense") return metric::dense;
  throw invalid_argument("metric", "must be \"diagonal\" or \"dense\"");
}

struct options {
  mcmc::metric metric{};
  int warmup{};
  int n_iter{};
  std::uint64_t seed{};
  /** Chain c uses random stream first_stream + c of the seed: a group of
   *  chains run on its own draws what it would draw in one run. */
  int first_stream{};
  /** > 0: each chain starts at init + uniform(-r, r) offsets on the
   *  unconstrained scale (Stan's init_r). */
  double init_radius{};
  /** The most iterations added to warmup while the chains disagree. */
  int warmup_extend{};
  /** Split R-hat (of ranks) of the second half of warmup at or below which
   *  the chains agree; 0: not computed (and warmup never extended). */
  double warmup_rhat{};
  /** Bytes the run may hold (draws and the transition's work space). */
  double memory_limit{};
};

}  // namespace mcmc
}  // namespace clbayes

#endif
