// Glue for gpu_matrix (R/gpu_matrix.R): upload, download and the operators.
// A result with an infinite or NaN value is an error (finite_result(), the
// NaN policy documented in ?gpu_matrix).

#include "glue.hpp"

#ifdef CLBAYES_OPENCL
#include <clbayes/linalg/arithmetic.hpp>
#include <clbayes/linalg/check.hpp>
#include <clbayes/linalg/transpose.hpp>
#endif

// [[Rcpp::export(.cpp_gpu_matrix)]]
SEXP cpp_gpu_matrix(Rcpp::NumericMatrix x, std::string view) {
  CLBAYES_DEVICE_ONLY(glue::wrap_matrix_cl(cl_ops::to_matrix_cl(
      x.begin(), x.nrow(), x.ncol(), clbayes::parse_view(view))));
}

// [[Rcpp::export(.cpp_as_matrix)]]
Rcpp::NumericMatrix cpp_as_matrix(SEXP ptr) {
#ifdef CLBAYES_OPENCL
  return glue::download(glue::as_matrix_cl(ptr, "x"));
#else
  (void)ptr;
  glue::stop_no_opencl();
#endif
}

// [[Rcpp::export(.cpp_dim)]]
Rcpp::IntegerVector cpp_dim(SEXP ptr) {
#ifdef CLBAYES_OPENCL
  const cl_ops::matrix_cl& m = glue::as_matrix_cl(ptr, "x");
  return Rcpp::IntegerVector::create(m.rows(), m.cols());
#else
  (void)ptr;
  glue::stop_no_opencl();
#endif
}

// [[Rcpp::export(.cpp_view)]]
std::string cpp_view(SEXP ptr) {
  CLBAYES_DEVICE_ONLY(std::string(clbayes::view_name(glue::as_matrix_cl(ptr, "x").view())));
}

// [[Rcpp::export(.cpp_add)]]
SEXP cpp_add(SEXP a, SEXP b) {
  CLBAYES_DEVICE_ONLY(glue::wrap_matrix_cl(cl_ops::finite_result(
      cl_ops::add(glue::as_matrix_cl(a, "e1"), glue::as_matrix_cl(b, "e2")), "e1 + e2",
      "overflows: the sum has infinite values")));
}

// [[Rcpp::export(.cpp_subtract)]]
SEXP cpp_subtract(SEXP a, SEXP b) {
  CLBAYES_DEVICE_ONLY(glue::wrap_matrix_cl(cl_ops::finite_result(
      cl_ops::subtract(glue::as_matrix_cl(a, "e1"), glue::as_matrix_cl(b, "e2")), "e1 - e2",
      "overflows: the difference has infinite values")));
}

// `expr` names the R expression for the message ("e1 * e2", "e1 / e2").
// [[Rcpp::export(.cpp_scalar_multiply)]]
SEXP cpp_scalar_multiply(SEXP a, double s, std::string expr) {
  CLBAYES_DEVICE_ONLY(glue::wrap_matrix_cl(
      cl_ops::finite_result(cl_ops::scalar_multiply(glue::as_matrix_cl(a, "x"), s), expr,
                            "overflows: the product has infinite values")));
}

// [[Rcpp::export(.cpp_multiply)]]
SEXP cpp_multiply(SEXP a, SEXP b) {
  CLBAYES_DEVICE_ONLY(glue::wrap_matrix_cl(cl_ops::finite_result(
      cl_ops::multiply(glue::as_matrix_cl(a, "x"), glue::as_matrix_cl(b, "y")), "x %*% y",
      "overflows: the product has infinite values")));
}

// [[Rcpp::export(.cpp_transpose)]]
SEXP cpp_transpose(SEXP a) {
  CLBAYES_DEVICE_ONLY(glue::wrap_matrix_cl(cl_ops::transpose(glue::as_matrix_cl(a, "x"))));
}
