#ifndef CLBAYES_BENCH_MCMC_HPP
#define CLBAYES_BENCH_MCMC_HPP

// Helpers shared by the sampler benchmarks (no R): a normal generator on
// the sampler's rng, the effective sample size, a gradient check against
// central differences, and the GP data of
// parallel-slice.txt's Example 2.

#include <clbayes/eigen.hpp>
#include <clbayes/mcmc/evaluator.hpp>
#include <clbayes/mcmc/options.hpp>
#include <clbayes/mcmc/rng.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace bench {

namespace cm = clbayes::mcmc;

// The chain engine's options of a bench run (the core has no defaults):
// the given ones, and for the rest what the drivers have always run with:
// chains from stream 0, no warmup R-hat check or extension (a slice driver
// that wants them sets warmup_rhat and warmup_extend), no memory limit.
inline cm::options chain_options(cm::metric metric, int warmup, int n_iter,
                                 std::uint64_t seed, double init_radius) {
  cm::options o;
  o.metric = metric;
  o.warmup = warmup;
  o.n_iter = n_iter;
  o.seed = seed;
  o.first_stream = 0;
  o.init_radius = init_radius;
  o.warmup_extend = 0;
  o.warmup_rhat = 0;
  o.memory_limit = std::numeric_limits<double>::infinity();
  return o;
}

// Standard normal by Box-Muller from the sampler's generator.
inline double normal(cm::rng& g) {
  return std::sqrt(-2 * std::log(g.uniform())) * std::cos(6.283185307179586 * g.uniform());
}

// ESS of one variable's draws (n_iter x chains, iteration fastest) by
// split chains and Geyer's initial monotone sequence (Vehtari et al. 2021
// without the rank normalisation).
inline double ess(const double* x, int n_iter, int chains) {
  const int n = n_iter / 2, m = 2 * chains;
  std::vector<const double*> col(static_cast<std::size_t>(m));
  for (int c = 0; c < chains; ++c) {
    col[2 * c] = x + static_cast<std::size_t>(c) * n_iter;
    col[2 * c + 1] = x + static_cast<std::size_t>(c) * n_iter + (n_iter - n);
  }
  std::vector<double> mean(m, 0.0);
  for (int c = 0; c < m; ++c) {
    for (int i = 0; i < n; ++i) mean[c] += col[c][i];
    mean[c] /= n;
  }
  auto acov = [&](int lag) {  // mean over chains of the lag autocovariance
    double s = 0;
    for (int c = 0; c < m; ++c) {
      double a = 0;
      for (int i = 0; i + lag < n; ++i)
        a += (col[c][i] - mean[c]) * (col[c][i + lag] - mean[c]);
      s += a / n;
    }
    return s / m;
  };
  double grand = 0, between = 0;
  for (double v : mean) grand += v / m;
  for (double v : mean) between += (v - grand) * (v - grand) / (m - 1);
  const double a0 = acov(0);
  const double mean_var = a0 * n / (n - 1.0);
  const double var_plus = mean_var * (n - 1.0) / n + between;
  if (!(var_plus > 0)) return 0;
  auto rho = [&](int lag) { return 1 - (mean_var - acov(lag)) / var_plus; };
  double tau = -1, prev_pair = 2;  // rho(0) + rho(1) <= 2
  for (int t = 0; t + 1 < n; t += 2) {
    double pair = (t == 0 ? 1.0 : rho(t)) + rho(t + 1);
    if (pair < 0) break;
    pair = std::min(pair, prev_pair);  // monotone
    tau += 2 * pair;
    prev_pair = pair;
  }
  const double total = static_cast<double>(n) * m;
  return total / std::max(tau, 1 / std::log10(total));
}

// Example 2 of parallel-slice.txt: n locations uniform on the unit square,
// an intercept and the first coordinate as covariates (beta = (1, -0.5)),
// and y ~ N(X beta, Sigma) with the exponential covariance, kappa = psi =
// 1, phi = 0.2. Column-major: X is n x 2, coords n x 2.
struct gp_data {
  std::vector<double> y, X, coords;
};

inline gp_data simulate_gp(int n, std::uint64_t seed) {
  cm::rng g(seed, 0);
  gp_data d;
  d.coords.resize(2 * static_cast<std::size_t>(n));
  for (auto& c : d.coords) c = g.uniform();
  d.X.assign(2 * static_cast<std::size_t>(n), 1.0);
  for (int i = 0; i < n; ++i) d.X[static_cast<std::size_t>(n + i)] = d.coords[static_cast<std::size_t>(i)];
  Eigen::MatrixXd S(n, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const double dx = d.coords[i] - d.coords[j], dy = d.coords[n + i] - d.coords[n + j];
      S(i, j) = std::exp(-std::sqrt(dx * dx + dy * dy) / 0.2) + (i == j ? 1.0 : 0.0);
    }
  Eigen::LLT<Eigen::MatrixXd> llt(S);
  Eigen::VectorXd z(n);
  for (int i = 0; i < n; ++i) z[i] = normal(g);
  Eigen::VectorXd e = llt.matrixL() * z;
  d.y.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) d.y[i] = 1 - 0.5 * d.X[n + i] + e[i];
  return d;
}

// Largest relative error of the gradient against central differences at
// `pts` (a few rows), steps relative to the coordinates beyond 1.
inline double gradient_error(cm::batch_evaluator& f, const Eigen::MatrixXd& pts) {
  Eigen::VectorXd v, vp, vm;
  Eigen::MatrixXd g;
  f.gradient(pts, v, g);
  double worst = 0;
  for (int j = 0; j < pts.cols(); ++j) {
    const Eigen::VectorXd h = 1e-5 * pts.col(j).cwiseAbs().cwiseMax(1.0);
    Eigen::MatrixXd a = pts, b = pts;
    a.col(j) += h;
    b.col(j) -= h;
    f(a, vp);
    f(b, vm);
    for (int c = 0; c < pts.rows(); ++c) {
      const double fd = (vp[c] - vm[c]) / (2 * h[c]);
      worst = std::max(worst, std::fabs(g(c, j) - fd) / (1 + std::fabs(fd)));
    }
  }
  return worst;
}

}  // namespace bench

#endif
