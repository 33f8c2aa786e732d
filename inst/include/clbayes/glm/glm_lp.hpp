#ifndef CLBAYES_GLM_GLM_LP_HPP
#define CLBAYES_GLM_GLM_LP_HPP

// glm_lp: the checked entry point. The same signature runs the Eigen CPU
// path or the device path; glm_data (host data with its y summary, and on
// request a resident device copy) is what an MCMC loop keeps between calls.

#include "family.hpp"
#include "glm_cpu.hpp"
#include "glm_opencl.hpp"

#include <cmath>
#include <memory>

namespace clbayes {
namespace glm {

/** Data of a GLM: borrowed host arrays (x n x k column-major, y n, and an
 *  optional offset of n values added to every linear predictor, as the
 *  offset of R's glm()), the summary of y, and optionally a device copy of
 *  all three that outlives the call. */
struct glm_data {
  const double* x = nullptr;
  const double* y = nullptr;
  const double* offset = nullptr;   // null: no offset
  const double* weights = nullptr;  // null: every row weighs 1
  int n = 0;
  int k = 0;
  y_summary ys;
#ifdef CLBAYES_OPENCL
  std::shared_ptr<glm_data_cl> device;
#endif
};

/** Describe host data. With `upload` copy x, y (and the offset) to the
 *  selected device and check there that x is finite; without, check x on
 *  the host when `check_x` (the CPU path checks each block anyway, so a
 *  one-off call can skip this extra pass). `offset`: n values, or null for
 *  none; checked finite here. `weights`: n non-negative values multiplying
 *  the rows' log densities (R's prior weights), or null; a likelihood with
 *  weights runs on the CPU path, which the host copy is kept for. */
inline glm_data make_glm_data(const double* x, const double* y, int n, int k,
                              bool upload, bool check_x = true,
                              const double* offset = nullptr,
                              const double* weights = nullptr) {
  glm_data d;
  d.x = x;
  d.y = y;
  d.offset = offset;
  d.weights = weights;
  if (weights != nullptr)
    for (int i = 0; i < n; ++i)
      if (!(weights[i] >= 0) || !std::isfinite(weights[i]))
        throw invalid_argument("weights", "must be non-negative and finite (no NA)");
  d.n = n;
  d.k = k;
  d.ys = summarise_y(y, n);
  if (!d.ys.finite) throw invalid_argument("y", "must be finite (no NA, NaN or Inf)");
  if (offset != nullptr)
    for (int i = 0; i < n; ++i)
      if (!(offset[i] - offset[i] == 0))
        throw invalid_argument("offset", "must be finite (no NA, NaN or Inf)");
  if (!upload && check_x)
    for (long long i = 0; i < static_cast<long long>(n) * k; ++i)
      if (!(x[i] - x[i] == 0)) throw invalid_argument("x", "contains NA, NaN or infinite values");
#ifdef CLBAYES_OPENCL
  if (upload) d.device = std::make_shared<glm_data_cl>(to_glm_data_cl(x, y, n, k, offset));
#else
  if (upload) throw no_device("clbayes was built without OpenCL");
#endif
  return d;
}

/** `on_host()` on the host copy of the data, or, when `use_device`,
 *  `on_device(d)` with d the resident device copy (or one uploaded for this
 *  call). Shared by glm_lp and glm_lp_batch. */
template <typename OnHost, typename OnDevice>
inline auto on_backend(const glm_data& data, bool use_device, OnHost on_host,
                       OnDevice on_device) -> decltype(on_host()) {
  if (!use_device) {
    if (data.x == nullptr && data.n > 0)
      throw invalid_argument("x", "has no host copy; use backend = \"opencl\"");
    return on_host();
  }
#ifdef CLBAYES_OPENCL
  if (data.device) return on_device(*data.device);
  const glm_data_cl tmp = to_glm_data_cl(data.x, data.y, data.n, data.k, data.offset);
  return on_device(tmp);
#else
  (void)on_device;
  throw no_device("clbayes was built without OpenCL");
#endif
}

/**
 * Log density of the GLM with its gradient when `gradient`, on the device
 * when `use_device` (uploading x and y unless data.device holds them) and
 * the data have no weights, else on the CPU. Every argument is checked; errors name the argument.
 */
inline glm_result glm_lp(const glm_data& data, const glm_params& p, bool gradient,
                         bool propto, bool use_device) {
  check_glm_shapes(p, data.n, data.k);
  check_glm_offset(p.fam, data.offset != nullptr);
  check_glm_values(p, data.k);
  check_glm_y(p, data.ys, data.n);
  return on_backend(
      data, use_device && data.weights == nullptr,
      [&] {
        return glm_lp_cpu(data.x, data.y, data.n, data.k, p, gradient, propto, data.offset,
                          data.weights);
      },
      [&](const auto& d) { return glm_lp_opencl(d, p, gradient, propto); });
}

}  // namespace glm
}  // namespace clbayes

#endif
