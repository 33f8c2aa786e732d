// Glue for gpu_sum() / gpu_mean() (R/reduce.R): both return c(sum, mean).

#include "glue.hpp"

#include <clbayes/reduce/sum.hpp>

namespace {

Rcpp::NumericVector as_r(const clbayes::reduce::sum_result& r) {
  return Rcpp::NumericVector::create(r.sum, r.mean);
}

}  // namespace

// [[Rcpp::export(.cpp_sum)]]
Rcpp::NumericVector cpp_sum(Rcpp::NumericVector x, std::string method,
                            std::string precision, bool on_device) {
#ifndef CLBAYES_OPENCL
  if (on_device) glue::stop_no_opencl();
#endif
  return as_r(clbayes::reduce::sum(
      x.begin(), static_cast<std::size_t>(x.size()),
      clbayes::reduce::parse_method(method),
      clbayes::reduce::parse_precision(precision), on_device));
}

// [[Rcpp::export(.cpp_sum_gpu)]]
Rcpp::NumericVector cpp_sum_gpu(SEXP ptr, std::string method, std::string precision) {
#ifdef CLBAYES_OPENCL
  return as_r(clbayes::reduce::sum(glue::as_matrix_cl(ptr, "x"),
                                   clbayes::reduce::parse_method(method),
                                   clbayes::reduce::parse_precision(precision)));
#else
  (void)ptr;
  (void)method;
  (void)precision;
  glue::stop_no_opencl();
#endif
}
