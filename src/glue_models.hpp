#ifndef CLBAYES_GLUE_MODELS_HPP
#define CLBAYES_GLUE_MODELS_HPP

// The data handles (gpu_glm_data, gpu_gp_data), shared by their own glue
// and the sampler's.

#include "glue.hpp"
#include <clbayes/batched/gp_loglik.hpp>
#include <clbayes/glm/glm_lp.hpp>
#include <clbayes/mcmc/evaluator.hpp>

#include <cmath>
#include <cstdint>
#include <memory>

namespace glue {

inline clbayes::glm::glm_data& as_glm_data(SEXP ptr) {
  if (TYPEOF(ptr) != EXTPTRSXP) Rcpp::stop("`x` must be a gpu_glm_data object");
  auto* d = static_cast<clbayes::glm::glm_data*>(R_ExternalPtrAddr(ptr));
  if (d == nullptr)
    Rcpp::stop("`x` is an invalid gpu_glm_data object (it does not survive saving "
               "and reloading, or a new R session); create it again");
  return *d;
}

/** The GP likelihood behind a gpu_gp_data handle's pointer. */
inline clbayes::batched::gp_loglik& as_gp_loglik(SEXP ptr, const char* arg) {
  if (TYPEOF(ptr) != EXTPTRSXP) Rcpp::stop("`%s` must be a gpu_gp_data object", arg);
  auto* d = static_cast<clbayes::batched::gp_loglik*>(R_ExternalPtrAddr(ptr));
  if (d == nullptr)
    Rcpp::stop("`%s` is an invalid gpu_gp_data object (it does not survive saving "
               "and reloading); create it again with gpu_gp_data()", arg);
  return *d;
}

/** A sampler's seed from R (a double holding a whole number in [0, 2^53)). */
inline std::uint64_t as_seed(double seed) {
  if (!(seed >= 0) || seed >= 9007199254740992.0 || std::floor(seed) != seed)
    throw clbayes::invalid_argument("seed", "must be a whole number in [0, 2^53)");
  return static_cast<std::uint64_t>(seed);
}

/** The evaluator for a sampler's target: an R function of a matrix of
 *  points (with `gradient`, an R function of the same matrix giving the
 *  gradients, or NULL), or a clbayes model object (r_models.cpp). */
std::unique_ptr<clbayes::mcmc::batch_evaluator> make_evaluator(
    SEXP target, SEXP gradient = R_NilValue);

}  // namespace glue

#endif
