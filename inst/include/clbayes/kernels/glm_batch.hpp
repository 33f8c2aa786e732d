#ifndef CLBAYES_KERNELS_GLM_BATCH_HPP
#define CLBAYES_KERNELS_GLM_BATCH_HPP

// The row math of P points of a GLM at once (glm/glm_batch_opencl.hpp):
// the linear predictors of the points are an n x P block (X B, made by the
// GEMM of linalg/gemm.hpp); this kernel applies the family's row formulas
// (kernels/glm_row_math.hpp) to every entry, sums each point's log density
// and its derivatives by alpha and sigma|phi over the rows inside the kernel
// (one partial row per group of rows, finished by glm_lp_reduce), and
// overwrites the block with d lp / d eta for the gradient product X' D.

#include "../opencl/kernel_cl.hpp"
#include "glm_row_math.hpp"

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {
namespace kernels {

inline const char* glm_batch_rows_source = R"(
/**
 * Group (g, j) visits rows g * BATCH_WG + lid, stepping by the size of
 * dimension 0, of column j (point j) of the m x P block eta_d (leading
 * dimension ld); row r of the block is row row0 + r of the data.
 *
 * partials    in/out, groups x 3P: [g * 3P + j] the log density of point j
 *             over the rows of group g, [.. + P + j] its d alpha, [.. + 2P + j]
 *             its d sigma|phi; written when accumulate is 0, else added to
 * eta_d       in/out: eta without alpha in, d lp / d eta out when gradient
 * params      alpha (P values), then sigma|phi (P values) where the family
 *             has one
 * Local size BATCH_WG (a power of two); global (groups * BATCH_WG, P).
 */
__kernel __attribute__((reqd_work_group_size(BATCH_WG, 1, 1)))
void glm_batch_rows(__global double* partials, __global double* eta_d,
                    __global const double* y, __global const double* params,
                    int row0, int m, int ld, int n_points, int gradient, int propto,
                    int accumulate) {
  __local double red[3 * BATCH_WG];
  const int lid = get_local_id(0);
  const int g = get_group_id(0);
  const int j = get_group_id(1);
  const int step = get_num_groups(0) * BATCH_WG;
  const double al = params[j];
  const double ex = FAMILY_EXTRA ? params[n_points + j] : 0.0;
  __global double* col = eta_d + (long)j * ld;
  double lp = 0.0, da = 0.0, dx = 0.0;
  for (int r = g * BATCH_WG + lid; r < m; r += step) {
    double d, d_ex;
    lp += scalar_row(y[row0 + r], col[r] + al, ex, propto, &d, &d_ex);
    da += d;
    dx += d_ex;
    if (gradient) col[r] = d;
  }
  red[lid] = lp;
  red[BATCH_WG + lid] = da;
  red[2 * BATCH_WG + lid] = dx;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = BATCH_WG / 2; h > 0; h >>= 1) {
    if (lid < h) {
      red[lid] += red[lid + h];
      red[BATCH_WG + lid] += red[BATCH_WG + lid + h];
      red[2 * BATCH_WG + lid] += red[2 * BATCH_WG + lid + h];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid < 3) {
    __global double* out = partials + (long)g * 3 * n_points + lid * n_points + j;
    const double v = red[lid * BATCH_WG];
    *out = accumulate ? *out + v : v;
  }
}
)";

inline const char* glm_batch_rows_program() {
  static const std::string text = glm_program(glm_batch_rows_source);
  return text.c_str();
}

/** Options: FAMILY (glm::family, a scalar family), BATCH_WG. */
inline kernel_cl<in_out_buffer, in_out_buffer, in_buffer, in_buffer, int, int, int, int, int,
                 int, int>
    glm_batch_rows("glm_batch_rows", glm_batch_rows_program(),
                   {{"FAMILY", 1}, {"BATCH_WG", 256}});

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
