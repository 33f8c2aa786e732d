#ifndef CLBAYES_GLUE_GLM_HPP
#define CLBAYES_GLUE_GLM_HPP

// The batched GLM likelihood from R objects, shared by gpu_glm_lp()'s glue
// (r_glm.cpp) and the tests' entry that forces a device path
// (r_testing.cpp).

#include "glue_eigen.hpp"
#include "glue_models.hpp"

#include <clbayes/glm/glm_batch.hpp>

namespace glue {

/** P points of a scalar family at the link named `link` ("" for its own)
 *  (glm::glm_lp_batch): alpha and extra have P
 *  values (R recycles them), beta is k x P. `adjust(settings, P, k)` may
 *  change the settings the device path would use. */
template <typename Adjust>
Rcpp::List glm_lp_batch(SEXP data, const std::string& family, const std::string& link,
                        Rcpp::NumericVector alpha,
                        Rcpp::NumericMatrix beta, Rcpp::NumericVector extra, bool gradient,
                        bool propto, bool use_device, Adjust adjust) {
  namespace glm = clbayes::glm;
#ifndef CLBAYES_OPENCL
  if (use_device) stop_no_opencl();
#endif
  const glm::glm_data& d = as_glm_data(data);
  const int P = beta.ncol();
  if (beta.nrow() != d.k || alpha.size() != P || (extra.size() != 0 && extra.size() != P))
    Rcpp::stop("`beta` must be ncol(x) x P with P values of `alpha` (and of sigma / phi)");
  glm::glm_batch_params p;
  p.fam = glm::parse_family(family);
  p.lk = glm::parse_link(p.fam, link);
  p.n_points = P;
  p.alpha = alpha.begin();
  p.beta = beta.begin();
  p.extra = extra.size() > 0 ? extra.begin() : nullptr;
  glm::glm_batch_settings tune;
#ifdef CLBAYES_OPENCL
  if (use_device) tune = glm::tuned_batch_settings();
#endif
  adjust(tune, P, d.k);
  const glm::glm_batch_result r = glm::glm_lp_batch(d, p, gradient, propto, use_device, tune);
  Rcpp::NumericVector value(r.value.data(), r.value.data() + P);
  if (!gradient) return Rcpp::List::create(Rcpp::Named("value") = value);
  return Rcpp::List::create(
      Rcpp::Named("value") = value,
      Rcpp::Named("alpha") = Rcpp::NumericVector(r.d_alpha.data(), r.d_alpha.data() + P),
      Rcpp::Named("beta") = as_r(r.d_beta),
      Rcpp::Named("extra") =
          Rcpp::NumericVector(r.d_extra.data(), r.d_extra.data() + r.d_extra.size()));
}

}  // namespace glue

#endif
