#ifndef CLBAYES_GLM_GLM_OPENCL_HPP
#define CLBAYES_GLM_GLM_OPENCL_HPP

// The device path of glm_lp: data resident on the device (glm_data_cl, made
// once), parameters uploaded per call (a few kilobytes), one fused kernel
// (kernels/glm_lp.hpp), and the per-group partial sums finished on the host
// (stan-opencl.txt section 3.4).

#include "../kernels/glm_lp.hpp"
#include "../opencl/checks.hpp"
#include "../opencl/transfer.hpp"
#include "family.hpp"

#include <algorithm>
#include <vector>

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace glm {

/** x (n x k) and y (n) on the selected device. */
struct glm_data_cl {
  opencl::matrix_cl x;
  opencl::matrix_cl y;
  int n = 0;
  int k = 0;
};

/** Copy x and y to the device once; checks x for NaN / Inf there. */
inline glm_data_cl to_glm_data_cl(const double* x, const double* y, int n, int k) {
  glm_data_cl d;
  d.n = n;
  d.k = k;
  d.x = opencl::to_matrix_cl(x, n, k);
  d.y = opencl::to_matrix_cl(y, n, 1);
  if (opencl::has_nonfinite(d.x))
    throw invalid_argument("x", "contains NA, NaN or infinite values");
  return d;
}

/** Work-group shape of the fused kernel; tuning knobs with their defaults. */
struct glm_launch {
  int rows = 32;          // ROWS: rows per block (power of two)
  int chunk = 8;          // CHUNK: columns per work item (target)
  int max_group = 512;    // cap on ROWS * PARTS (registers per work item)
  int groups_per_cu = 8;  // persistent groups per compute unit
};

namespace internal {

/** A device copy of m values, padded to one element so that a kernel
 *  argument always has a buffer. */
inline opencl::matrix_cl upload(const double* v, long long m) {
  const double zero = 0;
  if (m <= 0) return opencl::to_matrix_cl(&zero, 1, 1);
  return opencl::to_matrix_cl(v, static_cast<int>(m), 1);
}

}  // namespace internal

/**
 * The device path of glm_lp for data already on the device: same contract
 * as glm_lp_cpu (values of the parameters and y are the caller's to check).
 */
inline glm_result glm_lp_opencl(const glm_data_cl& data, const glm_params& p,
                                bool gradient, bool propto,
                                const glm_launch& tune = glm_launch()) {
  const int n = data.n, k = data.k, ne = p.n_eta;
  check_glm_shapes(p, n, k);
  glm_result res;
  if (gradient) {
    res.d_alpha.assign(p.n_alpha, 0.0);
    res.d_beta.assign(static_cast<std::size_t>(k) * ne, 0.0);
    res.d_extra.assign(p.n_extra, 0.0);
  }
  if (n == 0) return res;
  opencl::context& ctx = opencl::context::instance();
  const opencl::device_info& info = ctx.info();

  // Shape: PARTS items share a row, CHUNK columns each, in registers.
  const int max_wg = static_cast<int>(
      std::min<std::size_t>(info.max_work_group_size, static_cast<std::size_t>(tune.max_group)));
  int rows = tune.rows;
  while (rows > 1 && rows > max_wg) rows /= 2;
  int chunk = std::max(1, tune.chunk / std::min(ne, tune.chunk));
  int parts = std::max(1, (k + chunk - 1) / chunk);
  if (parts * rows > max_wg) {
    parts = std::max(1, max_wg / rows);
    chunk = (k + parts - 1) / parts;
    parts = (k + chunk - 1) / chunk;
  }
  // Local memory: NETA * WG + (NETA + 3) * ROWS + cuts doubles.
  const int n_cuts = p.fam == family::ordered_logistic ? p.n_extra : 0;
  auto local_bytes = [&](int rw) {
    return sizeof(double) * (static_cast<std::size_t>(ne) * rw * parts +
                             static_cast<std::size_t>(ne + 3) * rw + std::max(n_cuts, 1));
  };
  while (rows > 1 && local_bytes(rows) > info.local_mem / 2) rows /= 2;
  if (local_bytes(rows) > info.local_mem)
    throw invalid_argument("beta", "has too many columns for the device's local memory; "
                                   "use backend = \"cpu\"");

  const long long blocks = (static_cast<long long>(n) + rows - 1) / rows;
  const int groups = static_cast<int>(
      std::max<long long>(1, std::min<long long>(blocks, static_cast<long long>(info.compute_units) *
                                                             tune.groups_per_cu)));
  const long long stride = 2 + ne + static_cast<long long>(k) * ne + n_cuts;

  const bool cat = p.fam == family::categorical_logit;
  const int alpha_per_row = !cat && p.n_alpha > 1 ? 1 : 0;
  const int extra_per_row = n_cuts == 0 && p.n_extra > 1 ? 1 : 0;
  const bool row_out = gradient && (alpha_per_row || extra_per_row);

  opencl::matrix_cl partials(static_cast<int>(groups * stride), 1);
  opencl::matrix_cl row_grad(row_out ? n : 1, row_out ? 2 : 1);
  opencl::matrix_cl alpha = internal::upload(p.alpha, p.n_alpha);
  opencl::matrix_cl beta = internal::upload(p.beta, static_cast<long long>(k) * ne);
  opencl::matrix_cl extra = internal::upload(p.extra, p.n_extra);

  auto& kern = opencl::kernels::glm_lp;
  kern.set_option("FAMILY", static_cast<int>(p.fam));
  kern.set_option("NETA", ne);
  kern.set_option("ROWS", rows);
  kern.set_option("PARTS", parts);
  kern.set_option("CHUNK", chunk);
  const int wg = rows * parts;
  kern(cl::NDRange(static_cast<std::size_t>(groups) * wg), cl::NDRange(wg), partials,
       row_grad, data.x, data.y, alpha, beta, extra, n, k, alpha_per_row, extra_per_row,
       n_cuts, gradient ? 1 : 0, propto ? 1 : 0,
       cl::Local(sizeof(double) * ne * wg), cl::Local(sizeof(double) * (ne + 3) * rows),
       cl::Local(sizeof(double) * std::max(n_cuts, 1)));

  std::vector<double> part(static_cast<std::size_t>(groups * stride));
  opencl::from_matrix_cl(partials, part.data());
  std::vector<double> rg;
  if (row_out) {
    rg.resize(static_cast<std::size_t>(2) * n);
    opencl::from_matrix_cl(row_grad, rg.data());
  }

  for (int g = 0; g < groups; ++g) res.value += part[g * stride];
  if (!gradient) return res;
  for (int g = 0; g < groups; ++g) {
    const double* q = &part[g * stride];
    if (!alpha_per_row)
      for (int e = 0; e < p.n_alpha; ++e) res.d_alpha[e] += q[1 + e];
    for (long long j = 0; j < static_cast<long long>(k) * ne; ++j)
      res.d_beta[j] += q[1 + ne + j];
    if (n_cuts > 0) {
      for (int c = 0; c < n_cuts; ++c) res.d_extra[c] += q[2 + ne + static_cast<long long>(k) * ne + c];
    } else if (p.n_extra == 1) {
      res.d_extra[0] += q[1 + ne + static_cast<long long>(k) * ne];
    }
  }
  if (alpha_per_row) std::copy(rg.begin(), rg.begin() + n, res.d_alpha.begin());
  if (extra_per_row) std::copy(rg.begin() + n, rg.end(), res.d_extra.begin());
  return res;
}

}  // namespace glm
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
