// Glue for slice_sample_mv (R/slice.R): the slice sampler of
// inst/include/clbayes/slice (its transition on the chain engine of
// inst/include/clbayes/mcmc) lives behind an external pointer so that R can
// run it in pieces (progress bar, interrupts between pieces); the target is
// an R function (called back once per batch) or a built-in model
// (glue::make_evaluator, r_models.cpp).

#include "glue_sampler.hpp"

#include <clbayes/eigen.hpp>
#include <clbayes/slice/sampler.hpp>

namespace {

namespace cs = clbayes::slice;
namespace cm = clbayes::mcmc;

const cs::sampler& as_sampler(SEXP ptr) {
  return glue::sampler_at<cs::transition>(ptr, "slice");
}

}  // namespace

// [[Rcpp::export(.cpp_slice_new)]]
SEXP cpp_slice_new(Rcpp::NumericMatrix init, Rcpp::NumericVector width,
                   Rcpp::NumericVector lower, Rcpp::NumericVector upper,
                   std::string method, std::string stepout, std::string metric,
                   int n_proposals, int warmup, int n_iter, int max_steps,
                   double seed, double init_radius, bool width_on_u,
                   int warmup_extend, double warmup_rhat, double memory_limit,
                   int first_stream) {
  cs::transition::settings set;
  set.method = cs::parse_method(method);
  set.stepout = cs::parse_stepout(stepout);
  set.n_proposals = n_proposals;
  set.max_steps = max_steps;
  set.width = Eigen::Map<const Eigen::VectorXd>(width.begin(), width.size());
  set.width_on_u = width_on_u;
  const cm::options opt = glue::chain_options(metric, warmup, n_iter, seed, first_stream,
                                              init_radius, warmup_extend, warmup_rhat,
                                              memory_limit);
  return glue::new_sampler<cs::transition>(init, lower, upper, opt, set);
}

// [[Rcpp::export(.cpp_slice_start)]]
void cpp_slice_start(SEXP ptr, SEXP target) {
  glue::start_sampler<cs::transition>(ptr, "slice", target, R_NilValue);
}

// [[Rcpp::export(.cpp_slice_run)]]
int cpp_slice_run(SEXP ptr, SEXP target, int iterations) {
  return glue::run_sampler<cs::transition>(ptr, "slice", target, R_NilValue, iterations);
}

// [[Rcpp::export(.cpp_slice_total)]]
int cpp_slice_total(SEXP ptr) { return as_sampler(ptr).total_iterations(); }

// [[Rcpp::export(.cpp_slice_result)]]
Rcpp::List cpp_slice_result(SEXP ptr) {
  const cs::sampler& s = as_sampler(ptr);
  const Eigen::VectorXd& w = s.transition().widths();
  return glue::result(
      s, Rcpp::List::create(Rcpp::Named("widths") = Rcpp::NumericVector(w.data(), w.data() + w.size()),
                            Rcpp::Named("n_stuck") = s.state().n_stuck,
                            Rcpp::Named("density_seconds") = s.density_seconds(),
                            Rcpp::Named("warmup_rhat") = s.warmup_rhat(),
                            Rcpp::Named("warmup_done") = s.warmup()));
}

// Bytes a run with these settings holds at most (the core's own formula),
// and the part of them that is the largest batch of points, so that R can
// refuse it before allocating even the initial points.
// [[Rcpp::export(.cpp_slice_memory)]]
Rcpp::NumericVector cpp_slice_memory(double chains, double dim, std::string method,
                                     double n_proposals, double warmup, double warmup_extend,
                                     double n_iter) {
  cm::options opt;
  opt.warmup = static_cast<int>(warmup);
  opt.warmup_extend = static_cast<int>(warmup_extend);
  opt.n_iter = static_cast<int>(n_iter);
  cs::transition::settings set;
  set.method = cs::parse_method(method);
  set.n_proposals = static_cast<int>(n_proposals);
  double batch = 0;
  const double total = cm::memory_needed<cs::transition>(chains, dim, opt, set, &batch);
  return Rcpp::NumericVector::create(Rcpp::Named("total") = total,
                                     Rcpp::Named("batch") = batch);
}
