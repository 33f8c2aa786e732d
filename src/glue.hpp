#ifndef CLBAYES_GLUE_HPP
#define CLBAYES_GLUE_HPP

// Helpers shared by the r_*.cpp glue files: converting between R objects
// and the core's types. No algorithms here.

#include <Rcpp.h>
#include <clbayes/opencl.hpp>
#ifdef CLBAYES_OPENCL
#include <clbayes/opencl/pinned_transfer.hpp>
#endif

#include <cmath>
#include <cstddef>

#ifdef CLBAYES_OPENCL
namespace cl_ops = clbayes::opencl;
#endif

namespace glue {

/** Stop with the message used by every device-only entry point of a build
 *  without OpenCL. */
[[noreturn]] inline void stop_no_opencl() {
  Rcpp::stop("clbayes was built without OpenCL (configure found no OpenCL, or "
             "CLBAYES_NO_OPENCL=1 was set); only the CPU backend is available");
}

// The body of a device-only entry point: the expression where OpenCL was
// built, an R error where it was not.
#ifdef CLBAYES_OPENCL
#define CLBAYES_DEVICE_ONLY(expr) return (expr)
#else
#define CLBAYES_DEVICE_ONLY(expr) glue::stop_no_opencl()
#endif

/** The errors of check_finite() in R/gpu_matrix.R for a matrix known to
 *  hold a value that is NA, NaN or infinite. */
[[noreturn]] inline void stop_nonfinite(const Rcpp::NumericMatrix& x, const char* arg) {
  for (double v : x)
    if (std::isnan(v)) Rcpp::stop("`%s` contains NA or NaN values", arg);
  Rcpp::stop("`%s` contains infinite values", arg);
}

/** stop_nonfinite() if x holds an NA, NaN or infinite value: the host scan
 *  that names the kind of bad value once the device has found one. */
inline void check_finite(const Rcpp::NumericMatrix& x, const char* arg) {
  for (double v : x)
    if (!std::isfinite(v)) stop_nonfinite(x, arg);
}

#ifdef CLBAYES_OPENCL
using clbayes::opencl::matrix_cl;

/** The device matrix behind an external pointer, checked for use. */
inline matrix_cl& as_matrix_cl(SEXP ptr, const char* arg) {
  if (TYPEOF(ptr) != EXTPTRSXP)
    Rcpp::stop("`%s` must be a gpu_matrix", arg);
  matrix_cl* m = static_cast<matrix_cl*>(R_ExternalPtrAddr(ptr));
  if (m == nullptr)
    Rcpp::stop("`%s` is an invalid gpu_matrix (device memory does not survive "
               "saving and reloading, or a new R session)", arg);
  m->check_device(arg);
  return *m;
}

/** Hand a device matrix to R: an external pointer that frees it on GC. */
inline SEXP wrap_matrix_cl(matrix_cl&& m) {
  Rcpp::XPtr<matrix_cl> ptr(new matrix_cl(std::move(m)), true);
  return ptr;
}

/** A device matrix copied into a new R matrix (through pinned staging when
 *  large: opencl/pinned_transfer.hpp). */
inline Rcpp::NumericMatrix download(const matrix_cl& m) {
  // Every element is written below: no zero fill (2 GB at n = 16384).
  Rcpp::NumericMatrix out = Rcpp::no_init_matrix(m.rows(), m.cols());
  cl_ops::from_matrix_cl_staged(m, out.begin());
  return out;
}

/** An R matrix copied to a new device matrix (pinned staging when large). */
inline matrix_cl upload(const Rcpp::NumericMatrix& x) {
  return cl_ops::to_matrix_cl_staged(x.begin(), x.nrow(), x.ncol());
}
#endif

}  // namespace glue

#endif
