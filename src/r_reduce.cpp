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

// Test hook (tests/testthat/test-reduce.R): the device path with explicit
// settings, c(block, work_group, p_max) as in reduce::device::settings (0:
// the device's), so that the tests reach many levels of the launch
// sequence at small n.
// [[Rcpp::export(.cpp_sum_tuned)]]
Rcpp::NumericVector cpp_sum_tuned(Rcpp::NumericVector x, std::string method,
                                  std::string precision, Rcpp::IntegerVector knobs) {
#ifdef CLBAYES_OPENCL
  namespace rd = clbayes::reduce;
  if (knobs.size() != 3) Rcpp::stop("`knobs` must have 3 values");
  rd::device::settings t = rd::device::tuned_settings();
  if (knobs[0] != 0) t.block = knobs[0];
  if (knobs[1] != 0) t.work_group = knobs[1];
  if (knobs[2] != 0) t.p_max = knobs[2];
  const rd::sum_method m = rd::parse_method(method);
  const rd::sum_precision p = rd::parse_precision(precision);
  const bool single = p == rd::sum_precision::single_precision;
  const std::size_t n = static_cast<std::size_t>(x.size());
  cl::Buffer buf = rd::device::upload(x.begin(), n, single);
  return as_r(rd::device::sum(buf, n, !single, m, p, t));
#else
  (void)x;
  (void)method;
  (void)precision;
  (void)knobs;
  glue::stop_no_opencl();
#endif
}
