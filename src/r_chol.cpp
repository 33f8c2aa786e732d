// Glue for gpu_chol() and gpu_chol_grad() (R/chol.R): convert, call the core
// (inst/include/clbayes/linalg/cholesky*.hpp), convert back.

#include "glue_chol.hpp"
#include "glue_eigen.hpp"

#include <clbayes/linalg/cholesky.hpp>
#include <clbayes/linalg/cholesky_grad.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace la = clbayes::linalg;
using glue::as_map;
using glue::as_r;
#ifdef CLBAYES_OPENCL
using glue::download;
using glue::upload;
#endif

namespace {

#ifdef CLBAYES_OPENCL
cl_ops::matrix_cl chol_device(const cl_ops::matrix_cl& x, bool upper) {
  cl_ops::matrix_cl l = la::cholesky(x);
  return upper ? cl_ops::transpose(l) : std::move(l);
}

#endif

}  // namespace

// x: a numeric square matrix (checked in R; for NA/Inf only with device =
// false).
// [[Rcpp::export(.cpp_chol)]]
Rcpp::NumericMatrix cpp_chol(Rcpp::NumericMatrix x, bool upper, bool device) {
  if (device) {
#ifdef CLBAYES_OPENCL
    return glue::chol_host(x, upper, la::tuned_settings());
#else
    glue::stop_no_opencl();
#endif
  }
  Rcpp::NumericMatrix out = Rcpp::clone(x);
  Eigen::Map<Eigen::MatrixXd> m(out.begin(), out.nrow(), out.ncol());
  la::check_symmetric(m, "x");
  la::cholesky_in_place(m, upper);
  return out;
}

// [[Rcpp::export(.cpp_chol_gpu)]]
SEXP cpp_chol_gpu(SEXP x, bool upper) {
  CLBAYES_DEVICE_ONLY(glue::wrap_matrix_cl(chol_device(glue::as_matrix_cl(x, "x"), upper)));
}

// L, L_adj: numeric matrices (checked in R; for NA/Inf only with device =
// false: the device checks them while copying, and the host scan that
// names the kind of bad value runs only after it found one).
// [[Rcpp::export(.cpp_chol_grad)]]
Rcpp::NumericMatrix cpp_chol_grad(Rcpp::NumericMatrix L, Rcpp::NumericMatrix L_adj,
                                  bool device) {
  if (device) {
#ifdef CLBAYES_OPENCL
    cl_ops::matrix_cl l = upload(L);
    cl_ops::matrix_cl a = upload(L_adj);
    try {
      return download(la::cholesky_grad(l, a));
    } catch (const clbayes::invalid_argument&) {
      glue::check_finite(L, "L");
      glue::check_finite(L_adj, "L_adj");
      throw;
    }
#else
    glue::stop_no_opencl();
#endif
  }
  return as_r(la::cholesky_grad(as_map(L), as_map(L_adj)));
}

// [[Rcpp::export(.cpp_chol_grad_gpu)]]
SEXP cpp_chol_grad_gpu(SEXP L, SEXP L_adj) {
  CLBAYES_DEVICE_ONLY(glue::wrap_matrix_cl(cl_ops::finite_result(
      la::cholesky_grad(glue::as_matrix_cl(L, "L"), glue::as_matrix_cl(L_adj, "L_adj")),
      "L_adj", "gives a gradient with infinite values (overflow)")));
}
