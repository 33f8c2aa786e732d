#ifndef CLBAYES_BENCH_LOGISTIC_POSTERIOR_HPP
#define CLBAYES_BENCH_LOGISTIC_POSTERIOR_HPP

// The logistic-regression posterior of the sampler benchmarks (no R):
// simulated data with known truth (x standard normal, coefficients
// normal(0, beta_sd), intercept 0.5), priors normal(0, 2.5) on the
// coefficients and normal(0, 10) on the intercept. Points are rows (alpha,
// beta_1..beta_k). `per_point` evaluates each point with its own glm_lp
// call (one pass over x per point, as glm_model did before the batched
// path); otherwise a batch is one glm_lp_batch call (one pass for all).

#include "bench_mcmc.hpp"

#include <clbayes/glm/glm_batch.hpp>
#include <clbayes/mcmc/evaluator.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

namespace bench {

namespace cg = clbayes::glm;

struct logistic_data {
  int n = 0, k = 0;
  std::vector<double> x, y, truth;  // x n x k column-major; truth k
};

inline logistic_data simulate_logistic(int n, int k, double beta_sd) {
  cm::rng gen(1001, 0);  // fixed data; samplers get their own seeds
  logistic_data d;
  d.n = n;
  d.k = k;
  d.x.resize(static_cast<std::size_t>(n) * k);
  d.y.resize(n);
  d.truth.resize(k);
  for (double& b : d.truth) b = beta_sd * normal(gen);
  for (double& v : d.x) v = normal(gen);
  for (int i = 0; i < n; ++i) {
    double eta = 0.5;
    for (int j = 0; j < k; ++j) eta += d.x[static_cast<std::size_t>(j) * n + i] * d.truth[j];
    d.y[i] = gen.uniform() < 1 / (1 + std::exp(-eta)) ? 1 : 0;
  }
  return d;
}

class logistic_posterior : public cm::fused_gradient_evaluator {
 public:
  logistic_posterior(const cg::glm_data& data, bool device, bool per_point = false)
      : data_(data), device_(device), per_point_(per_point) {}

 private:
  static constexpr double sd_alpha = 10, sd_beta = 2.5;
  const cg::glm_data& data_;
  bool device_, per_point_;
  Eigen::VectorXd alpha_;
  Eigen::MatrixXd beta_;  // k x P

  cg::glm_batch_result likelihood(int P, bool gradient) {
    if (!per_point_) {
      cg::glm_batch_params p;
      p.fam = cg::family::bernoulli_logit;
      p.n_points = P;
      p.alpha = alpha_.data();
      p.beta = beta_.data();
      return cg::glm_lp_batch(data_, p, gradient, false, device_);
    }
    const int k = data_.k;
    cg::glm_batch_result r;
    r.value.resize(P);
    r.d_alpha.resize(P);
    r.d_beta.resize(k, P);
    for (int c = 0; c < P; ++c) {
      cg::glm_params p;
      p.fam = cg::family::bernoulli_logit;
      p.alpha = alpha_.data() + c;
      p.n_alpha = 1;
      p.beta = beta_.data() + static_cast<std::size_t>(c) * k;
      const cg::glm_result one = cg::glm_lp(data_, p, gradient, false, device_);
      r.value[c] = one.value;
      if (!gradient) continue;
      r.d_alpha[c] = one.d_alpha[0];
      for (int j = 0; j < k; ++j) r.d_beta(j, c) = one.d_beta[static_cast<std::size_t>(j)];
    }
    return r;
  }

  void evaluate(const Eigen::MatrixXd& pts, Eigen::VectorXd& out,
                Eigen::MatrixXd* grad) override {
    const int P = static_cast<int>(pts.rows()), k = data_.k;
    alpha_ = pts.col(0);
    beta_ = pts.rightCols(k).transpose();
    const cg::glm_batch_result r = likelihood(P, grad != nullptr);
    out = r.value - 0.5 * alpha_.cwiseAbs2() / (sd_alpha * sd_alpha) -
          0.5 * beta_.colwise().squaredNorm().transpose() / (sd_beta * sd_beta);
    if (grad == nullptr) return;
    grad->resize(P, k + 1);
    grad->col(0) = r.d_alpha - alpha_ / (sd_alpha * sd_alpha);
    grad->rightCols(k) = (r.d_beta - beta_ / (sd_beta * sd_beta)).transpose();
  }
};

/** Smallest ESS over the variables of draws (iteration x chain x variable),
 *  and the largest |posterior mean - truth| / posterior sd over variables
 *  first_checked.. (truth: one value per variable). */
inline void summarise_draws(const std::vector<double>& draws, int n_iter, int chains,
                            const std::vector<double>& truth, int first_checked,
                            double* min_ess, double* max_z) {
  const int dim = static_cast<int>(truth.size());
  const std::size_t per_var = static_cast<std::size_t>(n_iter) * chains;
  *min_ess = 1e300;
  *max_z = 0;
  for (int j = 0; j < dim; ++j) {
    const double* d = draws.data() + per_var * j;
    *min_ess = std::min(*min_ess, ess(d, n_iter, chains));
    if (j < first_checked) continue;
    double m = 0, v = 0;
    for (std::size_t i = 0; i < per_var; ++i) m += d[i];
    m /= per_var;
    for (std::size_t i = 0; i < per_var; ++i) v += (d[i] - m) * (d[i] - m);
    v /= per_var;
    *max_z = std::max(*max_z, std::fabs(m - truth[j]) / std::sqrt(v));
  }
}

/** The true (alpha, beta) of simulate_logistic's data. */
inline std::vector<double> logistic_truth(const logistic_data& d) {
  std::vector<double> t(1, 0.5);
  t.insert(t.end(), d.truth.begin(), d.truth.end());
  return t;
}

}  // namespace bench

#endif
