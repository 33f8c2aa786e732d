#ifndef CLBAYES_SLICE_HYPERRECT_HPP
#define CLBAYES_SLICE_HYPERRECT_HPP

// The multivariate update: a hyperrectangle around the current point,
// sampled by batched rejection with shrinkage (Neal 2003, Section 5.1, with
// the K proposals of parallel-slice.txt Algorithm 3 evaluated together), and
// optionally grown first by the parallel vertex step-out of Algorithm 2.
//
// Validity. Neal's box (widths w, placed uniformly at random around x) with
// shrinkage leaves the target invariant. The batched form is still
// reversible: proposals of a batch are drawn from one box, the first one in
// draw order inside the slice is taken, and only a wholly rejected batch
// shrinks the box, towards the current point by every rejected proposal
// (coordinate j: a rejected value below x_j raises L_j, above it lowers
// U_j); from the accepted point the same box sequence is equally likely.
// Algorithm 2's step-out is not reversible (the final box depends on where
// the chain started), so it is used only during warmup to measure the slice,
// unless the caller asks for the paper's literal sampler.

#include <clbayes/mcmc/chains.hpp>
#include <clbayes/slice/shrinkage.hpp>
#include <clbayes/mcmc/evaluator.hpp>

#include <algorithm>
#include <vector>

namespace clbayes {
namespace slice {

/** Algorithm 2 for every chain at once: grow each box [L, U] by w in every
 *  coordinate while one of its 2^k vertices lies in the slice (log f > y),
 *  at most max_steps rounds; all vertices of all growing boxes are
 *  evaluated in one call per round. */
inline void vertex_stepout(mcmc::counted_evaluator& f, const Eigen::VectorXd& y,
                           const Eigen::VectorXd& w, int max_steps,
                           Eigen::MatrixXd& L, Eigen::MatrixXd& U) {
  const int n = static_cast<int>(L.rows()), k = static_cast<int>(L.cols());
  const int n_vertex = 1 << k;
  std::vector<int> active(static_cast<std::size_t>(n));
  for (int c = 0; c < n; ++c) active[static_cast<std::size_t>(c)] = c;
  Eigen::MatrixXd points;
  Eigen::VectorXd lp;
  for (int step = 0; step < max_steps && !active.empty(); ++step) {
    const int m = static_cast<int>(active.size());
    points.resize(static_cast<Eigen::Index>(m) * n_vertex, k);
    for (int a = 0; a < m; ++a)
      for (int v = 0; v < n_vertex; ++v)
        for (int j = 0; j < k; ++j)
          points(a * n_vertex + v, j) =
              (v >> j) & 1 ? U(active[a], j) : L(active[a], j);
    f(points, lp);
    std::vector<int> still;
    for (int a = 0; a < m; ++a) {
      const int c = active[static_cast<std::size_t>(a)];
      std::vector<char> grow_low(k, 0), grow_high(k, 0);
      bool grew = false;
      for (int v = 0; v < n_vertex; ++v) {
        if (!(lp[a * n_vertex + v] > y[c])) continue;
        grew = true;
        for (int j = 0; j < k; ++j) ((v >> j) & 1 ? grow_high : grow_low)[j] = 1;
      }
      if (!grew) continue;
      for (int j = 0; j < k; ++j) {
        if (grow_low[j]) L(c, j) -= w[j];
        if (grow_high[j]) U(c, j) += w[j];
      }
      still.push_back(c);
    }
    active.swap(still);
  }
}

/**
 * One multivariate slice update of every chain.
 * @param width the box widths w (per dimension).
 * @param stepout grow the box by vertex_stepout() first (not reversible:
 *   warmup or the paper's literal sampler only).
 * @param n_proposals K, proposals per chain per batch.
 * @param extent if not null, receives U - L after the step-out (chains x dim).
 */
inline void hyperrect_update(mcmc::chain_state& s, mcmc::counted_evaluator& f,
                             const Eigen::VectorXd& width, bool stepout,
                             int n_proposals, int max_steps,
                             Eigen::MatrixXd* extent) {
  const int n = s.n(), k = s.dim(), K = n_proposals;
  Eigen::VectorXd y(n);
  Eigen::MatrixXd L(n, k), U(n, k);
  for (int c = 0; c < n; ++c) {
    mcmc::rng& g = s.rngs[static_cast<std::size_t>(c)];
    y[c] = s.logf[c] - g.exponential();
    for (int j = 0; j < k; ++j) {
      L(c, j) = s.x(c, j) - width[j] * g.uniform();
      U(c, j) = L(c, j) + width[j];
    }
  }
  if (stepout) vertex_stepout(f, y, width, max_steps, L, U);
  if (extent != nullptr) *extent = U - L;

  Eigen::MatrixXd points;
  Eigen::VectorXd lp;
  shrink_rounds(
      s, f, y, K, points, lp,
      [&](int c, mcmc::rng& g, int row) {
        for (int j = 0; j < k; ++j) points(row, j) = L(c, j) + g.uniform() * (U(c, j) - L(c, j));
      },
      [&](int c, int row) {
        s.x.row(c) = points.row(row);
        s.logf[c] = lp[row];
      },
      [&](int c, int row) {
        for (int j = 0; j < k; ++j) {
          const double v = points(row, j);
          if (v < s.x(c, j))
            L(c, j) = std::max(L(c, j), v);
          else
            U(c, j) = std::min(U(c, j), v);
        }
      });
}

}  // namespace slice
}  // namespace clbayes

#endif
