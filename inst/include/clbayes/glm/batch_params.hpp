#ifndef CLBAYES_GLM_BATCH_PARAMS_HPP
#define CLBAYES_GLM_BATCH_PARAMS_HPP

// What a batched GLM evaluation (glm/glm_batch.hpp) takes and returns: P
// parameter vectors of a family with one linear predictor, each with its
// own scalar alpha and, where the family has one, its own sigma or phi.

#include "../eigen.hpp"
#include "family.hpp"
#include "group_terms.hpp"

#include <cmath>
#include <string>

namespace clbayes {
namespace glm {

/** P points of a scalar family. Pointers are borrowed, column-major. */
struct glm_batch_params {
  family fam = family::normal_id;
  link lk = link::identity;      // one of info_of(fam).links
  int n_points = 0;              // P
  const double* alpha = nullptr; // P intercepts
  const double* beta = nullptr;  // k x P coefficients
  const double* extra = nullptr; // P values of sigma, phi, shape or lambda; null otherwise
  const group_terms* groups = nullptr;  // multilevel terms Z, or null
  const double* b = nullptr;     // q x P group effects (with groups)
};

/** Values and gradients of each point (gradients only when asked for). */
struct glm_batch_result {
  Eigen::VectorXd value;    // P
  Eigen::VectorXd d_alpha;  // P
  Eigen::MatrixXd d_beta;   // k x P
  Eigen::VectorXd d_extra;  // P (sigma or phi); empty when the family has none
  Eigen::MatrixXd d_b;      // q x P group effects; empty without groups
};

/** Whether the family has a batched form (one linear predictor). */
inline bool has_batched_form(family f) { return info_of(f).scalar; }

/** Shapes and values of a batch: errors name the argument and the column. */
inline void check_glm_batch(const glm_batch_params& p, int k) {
  if (!has_batched_form(p.fam))
    throw invalid_argument("family", "has no batched form: categorical_logit and "
                                     "ordered_logistic take one parameter vector per call");
  if (p.n_points < 1) throw invalid_argument("beta", "must have at least one column");
  const std::string extra = extra_name(p.fam);
  if (extra.empty() != (p.extra == nullptr))
    throw invalid_argument(extra.empty() ? "family" : extra,
                           extra.empty() ? "takes no sigma, phi, shape or lambda"
                                         : "must be given");
  if ((p.groups != nullptr) != (p.b != nullptr))
    throw invalid_argument("b", "must be given with the group terms, and only with them");
  for (int j = 0; j < p.n_points; ++j) {
    const std::string col = " (column " + std::to_string(j + 1) + ")";
    if (!std::isfinite(p.alpha[j])) throw invalid_argument("alpha", "must be finite" + col);
    for (int i = 0; i < k; ++i)
      if (!std::isfinite(p.beta[static_cast<std::size_t>(j) * k + i]))
        throw invalid_argument("beta", "must be finite" + col);
    if (!extra.empty() && !(p.extra[j] > 0 && std::isfinite(p.extra[j])))
      throw invalid_argument(extra, "must be positive and finite" + col);
    if (p.groups != nullptr)
      for (int i = 0; i < p.groups->size; ++i)
        if (!std::isfinite(p.b[static_cast<std::size_t>(j) * p.groups->size + i]))
          throw invalid_argument("b", "must be finite" + col);
  }
}

/** A zero result of the shape of P points with k coefficients. */
inline glm_batch_result zero_batch_result(const glm_batch_params& p, int k, bool gradient) {
  glm_batch_result res;
  res.value = Eigen::VectorXd::Zero(p.n_points);
  if (gradient) {
    res.d_alpha = Eigen::VectorXd::Zero(p.n_points);
    res.d_beta = Eigen::MatrixXd::Zero(k, p.n_points);
    if (p.extra != nullptr) res.d_extra = Eigen::VectorXd::Zero(p.n_points);
    if (p.groups != nullptr) res.d_b = Eigen::MatrixXd::Zero(p.groups->size, p.n_points);
  }
  return res;
}

}  // namespace glm
}  // namespace clbayes

#endif
