#ifndef CLBAYES_GLUE_GLM_HPP
#define CLBAYES_GLUE_GLM_HPP

// The gpu_glm_data handle, shared by the GLM glue and the sampler glue.

#include "glue.hpp"
#include <clbayes/glm/glm_lp.hpp>

namespace glue {

inline clbayes::glm::glm_data& as_glm_data(SEXP ptr) {
  if (TYPEOF(ptr) != EXTPTRSXP) Rcpp::stop("`x` must be a gpu_glm_data object");
  auto* d = static_cast<clbayes::glm::glm_data*>(R_ExternalPtrAddr(ptr));
  if (d == nullptr)
    Rcpp::stop("`x` is an invalid gpu_glm_data object (it does not survive saving "
               "and reloading, or a new R session); create it again");
  return *d;
}

}  // namespace glue

#endif
