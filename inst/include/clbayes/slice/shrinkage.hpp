#ifndef CLBAYES_SLICE_SHRINKAGE_HPP
#define CLBAYES_SLICE_SHRINKAGE_HPP

// The batched shrinkage both slice updates end with (univariate.hpp,
// hyperrect.hpp): each round draws K proposals for every chain still
// looking, evaluates all of them in one call, and each chain takes its
// first proposal inside the slice or else shrinks its interval (or box)
// towards its current point by every one of them (parallel-slice.txt;
// reversible by the argument in hyperrect.hpp).

#include <clbayes/eigen.hpp>
#include <clbayes/mcmc/chains.hpp>
#include <clbayes/mcmc/evaluator.hpp>

#include <vector>

namespace clbayes {
namespace slice {

/** Shrinkage rounds after which an update gives up and keeps its point;
 *  each rejected batch shrinks the box towards the current point, so this
 *  is reached only for targets with no mass near the current point. */
constexpr int max_shrink_rounds = 200;

/**
 * Shrinkage rounds until every chain has a new point (or the limit: the
 * rest keep theirs, counted in s.n_stuck).
 * @param y each chain's slice level.
 * @param propose propose(c, g, row): chain c's proposal into points.row(row),
 *   drawn with its stream g.
 * @param take take(c, row): chain c moves to proposal `row` (log f in lp[row]).
 * @param shrink shrink(c, row): chain c's interval shrinks by proposal `row`.
 */
template <class Propose, class Take, class Shrink>
void shrink_rounds(mcmc::chain_state& s, mcmc::counted_evaluator& f, const Eigen::VectorXd& y,
                   int K, Eigen::MatrixXd& points, Eigen::VectorXd& lp, Propose propose,
                   Take take, Shrink shrink) {
  const int n = s.n();
  std::vector<int> active(static_cast<std::size_t>(n));
  for (int c = 0; c < n; ++c) active[static_cast<std::size_t>(c)] = c;
  for (int round = 0; !active.empty(); ++round) {
    if (round == max_shrink_rounds) {
      s.n_stuck += static_cast<double>(active.size());
      break;
    }
    const int m = static_cast<int>(active.size());
    points.resize(static_cast<Eigen::Index>(m) * K, s.dim());
    for (int a = 0; a < m; ++a) {
      const int c = active[static_cast<std::size_t>(a)];
      mcmc::rng& g = s.rngs[static_cast<std::size_t>(c)];
      for (int p = 0; p < K; ++p) propose(c, g, a * K + p);
    }
    f(points, lp);
    std::vector<int> still;
    for (int a = 0; a < m; ++a) {
      const int c = active[static_cast<std::size_t>(a)];
      int taken = -1;
      for (int p = 0; p < K && taken < 0; ++p)
        if (lp[a * K + p] > y[c]) taken = p;
      if (taken >= 0) {
        take(c, a * K + taken);
        continue;
      }
      for (int p = 0; p < K; ++p) shrink(c, a * K + p);
      still.push_back(c);
    }
    active.swap(still);
  }
}

}  // namespace slice
}  // namespace clbayes

#endif
