// Glue for gpu_chol() and gpu_chol_grad() (R/chol.R): convert, call the core
// (inst/include/clbayes/linalg/cholesky*.hpp), convert back.

#include "glue_eigen.hpp"

#include <clbayes/linalg/cholesky.hpp>
#include <clbayes/linalg/cholesky_grad.hpp>
#include <clbayes/linalg/cholesky_host.hpp>

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

// The factor of the host matrix x, its transfers overlapped with the
// factorisation (linalg/cholesky_host.hpp). R left the NA/Inf check to the
// device (R/chol.R), where the copy into the working matrix does it; a bad
// value is an error there, and the host scan that names its kind runs only
// then.
Rcpp::NumericMatrix chol_host(const Rcpp::NumericMatrix& x, bool upper,
                              const la::linalg_settings& s,
                              const cl_ops::pinned_tuning& pin = cl_ops::pinned_tuning()) {
  Rcpp::NumericMatrix out = Rcpp::no_init_matrix(x.nrow(), x.ncol());  // written whole
  try {
    la::cholesky_host(x.begin(), x.nrow(), x.ncol(), upper, out.begin(), s, pin);
  } catch (const clbayes::invalid_argument&) {
    glue::check_finite(x, "x");
    throw;
  }
  return out;
}
#endif

}  // namespace

// x: a numeric square matrix (checked in R; for NA/Inf only with device =
// false).
// [[Rcpp::export(.cpp_chol)]]
Rcpp::NumericMatrix cpp_chol(Rcpp::NumericMatrix x, bool upper, bool device) {
  if (device) {
#ifdef CLBAYES_OPENCL
    return chol_host(x, upper, la::tuned_settings());
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

#ifdef CLBAYES_OPENCL
namespace {

// The selected device's linalg_settings, modified by the named values of
// the test hooks below; with `pin`, pinned_chunk_kb sets its chunk size.
la::linalg_settings tuned_by(const Rcpp::IntegerVector& values,
                             cl_ops::pinned_tuning* pin = nullptr) {
  la::linalg_settings s = la::tuned_settings();
  const std::vector<std::pair<const char*, int*>> fields = {
      {"outer_block", &s.cholesky.outer_block},
      {"outer_block_large", &s.cholesky.outer_block_large},
      {"large_from", &s.cholesky.large_from},
      {"host_block", &s.cholesky.host_block},
      {"step_cols", &s.cholesky.step_cols},
      {"step_threads", &s.cholesky.step_threads},
      {"step_base", &s.cholesky.step_base},
      {"trailing_reserve", &s.cholesky.trailing_reserve},
      {"grad_block", &s.cholesky.grad_block},
      {"grad_block_large", &s.cholesky.grad_block_large},
      {"gemm_narrow_cols", &s.gemm.narrow_cols},
      {"gemm_small_below_pct", &s.gemm.small_below_pct}};
  Rcpp::CharacterVector names =
      values.size() > 0 ? Rcpp::CharacterVector(values.names()) : Rcpp::CharacterVector();
  for (R_xlen_t i = 0; i < values.size(); ++i) {
    const std::string name = Rcpp::as<std::string>(names[i]);
    if (pin != nullptr && name == "pinned_chunk_kb") {
      pin->chunk_bytes = static_cast<std::size_t>(std::max(1, int(values[i]))) << 10;
      continue;
    }
    int* field = nullptr;
    for (const auto& f : fields)
      if (name == f.first) field = f.second;
    if (field == nullptr) Rcpp::stop("unknown linear algebra setting `" + name + "`");
    *field = values[i];
  }
  return s;
}

}  // namespace
#endif

// Test hooks (tests/testthat/test-chol.R), so that the tests reach several
// panels or blocks of the schedules at small n: the factor of x on the
// device with the settings of tuned_by (outer_block, outer_block_large,
// large_from, host_block, step_cols, step_threads, step_base,
// trailing_reserve, gemm_narrow_cols, gemm_small_below_pct; and
// pinned_chunk_kb, the host path's staging chunks) from host
// memory (`host`, gpu_chol()'s path for a matrix) or from a device copy
// (its path for a gpu_matrix); and the device gradient (grad_block,
// grad_block_large from large_from rows).
// [[Rcpp::export(.cpp_chol_tuned)]]
Rcpp::NumericMatrix cpp_chol_tuned(Rcpp::NumericMatrix x, Rcpp::IntegerVector values,
                                   bool upper, bool host) {
#ifdef CLBAYES_OPENCL
  cl_ops::pinned_tuning pin;
  const la::linalg_settings s = tuned_by(values, &pin);
  if (host) return chol_host(x, upper, s, pin);
  cl_ops::matrix_cl l = la::cholesky(upload(x), s);
  return download(upper ? cl_ops::transpose(l) : std::move(l));
#else
  (void)x;
  (void)values;
  (void)upper;
  (void)host;
  glue::stop_no_opencl();
#endif
}

// [[Rcpp::export(.cpp_chol_grad_tuned)]]
Rcpp::NumericMatrix cpp_chol_grad_tuned(Rcpp::NumericMatrix L, Rcpp::NumericMatrix L_adj,
                                        Rcpp::IntegerVector values) {
#ifdef CLBAYES_OPENCL
  return download(la::cholesky_grad(upload(L), upload(L_adj), tuned_by(values)));
#else
  (void)L;
  (void)L_adj;
  (void)values;
  glue::stop_no_opencl();
#endif
}
