// Glue for slice_sample_mv (R/slice.R): the sampler of
// inst/include/clbayes/slice lives behind an external pointer so that R can
// run it in pieces (progress bar, interrupts between pieces); the target is
// an R function (called back once per batch) or a built-in model
// (glue::make_evaluator, r_models.cpp).

#include "glue_models.hpp"
#include "glue_sampler.hpp"

#include <clbayes/eigen.hpp>
#include <clbayes/slice/sampler.hpp>

#include <memory>

namespace {

namespace cs = clbayes::slice;

cs::sampler& as_sampler(SEXP ptr) { return glue::sampler_at<cs::sampler>(ptr, "slice"); }

}  // namespace

// [[Rcpp::export(.cpp_slice_new)]]
SEXP cpp_slice_new(Rcpp::NumericMatrix init, Rcpp::NumericVector width,
                   Rcpp::NumericVector lower, Rcpp::NumericVector upper,
                   std::string method, std::string stepout, std::string metric,
                   int n_proposals, int warmup, int n_iter, int max_steps,
                   double seed, double init_radius, bool width_on_u,
                   int warmup_extend, double memory_limit, int first_stream) {
  cs::options opt;
  opt.method = cs::parse_method(method);
  opt.stepout = cs::parse_stepout(stepout);
  opt.metric = cs::parse_metric(metric);
  opt.n_proposals = n_proposals;
  opt.warmup = warmup;
  opt.n_iter = n_iter;
  opt.max_steps = max_steps;
  opt.init_radius = init_radius;
  opt.width_on_u = width_on_u;
  opt.warmup_extend = warmup_extend;
  opt.memory_limit = memory_limit;
  opt.seed = glue::as_seed(seed);
  opt.first_stream = first_stream;
  Rcpp::XPtr<cs::sampler> ptr(
      new cs::sampler(
          Eigen::Map<const Eigen::MatrixXd>(init.begin(), init.nrow(), init.ncol()),
          Eigen::Map<const Eigen::VectorXd>(width.begin(), width.size()), opt,
          clbayes::mcmc::support(Eigen::Map<const Eigen::VectorXd>(lower.begin(), lower.size()),
                      Eigen::Map<const Eigen::VectorXd>(upper.begin(), upper.size()))),
      true);
  return ptr;
}

// [[Rcpp::export(.cpp_slice_start)]]
void cpp_slice_start(SEXP ptr, SEXP target) {
  std::unique_ptr<clbayes::mcmc::batch_evaluator> f = glue::make_evaluator(target);
  as_sampler(ptr).start(*f);
}

// [[Rcpp::export(.cpp_slice_run)]]
int cpp_slice_run(SEXP ptr, SEXP target, int iterations) {
  std::unique_ptr<clbayes::mcmc::batch_evaluator> f = glue::make_evaluator(target);
  return as_sampler(ptr).run(*f, iterations);
}

// [[Rcpp::export(.cpp_slice_total)]]
int cpp_slice_total(SEXP ptr) { return as_sampler(ptr).total_iterations(); }

// [[Rcpp::export(.cpp_slice_result)]]
Rcpp::List cpp_slice_result(SEXP ptr) {
  const cs::sampler& s = as_sampler(ptr);
  return glue::append(
      glue::common_result(s),
      Rcpp::List::create(
          Rcpp::Named("widths") = Rcpp::NumericVector(s.widths().data(),
                                                      s.widths().data() + s.dim()),
          Rcpp::Named("n_stuck") = s.n_stuck(),
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
  cs::options opt;
  opt.method = cs::parse_method(method);
  opt.n_proposals = static_cast<int>(n_proposals);
  opt.warmup = static_cast<int>(warmup);
  opt.warmup_extend = static_cast<int>(warmup_extend);
  opt.n_iter = static_cast<int>(n_iter);
  double batch = 0;
  const double total = cs::memory_needed(chains, dim, opt, &batch);
  return Rcpp::NumericVector::create(Rcpp::Named("total") = total,
                                     Rcpp::Named("batch") = batch);
}
