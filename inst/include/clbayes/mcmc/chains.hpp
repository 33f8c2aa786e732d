#ifndef CLBAYES_MCMC_CHAINS_HPP
#define CLBAYES_MCMC_CHAINS_HPP

// The state every update works on: the current point and log density of
// each chain, and each chain's random stream.

#include <clbayes/eigen.hpp>
#include <clbayes/interrupt.hpp>
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
   *  one run. The first stream is reached by jumping ahead, each next one
   *  by one jump from the last, so n chains take time linear in n. */
  chain_state(const Eigen::MatrixXd& init, std::uint64_t seed, int first_stream = 0)
      : x(init) {
    const int n = static_cast<int>(init.rows());
    if (first_stream < 0) throw invalid_argument("first_stream", "must not be negative");
    rngs.reserve(static_cast<std::size_t>(n));
    if (n > 0) rngs.emplace_back(seed, static_cast<std::uint32_t>(first_stream));
    for (int c = 1; c < n; ++c) {
      if (c % 4096 == 0) check_interrupt();
      rng next = rngs.back();
      next.jump();
      rngs.push_back(next);
    }
  }
  int n() const { return static_cast<int>(x.rows()); }
  int dim() const { return static_cast<int>(x.cols()); }
};

}  // namespace mcmc
}  // namespace clbayes

#endif
