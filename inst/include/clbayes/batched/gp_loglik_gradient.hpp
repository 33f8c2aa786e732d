#ifndef CLBAYES_BATCHED_GP_LOGLIK_GRADIENT_HPP
#define CLBAYES_BATCHED_GP_LOGLIK_GRADIENT_HPP

// The GP log-likelihood of batched::gp_loglik with its gradient in
// theta = (kappa, psi, phi), for every row of a batch, on the CPU (rows in
// parallel where OpenMP is on). With Sigma = kappa K(phi) + psi I,
// r = y - X beta, a = Sigma^-1 r and W = Sigma^-1,
//   d loglik / d theta_j = (a' dS_j a - tr(W dS_j)) / 2
//                        = sum_ik (a a' - W)_ik (dS_j)_ik / 2,
// with dS_kappa = K (1 on the diagonal), dS_psi = I, and dS_phi zero on the
// diagonal and off it Sigma_ik d_ik / phi^2 (exponential, K = exp(-d / phi))
// or Sigma_ik d_ik^2 / phi^3 (squared exponential, K = exp(-d^2 / (2 phi^2))).
// One Cholesky factor per row gives the value, a (two triangular solves)
// and W (cholesky_inverse_in_place, twice the factor's work); the sums are
// one O(n^2) pass over the lower triangles. A gradient costs about three
// densities (RESULTS.md, "GP gradient on the CPU").
//
// There is no device path: W needs a batched triangular inverse, which the
// batched routines do not have, so a device-resident model still computes
// its gradients here.

#include "../eigen.hpp"
#include "../linalg/cholesky_inverse_cpu.hpp"
#include "batch.hpp"
#include "gp_loglik.hpp"
#include "thread_scratch.hpp"

#include <cmath>
#include <limits>
#include <vector>

namespace clbayes {
namespace batched {

/** Log densities (`value`, rows) and gradients (`grad`, rows x 3) of the
 *  rows x 3 column-major theta; -Inf and a zero gradient outside the
 *  support or where Sigma is numerically singular, as in evaluate_cpu().
 *  `scratch` holds two matrices a thread (thread_scratch.hpp). */
inline void gp_loglik_gradient_cpu(const gp_loglik& lik, const double* beta,
                                   const double* theta, int rows, covariance cov,
                                   std::vector<double>& value, Eigen::MatrixXd& grad,
                                   thread_scratch& scratch) {
  lik.check_arguments(beta, theta, rows);
  const int n = lik.n();
  const Eigen::VectorXd r = lik.residual(beta);
  value.assign(static_cast<std::size_t>(rows), -std::numeric_limits<double>::infinity());
  grad = Eigen::MatrixXd::Zero(rows, 3);
  const bool exponential = cov == covariance::exponential;
  scratch.prepare();
  for_each_item(rows, std::pow(static_cast<double>(n), 3), [&](int g) {
    const double kappa = theta[g], psi = theta[rows + g], phi = theta[2 * rows + g];
    if (!gp_loglik::in_support(kappa, psi, phi)) return;
    Eigen::MatrixXd& S = scratch.get(0, n, n);
    Eigen::MatrixXd& sigma = scratch.get(1, n, n);
    lik.build_covariance(kappa, psi, phi, cov, S);
    sigma.triangularView<Eigen::Lower>() = S;
    double half_log_det = 0.0;
    if (!lik.factor(S, kappa, psi, half_log_det)) return;
    Eigen::VectorXd a = r;
    S.triangularView<Eigen::Lower>().solveInPlace(a);
    const double quad = a.squaredNorm();
    S.triangularView<Eigen::Lower>().transpose().solveInPlace(a);
    linalg::cholesky_inverse_in_place(S);  // S: lower triangle of W
    // diag: sum_i (a a' - W)_ii; off_*: sums over i > k of (a a' - W)_ik
    // Sigma_ik, and of that times d_ik (exponential) or d_ik^2.
    double diag = 0.0, off = 0.0, off_phi = 0.0;
    for (int k = 0; k < n; ++k) {
      diag += a[k] * a[k] - S(k, k);
      for (int i = k + 1; i < n; ++i) {
        const double e = (a[i] * a[k] - S(i, k)) * sigma(i, k);
        const double dd = lik.squared_distance(i, k);
        off += e;
        off_phi += e * (exponential ? std::sqrt(dd) : dd);
      }
    }
    value[g] = lik.log_density(half_log_det, quad);
    // the off-diagonal sums count each pair once: (i, k) and (k, i) halve
    // to one term
    grad(g, 0) = 0.5 * diag + off / kappa;
    grad(g, 1) = 0.5 * diag;
    grad(g, 2) = off_phi / (exponential ? phi * phi : phi * phi * phi);
  });
}

}  // namespace batched
}  // namespace clbayes

#endif
