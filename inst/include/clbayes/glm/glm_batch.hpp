#ifndef CLBAYES_GLM_GLM_BATCH_HPP
#define CLBAYES_GLM_GLM_BATCH_HPP

// The log-likelihood of P parameter vectors at once (every chain's point of
// one sampler step), reading x once per call: the linear predictors of all
// points are one product X B (n x P), the family's row math runs over that
// block, and the gradient is X' D with D the n x P derivatives d lp / d eta.
// For the four families with one linear predictor (normal_id,
// bernoulli_logit, poisson_log, neg_binomial_2_log); each point has its own
// scalar alpha and, where the family has one, its own sigma or phi. The CPU
// path is glm_batch_cpu.hpp, the device path glm_batch_opencl.hpp.

#include "batch_params.hpp"
#include "glm_batch_cpu.hpp"
#include "glm_batch_opencl.hpp"
#include "glm_lp.hpp"

#include <optional>

namespace clbayes {
namespace glm {

/**
 * Log-likelihoods (and gradients when `gradient`) of the P points of `p`
 * for the data `data`, on the device when `use_device` (uploading x and y
 * unless data.device holds them) and the data have no weights, else on the
 * CPU. Every argument is
 * checked; errors name the argument. `tune`: the device path's settings
 * (by default the selected device's, tuned_batch_settings).
 */
inline glm_batch_result glm_lp_batch(const glm_data& data, const glm_batch_params& p,
                                     bool gradient, bool propto, bool use_device,
                                     const std::optional<glm_batch_settings>& tune = std::nullopt) {
  check_glm_batch(p, data.k);
  glm_params one;  // the support of y is checked as for one point
  one.fam = p.fam;
  one.lk = p.lk;
  one.n_alpha = 1;
  one.n_extra = p.extra != nullptr ? 1 : 0;
  check_glm_y(one, data.ys, data.n);
  return on_backend(
      data, use_device && data.weights == nullptr,
      [&] {
        return glm_lp_batch_cpu(data.x, data.y, data.n, data.k, p, gradient, propto,
                                data.offset, data.weights);
      },
      [&](const auto& d) { return glm_lp_batch_opencl(d, p, gradient, propto, tune); });
}

}  // namespace glm
}  // namespace clbayes

#endif
