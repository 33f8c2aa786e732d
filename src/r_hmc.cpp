// Glue for hmc_sample_mv (R/hmc.R): ChEES-HMC of inst/include/clbayes/hmc
// (its transition on the chain engine of inst/include/clbayes/mcmc) behind
// an external pointer, run in pieces from R (progress bar, interrupts
// between pieces); the target and its gradient come from
// glue::make_evaluator (r_models.cpp).

#include "glue_sampler.hpp"

#include <clbayes/eigen.hpp>
#include <clbayes/hmc/sampler.hpp>

namespace {

namespace ch = clbayes::hmc;
namespace cm = clbayes::mcmc;

}  // namespace

// [[Rcpp::export(.cpp_hmc_new)]]
SEXP cpp_hmc_new(Rcpp::NumericMatrix init, Rcpp::NumericVector lower,
                 Rcpp::NumericVector upper, std::string metric, int warmup, int n_iter,
                 double adapt_delta, int max_leapfrog, double init_radius, double seed,
                 int first_stream) {
  ch::transition::settings set;
  set.adapt_delta = adapt_delta;
  set.max_leapfrog = max_leapfrog;
  // HMC neither extends its warmup nor computes its R-hat (warmup_extend
  // and warmup_rhat 0), and R/hmc.R has refused runs too large for memory
  // before this (check_memory), so the core's own limit is Inf.
  const cm::options opt = glue::chain_options(metric, warmup, n_iter, seed, first_stream,
                                              init_radius, 0, 0, R_PosInf);
  return glue::new_sampler<ch::transition>(init, lower, upper, opt, set);
}

// [[Rcpp::export(.cpp_hmc_start)]]
void cpp_hmc_start(SEXP ptr, SEXP target, SEXP gradient) {
  glue::start_sampler<ch::transition>(ptr, "hmc", target, gradient);
}

// [[Rcpp::export(.cpp_hmc_run)]]
int cpp_hmc_run(SEXP ptr, SEXP target, SEXP gradient, int iterations) {
  return glue::run_sampler<ch::transition>(ptr, "hmc", target, gradient, iterations);
}

// [[Rcpp::export(.cpp_hmc_result)]]
Rcpp::List cpp_hmc_result(SEXP ptr) {
  const ch::sampler& s = glue::sampler_at<ch::transition>(ptr, "hmc");
  const ch::transition& t = s.transition();
  return glue::result(
      s, Rcpp::List::create(
             Rcpp::Named("n_gradients") = s.n_gradients(),
             Rcpp::Named("n_bad_gradient") = s.n_bad_gradient(),
             Rcpp::Named("n_leapfrog") = t.n_leapfrog(),
             Rcpp::Named("n_leapfrog_warmup") = t.n_leapfrog_warmup(),
             Rcpp::Named("n_divergent") =
                 Rcpp::IntegerVector(t.n_divergent().begin(), t.n_divergent().end()),
             Rcpp::Named("n_divergent_warmup") = t.n_divergent_warmup(),
             Rcpp::Named("step_size") = t.step_size(),
             Rcpp::Named("trajectory_length") = t.trajectory_length(),
             Rcpp::Named("accept_rate") = t.accept_rate()));
}

// Bytes a run with these settings holds at most (the core's own formula),
// so that R can refuse it before allocating even the initial points.
// [[Rcpp::export(.cpp_hmc_memory)]]
double cpp_hmc_memory(double chains, double dim, double warmup, double n_iter) {
  cm::options opt;
  opt.warmup = static_cast<int>(warmup);
  opt.n_iter = static_cast<int>(n_iter);
  return cm::memory_needed<ch::transition>(chains, dim, opt, ch::transition::settings());
}
