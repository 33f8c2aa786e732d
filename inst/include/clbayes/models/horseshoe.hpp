#ifndef CLBAYES_MODELS_HORSESHOE_HPP
#define CLBAYES_MODELS_HORSESHOE_HPP

// The regularised horseshoe prior on a GLM's coefficients (Piironen and
// Vehtari 2017, "Sparsity information and regularization in the horseshoe
// and other shrinkage priors"), parameterised as rstanarm's hs() does it
// (hs_prior() in its common_functions.stan, priors in priors_glm.stan):
//   beta_j = z_j * tau * lambda_tilde_j,
//   lambda_j = local1_j * sqrt(local2_j),
//   tau = global1 * sqrt(global2) * global_scale * (sigma, gaussian; else 1),
//   lambda_tilde_j = sqrt(c2 lambda_j^2 / (c2 + tau^2 lambda_j^2)),
//   c2 = slab_scale^2 * caux,
// with z_j ~ N(0, 1), local1_j, global1 ~ N+(0, 1), local2_j ~
// inv_gamma(df / 2, df / 2), global2 ~ inv_gamma(global_df / 2,
// global_df / 2), caux ~ inv_gamma(slab_df / 2, slab_df / 2): the priors
// are rows of the model's prior_set; this file holds the transform and its
// chain rule. The block of a point is
//   [global1, global2, local1 (k), local2 (k), caux].

#include <clbayes/error.hpp>

#include <cmath>

namespace clbayes {
namespace models {

struct horseshoe {
  int k = 0;  ///< coefficients under the prior (0: none)
  double global_scale = 0.01;
  double slab_scale = 2.5;
  bool sigma_scaled = false;  ///< tau scaled by sigma (gaussian models)

  bool empty() const { return k == 0; }
  /** Parameters of the block. */
  int dim() const { return k == 0 ? 0 : 2 * k + 3; }

  void check() const {
    if (k < 0) throw invalid_argument("prior", "hs(): the number of coefficients is negative");
    if (!(global_scale > 0) || !std::isfinite(global_scale))
      throw invalid_argument("prior", "hs(): `global_scale` must be positive and finite");
    if (!(slab_scale > 0) || !std::isfinite(slab_scale))
      throw invalid_argument("prior", "hs(): `slab_scale` must be positive and finite");
  }

  /** Every parameter of the block positive and finite. */
  bool in_support(const double* block) const {
    for (int j = 0; j < dim(); ++j)
      if (!(block[j] > 0) || !std::isfinite(block[j])) return false;
    return true;
  }

  /** beta (k) from z (k), the block and sigma (ignored unless
   *  sigma_scaled). */
  void coefficients(const double* z, const double* block, double sigma, double* beta) const {
    const double tau = tau_of(block, sigma), c2 = c2_of(block);
    for (int j = 0; j < k; ++j) {
      const double u = lambda2(block, j);
      beta[j] = z[j] * tau * std::sqrt(c2 * u / (c2 + tau * tau * u));
    }
  }

  /** Given d_beta, the derivative of a function of beta, adds its
   *  derivatives in z to `d_z`, in the block to `d_block` and, when
   *  sigma_scaled and `d_sigma` is not null, in sigma to `*d_sigma`. With
   *  f_j = beta_j / z_j and a_j = c2 / (c2 + tau^2 lambda_j^2):
   *  d log f_j / d log tau = d log f_j / d log lambda_j = a_j and
   *  d log f_j / d log c2 = (1 - a_j) / 2. */
  void chain_rule(const double* z, const double* block, double sigma, const double* d_beta,
                  double* d_z, double* d_block, double* d_sigma) const {
    const double tau = tau_of(block, sigma), c2 = c2_of(block);
    double d_log_tau = 0, d_log_c2 = 0;
    for (int j = 0; j < k; ++j) {
      const double u = lambda2(block, j);
      const double q = c2 + tau * tau * u;
      const double f = tau * std::sqrt(c2 * u / q);
      const double a = c2 / q;
      d_z[j] += d_beta[j] * f;
      const double h = d_beta[j] * z[j] * f;  // d / d log f_j
      d_log_tau += h * a;
      d_log_c2 += h * 0.5 * (1 - a);
      d_block[2 + j] += h * a / block[2 + j];                // local1: lambda linear
      d_block[2 + k + j] += h * 0.5 * a / block[2 + k + j];  // local2: lambda ~ sqrt
    }
    d_block[0] += d_log_tau / block[0];
    d_block[1] += 0.5 * d_log_tau / block[1];
    d_block[2 + 2 * k] += d_log_c2 / block[2 + 2 * k];
    if (sigma_scaled && d_sigma != nullptr) *d_sigma += d_log_tau / sigma;
  }

 private:
  double tau_of(const double* block, double sigma) const {
    return block[0] * std::sqrt(block[1]) * global_scale * (sigma_scaled ? sigma : 1.0);
  }
  double c2_of(const double* block) const { return slab_scale * slab_scale * block[2 + 2 * k]; }
  double lambda2(const double* block, int j) const {
    return block[2 + j] * block[2 + j] * block[2 + k + j];
  }
};

}  // namespace models
}  // namespace clbayes

#endif
