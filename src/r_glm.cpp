// Glue for gpu_glm_lp and gpu_glm_data (R/glm.R): R objects in, the core's
// glm::glm_lp (one parameter vector) or glm::glm_lp_batch (P of them), R
// objects out.

#include "glue_eigen.hpp"
#include "glue_models.hpp"

#include <clbayes/glm/glm_batch.hpp>
#include <clbayes/glm/row_grid.hpp>

namespace glm = clbayes::glm;

using glue::as_glm_data;

// The handle keeps x, y and the offset alive through the external pointer's
// protected slot: the core borrows their memory for the CPU path. `offset`
// is NULL (none) or n doubles.
// [[Rcpp::export(.cpp_glm_data)]]
SEXP cpp_glm_data(Rcpp::NumericMatrix x, Rcpp::NumericVector y, bool upload,
                  bool check_x, SEXP offset = R_NilValue) {
#ifndef CLBAYES_OPENCL
  if (upload) glue::stop_no_opencl();
#endif
  if (y.size() != x.nrow())
    Rcpp::stop("`y` has length %d but `x` has %d rows", static_cast<int>(y.size()),
               x.nrow());
  const double* off = nullptr;
  if (!Rf_isNull(offset)) {
    if (TYPEOF(offset) != REALSXP || Rf_xlength(offset) != x.nrow())
      Rcpp::stop("`offset` must be a double vector of length nrow(x) = %d", x.nrow());
    off = REAL(offset);
  }
  glm::glm_data d = glm::make_glm_data(x.begin(), y.begin(), x.nrow(), x.ncol(), upload,
                                       check_x, off);
  Rcpp::XPtr<glm::glm_data> ptr(new glm::glm_data(std::move(d)), true, R_NilValue,
                                Rcpp::List::create(x, y, offset));
  return ptr;
}

// n, k, and whether the data have an offset (1 or 0).
// [[Rcpp::export(.cpp_glm_data_dim)]]
Rcpp::IntegerVector cpp_glm_data_dim(SEXP ptr) {
  const glm::glm_data& d = as_glm_data(ptr);
  return Rcpp::IntegerVector::create(d.n, d.k, d.offset != nullptr ? 1 : 0);
}

// [[Rcpp::export(.cpp_glm_lp)]]
Rcpp::List cpp_glm_lp(SEXP data, std::string family, Rcpp::NumericVector alpha,
                      Rcpp::NumericMatrix beta, Rcpp::NumericVector extra,
                      bool gradient, bool propto, bool use_device) {
#ifndef CLBAYES_OPENCL
  if (use_device) glue::stop_no_opencl();
#endif
  const glm::glm_data& d = as_glm_data(data);
  if (beta.nrow() != d.k)
    Rcpp::stop("`beta` must have ncol(x) = %d rows (values), not %d", d.k, beta.nrow());
  glm::glm_params p;
  p.fam = glm::parse_family(family);
  p.alpha = alpha.begin();
  p.n_alpha = static_cast<int>(alpha.size());
  p.beta = beta.begin();
  p.n_eta = beta.ncol();
  p.extra = extra.begin();
  p.n_extra = static_cast<int>(extra.size());
  glm::glm_result r = glm::glm_lp(d, p, gradient, propto, use_device);
  if (!gradient) return Rcpp::List::create(Rcpp::Named("value") = r.value);
  Rcpp::NumericMatrix d_beta(d.k, p.n_eta);
  std::copy(r.d_beta.begin(), r.d_beta.end(), d_beta.begin());
  return Rcpp::List::create(
      Rcpp::Named("value") = r.value,
      Rcpp::Named("alpha") = Rcpp::NumericVector(r.d_alpha.begin(), r.d_alpha.end()),
      Rcpp::Named("beta") = d_beta,
      Rcpp::Named("extra") = Rcpp::NumericVector(r.d_extra.begin(), r.d_extra.end()));
}

// [[Rcpp::export(.cpp_glm_data_on_device)]]
bool cpp_glm_data_on_device(SEXP ptr) {
#ifdef CLBAYES_OPENCL
  const glm::glm_data& d = as_glm_data(ptr);
  return static_cast<bool>(d.device) && d.device->x.on_current_device();
#else
  as_glm_data(ptr);
  return false;
#endif
}

// P points of a scalar family (glm::glm_lp_batch): alpha and extra have P
// values (R recycles them), beta is k x P. `path` ("auto", "single",
// "fused", "mma" or "gemm") forces a device path and `max_block_bytes` > 0 bounds
// the GEMM path's block, so that the tests reach every path and several
// passes (glm::glm_batch_settings).
// [[Rcpp::export(.cpp_glm_lp_batch)]]
Rcpp::List cpp_glm_lp_batch(SEXP data, std::string family, Rcpp::NumericVector alpha,
                            Rcpp::NumericMatrix beta, Rcpp::NumericVector extra,
                            bool gradient, bool propto, bool use_device,
                            std::string path = "auto", double max_block_bytes = 0) {
#ifndef CLBAYES_OPENCL
  if (use_device) glue::stop_no_opencl();
#endif
  const glm::glm_data& d = as_glm_data(data);
  const int P = beta.ncol();
  if (beta.nrow() != d.k || alpha.size() != P || (extra.size() != 0 && extra.size() != P))
    Rcpp::stop("`beta` must be ncol(x) x P with P values of `alpha` (and of sigma / phi)");
  glm::glm_batch_params p;
  p.fam = glm::parse_family(family);
  p.n_points = P;
  p.alpha = alpha.begin();
  p.beta = beta.begin();
  p.extra = extra.size() > 0 ? extra.begin() : nullptr;
  glm::glm_batch_settings tune;
#ifdef CLBAYES_OPENCL
  if (use_device) tune = glm::tuned_batch_settings();
#endif
  tune.max_block_bytes = max_block_bytes;
  if (path == "single") {
    tune.single_calls_max = P;
    tune.mma_max_k = 0;
  } else if (path == "fused") {
    tune.single_calls_max = 0;
    tune.fused_max = P;
    tune.mma_max_k = 0;
  } else if (path == "mma") {  // emulated where the device has no FP64 mma
    tune.mma_from = 2;
    tune.mma_max_k = std::max(d.k, 1);
    tune.mma_neg_binomial = true;
  } else if (path == "gemm") {
    tune.single_calls_max = 0;
    tune.fused_max = 0;
    tune.mma_max_k = 0;
  } else if (path != "auto") {
    Rcpp::stop("`path` must be \"auto\", \"single\", \"fused\", \"mma\" or \"gemm\"");
  }
  const glm::glm_batch_result r = glm::glm_lp_batch(d, p, gradient, propto, use_device, tune);
  Rcpp::NumericVector value(r.value.data(), r.value.data() + P);
  if (!gradient) return Rcpp::List::create(Rcpp::Named("value") = value);
  return Rcpp::List::create(
      Rcpp::Named("value") = value,
      Rcpp::Named("alpha") = Rcpp::NumericVector(r.d_alpha.data(), r.d_alpha.data() + P),
      Rcpp::Named("beta") = glue::as_r(r.d_beta),
      Rcpp::Named("extra") =
          Rcpp::NumericVector(r.d_extra.data(), r.d_extra.data() + r.d_extra.size()));
}

// The row math of a scalar family at (y, eta, extra), by the C++ twin (in
// lanes of `width` rows: 1, or glm::lane_width when 0) or on the device
// (glm::row_grid): an m x 3 matrix of lp, d / d eta, d / d extra. For the
// tests only.
// [[Rcpp::export(.cpp_glm_row_grid)]]
Rcpp::NumericMatrix cpp_glm_row_grid(std::string family, Rcpp::NumericVector y,
                                     Rcpp::NumericVector eta, Rcpp::NumericVector extra,
                                     bool propto, bool use_device, int width = 0) {
#ifndef CLBAYES_OPENCL
  if (use_device) glue::stop_no_opencl();
#endif
  const int m = static_cast<int>(y.size());
  if (eta.size() != m || extra.size() != m)
    Rcpp::stop("`y`, `eta` and `extra` must have the same length");
  Rcpp::NumericMatrix out(m, 3);
  glm::row_grid(glm::parse_family(family), y.begin(), eta.begin(), extra.begin(), m, propto,
                use_device, out.begin(), width == 1 ? 1 : glm::lane_width);
  return out;
}
