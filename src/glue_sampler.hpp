#ifndef CLBAYES_GLUE_SAMPLER_HPP
#define CLBAYES_GLUE_SAMPLER_HPP

// What the glue of both samplers (r_slice.cpp, r_hmc.cpp) shares: the
// sampler behind its external pointer, and the parts of the result list
// that every sampler has (draws, counts, the metric, where it stopped).

#include "glue.hpp"
#include <clbayes/eigen.hpp>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace glue {

/** The sampler of type S behind `ptr`; `what` names it in the error. */
template <class S>
S& sampler_at(SEXP ptr, const char* what) {
  S* s = static_cast<S*>(R_ExternalPtrAddr(ptr));
  if (s == nullptr) Rcpp::stop("invalid %s sampler state", what);
  return *s;
}

/** Draws laid out iteration x chain x variable as an R array. */
inline Rcpp::NumericVector draws_array(const std::vector<double>& d, int chains, int dim) {
  Rcpp::NumericVector out(d.begin(), d.end());
  const std::size_t per_row = static_cast<std::size_t>(chains) * static_cast<std::size_t>(dim);
  out.attr("dim") = Rcpp::IntegerVector::create(
      per_row == 0 ? 0 : static_cast<int>(d.size() / per_row), chains, dim);
  return out;
}

/** The result entries every sampler has; each sampler's glue adds its own. */
template <class S>
Rcpp::List common_result(const S& s) {
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
  return Rcpp::List::create(
      Rcpp::Named("draws") = draws_array(s.draws(), s.chains(), k),
      Rcpp::Named("warmup_draws") = draws_array(s.warmup_draws(), s.chains(), k),
      Rcpp::Named("n_evals") = s.n_evals(), Rcpp::Named("n_evals_warmup") = s.n_evals_warmup(),
      Rcpp::Named("n_calls") = s.n_calls(), Rcpp::Named("n_nan") = s.n_nan(),
      Rcpp::Named("center") = Rcpp::NumericVector(s.metric().center().data(),
                                                  s.metric().center().data() + k),
      Rcpp::Named("scale") = scale, Rcpp::Named("iteration") = s.iteration());
}

/** `list` with the entries of `more` appended (names kept). */
inline Rcpp::List append(Rcpp::List list, const Rcpp::List& more) {
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
