#ifndef CLBAYES_MCMC_CHAINS_HPP
#define CLBAYES_MCMC_CHAINS_HPP

// The state every update works on: the current point and log density of
// each chain, and each chain's random stream.

#include <clbayes/eigen.hpp>
#include <clbayes/mcmc/rng.hpp>

#include <cstdint>
#include <vector>

namespace clbayes {
namespace mcmc {

struct chain_state {
  Eigen::MatrixXd x;       // chains x dim: the current points
  Eigen::VectorXd logf;    // chains: log f at x
  std::vector<rng> rngs;   // one stream per chain
  double n_stuck = 0;      // updates that hit the shrinkage limit and stayed

  /** Chain c draws from stream first_stream + c of `seed`, so a run split
   *  into groups of chains gives each chain the stream it would have had in
   *  one run. */
  chain_state(const Eigen::MatrixXd& init, std::uint64_t seed, int first_stream = 0)
      : x(init) {
    rngs.reserve(static_cast<std::size_t>(init.rows()));
    for (int c = 0; c < init.rows(); ++c) rngs.emplace_back(seed, first_stream + c);
  }
  int n() const { return static_cast<int>(x.rows()); }
  int dim() const { return static_cast<int>(x.cols()); }
};

}  // namespace mcmc
}  // namespace clbayes

#endif
