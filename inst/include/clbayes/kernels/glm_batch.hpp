#ifndef CLBAYES_KERNELS_GLM_BATCH_HPP
#define CLBAYES_KERNELS_GLM_BATCH_HPP

// The row math of P points of a GLM at once (glm/glm_batch_opencl.hpp):
// the linear predictors of the points are an n x P block (X B, made by the
// GEMM of linalg/gemm.hpp); this kernel applies the family's row formulas
// (kernels/glm_row_math.hpp) to every entry, sums each point's log density
// and its derivatives by alpha and sigma|phi over the rows inside the kernel
// (one partial row per group of rows, finished by glm_lp_reduce), and
// overwrites the block with d lp / d eta for the gradient product X' D; for
// a multilevel model it adds the group terms Z b to each row's linear
// predictor, and glm_group_gradient sums D per level for the gradient in b.
// glm_batch_fused is the variant without the GEMMs: one pass over x per
// chunk of points on the FMA units, eta and D kept in local memory.

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
 * offset      the data's n offsets (row0 + r), read only when OFFSET is 1
 * params      alpha (P values), then sigma|phi (P values) where the family
 *             has one
 * GROUPS 1: a multilevel model's Z b_j is gathered into each row's linear
 * predictor (glm/group_terms_cl.hpp): for term t (of n_terms) the row's
 * entry of b_j is z_index[t * n + i] (q values per point in b), the term's
 * p columns start at column meta[5t + 1] of z (n rows each), p = meta[5t].
 * Local size BATCH_WG (a power of two); global (groups * BATCH_WG, P).
 */
#if GROUPS
double group_eta(int i, int j, __global const double* z_index, __global const double* z,
                 __global const double* meta, __global const double* b, int n_terms, int n,
                 int q) {
  double s = 0.0;
  for (int t = 0; t < n_terms; ++t) {
    const int p = (int)meta[5 * t], c0 = (int)meta[5 * t + 1];
    __global const double* bl = b + (long)j * q + (long)z_index[(long)t * n + i];
    for (int c = 0; c < p; ++c) s += z[(long)(c0 + c) * n + i] * bl[c];
  }
  return s;
}
#define GROUP_ETA(i, j) group_eta(i, j, z_index, z, meta, b, n_terms, n, q)
#else
#define GROUP_ETA(i, j) 0.0
#endif

__kernel __attribute__((reqd_work_group_size(BATCH_WG, 1, 1)))
void glm_batch_rows(__global double* partials, __global double* eta_d,
                    __global const double* y, __global const double* offset,
                    __global const double* params, __global const double* z_index,
                    __global const double* z, __global const double* meta,
                    __global const double* b, int n_terms, int n, int q,
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
    lp += scalar_row(y[row0 + r], col[r] + al + ROW_OFFSET(offset, row0 + r) +
                     GROUP_ETA(row0 + r, j), ex, propto, &d, &d_ex);
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

/** Options: FAMILY (glm::family, a scalar family), OFFSET (0 or 1), BATCH_WG,
 *  GROUPS (0 or 1). */
inline kernel_cl<in_out_buffer, in_out_buffer, in_buffer, in_buffer, in_buffer, in_buffer,
                 in_buffer, in_buffer, in_buffer, int, int, int, int, int, int, int, int, int,
                 int>
    glm_batch_rows("glm_batch_rows", glm_program<&glm_batch_rows_source>(),
                   {{"FAMILY", 1}, {"OFFSET", 0}, {"BATCH_WG", 256}, {"GROUPS", 0}});

inline const char* glm_group_gradient_source = R"(
/**
 * The gradient of a multilevel model's log density in b: for every level of
 * every term and every point j, the sum over the level's rows of z_c[i]
 * times D[i, j] (d lp / d eta, the n x P block eta_d with leading dimension
 * ld, as glm_batch_rows leaves it). The rows of level l of term t are
 * order[t * n + start[meta[5t + 4] + l] ..] up to the next start; the
 * term's entries of b begin at meta[5t + 2], p = meta[5t] per level, its
 * columns of z at meta[5t + 1]; meta[5t + 3] is its number of levels.
 * Item (u, j): level u of all terms' levels, point j. Global
 * (>= n_levels, P).
 */
__kernel void glm_group_gradient(__global double* d_b, __global const double* eta_d,
                                 __global const double* z, __global const double* meta,
                                 __global const double* order,
                                 __global const double* start, int n_terms, int n, int q,
                                 int ld, int n_levels) {
  int u = get_global_id(0);
  const int j = get_global_id(1);
  if (u >= n_levels) return;
  int t = 0;
  while (u >= (int)meta[5 * t + 3]) u -= (int)meta[5 * t + 3], ++t;
  const int p = (int)meta[5 * t], c0 = (int)meta[5 * t + 1];
  const int s0 = (int)meta[5 * t + 4] + u;
  const int from = (int)start[s0], to = (int)start[s0 + 1];
  __global const double* rows = order + (long)t * n;
  __global const double* dj = eta_d + (long)j * ld;
  __global double* out = d_b + (long)j * q + (long)meta[5 * t + 2] + (long)p * u;
  for (int c = 0; c < p; ++c) {
    __global const double* zc = z + (long)(c0 + c) * n;
    double s = 0.0;
    for (int e = from; e < to; ++e) {
      const int i = (int)rows[e];
      s += zc[i] * dj[i];
    }
    out[c] = s;
  }
}
)";

/** No options. */
inline kernel_cl<out_buffer, in_buffer, in_buffer, in_buffer, in_buffer, in_buffer, int, int,
                 int, int, int>
    glm_group_gradient("glm_group_gradient", glm_group_gradient_source, {});

inline const char* glm_batch_fused_source = R"(
#define DS (TR + 1)

/**
 * P points in one pass over x, on the FMA units: group (g, c) takes the
 * chunk of PC points from c * PC and strides over tiles of TR rows from
 * tile g. Per tile the group holds the TR x k tile of x in local memory;
 * item (r, q) (r = lid % TR, q = lid / TR) makes the linear predictor of row
 * r for point q from it, applies the row math, and the group adds x_tile' D
 * to per-item sums of (column, point) slots kept across its tiles. x is read
 * once per chunk of points, eta and D never leave the chip.
 *
 * partials  out, groups x (3 + k) P: [g * (3 + k) P + j] point j's log
 *           density over the group's rows, [.. + P + j] d alpha, [.. + 2P + j]
 *           d sigma|phi, [.. + 3P + j * k + i] d beta_i
 * offset    n values, read only when OFFSET is 1
 * params    alpha (P), then sigma|phi (P) where the family has one
 * beta      k x P
 * xs        local, TR * k doubles; bs: local, k * PC; ds: local, PC * (TR + 1)
 * Local size FWG = TR * PC (3 * PC <= FWG); GSLOTS = ceil(k * PC / FWG).
 */
__kernel __attribute__((reqd_work_group_size(FWG, 1, 1)))
void glm_batch_fused(__global double* partials, __global const double* x,
                     __global const double* y, __global const double* offset,
                     __global const double* params,
                     __global const double* beta, int n, int k, int P, int gradient,
                     int propto, __local double* xs, __local double* bs, __local double* ds) {
  __local double red[3 * FWG];
  const int lid = get_local_id(0);
  const int r = lid % TR;
  const int q = lid / TR;
  const int c0 = get_group_id(1) * PC;
  const int pt = c0 + q;
  const int n_tiles = (n + TR - 1) / TR;
  for (int e = lid; e < k * PC; e += FWG) {
    const int jc = e / PC, qq = e % PC;
    bs[e] = c0 + qq < P ? beta[(long)(c0 + qq) * k + jc] : 0.0;
  }
  const double al = pt < P ? params[pt] : 0.0;
#if FAMILY_EXTRA
  const double ex = pt < P ? params[P + pt] : 1.0;
#else
  const double ex = 1.0;
#endif
  double lp = 0.0, da = 0.0, dx = 0.0;
  double acc[GSLOTS];
  for (int s = 0; s < GSLOTS; ++s) acc[s] = 0.0;
  for (int t = get_group_id(0); t < n_tiles; t += get_num_groups(0)) {
    const int i0 = t * TR;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int e = lid; e < TR * k; e += FWG) {
      const int rr = e % TR, jc = e / TR;
      xs[e] = i0 + rr < n ? x[(long)jc * n + i0 + rr] : 0.0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    double d = 0.0;
    if (i0 + r < n && pt < P) {
      double eta = al + ROW_OFFSET(offset, i0 + r);
      for (int jc = 0; jc < k; ++jc) eta += xs[jc * TR + r] * bs[jc * PC + q];
      double d_ex;
      lp += scalar_row(y[i0 + r], eta, ex, propto, &d, &d_ex);
      da += d;
      dx += d_ex;
    }
    ds[q * DS + r] = d;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (gradient) {
      for (int s = 0; s < GSLOTS; ++s) {
        const int e = lid + s * FWG;
        if (e < k * PC) {
          const int jc = e / PC, qq = e % PC;
          double v = 0.0;
          for (int rr = 0; rr < TR; ++rr) v += xs[jc * TR + rr] * ds[qq * DS + rr];
          acc[s] += v;
        }
      }
    }
  }
  __global double* out = partials + (long)get_group_id(0) * (3 + k) * P;
  red[lid] = lp;
  red[FWG + lid] = da;
  red[2 * FWG + lid] = dx;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid < 3 * PC) {
    const int w = lid / PC, qq = lid % PC;
    double v = 0.0;
    for (int rr = 0; rr < TR; ++rr) v += red[w * FWG + qq * TR + rr];
    if (c0 + qq < P) out[w * P + c0 + qq] = v;
  }
  if (gradient) {
    for (int s = 0; s < GSLOTS; ++s) {
      const int e = lid + s * FWG;
      const int jc = e / PC, qq = e % PC;
      if (e < k * PC && c0 + qq < P) out[3 * P + (long)(c0 + qq) * k + jc] = acc[s];
    }
  }
}
)";

/** Options: FAMILY (a scalar family), OFFSET (0 or 1), TR, PC, FWG = TR * PC,
 *  GSLOTS. */
inline kernel_cl<out_buffer, in_buffer, in_buffer, in_buffer, in_buffer, in_buffer, int, int,
                 int, int, int, cl::LocalSpaceArg, cl::LocalSpaceArg, cl::LocalSpaceArg>
    glm_batch_fused("glm_batch_fused", glm_program<&glm_batch_fused_source>(),
                    {{"FAMILY", 1}, {"OFFSET", 0}, {"TR", 32}, {"PC", 8}, {"FWG", 256},
                     {"GSLOTS", 4}});

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
