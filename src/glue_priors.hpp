#ifndef CLBAYES_GLUE_PRIORS_HPP
#define CLBAYES_GLUE_PRIORS_HPP

// A GLM model's priors from R (R/prior-table.R): the prior table, one row
// per parameter, and the regularised horseshoe's description.

#include "glue.hpp"
#include <clbayes/models/horseshoe.hpp>
#include <clbayes/models/priors.hpp>

#include <string>
#include <vector>

namespace glue {

namespace cmod = clbayes::models;

// The priors of a model's parameters from its `priors` table
// (R/prior-table.R: prior_table()): columns dist, df, location, scale, arg,
// shape and shape2, one row per parameter.
inline cmod::prior_set as_prior_set(Rcpp::List table) {
  Rcpp::CharacterVector dist = table["dist"], arg = table["arg"];
  Rcpp::NumericVector df = table["df"], location = table["location"], scale = table["scale"];
  const bool has_shapes = table.containsElementNamed("shape");
  Rcpp::NumericVector shape = has_shapes ? table["shape"] : Rcpp::NumericVector(),
                      shape2 = has_shapes ? table["shape2"] : Rcpp::NumericVector();
  std::vector<cmod::scalar_prior> priors(dist.size());
  std::vector<std::string> args(dist.size());
  for (R_xlen_t j = 0; j < dist.size(); ++j) {
    const std::string d = Rcpp::as<std::string>(dist[j]);
    cmod::scalar_prior& p = priors[j];
    if (d == "normal") p.fam = cmod::prior_family::normal;
    else if (d == "student_t") p.fam = cmod::prior_family::student_t;
    else if (d == "exponential") p.fam = cmod::prior_family::exponential;
    else if (d == "flat") p.fam = cmod::prior_family::flat;
    else if (d == "gamma") p.fam = cmod::prior_family::gamma;
    else if (d == "beta") p.fam = cmod::prior_family::beta;
    else if (d == "laplace") p.fam = cmod::prior_family::laplace;
    else if (d == "inv_gamma") p.fam = cmod::prior_family::inv_gamma;
    else throw clbayes::invalid_argument("prior", "has an unknown distribution \"" + d + "\"");
    p.df = df[j];
    p.location = location[j];
    p.scale = scale[j];
    if (has_shapes) {
      p.shape = shape[j];
      p.shape2 = shape2[j];
    }
    args[j] = Rcpp::as<std::string>(arg[j]);
  }
  return cmod::prior_set(std::move(priors), args);
}

// The regularised horseshoe of a glm_model's coefficients (its `horseshoe`,
// a list with k, global_scale and slab_scale: R/models.R,
// glm_model_build()), or none.
inline cmod::horseshoe as_horseshoe(Rcpp::List model) {
  cmod::horseshoe hs;
  if (!model.containsElementNamed("horseshoe") || Rf_isNull(model["horseshoe"])) return hs;
  Rcpp::List h = model["horseshoe"];
  hs.k = Rcpp::as<int>(h["k"]);
  hs.global_scale = Rcpp::as<double>(h["global_scale"]);
  hs.slab_scale = Rcpp::as<double>(h["slab_scale"]);
  return hs;
}

}  // namespace glue

#endif
