#ifndef CLBAYES_KERNELS_GLM_LP_HPP
#define CLBAYES_KERNELS_GLM_LP_HPP

// The fused GLM kernel (stan-opencl.txt section 3.4): the log density and
// its analytic gradient in one pass over x. Stan's kernels run one thread per
// row and need a second (GEMV) kernel for the beta gradient, reading x
// twice. Here a row block stays in registers between the two products:
//
//   * a work group has ROWS x PARTS work items; item (r, p) holds columns
//     p*CHUNK .. p*CHUNK+CHUNK-1 of row r of the current block in registers,
//     together with the matching coefficients and beta-gradient sums;
//   * the PARTS partial dot products of a row meet in local memory, one item
//     per row turns them into the row's log density and d lp / d eta, which
//     go back through local memory to every item of the row, and each item
//     adds x[i, j] * d[i] to its own gradient sums: x is read once;
//   * groups stride over row blocks (a persistent grid), so the gradient sums
//     stay in registers until the end, when each group reduces them over its
//     rows and writes one partial row; glm_lp_reduce adds the partial rows.
//   * while one item per row does the row formulas, every item already
//     loads its part of the next block (software prefetch).
//
// FAMILY selects the row formulas (the numbers of glm::family), written
// once in kernels/glm_row_math.hpp; OFFSET 1 adds offset[i] to the linear
// predictor of row i (families with one linear predictor). NETA is the
// number of linear predictors (categories of categorical_logit, else 1).
// The local size is ROWS x PARTS. Tuning knobs (ROWS, CHUNK, groups) are
// chosen in glm/glm_opencl.hpp.

#include "../opencl/kernel_cl.hpp"
#include "glm_row_math.hpp"

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {
namespace kernels {

// The kernel body; its program is the row math followed by it.
inline const char* glm_lp_source = R"(
/* PARTS is the local size over ROWS, not a define: fewer program variants. */
#define WG ((int)get_local_size(0))
#define PARTS (WG / ROWS)

/* dst = columns j0 .. j0 + CHUNK - 1 of row `row` of x, zero outside x. */
#define LOAD_ROW(dst, row)                                                    \
  do {                                                                        \
    const long row_ = (row);                                                  \
    for (int c_ = 0; c_ < CHUNK; ++c_)                                        \
      dst[c_] = (row_ < n && j0 + c_ < k) ? x[(long)(j0 + c_) * n + row_] : 0.0; \
  } while (0)

/**
 * Log density of a GLM and its gradient, partial sums per work group.
 *
 * partials  out, groups x stride, stride = 2 + NETA + k * NETA + n_cuts:
 *           [lp, d alpha (NETA), d beta (k x NETA), d sigma|phi (scalar),
 *            d cuts (n_cuts)] of the rows the group visited
 * row_grad  out, per-row gradients: [i] d alpha_i when alpha_per_row,
 *           [n + i] d sigma_i or d phi_i when extra_per_row
 * x         n x k, column-major; y: n values; offset: n values, read
 *           only when OFFSET is 1
 * params    alpha (1, n or NETA values) from 0, beta (k x NETA) from
 *           beta_at, extra (sigma, phi or cuts) from extra_at
 * gradient  0: only lp is meaningful; propto: drop terms of y and x alone
 * eta_part  local, NETA * WG doubles; row_d: local, (NETA + 3) * ROWS;
 * cut_acc   local, max(n_cuts, 1) doubles
 * Local size WG = ROWS * PARTS, PARTS * CHUNK >= k; any number of groups.
 */
__kernel void glm_lp(__global double* partials, __global double* row_grad,
                     __global const double* x, __global const double* y,
                     __global const double* offset,
                     __global const double* params, int beta_at, int extra_at,
                     int n, int k,
                     int alpha_per_row, int extra_per_row, int n_cuts,
                     int gradient, int propto, __local double* eta_part,
                     __local double* row_d, __local double* cut_acc) {
  __global const double* alpha = params;
  __global const double* beta = params + beta_at;
  __global const double* extra = params + extra_at;
  const int lid = get_local_id(0);
  const int r = lid % ROWS;
  const int p = lid / ROWS;
  const int j0 = p * CHUNK;
  double b[CHUNK][NETA];
  double g[CHUNK][NETA];
  for (int c = 0; c < CHUNK; ++c)
    for (int e = 0; e < NETA; ++e) {
      b[c][e] = j0 + c < k ? beta[(long)e * k + j0 + c] : 0.0;
      g[c][e] = 0.0;
    }
  double lp_acc = 0.0, extra_acc = 0.0;
  double alpha_acc[NETA];
  for (int e = 0; e < NETA; ++e) alpha_acc[e] = 0.0;
  for (int c = lid; c < n_cuts; c += WG) cut_acc[c] = 0.0;  /* owned by lid */

  const long step = get_num_groups(0);
  double xr[CHUNK], xn[CHUNK];
  LOAD_ROW(xr, get_group_id(0) * ROWS + r);
  for (long block = get_group_id(0); block * ROWS < n; block += step) {
    const long i = block * ROWS + r;
    const int valid = i < n;
    for (int e = 0; e < NETA; ++e) {
      double s = 0.0;
      for (int c = 0; c < CHUNK; ++c) s += xr[c] * b[c][e];
      eta_part[(e * PARTS + p) * ROWS + r] = s;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (p == 0) {
      double d[NETA];
      double d_lo = 0.0, d_up = 0.0, yi = 0.0;
      for (int e = 0; e < NETA; ++e) d[e] = 0.0;
      if (valid) {
        double eta[NETA];
        for (int e = 0; e < NETA; ++e) {
          double s = 0.0;
          for (int q = 0; q < PARTS; ++q) s += eta_part[(e * PARTS + q) * ROWS + r];
          eta[e] = s;
        }
        yi = y[i];
        double lp = 0.0, dx = 0.0;
#if FAMILY == 4
        for (int e = 0; e < NETA; ++e) eta[e] += alpha[e];
        lp = categorical_logit_row(eta, NETA, (int)yi, d);
#elif FAMILY == 5
        const int yc = (int)yi;
        lp = ordered_logistic_row(yc, n_cuts, eta[0] + ROW_OFFSET(offset, i),
                                  yc > 1 ? extra[yc - 2] : 0.0,
                                  yc <= n_cuts ? extra[yc - 1] : 0.0, d, &d_lo, &d_up);
#else
        const double ex = FAMILY_EXTRA ? extra[extra_per_row ? i : 0] : 0.0;
        lp = scalar_row(yi, eta[0] + alpha[alpha_per_row ? i : 0] + ROW_OFFSET(offset, i), ex,
                        propto, d, &dx);
#endif
        lp_acc += lp;
        extra_acc += dx;
        for (int e = 0; e < NETA; ++e) alpha_acc[e] += d[e];
        if (gradient && alpha_per_row) row_grad[i] = d[0];
        if (gradient && extra_per_row) row_grad[n + i] = dx;
      }
      for (int e = 0; e < NETA; ++e) row_d[e * ROWS + r] = d[e];
      row_d[NETA * ROWS + r] = d_lo;
      row_d[(NETA + 1) * ROWS + r] = d_up;
      row_d[(NETA + 2) * ROWS + r] = yi;
    }
    /* the next block's loads overlap the row formulas and the barrier */
    LOAD_ROW(xn, (block + step) * ROWS + r);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (gradient) {
      for (int c = 0; c < CHUNK; ++c)
        for (int e = 0; e < NETA; ++e) g[c][e] += xr[c] * row_d[e * ROWS + r];
#if FAMILY == 5
      add_cut_sums(row_d, ROWS, n_cuts, lid, WG, cut_acc);
#endif
    }
    for (int c = 0; c < CHUNK; ++c) xr[c] = xn[c];
  }

  const int stride = 2 + NETA + k * NETA + n_cuts;
  __global double* out = partials + (long)get_group_id(0) * stride;
  /* Each item owns its cuts: no barrier needed. */
  if (gradient)
    for (int c = lid; c < n_cuts; c += WG) out[2 + NETA + k * NETA + c] = cut_acc[c];

  /* The group's sums over its rows. The reductions are flat on purpose (no
     early return, no barrier nested two loops deep): PoCL 3's work-group
     compiler miscompiled, or aborted on, those shapes. */
  /* lp, d alpha and d sigma|phi live in the ROWS items of part 0 */
  barrier(CLK_LOCAL_MEM_FENCE);
  if (p == 0) {
    row_d[r] = lp_acc;
    for (int e = 0; e < NETA; ++e) row_d[(1 + e) * ROWS + r] = alpha_acc[e];
    row_d[(1 + NETA) * ROWS + r] = extra_acc;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid < (gradient ? NETA + 2 : 1)) {
    double v = 0.0;
    for (int q = 0; q < ROWS; ++q) v += row_d[lid * ROWS + q];
    out[lid == NETA + 1 ? 1 + NETA + k * NETA : lid] = v;
  }
  /* d beta: one column chunk at a time, the NETA values of it at once */
  const int n_chunks = gradient ? CHUNK : 0;
  for (int c = 0; c < n_chunks; ++c) {
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int e = 0; e < NETA; ++e) eta_part[e * WG + lid] = g[c][e];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (r == 0 && j0 + c < k) {
      for (int e = 0; e < NETA; ++e) {
        double v = 0.0;
        for (int q = 0; q < ROWS; ++q) v += eta_part[e * WG + p * ROWS + q];
        out[1 + NETA + e * k + j0 + c] = v;
      }
    }
  }
}
)";

inline const char* glm_lp_reduce_source = R"(
/**
 * sums[c] = sum over g < groups of partials[g * stride + c], for the first
 * get_num_groups(0) columns: one work group of REDUCE_WG items per column,
 * a tree in local memory. Finishes glm_lp's partial sums on the device, so
 * that only `stride` numbers cross the bus. Also zeroes `counter` (an int).
 */
__kernel void glm_lp_reduce(__global double* sums, __global const double* partials,
                            __global int* counter, int groups, int stride) {
  __local double s[REDUCE_WG];
  const int c = get_group_id(0);
  const int lid = get_local_id(0);
  double v = 0.0;
  for (int g = lid; g < groups; g += REDUCE_WG) v += partials[(long)g * stride + c];
  s[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = REDUCE_WG / 2; h > 0; h >>= 1) {
    if (lid < h) s[lid] += s[lid + h];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) sums[c] = s[0];
  /* glm_lp_tiled's tile counter, ready for the next call */
  if (c == 0 && lid == 0) counter[0] = 0;
}
)";

/** Options: FAMILY (glm::family), OFFSET (0 or 1), NETA, ROWS (power of
 *  two), CHUNK; glm::internal::glm_lp_rowblock_launch sets all five for each
 *  call. */
inline kernel_cl<out_buffer, out_buffer, in_buffer, in_buffer, in_buffer, in_buffer, int, int,
                 int, int, int, int, int, int, int, cl::LocalSpaceArg, cl::LocalSpaceArg,
                 cl::LocalSpaceArg>
    glm_lp("glm_lp", glm_program<&glm_lp_source>(),
           {{"FAMILY", 0}, {"OFFSET", 0}, {"NETA", 1}, {"ROWS", 32}, {"CHUNK", 8}});

/** Option: REDUCE_WG, the work-group size (a power of two). */
inline kernel_cl<out_buffer, in_buffer, in_out_buffer, int, int> glm_lp_reduce(
    "glm_lp_reduce", glm_lp_reduce_source, {{"REDUCE_WG", 64}});

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
