// Glue for gpu_tri_inv(), gpu_tri_solve() and gpu_tcrossprod()
// (R/linalg.R): convert, call the core (inst/include/clbayes/linalg/),
// convert back.

#include "glue_eigen.hpp"

#include <clbayes/host_memory.hpp>
#include <clbayes/linalg/gemm.hpp>
#include <clbayes/linalg/tri_inverse.hpp>
#ifdef CLBAYES_OPENCL
#include <clbayes/linalg/check.hpp>
#endif

namespace la = clbayes::linalg;
using glue::as_map;
using glue::as_r;
#ifdef CLBAYES_OPENCL
using glue::download;
using glue::upload;
#endif

// L: a numeric square matrix (checked in R; for NA/Inf only with device =
// false: the device checks it while copying, and the host scan that names
// the kind of bad value runs only after it found one).
// [[Rcpp::export(.cpp_tri_inv)]]
Rcpp::NumericMatrix cpp_tri_inv(Rcpp::NumericMatrix L, bool lower, bool device) {
  if (device) {
#ifdef CLBAYES_OPENCL
    try {
      return download(la::tri_inverse(upload(L), !lower));
    } catch (const clbayes::invalid_argument&) {
      glue::check_finite(L, "L");
      throw;
    }
#else
    glue::stop_no_opencl();
#endif
  }
  return as_r(la::tri_inverse(as_map(L), !lower));
}

// [[Rcpp::export(.cpp_tri_inv_gpu)]]
SEXP cpp_tri_inv_gpu(SEXP L, bool lower) {
  CLBAYES_DEVICE_ONLY(glue::wrap_matrix_cl(
      cl_ops::finite_result(la::tri_inverse(glue::as_matrix_cl(L, "L"), !lower), "L",
                            "has an inverse with infinite values (it is nearly singular)")));
}

// [[Rcpp::export(.cpp_tri_solve)]]
Rcpp::NumericMatrix cpp_tri_solve(Rcpp::NumericMatrix L, Rcpp::NumericMatrix b, bool lower,
                                  bool device) {
  if (device) {
#ifdef CLBAYES_OPENCL
    return download(la::tri_solve(upload(L), upload(b), lower));
#else
    glue::stop_no_opencl();
#endif
  }
  return as_r(la::tri_solve(as_map(L), as_map(b), lower));
}

// [[Rcpp::export(.cpp_tri_solve_gpu)]]
SEXP cpp_tri_solve_gpu(SEXP L, SEXP b, bool lower) {
  CLBAYES_DEVICE_ONLY(glue::wrap_matrix_cl(cl_ops::finite_result(
      la::tri_solve(glue::as_matrix_cl(L, "L"), glue::as_matrix_cl(b, "b"), lower), "L",
      "gives a solution with infinite values (it is nearly singular)")));
}

// [[Rcpp::export(.cpp_tcrossprod)]]
Rcpp::NumericMatrix cpp_tcrossprod(Rcpp::NumericMatrix x, bool device) {
  if (device) {
#ifdef CLBAYES_OPENCL
    return download(la::multiply_transpose(upload(x)));
#else
    glue::stop_no_opencl();
#endif
  }
  return as_r(la::multiply_transpose(as_map(x)));
}

// [[Rcpp::export(.cpp_tcrossprod_gpu)]]
SEXP cpp_tcrossprod_gpu(SEXP x) {
  CLBAYES_DEVICE_ONLY(glue::wrap_matrix_cl(
      cl_ops::finite_result(la::multiply_transpose(glue::as_matrix_cl(x, "x")), "x",
                            "%*% t(`x`) overflows: the product has infinite values")));
}

// Size checks before a large result is allocated (R/linalg.R,
// check_result_size()): `what` names the argument and the result.

// [[Rcpp::export(.cpp_check_host_allocation)]]
void cpp_check_host_allocation(double bytes, std::string what) {
  clbayes::check_host_allocation(bytes, what);
}

// [[Rcpp::export(.cpp_check_device_allocation)]]
void cpp_check_device_allocation(double bytes, std::string what) {
#ifdef CLBAYES_OPENCL
  cl_ops::check_device_allocation(bytes, what);
#else
  (void)bytes;
  (void)what;
  glue::stop_no_opencl();
#endif
}
