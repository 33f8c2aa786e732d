#ifndef CLBAYES_GLM_GLM_BATCH_HPP
#define CLBAYES_GLM_GLM_BATCH_HPP

// The log-likelihood of P parameter vectors at once (every chain's point of
// one sampler step), reading x once per call: the linear predictors of all
// points are one product X B (n x P), the family's row math runs over that
// block, and the gradient is X' D with D the n x P derivatives d lp / d eta.
// For the four families with one linear predictor (normal_id,
// bernoulli_logit, poisson_log, neg_binomial_2_log); each point has its own
// scalar alpha and, where the family has one, its own sigma or phi.

#include "../eigen.hpp"
#include "../interrupt.hpp"
#include "family.hpp"
#include "glm_lp.hpp"
#include "row_math.hpp"

#include <algorithm>
#include <string>

namespace clbayes {
namespace glm {

/** P points of a scalar family. Pointers are borrowed, column-major. */
struct glm_batch_params {
  family fam = family::normal_id;
  int n_points = 0;              // P
  const double* alpha = nullptr; // P intercepts
  const double* beta = nullptr;  // k x P coefficients
  const double* extra = nullptr; // P values of sigma or phi; null otherwise
};

/** Values and gradients of each point (gradients only when asked for). */
struct glm_batch_result {
  Eigen::VectorXd value;    // P
  Eigen::VectorXd d_alpha;  // P
  Eigen::MatrixXd d_beta;   // k x P
  Eigen::VectorXd d_extra;  // P (sigma or phi); empty when the family has none
};

/** Whether the family has a batched form (one linear predictor). */
inline bool has_batched_form(family f) {
  return f != family::categorical_logit && f != family::ordered_logistic;
}

/** Shapes and values of a batch: errors name the argument and the point. */
inline void check_glm_batch(const glm_batch_params& p, int k) {
  if (!has_batched_form(p.fam))
    throw invalid_argument("family", "has no batched form: categorical_logit and "
                                     "ordered_logistic take one parameter vector a call");
  if (p.n_points < 1) throw invalid_argument("beta", "must have at least one column");
  const std::string extra = extra_name(p.fam);
  if (extra.empty() != (p.extra == nullptr))
    throw invalid_argument(extra.empty() ? "family" : extra,
                           extra.empty() ? "takes no sigma or phi" : "must be given");
  for (int j = 0; j < p.n_points; ++j) {
    const std::string col = " (column " + std::to_string(j + 1) + ")";
    if (!std::isfinite(p.alpha[j])) throw invalid_argument("alpha", "must be finite" + col);
    for (int i = 0; i < k; ++i)
      if (!std::isfinite(p.beta[static_cast<std::size_t>(j) * k + i]))
        throw invalid_argument("beta", "must be finite" + col);
    if (!extra.empty() && !(p.extra[j] > 0 && std::isfinite(p.extra[j])))
      throw invalid_argument(extra, "must be positive and finite" + col);
  }
}

/** The CPU path: blocks of rows small enough for the cache, each giving
 *  its share of every point's value and gradient while it is there. */
inline glm_batch_result glm_lp_batch_cpu(const double* x, const double* y, int n, int k,
                                         const glm_batch_params& p, bool gradient,
                                         bool propto) {
  const int P = p.n_points;
  Eigen::Map<const Eigen::MatrixXd> X(x, n, k);
  Eigen::Map<const Eigen::MatrixXd> B(p.beta, k, P);
  const bool has_extra = p.extra != nullptr;
  glm_batch_result res;
  res.value = Eigen::VectorXd::Zero(P);
  if (gradient) {
    res.d_alpha = Eigen::VectorXd::Zero(P);
    res.d_beta = Eigen::MatrixXd::Zero(k, P);
    if (has_extra) res.d_extra = Eigen::VectorXd::Zero(P);
  }
  const int rows = std::max(64, std::min(4096, 32768 / std::max(k + P, 1)));
  Eigen::MatrixXd eta(rows, P), d(rows, P);
  for (int i0 = 0, block = 0; i0 < n; i0 += rows, ++block) {
    if (block % 64 == 63) check_interrupt();
    const int m = std::min(rows, n - i0);
    auto Xb = X.middleRows(i0, m);
    if (!Xb.allFinite()) throw invalid_argument("x", "contains NA, NaN or infinite values");
    eta.topRows(m).noalias() = Xb * B;
    for (int j = 0; j < P; ++j) {
      const double a = p.alpha[j], ex = has_extra ? p.extra[j] : 0.0;
      double lp = 0, de = 0;
      for (int r = 0; r < m; ++r) {
        const double yi = y[i0 + r], e = eta(r, j) + a;
        math::row_value v;
        switch (p.fam) {
          case family::normal_id: v = math::normal_id(yi, e, ex, propto); break;
          case family::bernoulli_logit: v = math::bernoulli_logit(yi, e); break;
          case family::poisson_log: v = math::poisson_log(yi, e, propto); break;
          default: v = math::neg_binomial_2_log(yi, e, ex, propto);
        }
        lp += v.lp;
        d(r, j) = v.d_eta;
        de += v.d_extra;
      }
      res.value[j] += lp;
      if (gradient && has_extra) res.d_extra[j] += de;
    }
    if (!gradient) continue;
    res.d_alpha += d.topRows(m).colwise().sum().transpose();
    res.d_beta.noalias() += Xb.transpose() * d.topRows(m);
  }
  return res;
}

/**
 * Log-likelihoods (and gradients when `gradient`) of the P points of `p`
 * for the data `data`, on the device when `use_device`, else on the CPU.
 * Every argument is checked; errors name the argument.
 */
inline glm_batch_result glm_lp_batch(const glm_data& data, const glm_batch_params& p,
                                     bool gradient, bool propto, bool use_device) {
  check_glm_batch(p, data.k);
  glm_params one;  // the support of y is checked as for one point
  one.fam = p.fam;
  one.n_alpha = 1;
  one.n_extra = p.extra != nullptr ? 1 : 0;
  check_glm_y(one, data.ys, data.n);
  if (use_device)
    throw no_device("the batched GLM likelihood has no device path yet");
  if (data.x == nullptr && data.n > 0)
    throw invalid_argument("x", "has no host copy; use backend = \"opencl\"");
  return glm_lp_batch_cpu(data.x, data.y, data.n, data.k, p, gradient, propto);
}

}  // namespace glm
}  // namespace clbayes

#endif
