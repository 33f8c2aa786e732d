#ifndef CLBAYES_SLICE_UNIVARIATE_HPP
#define CLBAYES_SLICE_UNIVARIATE_HPP

// The baseline: parallel-slice.txt Algorithm 1 applied coordinate by
// coordinate, with Neal's (2003, Figures 3 and 5) stepping out, bounded by
// m = max_steps steps split at random between the two ends, and shrinkage.
// Chains are updated together: each step-out round evaluates the next ends
// of every chain still stepping in one call, each shrinkage round the
// proposals of every chain not yet accepted.
//
// Batches (K = n_proposals). A step-out round evaluates up to K successive
// ends per side at once (the current end, then w, 2w, ... further out); the
// first one outside the slice stops that side, exactly where the sequential
// procedure would stop, so the interval is Neal's. A shrinkage round draws
// K proposals from the current interval; the first in draw order inside the
// slice is taken, and when all are rejected the interval shrinks towards
// the current point by every one of them (the one-dimensional case of the
// batched hyperrectangle, reversible by the same argument: hyperrect.hpp).
// K = 1 is the sequential algorithm. Larger K spends more densities per
// round for fewer rounds, which pays where a call costs more than a point
// (a device evaluating a batch in one launch).

#include <clbayes/mcmc/chains.hpp>
#include <clbayes/slice/shrinkage.hpp>
#include <clbayes/mcmc/evaluator.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

namespace clbayes {
namespace slice {

/**
 * One sweep of univariate slice updates over the coordinates, every chain.
 * @param width the initial interval width w_j of each coordinate.
 * @param extent if not null, receives R - L after stepping out (chains x dim).
 * @param n_proposals K: ends per side per step-out round and proposals per
 *   shrinkage round (1: the sequential algorithm).
 */
inline void univariate_update(mcmc::chain_state& s, mcmc::counted_evaluator& f,
                              const Eigen::VectorXd& width, int max_steps,
                              Eigen::MatrixXd* extent, int n_proposals = 1) {
  const int n = s.n(), k = s.dim(), K = n_proposals;
  if (extent != nullptr) extent->resize(n, k);
  Eigen::VectorXd y(n), L(n), R(n);
  std::vector<int> steps_left(n), steps_right(n);
  Eigen::MatrixXd points;
  Eigen::VectorXd lp;
  for (int j = 0; j < k; ++j) {
    for (int c = 0; c < n; ++c) {
      mcmc::rng& g = s.rngs[static_cast<std::size_t>(c)];
      y[c] = s.logf[c] - g.exponential();
      L[c] = s.x(c, j) - width[j] * g.uniform();
      R[c] = L[c] + width[j];
      const int J = static_cast<int>(std::floor(max_steps * g.uniform()));
      steps_left[c] = J;
      steps_right[c] = max_steps - 1 - J;
    }
    // Stepping out: up to K ends per side of every chain that may still step.
    for (;;) {
      std::vector<int> who, side, count;  // side 0: left end, 1: right end
      for (int c = 0; c < n; ++c) {
        if (steps_left[c] > 0) { who.push_back(c); side.push_back(0); count.push_back(std::min(K, steps_left[c])); }
        if (steps_right[c] > 0) { who.push_back(c); side.push_back(1); count.push_back(std::min(K, steps_right[c])); }
      }
      if (who.empty()) break;
      const int m = static_cast<int>(who.size());
      int total = 0;
      for (int a = 0; a < m; ++a) total += count[a];
      points.resize(total, k);
      for (int a = 0, row = 0; a < m; ++a) {
        const int c = who[a];
        for (int i = 0; i < count[a]; ++i, ++row) {
          points.row(row) = s.x.row(c);
          points(row, j) = side[a] == 0 ? L[c] - i * width[j] : R[c] + i * width[j];
        }
      }
      f(points, lp);
      for (int a = 0, row = 0; a < m; ++a) {
        const int c = who[a];
        int outside = -1;  // the first end outside the slice
        for (int i = 0; i < count[a] && outside < 0; ++i)
          if (!(lp[row + i] > y[c])) outside = i;
        row += count[a];
        const int moved = outside < 0 ? count[a] : outside;
        if (side[a] == 0) {
          L[c] -= moved * width[j];
          steps_left[c] = outside < 0 ? steps_left[c] - moved : 0;
        } else {
          R[c] += moved * width[j];
          steps_right[c] = outside < 0 ? steps_right[c] - moved : 0;
        }
      }
    }
    if (extent != nullptr)
      for (int c = 0; c < n; ++c) (*extent)(c, j) = R[c] - L[c];
    // Shrinkage.
    shrink_rounds(
        s, f, y, K, points, lp,
        [&](int c, mcmc::rng& g, int row) {
          points.row(row) = s.x.row(c);
          points(row, j) = L[c] + g.uniform() * (R[c] - L[c]);
        },
        [&](int c, int row) {
          s.x(c, j) = points(row, j);
          s.logf[c] = lp[row];
        },
        [&](int c, int row) {
          const double v = points(row, j);
          if (v < s.x(c, j)) L[c] = std::max(L[c], v); else R[c] = std::min(R[c], v);
        });
  }
}

}  // namespace slice
}  // namespace clbayes

#endif
