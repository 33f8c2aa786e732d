#ifndef CLBAYES_MODELS_GLM_MODEL_HPP
#define CLBAYES_MODELS_GLM_MODEL_HPP

// The posterior of a GLM for the slice sampler: the likelihood of
// glm::glm_lp (Stan's *_glm_lpmf) with independent priors
//   alpha, beta, cuts ~ normal(prior_mean, prior_sd),
//   sigma, phi        ~ exponential(prior_rate).
// A point (one row of the batch) lays the parameters out as
//   [alpha (1, or C for categorical_logit, none for ordered_logistic),
//    beta (k, or k x C column-major), sigma | phi | cuts (K - 1)].
// Outside the support (sigma or phi <= 0, cuts not increasing) the log
// density is -Inf. Each point is one glm_lp evaluation, on the device when
// asked, so the data stay resident between batches.

#include <clbayes/glm/glm_lp.hpp>
#include <clbayes/mcmc/evaluator.hpp>

#include <cmath>
#include <limits>

namespace clbayes {
namespace models {

struct glm_prior {
  double mean = 0;
  double sd = 10;
  double rate = 1;
};

class glm_evaluator : public mcmc::batch_evaluator {
 public:
  /** @param n_categories C for categorical_logit, K for ordered_logistic,
   *  ignored otherwise. `data` is borrowed and must outlive the evaluator. */
  glm_evaluator(const glm::glm_data& data, glm::family fam, int n_categories,
                const glm_prior& prior, bool use_device)
      : data_(data), fam_(fam), prior_(prior), use_device_(use_device) {
    const bool cat = fam == glm::family::categorical_logit;
    const bool ord = fam == glm::family::ordered_logistic;
    if ((cat || ord) && n_categories < 2)
      throw invalid_argument("y", "must have at least two categories");
    if (!(prior.sd > 0) || !std::isfinite(prior.sd))
      throw invalid_argument("prior", "sd must be positive and finite");
    if (!(prior.rate > 0) || !std::isfinite(prior.rate))
      throw invalid_argument("prior", "rate must be positive and finite");
    if (!std::isfinite(prior.mean)) throw invalid_argument("prior", "mean must be finite");
    n_eta_ = cat ? n_categories : 1;
    n_alpha_ = cat ? n_categories : (ord ? 0 : 1);
    const std::string extra = glm::extra_name(fam);
    n_extra_ = extra == "cuts" ? n_categories - 1 : (extra.empty() ? 0 : 1);
  }

  /** Parameters per point. */
  int dim() const { return n_alpha_ + data_.k * n_eta_ + n_extra_; }

  void operator()(const Eigen::MatrixXd& points, Eigen::VectorXd& out) override {
    if (points.cols() != dim())
      throw invalid_argument("init", "must have " + std::to_string(dim()) +
                                         " columns, one per parameter of the model");
    out.resize(points.rows());
    Eigen::VectorXd theta(dim());
    for (Eigen::Index r = 0; r < points.rows(); ++r) {
      theta = points.row(r).transpose();
      out[r] = log_density(theta.data());
    }
  }

 private:
  double log_density(const double* theta) const {
    const double minus_inf = -std::numeric_limits<double>::infinity();
    for (int i = 0; i < dim(); ++i)
      if (!std::isfinite(theta[i])) return minus_inf;
    const int n_coef = n_alpha_ + data_.k * n_eta_;
    const double* extra = theta + n_coef;
    const std::string extra_kind = glm::extra_name(fam_);
    double lp = 0;
    // normal prior on the coefficients (and cuts), exponential on scales
    for (int i = 0; i < n_coef; ++i) lp += normal_lpdf(theta[i]);
    if (extra_kind == "cuts") {
      for (int c = 0; c < n_extra_; ++c) {
        if (c > 0 && !(extra[c] > extra[c - 1])) return minus_inf;
        lp += normal_lpdf(extra[c]);
      }
    } else if (n_extra_ == 1) {
      if (!(extra[0] > 0)) return minus_inf;
      lp += std::log(prior_.rate) - prior_.rate * extra[0];
    }
    glm::glm_params p;
    p.fam = fam_;
    p.alpha = theta;
    p.n_alpha = n_alpha_;
    p.beta = theta + n_alpha_;
    p.n_eta = n_eta_;
    p.extra = extra;
    p.n_extra = n_extra_;
    const double ll = glm::glm_lp(data_, p, false, true, use_device_).value;
    return std::isnan(ll) ? minus_inf : lp + ll;
  }

  double normal_lpdf(double v) const {
    const double z = (v - prior_.mean) / prior_.sd;
    return -0.5 * z * z - std::log(prior_.sd) - 0.9189385332046727;  // log sqrt(2 pi)
  }

  const glm::glm_data& data_;
  glm::family fam_;
  glm_prior prior_;
  bool use_device_;
  int n_alpha_ = 0;
  int n_eta_ = 1;
  int n_extra_ = 0;
};

}  // namespace models
}  // namespace clbayes

#endif
