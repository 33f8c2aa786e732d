// Glue for hmc_sample_mv (R/hmc.R): the ChEES-HMC sampler of
// inst/include/clbayes/hmc behind an external pointer, run in pieces from R
// (progress bar, interrupts between pieces); the target and its gradient
// come from glue::make_evaluator (r_models.cpp).

#include "glue_models.hpp"
#include "glue_sampler.hpp"

#include <clbayes/eigen.hpp>
#include <clbayes/hmc/sampler.hpp>

#include <memory>

namespace {

namespace ch = clbayes::hmc;

ch::sampler& as_sampler(SEXP ptr) { return glue::sampler_at<ch::sampler>(ptr, "hmc"); }

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
  return glue::append(
      glue::common_result(s),
      Rcpp::List::create(
          Rcpp::Named("n_gradients") = s.n_gradients(),
          Rcpp::Named("n_bad_gradient") = s.n_bad_gradient(),
          Rcpp::Named("n_leapfrog") = s.n_leapfrog(),
          Rcpp::Named("n_leapfrog_warmup") = s.n_leapfrog_warmup(),
          Rcpp::Named("n_divergent") =
              Rcpp::IntegerVector(s.n_divergent().begin(), s.n_divergent().end()),
          Rcpp::Named("n_divergent_warmup") = s.n_divergent_warmup(),
          Rcpp::Named("step_size") = s.step_size(),
          Rcpp::Named("trajectory_length") = s.trajectory_length(),
          Rcpp::Named("accept_rate") = s.accept_rate()));
}

// Bytes a run with these settings holds at most (the core's own formula),
// so that R can refuse it before allocating even the initial points.
// [[Rcpp::export(.cpp_hmc_memory)]]
double cpp_hmc_memory(double chains, double dim, double warmup, double n_iter) {
  ch::options opt;
  opt.warmup = static_cast<int>(warmup);
  opt.n_iter = static_cast<int>(n_iter);
  return ch::memory_needed(chains, dim, opt);
}
