#ifndef CLBAYES_SLICE_UNIVARIATE_HPP
#define CLBAYES_SLICE_UNIVARIATE_HPP

// The baseline: parallel-slice.txt Algorithm 1 applied coordinate by
// coordinate, with Neal's (2003, Figures 3 and 5) stepping out, bounded by
// m = max_steps steps split at random between the two ends, and shrinkage.
// Chains are updated together: each step-out round evaluates the new left
// and right ends of every chain still stepping in one call, each shrinkage
// round one proposal of every chain not yet accepted.

#include <clbayes/slice/chains.hpp>
#include <clbayes/slice/evaluator.hpp>

#include <cmath>
#include <vector>

namespace clbayes {
namespace slice {

/**
 * One sweep of univariate slice updates over the coordinates, every chain.
 * @param width the initial interval width w_j of each coordinate.
 * @param extent if not null, receives R - L after stepping out (chains x dim).
 */
inline void univariate_update(chain_state& s, counted_evaluator& f,
                              const Eigen::VectorXd& width, int max_steps,
                              Eigen::MatrixXd* extent) {
  const int n = s.n(), k = s.dim();
  if (extent != nullptr) extent->resize(n, k);
  Eigen::VectorXd y(n), L(n), R(n);
  std::vector<int> steps_left(n), steps_right(n);
  Eigen::MatrixXd points;
  Eigen::VectorXd lp;
  for (int j = 0; j < k; ++j) {
    for (int c = 0; c < n; ++c) {
      rng& g = s.rngs[static_cast<std::size_t>(c)];
      y[c] = s.logf[c] - g.exponential();
      L[c] = s.x(c, j) - width[j] * g.uniform();
      R[c] = L[c] + width[j];
      const int J = static_cast<int>(std::floor(max_steps * g.uniform()));
      steps_left[c] = J;
      steps_right[c] = max_steps - 1 - J;
    }
    // Stepping out: both ends of every chain that may still step.
    for (;;) {
      std::vector<int> who, side;  // side 0: left end, 1: right end
      for (int c = 0; c < n; ++c) {
        if (steps_left[c] > 0) { who.push_back(c); side.push_back(0); }
        if (steps_right[c] > 0) { who.push_back(c); side.push_back(1); }
      }
      if (who.empty()) break;
      const int m = static_cast<int>(who.size());
      points.resize(m, k);
      for (int a = 0; a < m; ++a) {
        points.row(a) = s.x.row(who[a]);
        points(a, j) = side[a] == 0 ? L[who[a]] : R[who[a]];
      }
      f(points, lp);
      for (int a = 0; a < m; ++a) {
        const int c = who[a];
        const bool inside = lp[a] > y[c];
        if (side[a] == 0) {
          if (inside) { L[c] -= width[j]; --steps_left[c]; } else steps_left[c] = 0;
        } else {
          if (inside) { R[c] += width[j]; --steps_right[c]; } else steps_right[c] = 0;
        }
      }
    }
    if (extent != nullptr)
      for (int c = 0; c < n; ++c) (*extent)(c, j) = R[c] - L[c];
    // Shrinkage.
    std::vector<int> active(n);
    for (int c = 0; c < n; ++c) active[c] = c;
    for (int round = 0; !active.empty(); ++round) {
      if (round == max_shrink_rounds) {
        s.n_stuck += static_cast<double>(active.size());
        break;
      }
      const int m = static_cast<int>(active.size());
      points.resize(m, k);
      for (int a = 0; a < m; ++a) {
        const int c = active[a];
        points.row(a) = s.x.row(c);
        points(a, j) = L[c] + s.rngs[static_cast<std::size_t>(c)].uniform() * (R[c] - L[c]);
      }
      f(points, lp);
      std::vector<int> still;
      for (int a = 0; a < m; ++a) {
        const int c = active[a];
        const double v = points(a, j);
        if (lp[a] > y[c]) {
          s.x(c, j) = v;
          s.logf[c] = lp[a];
        } else {
          (v < s.x(c, j) ? L[c] : R[c]) = v;
          still.push_back(c);
        }
      }
      active.swap(still);
    }
  }
}

}  // namespace slice
}  // namespace clbayes

#endif
