// Glue for gpu_glm_lp and gpu_glm_data (R/glm.R): R objects in, the core's
// glm::glm_lp (one parameter vector) or glm::glm_lp_batch (P of them), R
// objects out.

#include "glue_eigen.hpp"
#include "glue_glm.hpp"
#include "glue_models.hpp"

#include <clbayes/glm/glm_batch.hpp>

namespace glm = clbayes::glm;

using glue::as_glm_data;

// The core's table of GLM families (glm::family_table), one row per
// family: what R/families.R reads for names, extra parameters and links.
// [[Rcpp::export(.cpp_glm_family_table)]]
Rcpp::DataFrame cpp_glm_family_table() {
  const int m = glm::n_families;
  Rcpp::CharacterVector name(m), r_name(m), extra(m), canonical(m), links(m);
  Rcpp::LogicalVector scalar(m);
  for (int i = 0; i < m; ++i) {
    const glm::family_info& fi = glm::family_table[i];
    name[i] = fi.name;
    r_name[i] = fi.r_name;
    extra[i] = fi.extra;
    scalar[i] = fi.scalar;
    canonical[i] = glm::link_name(fi.canonical);
    std::string all;
    for (int l = 0; l < glm::n_links; ++l)
      if (fi.links & (1u << l)) all += std::string(all.empty() ? "" : ",") + glm::link_names[l];
    links[i] = all;
  }
  return Rcpp::DataFrame::create(
      Rcpp::Named("name") = name, Rcpp::Named("r_name") = r_name, Rcpp::Named("extra") = extra,
      Rcpp::Named("scalar") = scalar, Rcpp::Named("link") = canonical,
      Rcpp::Named("links") = links, Rcpp::Named("stringsAsFactors") = false);
}

// The handle keeps x, y, the offset and the weights alive through the
// external pointer's protected slot: the core borrows their memory for the
// CPU path. `offset` and `weights` are NULL (none) or n doubles.
// [[Rcpp::export(.cpp_glm_data)]]
SEXP cpp_glm_data(Rcpp::NumericMatrix x, Rcpp::NumericVector y, bool upload,
                  bool check_x, SEXP offset = R_NilValue, SEXP weights = R_NilValue) {
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
  const double* w = nullptr;
  if (!Rf_isNull(weights)) {
    if (TYPEOF(weights) != REALSXP || Rf_xlength(weights) != x.nrow())
      Rcpp::stop("`weights` must be a double vector of length nrow(x) = %d", x.nrow());
    w = REAL(weights);
  }
  glm::glm_data d = glm::make_glm_data(x.begin(), y.begin(), x.nrow(), x.ncol(), upload,
                                       check_x, off, w);
  Rcpp::XPtr<glm::glm_data> ptr(new glm::glm_data(std::move(d)), true, R_NilValue,
                                Rcpp::List::create(x, y, offset, weights));
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
                      bool gradient, bool propto, bool use_device, std::string link = "") {
#ifndef CLBAYES_OPENCL
  if (use_device) glue::stop_no_opencl();
#endif
  const glm::glm_data& d = as_glm_data(data);
  if (beta.nrow() != d.k)
    Rcpp::stop("`beta` must have ncol(x) = %d rows (values), not %d", d.k, beta.nrow());
  glm::glm_params p;
  p.fam = glm::parse_family(family);
  p.lk = glm::parse_link(p.fam, link);
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
// values (R recycles them), beta is k x P; the device's own choice of path.
// [[Rcpp::export(.cpp_glm_lp_batch)]]
Rcpp::List cpp_glm_lp_batch(SEXP data, std::string family, Rcpp::NumericVector alpha,
                            Rcpp::NumericMatrix beta, Rcpp::NumericVector extra,
                            bool gradient, bool propto, bool use_device,
                            std::string link = "") {
  return glue::glm_lp_batch(data, family, link, alpha, beta, extra, gradient, propto,
                            use_device,
                            [](clbayes::glm::glm_batch_settings&, int, int) {});
}
