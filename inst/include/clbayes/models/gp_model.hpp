#ifndef CLBAYES_MODELS_GP_MODEL_HPP
#define CLBAYES_MODELS_GP_MODEL_HPP

// The Gaussian-process model of parallel-slice.txt, Examples 2 and 3:
// y ~ N(X beta, Sigma(kappa, psi, phi)) with the covariance of
// batched::gp_loglik, beta fixed (the R side passes its GLS estimate), and
// the paper's priors
//   kappa, psi ~ inverse-gamma(shape a, scale b),  phi ~ uniform(lower, upper),
// so that, as in the paper's equation (1), the target of (kappa, psi, phi) is
//   |Sigma|^-1/2 exp(-r' Sigma^-1 r / 2) kappa^-(a+1) e^(-b/kappa) psi^-(a+1) e^(-b/psi).
// A batch of points is one launch of the fused likelihood kernel: build,
// factor, solve and reduce for every point at once (Section 4.1.2). The
// gradient samplers' batches go to gp_loglik_gradient_cpu (value and
// gradient from one Cholesky factor per point), on the CPU.

#include <clbayes/batched/gp_loglik.hpp>
#include <clbayes/batched/gp_loglik_gradient.hpp>
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

class gp_evaluator : public mcmc::fused_gradient_evaluator {
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

 private:
  /** Values, and gradients on the CPU whatever use_device says
   *  (batched/gp_loglik_gradient.hpp has no device path). */
  void evaluate(const Eigen::MatrixXd& points, Eigen::VectorXd& out,
                Eigen::MatrixXd* grad) override {
    if (points.cols() != 3)
      throw invalid_argument("init", "must have 3 columns: kappa, psi, phi");
    const int rows = static_cast<int>(points.rows());
    out.resize(rows);
    if (grad != nullptr) *grad = Eigen::MatrixXd::Zero(rows, 3);
    const double minus_inf = -std::numeric_limits<double>::infinity();
    // Points outside the prior's support are not sent to the likelihood.
    std::vector<int> inside;
    inside.reserve(static_cast<std::size_t>(rows));
    for (int r = 0; r < rows; ++r) {
      const double kappa = points(r, 0), psi = points(r, 1), phi = points(r, 2);
      const bool ok = kappa > 0 && psi > 0 && phi > prior_.phi_lower &&
                      phi < prior_.phi_upper && std::isfinite(kappa) && std::isfinite(psi);
      out[r] = ok ? log_prior(kappa, psi) : minus_inf;
      if (!ok) continue;
      inside.push_back(r);
      if (grad == nullptr) continue;
      (*grad)(r, 0) = d_log_prior(kappa, prior_.kappa_shape, prior_.kappa_scale);
      (*grad)(r, 1) = d_log_prior(psi, prior_.psi_shape, prior_.psi_scale);
    }
    if (inside.empty()) return;
    const int m = static_cast<int>(inside.size());
    Eigen::MatrixXd theta(m, 3);  // column-major rows x 3, as gp_loglik takes it
    for (int i = 0; i < m; ++i) theta.row(i) = points.row(inside[static_cast<std::size_t>(i)]);
    std::vector<double> ll;
    Eigen::MatrixXd d_ll;
    if (grad == nullptr)
      ll = lik_.evaluate(beta_.data(), theta.data(), m, cov_, use_device_, &scratch_);
    else
      batched::gp_loglik_gradient_cpu(lik_, beta_.data(), theta.data(), m, cov_, ll, d_ll,
                                      scratch_);
    for (int i = 0; i < m; ++i) {
      const int r = inside[static_cast<std::size_t>(i)];
      out[r] += ll[static_cast<std::size_t>(i)];
      if (grad == nullptr) continue;
      if (std::isfinite(out[r]))
        grad->row(r) += d_ll.row(i);
      else
        grad->row(r).setZero();
    }
  }

  // Inverse-gamma kernels up to constants (the uniform prior on phi is flat).
  double log_prior(double kappa, double psi) const {
    return -(prior_.kappa_shape + 1) * std::log(kappa) - prior_.kappa_scale / kappa -
           (prior_.psi_shape + 1) * std::log(psi) - prior_.psi_scale / psi;
  }

  // d/dx of -(shape + 1) log x - scale / x.
  static double d_log_prior(double x, double shape, double scale) {
    return (scale / x - (shape + 1)) / x;
  }

  batched::gp_loglik& lik_;
  std::vector<double> beta_;
  batched::covariance cov_;
  gp_prior prior_;
  bool use_device_;
  // The CPU paths' n x n matrices, kept for the evaluator's life (a
  // sampler's run) so that its thousands of calls map them once.
  batched::thread_scratch scratch_{2};
};

}  // namespace models
}  // namespace clbayes

#endif
