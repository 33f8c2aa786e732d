// Glue for slice_sample_mv (R/slice.R): the sampler of
// inst/include/clbayes/slice lives behind an external pointer so that R can
// run it in pieces (progress bar, interrupts between pieces); the target is
// an R function (called back once per batch) or a built-in model.

#include "glue_models.hpp"

#include <clbayes/eigen.hpp>
#include <clbayes/slice/glm_model.hpp>
#include <clbayes/slice/gp_model.hpp>
#include <clbayes/slice/lm_model.hpp>
#include <clbayes/slice/sampler.hpp>

#include <algorithm>
#include <cmath>
#include <memory>

namespace {

namespace cs = clbayes::slice;

// An R function of a points matrix (one point per row). The R wrapper built
// by slice_sample_mv() checks what it returns. Rcpp::Function evaluates it
// under R_UnwindProtect, so an R error unwinds these frames as a C++
// exception and then continues as the same R error.
class r_function_evaluator : public cs::batch_evaluator {
 public:
  explicit r_function_evaluator(SEXP f) : f_(f) {}
  void operator()(const Eigen::MatrixXd& points, Eigen::VectorXd& out) override {
    Rcpp::NumericMatrix m(static_cast<int>(points.rows()),
                          static_cast<int>(points.cols()));
    std::copy(points.data(), points.data() + points.size(), m.begin());
    Rcpp::NumericVector v = f_(m);
    out = Eigen::Map<const Eigen::VectorXd>(v.begin(), v.size());
  }

 private:
  Rcpp::Function f_;
};

// The evaluator for a target: an R function or a model object.
std::unique_ptr<cs::batch_evaluator> make_evaluator(SEXP target) {
  if (Rf_isFunction(target))
    return std::unique_ptr<cs::batch_evaluator>(new r_function_evaluator(target));
  Rcpp::List model(target);
  Rcpp::CharacterVector cls = model.attr("class");
  if (std::find(cls.begin(), cls.end(), "clbayes_lm_model") != cls.end()) {
    Rcpp::NumericMatrix X = model["X"];
    Rcpp::NumericVector y = model["y"];
    return std::unique_ptr<cs::batch_evaluator>(new cs::lm_evaluator(
        Eigen::Map<const Eigen::MatrixXd>(X.begin(), X.nrow(), X.ncol()),
        Eigen::Map<const Eigen::VectorXd>(y.begin(), y.size())));
  }
  if (std::find(cls.begin(), cls.end(), "clbayes_glm_model") != cls.end()) {
    Rcpp::List data = model["data"];
    Rcpp::List prior = model["prior"];
    cs::glm_prior pr;
    pr.mean = Rcpp::as<double>(prior["mean"]);
    pr.sd = Rcpp::as<double>(prior["sd"]);
    pr.rate = Rcpp::as<double>(prior["rate"]);
    const bool use_device = Rcpp::as<bool>(model["use_device"]);
#ifndef CLBAYES_OPENCL
    if (use_device) glue::stop_no_opencl();
#endif
    return std::unique_ptr<cs::batch_evaluator>(new cs::glm_evaluator(
        glue::as_glm_data(data["ptr"]),
        clbayes::glm::parse_family(Rcpp::as<std::string>(model["family"])),
        Rcpp::as<int>(model["n_categories"]), pr, use_device));
  }
  if (std::find(cls.begin(), cls.end(), "clbayes_gp_model") != cls.end()) {
    Rcpp::List data = model["data"];
    Rcpp::List prior = model["priors"];
    Rcpp::NumericVector kappa = prior["kappa"], psi = prior["psi"], phi = prior["phi"];
    cs::gp_prior pr;
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
    return std::unique_ptr<cs::batch_evaluator>(new cs::gp_evaluator(
        glue::as_gp_loglik(data["ptr"], "data"), std::vector<double>(beta.begin(), beta.end()),
        cov == "exponential" ? clbayes::batched::covariance::exponential
                             : clbayes::batched::covariance::squared_exponential,
        pr, use_device));
  }
  throw clbayes::invalid_argument("log_density", "must be a function or a clbayes model");
}

cs::sampler& as_sampler(SEXP ptr) {
  cs::sampler* s = static_cast<cs::sampler*>(R_ExternalPtrAddr(ptr));
  if (s == nullptr) Rcpp::stop("invalid slice sampler state");
  return *s;
}

}  // namespace

// [[Rcpp::export(.cpp_slice_new)]]
SEXP cpp_slice_new(Rcpp::NumericMatrix init, Rcpp::NumericVector width,
                   Rcpp::NumericVector lower, Rcpp::NumericVector upper,
                   std::string method, std::string stepout, std::string metric,
                   int n_proposals, int warmup, int n_iter, int max_steps,
                   double seed) {
  cs::options opt;
  opt.method = cs::parse_method(method);
  opt.stepout = cs::parse_stepout(stepout);
  opt.metric = cs::parse_metric(metric);
  opt.n_proposals = n_proposals;
  opt.warmup = warmup;
  opt.n_iter = n_iter;
  opt.max_steps = max_steps;
  if (!(seed >= 0) || seed >= 9007199254740992.0 || std::floor(seed) != seed)
    throw clbayes::invalid_argument("seed", "must be a whole number in [0, 2^53)");
  opt.seed = static_cast<std::uint64_t>(seed);
  Rcpp::XPtr<cs::sampler> ptr(
      new cs::sampler(
          Eigen::Map<const Eigen::MatrixXd>(init.begin(), init.nrow(), init.ncol()),
          Eigen::Map<const Eigen::VectorXd>(width.begin(), width.size()), opt,
          cs::support(Eigen::Map<const Eigen::VectorXd>(lower.begin(), lower.size()),
                      Eigen::Map<const Eigen::VectorXd>(upper.begin(), upper.size()))),
      true);
  return ptr;
}

// [[Rcpp::export(.cpp_slice_start)]]
void cpp_slice_start(SEXP ptr, SEXP target) {
  std::unique_ptr<cs::batch_evaluator> f = make_evaluator(target);
  as_sampler(ptr).start(*f);
}

// [[Rcpp::export(.cpp_slice_run)]]
int cpp_slice_run(SEXP ptr, SEXP target, int iterations) {
  std::unique_ptr<cs::batch_evaluator> f = make_evaluator(target);
  return as_sampler(ptr).run(*f, iterations);
}

// [[Rcpp::export(.cpp_slice_result)]]
Rcpp::List cpp_slice_result(SEXP ptr) {
  const cs::sampler& s = as_sampler(ptr);
  const cs::options& o = s.opts();
  Rcpp::NumericVector draws(s.draws().begin(), s.draws().end());
  draws.attr("dim") = Rcpp::IntegerVector::create(o.n_iter, s.chains(), s.dim());
  Rcpp::NumericMatrix scale(s.dim(), s.dim());
  std::copy(s.metric().scale().data(), s.metric().scale().data() + s.dim() * s.dim(),
            scale.begin());
  Rcpp::NumericVector warm(s.warmup_draws().begin(), s.warmup_draws().end());
  warm.attr("dim") = Rcpp::IntegerVector::create(o.warmup, s.chains(), s.dim());
  return Rcpp::List::create(
      Rcpp::Named("draws") = draws, Rcpp::Named("warmup_draws") = warm,
      Rcpp::Named("widths") = Rcpp::NumericVector(s.widths().data(),
                                                  s.widths().data() + s.dim()),
      Rcpp::Named("n_evals") = s.n_evals(),
      Rcpp::Named("n_evals_warmup") = s.n_evals_warmup(),
      Rcpp::Named("n_calls") = s.n_calls(), Rcpp::Named("n_nan") = s.n_nan(),
      Rcpp::Named("n_stuck") = s.n_stuck(),
      Rcpp::Named("center") = Rcpp::NumericVector(s.metric().center().data(),
                                                  s.metric().center().data() + s.dim()),
      Rcpp::Named("scale") = scale,
      Rcpp::Named("iteration") = s.iteration());
}

// Log densities of a model object at the rows of `points` (internal: tests
// and model_log_density()).
// [[Rcpp::export(.cpp_model_log_density)]]
Rcpp::NumericVector cpp_model_log_density(SEXP model, Rcpp::NumericMatrix points) {
  std::unique_ptr<cs::batch_evaluator> f = make_evaluator(model);
  Eigen::VectorXd out;
  (*f)(Eigen::Map<const Eigen::MatrixXd>(points.begin(), points.nrow(), points.ncol()), out);
  return Rcpp::NumericVector(out.data(), out.data() + out.size());
}
