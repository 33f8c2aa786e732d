// Glue for hmc_sample_mv (R/hmc.R): the ChEES-HMC sampler of
// inst/include/clbayes/hmc behind an external pointer, run in pieces from R
// (progress bar, interrupts between pieces); the target and its gradient
// come from glue::make_evaluator (r_models.cpp).

#include "glue_models.hpp"

#include <clbayes/eigen.hpp>
#include <clbayes/hmc/sampler.hpp>

#include <algorithm>
#include <cmath>
#include <memory>

namespace {

namespace ch = clbayes::hmc;

ch::sampler& as_sampler(SEXP ptr) {
  ch::sampler* s = static_cast<ch::sampler*>(R_ExternalPtrAddr(ptr));
  if (s == nullptr) Rcpp::stop("invalid hmc sampler state");
  return *s;
}

Rcpp::NumericVector draws_array(const std::vector<double>& d, int rows, int chains,
                                int dim) {
  Rcpp::NumericVector out(d.begin(), d.end());
  out.attr("dim") = Rcpp::IntegerVector::create(rows, chains, dim);
  return out;
}

}  // namespace

// [[Rcpp::export(.cpp_hmc_new)]]
SEXP cpp_hmc_new(Rcpp::NumericMatrix init, Rcpp::NumericVector lower,
                 Rcpp::NumericVector upper, std::string metric, int warmup, int n_iter,
                 double adapt_delta, int max_leapfrog, double init_radius, double seed,
                 int first_stream) {
  ch::options opt;
  opt.metric = ch::parse_metric(metric);
  opt.warmup = warmup;
  opt.n_iter = n_iter;
  opt.adapt_delta = adapt_delta;
  opt.max_leapfrog = max_leapfrog;
  opt.init_radius = init_radius;
  opt.seed = glue::as_seed(seed);
  opt.first_stream = first_stream;
  Rcpp::XPtr<ch::sampler> ptr(
      new ch::sampler(
          Eigen::Map<const Eigen::MatrixXd>(init.begin(), init.nrow(), init.ncol()), opt,
          clbayes::mcmc::support(
              Eigen::Map<const Eigen::VectorXd>(lower.begin(), lower.size()),
              Eigen::Map<const Eigen::VectorXd>(upper.begin(), upper.size()))),
      true);
  return ptr;
}

// [[Rcpp::export(.cpp_hmc_start)]]
void cpp_hmc_start(SEXP ptr, SEXP target, SEXP gradient) {
  std::unique_ptr<clbayes::mcmc::batch_evaluator> f = glue::make_evaluator(target, gradient);
  as_sampler(ptr).start(*f);
}

// [[Rcpp::export(.cpp_hmc_run)]]
int cpp_hmc_run(SEXP ptr, SEXP target, SEXP gradient, int iterations) {
  std::unique_ptr<clbayes::mcmc::batch_evaluator> f = glue::make_evaluator(target, gradient);
  return as_sampler(ptr).run(*f, iterations);
}

// [[Rcpp::export(.cpp_hmc_result)]]
Rcpp::List cpp_hmc_result(SEXP ptr) {
  const ch::sampler& s = as_sampler(ptr);
  const ch::options& o = s.opts();
  const int k = s.dim();
  Rcpp::NumericMatrix scale(k, k);
  std::copy(s.metric().scale().data(), s.metric().scale().data() + k * k, scale.begin());
  return Rcpp::List::create(
      Rcpp::Named("draws") = draws_array(s.draws(), o.n_iter, s.chains(), k),
      Rcpp::Named("warmup_draws") = draws_array(s.warmup_draws(), o.warmup, s.chains(), k),
      Rcpp::Named("n_evals") = s.n_evals(),
      Rcpp::Named("n_evals_warmup") = s.n_evals_warmup(),
      Rcpp::Named("n_calls") = s.n_calls(), Rcpp::Named("n_nan") = s.n_nan(),
      Rcpp::Named("n_gradients") = s.n_gradients(),
      Rcpp::Named("n_leapfrog") = s.n_leapfrog(),
      Rcpp::Named("n_leapfrog_warmup") = s.n_leapfrog_warmup(),
      Rcpp::Named("n_divergent") =
          Rcpp::IntegerVector(s.n_divergent().begin(), s.n_divergent().end()),
      Rcpp::Named("n_divergent_warmup") = s.n_divergent_warmup(),
      Rcpp::Named("step_size") = s.step_size(),
      Rcpp::Named("trajectory_length") = s.trajectory_length(),
      Rcpp::Named("accept_rate") = s.accept_rate(),
      Rcpp::Named("center") = Rcpp::NumericVector(s.metric().center().data(),
                                                  s.metric().center().data() + k),
      Rcpp::Named("scale") = scale, Rcpp::Named("iteration") = s.iteration());
}
