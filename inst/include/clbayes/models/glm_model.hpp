#ifndef CLBAYES_MODELS_GLM_MODEL_HPP
#define CLBAYES_MODELS_GLM_MODEL_HPP

// The posterior of a GLM: the likelihood of Stan's *_glm_lpmf with one
// independent prior per parameter (priors.hpp), and for a multilevel model
// group-level terms Z b in the linear predictor (group_effects.hpp). A point
// (one row of the batch) lays the parameters out as
//   [alpha (1, none without an intercept, C for categorical_logit, none for
//    ordered_logistic), beta (k, or k x C column-major; under the
//    regularised horseshoe its z, from which beta is made: horseshoe.hpp),
//    sigma | phi | cuts (K - 1), the horseshoe's block (global, local,
//    caux), the group-level block (z, then each term's covariance
//    parameters; multilevel models of the four scalar families only)].
// Outside the support (sigma or phi <= 0, cuts not increasing, a value not
// finite) the log density is -Inf. The four families with one linear
// predictor evaluate the whole batch in one glm_lp_batch call, one pass
// over x for all points, value and gradient together; categorical_logit
// and ordered_logistic have no batched form and take one glm_lp call a
// point. The data stay resident (on the device when asked) between calls.

#include <clbayes/glm/glm_batch.hpp>
#include <clbayes/glm/glm_lp.hpp>
#include <clbayes/mcmc/evaluator.hpp>
#include <clbayes/models/group_effects.hpp>
#include <clbayes/models/horseshoe.hpp>
#include <clbayes/models/priors.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace clbayes {
namespace models {

class glm_evaluator : public mcmc::fused_gradient_evaluator {
 public:
  /** @param n_categories C for categorical_logit, K for ordered_logistic,
   *  ignored otherwise. @param has_intercept whether the point holds alpha
   *  (families with one linear predictor; alpha = 0 otherwise;
   *  categorical_logit always has its C intercepts). `priors`
   *  has one prior per parameter. `data` is borrowed and must outlive the
   *  evaluator, as must the arrays `groups` points to. `hs`: the
   *  regularised horseshoe on the coefficients (families with one linear
   *  predictor; empty for none). */
  glm_evaluator(const glm::glm_data& data, glm::family fam, glm::link lk, int n_categories,
                bool has_intercept, prior_set priors, bool use_device,
                group_effects groups = {}, horseshoe hs = {})
      : data_(data), fam_(fam), lk_(lk), priors_(std::move(priors)), use_device_(use_device),
        groups_(std::move(groups)), hs_(hs) {
    const bool cat = fam == glm::family::categorical_logit;
    const bool ord = fam == glm::family::ordered_logistic;
    if ((cat || ord) && n_categories < 2)
      throw invalid_argument("y", "must have at least two categories");
    n_eta_ = cat ? n_categories : 1;
    n_alpha_ = cat ? n_categories : ((ord || !has_intercept) ? 0 : 1);
    const std::string extra = glm::extra_name(fam);
    n_extra_ = extra == "cuts" ? n_categories - 1 : (extra.empty() ? 0 : 1);
    if (!groups_.empty() && !glm::has_batched_form(fam))
      throw invalid_argument("family", "has no multilevel form: group-level terms are for "
                                       "the gaussian, binomial, poisson and negative "
                                       "binomial families");
    if (!hs_.empty()) {
      hs_.check();
      if (!glm::has_batched_form(fam))
        throw invalid_argument("prior", "hs() is for families with one linear predictor");
      if (hs_.k != data_.k)
        throw invalid_argument("prior", "hs() must cover every coefficient (" +
                                            std::to_string(data_.k) + "), not " +
                                            std::to_string(hs_.k));
      hs_.sigma_scaled = fam == glm::family::normal_id;
    }
    if (priors_.size() != dim())
      throw invalid_argument("prior", "must give one prior per parameter (" +
                                          std::to_string(dim()) + "), not " +
                                          std::to_string(priors_.size()));
  }

  /** Parameters per point. */
  int dim() const { return first_group() + groups_.dim(); }

  /** The coefficients beta (k) at each row of `points`: the point's own,
   *  or under the horseshoe those made from its z and block. */
  Eigen::MatrixXd coefficients(const Eigen::MatrixXd& points) const {
    const int k = data_.k * n_eta_;
    Eigen::MatrixXd out(points.rows(), k);
    Eigen::VectorXd theta, beta(k);
    for (Eigen::Index r = 0; r < points.rows(); ++r) {
      theta = points.row(r).transpose();
      beta_of(theta.data(), beta.data());
      out.row(r) = beta.transpose();
    }
    return out;
  }

  /** b and each term's Sigma (lower triangles) at each row of `points`:
   *  the multilevel model's reported quantities (rstanarm's b[...] and
   *  Sigma[...]). */
  Eigen::MatrixXd group_quantities(const Eigen::MatrixXd& points) const {
    const int q = groups_.size();
    Eigen::MatrixXd out(points.rows(), q + groups_.n_covariances());
    Eigen::VectorXd theta, row(out.cols());
    for (Eigen::Index r = 0; r < points.rows(); ++r) {
      theta = points.row(r).transpose();
      const double* block = theta.data() + first_group();
      groups_.effects(block, sigma_of(theta.data()), row.data());
      groups_.covariances(block, sigma_of(theta.data()), row.data() + q);
      out.row(r) = row.transpose();
    }
    return out;
  }

 private:
  void evaluate(const Eigen::MatrixXd& points, Eigen::VectorXd& out,
                Eigen::MatrixXd* grad) override {
    if (points.cols() != dim())
      throw invalid_argument("init", "must have " + std::to_string(dim()) +
                                         " columns, one per parameter of the model");
    const Eigen::Index n_points = points.rows();
    out = Eigen::VectorXd::Zero(n_points);
    if (grad != nullptr) *grad = Eigen::MatrixXd::Zero(n_points, dim());
    // One point per column, contiguous: a multilevel model's point holds
    // every group-level effect (workspaces keep their memory between calls).
    theta_ = points.transpose();
    std::vector<Eigen::Index> inside;
    for (Eigen::Index r = 0; r < n_points; ++r)
      if (in_support(theta_.col(r).data())) inside.push_back(r);
    priors_.add(points, out, grad);
    if (glm::has_batched_form(fam_)) {
      add_batched_likelihood(inside, out, grad);
    } else {
      for (Eigen::Index r : inside) add_one_likelihood(points, r, out, grad);
    }
    const double minus_inf = -std::numeric_limits<double>::infinity();
    std::vector<bool> is_inside(n_points, false);
    for (Eigen::Index r : inside) is_inside[r] = true;
    // A likelihood that overflows (NaN) is read as outside the support.
    for (Eigen::Index r = 0; r < n_points; ++r)
      if (!is_inside[r] || std::isnan(out[r])) {
        out[r] = minus_inf;
        if (grad != nullptr) grad->row(r).setZero();
      }
  }

  // The first parameter of the group-level block; the residual sd that
  // scales a gaussian model's group covariances (1 for other families).
  int first_hs() const { return n_alpha_ + data_.k * n_eta_ + n_extra_; }
  int first_group() const { return first_hs() + hs_.dim(); }
  double sigma_of(const double* theta) const { return group_scale(theta[n_alpha_ + data_.k]); }
  // The scale of the group covariances given the point's extra parameter.
  double group_scale(double extra) const {
    return fam_ == glm::family::normal_id ? extra : 1.0;
  }

  // beta of the point `theta` (its own, or made by the horseshoe).
  void beta_of(const double* theta, double* beta) const {
    const int k = data_.k * n_eta_;
    if (hs_.empty()) {
      for (int j = 0; j < k; ++j) beta[j] = theta[n_alpha_ + j];
    } else {
      hs_.coefficients(theta + n_alpha_, theta + first_hs(), sigma_of(theta), beta);
    }
  }

  bool in_support(const double* theta) const {
    for (int j = 0; j < first_group(); ++j)
      if (!std::isfinite(theta[j])) return false;
    if (!hs_.in_support(theta + first_hs())) return false;
    if (!groups_.in_support(theta + first_group())) return false;
    const int first = n_alpha_ + data_.k * n_eta_;
    if (fam_ == glm::family::ordered_logistic) {
      for (int c = 1; c < n_extra_; ++c)
        if (!(theta[first + c] > theta[first + c - 1])) return false;
      return true;
    }
    return n_extra_ == 0 || theta[first] > 0;
  }

  // The likelihood of every point inside the support in one batch.
  // (the points are the columns of theta_)
  void add_batched_likelihood(const std::vector<Eigen::Index>& inside, Eigen::VectorXd& out,
                              Eigen::MatrixXd* grad) const {
    const int P = static_cast<int>(inside.size());
    if (P == 0) return;
    const int k = data_.k;
    Eigen::VectorXd alpha = Eigen::VectorXd::Zero(P), extra(P);
    Eigen::MatrixXd beta(k, P);
    for (int j = 0; j < P; ++j) {
      const double* theta = theta_.col(inside[j]).data();
      if (n_alpha_ == 1) alpha[j] = theta[0];
      beta_of(theta, beta.col(j).data());
      if (n_extra_ == 1) extra[j] = theta[n_alpha_ + k];
    }
    glm::glm_batch_params p;
    p.fam = fam_;
    p.lk = lk_;
    p.n_points = P;
    p.alpha = alpha.data();
    p.beta = beta.data();
    p.extra = n_extra_ == 1 ? extra.data() : nullptr;
    // The group-level effects of each point, and its block of parameters.
    const bool gaussian = fam_ == glm::family::normal_id;
    if (!groups_.empty()) {
      b_.resize(groups_.size(), P);
      for (int j = 0; j < P; ++j)
        groups_.effects(theta_.col(inside[j]).data() + first_group(), group_scale(extra[j]),
                        b_.col(j).data());
      p.groups = &groups_.terms();
      p.b = b_.data();
    }
    // Without predictors (k = 0) there is no x to read: the host does it.
    const glm::glm_batch_result res =
        glm::glm_lp_batch(data_, p, grad != nullptr, true, use_device_ && k > 0);
    if (grad != nullptr && !groups_.empty()) d_block_.setZero(groups_.dim(), P);
    for (int j = 0; j < P; ++j) {
      const Eigen::Index r = inside[j];
      out[r] += res.value[j];
      if (grad == nullptr) continue;
      if (n_alpha_ == 1) (*grad)(r, 0) += res.d_alpha[j];
      double d_extra = n_extra_ == 1 ? res.d_extra[j] : 0.0;
      if (hs_.empty()) {
        grad->row(r).segment(n_alpha_, k) += res.d_beta.col(j).transpose();
      } else {
        const double* theta = theta_.col(r).data();
        d_z_.setZero(k);
        d_hs_.setZero(hs_.dim());
        hs_.chain_rule(theta + n_alpha_, theta + first_hs(), sigma_of(theta),
                       res.d_beta.col(j).data(), d_z_.data(), d_hs_.data(),
                       n_extra_ == 1 ? &d_extra : nullptr);
        grad->row(r).segment(n_alpha_, k) += d_z_.transpose();
        grad->row(r).segment(first_hs(), hs_.dim()) += d_hs_.transpose();
      }
      if (!groups_.empty())
        groups_.chain_rule(theta_.col(r).data() + first_group(), group_scale(extra[j]),
                           res.d_b.col(j).data(), d_block_.col(j).data(),
                           gaussian ? &d_extra : nullptr);
      if (n_extra_ == 1) (*grad)(r, n_alpha_ + k) += d_extra;
    }
    if (grad == nullptr || groups_.empty()) return;
    // the group-level block's gradients, one transposed pass
    if (P == grad->rows()) {
      grad->middleCols(first_group(), groups_.dim()) += d_block_.transpose();
    } else {
      for (int j = 0; j < P; ++j)
        grad->row(inside[j]).segment(first_group(), groups_.dim()) += d_block_.col(j).transpose();
    }
  }


  // One point of a family without a batched form.
  void add_one_likelihood(const Eigen::MatrixXd& points, Eigen::Index r, Eigen::VectorXd& out,
                          Eigen::MatrixXd* grad) const {
    const Eigen::VectorXd theta = points.row(r).transpose();
    glm::glm_params p;
    p.fam = fam_;
    p.lk = lk_;
    p.alpha = theta.data();
    p.n_alpha = n_alpha_;
    p.beta = theta.data() + n_alpha_;
    p.n_eta = n_eta_;
    p.extra = theta.data() + n_alpha_ + data_.k * n_eta_;
    p.n_extra = n_extra_;
    const glm::glm_result res = glm::glm_lp(data_, p, grad != nullptr, true, use_device_);
    out[r] += res.value;
    if (grad == nullptr) return;
    int c = 0;
    for (double g : res.d_alpha) (*grad)(r, c++) += g;
    for (double g : res.d_beta) (*grad)(r, c++) += g;
    for (double g : res.d_extra) (*grad)(r, c++) += g;
  }

  const glm::glm_data& data_;
  glm::family fam_;
  glm::link lk_;
  prior_set priors_;
  bool use_device_;
  group_effects groups_;
  horseshoe hs_;
  // Workspaces, kept between calls: the points as columns, the group-level
  // effects b and their block's gradients (dim x P each for a multilevel
  // model with 10^4 groups: 2.5 MB that would otherwise be mapped afresh).
  mutable Eigen::MatrixXd theta_, b_, d_block_;
  mutable Eigen::VectorXd d_z_, d_hs_;
  int n_alpha_ = 0;
  int n_eta_ = 1;
  int n_extra_ = 0;
};

}  // namespace models
}  // namespace clbayes

#endif
