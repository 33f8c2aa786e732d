#ifndef CLBAYES_MCMC_CONVERGENCE_HPP
#define CLBAYES_MCMC_CONVERGENCE_HPP

// Split R-hat (Gelman et al., Bayesian Data Analysis, 3rd ed., section
// 11.4): each chain cut into halves, the between- and within-half
// variances compared. The samplers use it at the end of warmup, on the
// ranks of the draws (as Vehtari et al. 2021 rank-normalise, so heavy tails
// do not inflate it), to tell whether the chains agree before any draw is
// kept; the fit's summary uses the full rank-normalised version
// (R/diagnostics.R).

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

namespace clbayes {
namespace mcmc {

/**
 * Split R-hat of one variable.
 * @param draw draw(i, c): iteration i (0 .. n - 1) of chain c (0 .. m - 1).
 * @return NaN when there are fewer than 4 iterations or no variance within
 *   the halves (chains that have not moved), else R-hat >= 0.
 */
inline double split_rhat(int n, int m, const std::function<double(int, int)>& draw) {
  const int h = n / 2;
  if (h < 2 || m < 1) return std::numeric_limits<double>::quiet_NaN();
  const int halves = 2 * m;
  std::vector<double> mean(static_cast<std::size_t>(halves)), var(mean.size());
  for (int c = 0; c < m; ++c)
    for (int s = 0; s < 2; ++s) {
      const int from = s == 0 ? 0 : n - h;  // the middle draw of an odd n is dropped
      double sum = 0;
      for (int i = 0; i < h; ++i) sum += draw(from + i, c);
      const double mu = sum / h;
      double ss = 0;
      for (int i = 0; i < h; ++i) {
        const double d = draw(from + i, c) - mu;
        ss += d * d;
      }
      mean[static_cast<std::size_t>(2 * c + s)] = mu;
      var[static_cast<std::size_t>(2 * c + s)] = ss / (h - 1);
    }
  double w = 0, grand = 0;
  for (int a = 0; a < halves; ++a) {
    w += var[static_cast<std::size_t>(a)];
    grand += mean[static_cast<std::size_t>(a)];
  }
  w /= halves;
  grand /= halves;
  if (!(w > 0) || !std::isfinite(w)) return std::numeric_limits<double>::quiet_NaN();
  double b_over_n = 0;
  for (int a = 0; a < halves; ++a) {
    const double d = mean[static_cast<std::size_t>(a)] - grand;
    b_over_n += d * d;
  }
  b_over_n /= std::max(1, halves - 1);
  return std::sqrt(((h - 1.0) / h * w + b_over_n) / w);
}

/** split_rhat() of the pooled ranks (1 .. n m, ties in draw order) of
 *  the draws instead of the draws themselves. */
inline double split_rhat_ranked(int n, int m, const std::function<double(int, int)>& draw) {
  const std::size_t total = static_cast<std::size_t>(n) * static_cast<std::size_t>(m);
  std::vector<double> value(total);
  for (int c = 0; c < m; ++c)
    for (int i = 0; i < n; ++i)
      value[static_cast<std::size_t>(c) * n + i] = draw(i, c);
  std::vector<std::size_t> order(total);
  for (std::size_t a = 0; a < total; ++a) order[a] = a;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return value[a] < value[b]; });
  std::vector<double> rank(total);
  for (std::size_t r = 0; r < total; ++r) rank[order[r]] = static_cast<double>(r + 1);
  return split_rhat(n, m, [&](int i, int c) {
    return rank[static_cast<std::size_t>(c) * n + i];
  });
}

}  // namespace mcmc
}  // namespace clbayes

#endif
