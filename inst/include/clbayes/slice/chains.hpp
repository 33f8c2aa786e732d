#ifndef CLBAYES_SLICE_CHAINS_HPP
#define CLBAYES_SLICE_CHAINS_HPP

// The state every update works on: the current point and log density of
// each chain, and each chain's random stream.

#include <clbayes/eigen.hpp>
#include <clbayes/slice/rng.hpp>

#include <cstdint>
#include <vector>

namespace clbayes {
namespace slice {

struct chain_state {
  Eigen::MatrixXd x;       // chains x dim: the current points
  Eigen::VectorXd logf;    // chains: log f at x
  std::vector<rng> rngs;   // one stream per chain
  double n_stuck = 0;      // updates that hit the shrinkage limit and stayed

  chain_state(const Eigen::MatrixXd& init, std::uint64_t seed) : x(init) {
    rngs.reserve(static_cast<std::size_t>(init.rows()));
    for (int c = 0; c < init.rows(); ++c) rngs.emplace_back(seed, c);
  }
  int n() const { return static_cast<int>(x.rows()); }
  int dim() const { return static_cast<int>(x.cols()); }
};

/** Shrinkage rounds after which an update gives up and keeps its point;
 *  each rejected batch shrinks the box towards the current point, so this
 *  is reached only for targets with no mass near the current point. */
constexpr int max_shrink_rounds = 200;

}  // namespace slice
}  // namespace clbayes

#endif
