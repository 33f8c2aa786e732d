// The models' glue: the evaluator behind a sampler's target (an R
// function of a matrix of points, or a model object made by R/models.R),
// shared by the samplers' glue, and model_log_density().

#include "glue_models.hpp"
#include "glue_priors.hpp"

#include <clbayes/eigen.hpp>
#include <clbayes/models/glm_model.hpp>
#include <clbayes/models/gp_model.hpp>
#include <clbayes/models/lm_model.hpp>

#include <algorithm>
#include <memory>

namespace {

namespace cm = clbayes::mcmc;
namespace cmod = clbayes::models;

// An R function of a points matrix (one point per row), and optionally an R
// function giving the gradients at the same points (a matrix of the same
// shape). The R wrappers built by the samplers check what they return.
// Rcpp::Function evaluates them under R_UnwindProtect, so an R error
// unwinds these frames as a C++ exception and then continues as the same R
// error.
class r_function_evaluator : public cm::batch_evaluator {
 public:
  r_function_evaluator(SEXP f, SEXP grad)
      : f_(f), grad_(Rf_isFunction(grad) ? grad : f), has_grad_(Rf_isFunction(grad)) {}

  void operator()(const Eigen::MatrixXd& points, Eigen::VectorXd& out) override {
    Rcpp::NumericVector v = f_(to_r(points));
    out = Eigen::Map<const Eigen::VectorXd>(v.begin(), v.size());
  }

  bool has_gradient() const override { return has_grad_; }

  void gradient(const Eigen::MatrixXd& points, Eigen::VectorXd& out,
                Eigen::MatrixXd& grad) override {
    if (!has_grad_) cm::batch_evaluator::gradient(points, out, grad);
    Rcpp::NumericMatrix m = to_r(points);
    Rcpp::NumericVector v = f_(m);
    out = Eigen::Map<const Eigen::VectorXd>(v.begin(), v.size());
    Rcpp::NumericMatrix g = grad_(m);
    grad = Eigen::Map<const Eigen::MatrixXd>(g.begin(), g.nrow(), g.ncol());
  }

 private:
  Rcpp::Function f_, grad_;
  bool has_grad_;

  static Rcpp::NumericMatrix to_r(const Eigen::MatrixXd& points) {
    Rcpp::NumericMatrix m(static_cast<int>(points.rows()), static_cast<int>(points.cols()));
    std::copy(points.data(), points.data() + points.size(), m.begin());
    return m;
  }
};

// The group-level terms of a multilevel glm_model (R/multilevel.R:
// `groups`, a list with `terms` and `covariance`, one entry per term), or
// none for a model without them. The arrays stay R's, borrowed for the
// evaluator's life.
cmod::group_effects as_group_effects(Rcpp::List model, int n_rows) {
  if (!model.containsElementNamed("groups") || Rf_isNull(model["groups"])) return {};
  Rcpp::List groups = model["groups"];
  Rcpp::List terms = groups["terms"], cov = groups["covariance"];
  clbayes::glm::group_terms z;
  std::vector<cmod::term_covariance> covs;
  for (R_xlen_t t = 0; t < terms.size(); ++t) {
    Rcpp::List term = terms[t], c = cov[t];
    // Borrowed, so never a converted copy that would die with this frame.
    if (TYPEOF(term["level"]) != INTSXP || TYPEOF(term["z"]) != REALSXP)
      throw clbayes::invalid_argument("model", "has group-level terms of the wrong type");
    Rcpp::IntegerVector level = term["level"];
    Rcpp::NumericMatrix zt = term["z"];
    const std::string name = Rcpp::as<std::string>(term["name"]);
    if (level.size() != n_rows || zt.nrow() != n_rows)
      throw clbayes::invalid_argument(name, "must have one row per row of the model's data");
    z.add(zt.ncol(), Rcpp::as<int>(term["n_levels"]), level.begin(), zt.begin(), n_rows, name);
    cmod::term_covariance tc;
    tc.prior = Rcpp::as<std::string>(c["prior"]) == "lkj" ? cmod::covariance_prior::lkj
                                                           : cmod::covariance_prior::decov;
    tc.p = zt.ncol();
    tc.scale = Rcpp::as<double>(c["scale"]);
    tc.dispersion = Rcpp::as<bool>(c["dispersion"]);
    covs.push_back(tc);
  }
  return cmod::group_effects(std::move(z), std::move(covs));
}

// The evaluator of a glm_model (with or without group-level terms).
std::unique_ptr<cmod::glm_evaluator> make_glm_evaluator(Rcpp::List model) {
  Rcpp::List data = model["data"];
  const bool use_device = Rcpp::as<bool>(model["use_device"]);
#ifndef CLBAYES_OPENCL
  if (use_device) glue::stop_no_opencl();
#endif
  const clbayes::glm::glm_data& d = glue::as_glm_data(data["ptr"]);
  const clbayes::glm::family fam =
      clbayes::glm::parse_family(Rcpp::as<std::string>(model["family"]));
  const std::string link = model.containsElementNamed("link")
                               ? Rcpp::as<std::string>(model["link"]) : std::string();
  return std::unique_ptr<cmod::glm_evaluator>(new cmod::glm_evaluator(
      d, fam, clbayes::glm::parse_link(fam, link),
      Rcpp::as<int>(model["n_categories"]), Rcpp::as<bool>(model["has_intercept"]),
      glue::as_prior_set(model["priors"]), use_device, as_group_effects(model, d.n),
      glue::as_horseshoe(model)));
}

}  // namespace

namespace glue {

// The evaluator for a target: an R function (with `gradient`, an R function
// or NULL) or a model object.
std::unique_ptr<cm::batch_evaluator> make_evaluator(SEXP target, SEXP gradient) {
  if (Rf_isFunction(target))
    return std::unique_ptr<cm::batch_evaluator>(new r_function_evaluator(target, gradient));
  Rcpp::List model(target);
  Rcpp::CharacterVector cls = model.attr("class");
  if (std::find(cls.begin(), cls.end(), "clbayes_lm_model") != cls.end()) {
    Rcpp::NumericMatrix X = model["X"];
    Rcpp::NumericVector y = model["y"];
    return std::unique_ptr<cm::batch_evaluator>(new cmod::lm_evaluator(
        Eigen::Map<const Eigen::MatrixXd>(X.begin(), X.nrow(), X.ncol()),
        Eigen::Map<const Eigen::VectorXd>(y.begin(), y.size())));
  }
  if (std::find(cls.begin(), cls.end(), "clbayes_glm_model") != cls.end())
    return make_glm_evaluator(model);
  if (std::find(cls.begin(), cls.end(), "clbayes_gp_model") != cls.end()) {
    Rcpp::List data = model["data"];
    Rcpp::List prior = model["priors"];
    Rcpp::NumericVector kappa = prior["kappa"], psi = prior["psi"], phi = prior["phi"];
    cmod::gp_prior pr;
    pr.kappa_shape = kappa[0];
    pr.kappa_scale = kappa[1];
    pr.psi_shape = psi[0];
    pr.psi_scale = psi[1];
    pr.phi_lower = phi[0];
    pr.phi_upper = phi[1];
    const bool use_device = Rcpp::as<bool>(model["use_device"]);
#ifndef CLBAYES_OPENCL
    if (use_device) glue::stop_no_opencl();
#endif
    Rcpp::NumericVector beta = model["beta"];
    const std::string cov = Rcpp::as<std::string>(model["cov"]);
    return std::unique_ptr<cm::batch_evaluator>(new cmod::gp_evaluator(
        glue::as_gp_loglik(data["ptr"], "data"), std::vector<double>(beta.begin(), beta.end()),
        cov == "exponential" ? clbayes::batched::covariance::exponential
                             : clbayes::batched::covariance::squared_exponential,
        pr, use_device));
  }
  throw clbayes::invalid_argument("log_density", "must be a function or a clbayes model");
}

}  // namespace glue

// Log densities of a model object at the rows of `points` (internal: tests
// and model_log_density()).
// [[Rcpp::export(.cpp_model_log_density)]]
Rcpp::NumericVector cpp_model_log_density(SEXP model, Rcpp::NumericMatrix points) {
  std::unique_ptr<cm::batch_evaluator> f = glue::make_evaluator(model);
  Eigen::VectorXd out;
  (*f)(Eigen::Map<const Eigen::MatrixXd>(points.begin(), points.nrow(), points.ncol()), out);
  return Rcpp::NumericVector(out.data(), out.data() + out.size());
}

// The group-level effects b and each term's Sigma (lower triangles) at the
// rows of `points` of a multilevel glm_model (internal: the fit's reported
// variables, R/multilevel.R).
// [[Rcpp::export(.cpp_model_group_quantities)]]
Rcpp::NumericMatrix cpp_model_group_quantities(Rcpp::List model, Rcpp::NumericMatrix points) {
  std::unique_ptr<cmod::glm_evaluator> f = make_glm_evaluator(model);
  const Eigen::MatrixXd out = f->group_quantities(
      Eigen::Map<const Eigen::MatrixXd>(points.begin(), points.nrow(), points.ncol()));
  Rcpp::NumericMatrix m(static_cast<int>(out.rows()), static_cast<int>(out.cols()));
  std::copy(out.data(), out.data() + out.size(), m.begin());
  return m;
}

// The coefficients beta at the rows of `points` of a glm_model (internal:
// under hs() the fit reports beta, made from the sampled z and the
// horseshoe's block; R/models.R: fixed_effect_draws()).
// [[Rcpp::export(.cpp_model_coefficients)]]
Rcpp::NumericMatrix cpp_model_coefficients(Rcpp::List model, Rcpp::NumericMatrix points) {
  std::unique_ptr<cmod::glm_evaluator> f = make_glm_evaluator(model);
  const Eigen::MatrixXd out = f->coefficients(
      Eigen::Map<const Eigen::MatrixXd>(points.begin(), points.nrow(), points.ncol()));
  Rcpp::NumericMatrix m(static_cast<int>(out.rows()), static_cast<int>(out.cols()));
  std::copy(out.data(), out.data() + out.size(), m.begin());
  return m;
}
