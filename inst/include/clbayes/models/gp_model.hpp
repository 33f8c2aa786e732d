#ifndef CLBAYES_MODELS_GP_MODEL_HPP
#define CLBAYES_MODELS_GP_MODEL_HPP

// The Gaussian-process model of parallel-slice.txt, Examples 2 and 3, for
// the slice sampler: y ~ N(X beta, Sigma(kappa, psi, phi)) with the
// covariance of batched::gp_loglik, beta fixed (the R side passes its GLS
// estimate), and the paper's priors
//   kappa, psi ~ inverse-gamma(shape a, scale b),  phi ~ uniform(lower, upper),
// so that, as in the paper's equation (1), the target of (kappa, psi, phi) is
//   |Sigma|^-1/2 exp(-r' Sigma^-1 r / 2) kappa^-(a+1) e^(-b/kappa) psi^-(a+1) e^(-b/psi).
// A batch of points is one launch of the fused likelihood kernel: build,
// factor, solve and reduce for every point at once (Section 4.1.2).

#include <clbayes/batched/gp_loglik.hpp>
#include <clbayes/mcmc/evaluator.hpp>

#include <cmath>
#include <limits>
#include <vector>

namespace clbayes {
namespace models {

struct gp_prior {
  double kappa_shape = 2, kappa_scale = 1;
  double psi_shape = 2, psi_scale = 1;
  double phi_lower = 0.01, phi_upper = 5;
};

class gp_evaluator : public mcmc::batch_evaluator {
 public:
  /** `lik` is borrowed (it holds the data, on the device once used) and
   *  must outlive the evaluator; beta has lik.p() values. */
  gp_evaluator(batched::gp_loglik& lik, std::vector<double> beta,
               batched::covariance cov, const gp_prior& prior, bool use_device)
      : lik_(lik), beta_(std::move(beta)), cov_(cov), prior_(prior),
        use_device_(use_device) {
    if (static_cast<int>(beta_.size()) != lik.p())
      throw invalid_argument("beta", "must have one value per column of `X`");
    auto positive = [](double v) { return v > 0 && std::isfinite(v); };
    if (!positive(prior.kappa_shape) || !positive(prior.kappa_scale) ||
        !positive(prior.psi_shape) || !positive(prior.psi_scale))
      throw invalid_argument("priors", "inverse-gamma shapes and scales must be positive");
    if (!(prior.phi_lower >= 0) || !(prior.phi_upper > prior.phi_lower) ||
        !std::isfinite(prior.phi_upper))
      throw invalid_argument("priors", "phi needs 0 <= lower < upper < Inf");
  }

  void operator()(const Eigen::MatrixXd& points, Eigen::VectorXd& out) override {
    if (points.cols() != 3)
      throw invalid_argument("init", "must have 3 columns: kappa, psi, phi");
    const int rows = static_cast<int>(points.rows());
    out.resize(rows);
    const double minus_inf = -std::numeric_limits<double>::infinity();
    // Points outside the prior's support are not sent to the likelihood.
    std::vector<int> inside;
    inside.reserve(static_cast<std::size_t>(rows));
    for (int r = 0; r < rows; ++r) {
      const double kappa = points(r, 0), psi = points(r, 1), phi = points(r, 2);
      const bool ok = kappa > 0 && psi > 0 && phi > prior_.phi_lower &&
                      phi < prior_.phi_upper && std::isfinite(kappa) && std::isfinite(psi);
      out[r] = ok ? log_prior(kappa, psi) : minus_inf;
      if (ok) inside.push_back(r);
    }
    if (inside.empty()) return;
    const int m = static_cast<int>(inside.size());
    Eigen::MatrixXd theta(m, 3);  // column-major rows x 3, as gp_loglik takes it
    for (int i = 0; i < m; ++i) theta.row(i) = points.row(inside[static_cast<std::size_t>(i)]);
    const std::vector<double> ll =
        lik_.evaluate(beta_.data(), theta.data(), m, cov_, use_device_);
    for (int i = 0; i < m; ++i) out[inside[static_cast<std::size_t>(i)]] += ll[static_cast<std::size_t>(i)];
  }

 private:
  // Inverse-gamma kernels up to constants (the uniform prior on phi is flat).
  double log_prior(double kappa, double psi) const {
    return -(prior_.kappa_shape + 1) * std::log(kappa) - prior_.kappa_scale / kappa -
           (prior_.psi_shape + 1) * std::log(psi) - prior_.psi_scale / psi;
  }

  batched::gp_loglik& lik_;
  std::vector<double> beta_;
  batched::covariance cov_;
  gp_prior prior_;
  bool use_device_;
};

}  // namespace models
}  // namespace clbayes

#endif
