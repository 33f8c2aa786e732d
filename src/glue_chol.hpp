#ifndef CLBAYES_GLUE_CHOL_HPP
#define CLBAYES_GLUE_CHOL_HPP

// The Cholesky of a host matrix on the device, shared by gpu_chol()'s glue
// (r_chol.cpp) and the tests' entry with explicit settings (r_testing.cpp).

#include "glue.hpp"
#include <clbayes/linalg/cholesky_host.hpp>

namespace glue {

#ifdef CLBAYES_OPENCL
// The factor of the host matrix x, its transfers overlapped with the
// factorisation (linalg/cholesky_host.hpp). R left the NA/Inf check to the
// device (R/chol.R), where the copy into the working matrix does it; a bad
// value is an error there, and the host scan that names its kind runs only
// then.
inline Rcpp::NumericMatrix chol_host(const Rcpp::NumericMatrix& x, bool upper,
                              const clbayes::linalg::linalg_settings& s,
                              const cl_ops::pinned_tuning& pin = cl_ops::pinned_tuning()) {
  Rcpp::NumericMatrix out = Rcpp::no_init_matrix(x.nrow(), x.ncol());  // written whole
  try {
    clbayes::linalg::cholesky_host(x.begin(), x.nrow(), x.ncol(), upper, out.begin(), s, pin);
  } catch (const clbayes::invalid_argument&) {
    glue::check_finite(x, "x");
    throw;
  }
  return out;
}
#endif

}  // namespace glue

#endif
