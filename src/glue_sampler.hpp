#ifndef CLBAYES_GLUE_SAMPLER_HPP
#define CLBAYES_GLUE_SAMPLER_HPP

// What the glue of both samplers (r_slice.cpp, r_hmc.cpp) shares: the chain
// engine's options from R's values, the sampler behind its external
// pointer (made, started and run), and the parts of the result list that
// every sampler has (draws, counts, the metric, where it stopped).

#include "glue.hpp"
#include "glue_models.hpp"
#include <clbayes/eigen.hpp>
#include <clbayes/mcmc/engine.hpp>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace glue {

/** The chain engine's options, every one given by R. */
inline clbayes::mcmc::options chain_options(const std::string& metric, int warmup, int n_iter,
                                            double seed, int first_stream, double init_radius,
                                            int warmup_extend, double warmup_rhat,
                                            double memory_limit) {
  clbayes::mcmc::options opt;
  opt.metric = clbayes::mcmc::parse_metric(metric);
  opt.warmup = warmup;
  opt.n_iter = n_iter;
  opt.seed = as_seed(seed);
  opt.first_stream = first_stream;
  opt.init_radius = init_radius;
  opt.warmup_extend = warmup_extend;
  opt.warmup_rhat = warmup_rhat;
  opt.memory_limit = memory_limit;
  return opt;
}

/** A new sampler with transition T behind an external pointer. */
template <class T>
SEXP new_sampler(const Rcpp::NumericMatrix& init, const Rcpp::NumericVector& lower,
                 const Rcpp::NumericVector& upper, const clbayes::mcmc::options& opt,
                 const typename T::settings& set) {
  Rcpp::XPtr<clbayes::mcmc::sampler<T>> ptr(
      new clbayes::mcmc::sampler<T>(
          Eigen::Map<const Eigen::MatrixXd>(init.begin(), init.nrow(), init.ncol()), opt, set,
          clbayes::mcmc::support(Eigen::Map<const Eigen::VectorXd>(lower.begin(), lower.size()),
                                 Eigen::Map<const Eigen::VectorXd>(upper.begin(), upper.size()))),
      true);
  return ptr;
}

/** The sampler with transition T behind `ptr`; `what` names it in the error. */
template <class T>
clbayes::mcmc::sampler<T>& sampler_at(SEXP ptr, const char* what) {
  auto* s = static_cast<clbayes::mcmc::sampler<T>*>(R_ExternalPtrAddr(ptr));
  if (s == nullptr) Rcpp::stop("invalid %s sampler state", what);
  return *s;
}

/** start() the sampler on `target` (with `gradient`: see make_evaluator). */
template <class T>
void start_sampler(SEXP ptr, const char* what, SEXP target, SEXP gradient) {
  std::unique_ptr<clbayes::mcmc::batch_evaluator> f = make_evaluator(target, gradient);
  sampler_at<T>(ptr, what).start(*f);
}

/** run() the sampler at most `iterations` iterations; returns how many ran. */
template <class T>
int run_sampler(SEXP ptr, const char* what, SEXP target, SEXP gradient, int iterations) {
  std::unique_ptr<clbayes::mcmc::batch_evaluator> f = make_evaluator(target, gradient);
  return sampler_at<T>(ptr, what).run(*f, iterations);
}

/** Draws laid out iteration x chain x variable as an R array. */
inline Rcpp::NumericVector draws_array(const std::vector<double>& d, int chains, int dim) {
  Rcpp::NumericVector out(d.begin(), d.end());
  const std::size_t per_row = static_cast<std::size_t>(chains) * static_cast<std::size_t>(dim);
  out.attr("dim") = Rcpp::IntegerVector::create(
      per_row == 0 ? 0 : static_cast<int>(d.size() / per_row), chains, dim);
  return out;
}

/** The result entries every sampler has, and the transition's own (`more`). */
inline Rcpp::List result(const clbayes::mcmc::chain_core& s, const Rcpp::List& more) {
  const int k = s.dim();
  // S: a lower-triangular matrix for a dense metric, its diagonal otherwise
  SEXP scale;
  if (s.metric().dense()) {
    Rcpp::NumericMatrix m(k, k);
    std::copy(s.metric().scale().data(), s.metric().scale().data() + k * k, m.begin());
    scale = m;
  } else {
    scale = Rcpp::NumericVector(s.metric().scale_diagonal().data(),
                                s.metric().scale_diagonal().data() + k);
  }
  Rcpp::List list = Rcpp::List::create(
      Rcpp::Named("draws") = draws_array(s.draws(), s.chains(), k),
      Rcpp::Named("warmup_draws") = draws_array(s.warmup_draws(), s.chains(), k),
      Rcpp::Named("n_evals") = s.n_evals(), Rcpp::Named("n_evals_warmup") = s.n_evals_warmup(),
      Rcpp::Named("n_calls") = s.n_calls(), Rcpp::Named("n_nan") = s.n_nan(),
      Rcpp::Named("center") = Rcpp::NumericVector(s.metric().center().data(),
                                                  s.metric().center().data() + k),
      Rcpp::Named("scale") = scale, Rcpp::Named("iteration") = s.iteration());
  Rcpp::CharacterVector names = list.names(), more_names = more.names();
  for (R_xlen_t i = 0; i < more.size(); ++i) {
    list.push_back(more[i]);
    names.push_back(more_names[i]);
  }
  list.names() = names;
  return list;
}

}  // namespace glue

#endif
