#ifndef CLBAYES_KERNELS_GLM_LP_TILED_HPP
#define CLBAYES_KERNELS_GLM_LP_TILED_HPP

// The fused GLM kernel, tiled (stan-opencl.txt section 3.4, one pass over x).
// glm_lp (kernels/glm_lp.hpp) is bound by latency, not bandwidth: its work
// groups are large and register-heavy (one resident per SM), every block of
// rows waits for one warp to do the row formulas, and y is loaded inside
// them. On the H200 that left about 26 KB of x in flight per SM per 2.5 us,
// 1.4 TB/s. Here:
//
//   * a group of TILE_WG items (about 4 resident per SM) walks tiles of
//     TILE_ROWS rows; item (r, p) loads rows r of the columns p, p + P, ...
//     (P = TILE_WG / TILE_ROWS), so a warp reads whole column segments;
//   * the next tile's x, y (and per-row alpha, sigma|phi) are loaded into
//     registers while the current tile is worked on: a whole tile per group
//     is in flight, several groups per SM;
//   * the loaded values give the partial linear predictors straight from
//     registers, and go to local memory (rows padded to TILE_ROWS + 1 so the
//     column-wise reads below hit distinct banks);
//   * after the row formulas, item s owns column s % k (rows q, q + Q, ...
//     with q = s / k when k < TILE_WG) and adds sum_r x[r, j] d[r] from local
//     memory to a register kept across all the group's tiles; each group
//     writes its partial sums once, glm_lp_reduce adds them up;
//   * tiles after the first are handed out by an atomic counter, one tile
//     ahead, so groups that start late or run slow do not stretch the tail.
//
// Build options: FAMILY, OFFSET, NETA as for glm_lp; TILE_WG (the local size),
// TILE_ROWS (a power of two dividing TILE_WG), LPI = ceil(k / P) (x values
// per item per tile) and GCOLS = ceil(k / TILE_WG) (columns per item for the
// gradient), all set by glm/glm_tiled.hpp. The row formulas are those of
// kernels/glm_row_math.hpp.

#include "../opencl/kernel_cl.hpp"
#include "glm_row_math.hpp"

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {
namespace kernels {

// The kernel body; its program is the row math followed by it.
inline const char* glm_lp_tiled_source = R"(
#define R TILE_ROWS
#define P (TILE_WG / TILE_ROWS)
#define RS (TILE_ROWS + 1)
#define ROW_ALPHA (FAMILY != 4 && FAMILY != 5)

/* Log density of one row. eta: the NETA linear predictors without alpha;
   al, off, ex: the row's alpha, offset and sigma|phi; head: categorical
   alpha or the cuts. Out: d = d lp / d eta, dx = d lp / d sigma|phi, d_lo and d_up =
   d lp / d (cut below, cut above). */
double glm_row(double* eta, const double yi, const double al, const double off,
               const double ex,
               __local const double* head, const int n_cuts, const int propto,
               double* d, double* dx, double* d_lo, double* d_up) {
  double lp = 0.0;
  *dx = 0.0;
  *d_lo = 0.0;
  *d_up = 0.0;
#if FAMILY == 4
  for (int e = 0; e < NETA; ++e) eta[e] += head[e];
  lp = categorical_logit_row(eta, NETA, (int)yi, d);
#elif FAMILY == 5
  const int yc = (int)yi;
  lp = ordered_logistic_row(yc, n_cuts, eta[0] + off, yc > 1 ? head[yc - 2] : 0.0,
                            yc <= n_cuts ? head[yc - 1] : 0.0, d, d_lo, d_up);
#else
  lp = scalar_row(yi, eta[0] + al + off, ex, propto, d, dx);
#endif
  return lp;
}

/* v = this item's x values of tile t; row values (y, alpha, offset,
   sigma|phi) go to the items of part 0, which do the row formulas. */
#define LOAD_TILE(t)                                                          \
  do {                                                                        \
    const int i_ = (t) * R + r;                                               \
    _Pragma("unroll")                                                         \
    for (int u_ = 0; u_ < LPI; ++u_) {                                        \
      const int j_ = p + P * u_;                                              \
      v[u_] = (j_ < k && i_ < n) ? x[(long)j_ * n + i_] : 0.0;                \
    }                                                                         \
    if (p == 0 && i_ < n) {                                                   \
      yv = y[i_];                                                             \
      if (ROW_ALPHA) av = alpha[alpha_per_row ? i_ : 0];                      \
      if (OFFSET) ov = ROW_OFFSET(offset, i_);                                \
      if (FAMILY_EXTRA) ev = extra[extra_per_row ? i_ : 0];                      \
    }                                                                         \
  } while (0)

/**
 * Log density of a GLM and its gradient, partial sums per work group; the
 * same outputs as glm_lp (partials: groups x stride, stride = 2 + NETA +
 * k * NETA + n_cuts; row_grad: per-row d alpha, d sigma|phi).
 * offset   n values, read only when OFFSET is 1
 * counter  in/out, an int that is 0 on entry (glm_lp_reduce zeroes it)
 * xs       local, k * (TILE_ROWS + 1) doubles when gradient, else 1
 * red      local, max(NETA * TILE_WG, (NETA + 2) * TILE_ROWS) doubles
 * pl       local, k * NETA + NETA + n_cuts doubles: beta, alpha, cuts
 * rowv     local, (NETA + 3) * TILE_ROWS doubles; cut_acc: max(n_cuts, 1)
 * Needs get_num_groups(0) <= the number of tiles, ceil(n / TILE_ROWS).
 */
__kernel
#if FIXED_WG
__attribute__((reqd_work_group_size(TILE_WG, 1, 1)))
#endif
void glm_lp_tiled(__global double* partials, __global double* row_grad,
                  __global const double* x, __global const double* y,
                  __global const double* offset,
                  __global const double* params, __global int* counter,
                  int beta_at, int extra_at, int n, int k,
                  int alpha_per_row, int extra_per_row, int n_cuts,
                  int gradient, int propto, __local double* xs,
                  __local double* red, __local double* pl,
                  __local double* rowv, __local double* cut_acc) {
  __local int next_tile;
  __global const double* alpha = params;
  __global const double* extra = params + extra_at;
  const int lid = get_local_id(0);
  const int r = lid % R;
  const int p = lid / R;
  const int n_tiles = (n + R - 1) / R;
  const int groups = get_num_groups(0);
  /* beta, then categorical alpha or the cuts, where every item reads them */
  __local const double* head = pl + k * NETA;
  for (int c = lid; c < k * NETA; c += TILE_WG) pl[c] = params[beta_at + c];
  if (FAMILY == 4)
    for (int c = lid; c < NETA; c += TILE_WG) pl[k * NETA + c] = alpha[c];
  if (FAMILY == 5)
    for (int c = lid; c < n_cuts; c += TILE_WG) pl[k * NETA + c] = extra[c];
  for (int c = lid; c < n_cuts; c += TILE_WG) cut_acc[c] = 0.0;  /* owned by lid */

  /* gradient slots: slot s = lid + TILE_WG * c is column s % k, rows
     q, q + Q, ... of each tile with q = s / k */
  const int Q = k < TILE_WG ? TILE_WG / k : 1;
  double acc[GCOLS][NETA];
  for (int c = 0; c < GCOLS; ++c)
    for (int e = 0; e < NETA; ++e) acc[c][e] = 0.0;
  double lp_acc = 0.0, extra_acc = 0.0;
  double alpha_acc[NETA];
  for (int e = 0; e < NETA; ++e) alpha_acc[e] = 0.0;

  int tile = get_group_id(0);
  double v[LPI];
  double yv = 0.0, av = 0.0, ov = 0.0, ev = 0.0;
  LOAD_TILE(tile);
  if (lid == 0) next_tile = groups + atomic_inc(counter);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (;;) {
    const int nxt = next_tile;
    /* this tile: partial linear predictors, and x to local memory */
    double s[NETA];
    for (int e = 0; e < NETA; ++e) s[e] = 0.0;
    _Pragma("unroll")
    for (int u = 0; u < LPI; ++u) {
      const int j = p + P * u;
      if (j < k) {
        for (int e = 0; e < NETA; ++e) s[e] += v[u] * pl[e * k + j];
        if (gradient) xs[j * RS + r] = v[u];
      }
    }
    for (int e = 0; e < NETA; ++e) red[(e * P + p) * R + r] = s[e];
    const double yi = yv, ai = av, oi = ov, ei = ev;
    /* the next tile's loads overlap everything below */
    int ahead = 0;
    if (nxt < n_tiles) {
      LOAD_TILE(nxt);
      if (lid == 0) ahead = atomic_inc(counter);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (p == 0) {
      const int i = tile * R + r;
      double d[NETA];
      double dx = 0.0, d_lo = 0.0, d_up = 0.0;
      for (int e = 0; e < NETA; ++e) d[e] = 0.0;
      if (i < n) {
        double eta[NETA];
        for (int e = 0; e < NETA; ++e) {
          double t = 0.0;
          for (int q = 0; q < P; ++q) t += red[(e * P + q) * R + r];
          eta[e] = t;
        }
        lp_acc += glm_row(eta, yi, ai, oi, ei, head, n_cuts, propto, d, &dx, &d_lo, &d_up);
        extra_acc += dx;
        for (int e = 0; e < NETA; ++e) alpha_acc[e] += d[e];
        if (gradient && alpha_per_row) row_grad[i] = d[0];
        if (gradient && extra_per_row) row_grad[n + i] = dx;
      }
      for (int e = 0; e < NETA; ++e) rowv[e * R + r] = d[e];
      rowv[NETA * R + r] = d_lo;
      rowv[(NETA + 1) * R + r] = d_up;
      rowv[(NETA + 2) * R + r] = i < n ? yi : 0.0;
    }
    /* read by every item at the top of the next round, after a barrier */
    if (lid == 0) next_tile = groups + ahead;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (gradient) {
      for (int c = 0; c < GCOLS; ++c) {
        const int sl = lid + TILE_WG * c;
        if (sl < Q * k) {
          const int j = sl % k;
          double t[NETA];
          for (int e = 0; e < NETA; ++e) t[e] = 0.0;
          for (int q = sl / k; q < R; q += Q) {
            const double xv = xs[j * RS + q];
            for (int e = 0; e < NETA; ++e) t[e] += xv * rowv[e * R + q];
          }
          for (int e = 0; e < NETA; ++e) acc[c][e] += t[e];
        }
      }
#if FAMILY == 5
      add_cut_sums(rowv, R, n_cuts, lid, TILE_WG, cut_acc);
#endif
    }
    if (nxt >= n_tiles) break;
    tile = nxt;
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  /* The group's sums, flat as in glm_lp (PoCL 3 and nested barriers). */
  const int stride = 2 + NETA + k * NETA + n_cuts;
  __global double* out = partials + (long)get_group_id(0) * stride;
  if (gradient)
    for (int c = lid; c < n_cuts; c += TILE_WG) out[2 + NETA + k * NETA + c] = cut_acc[c];
  barrier(CLK_LOCAL_MEM_FENCE);
  if (p == 0) {
    red[r] = lp_acc;
    for (int e = 0; e < NETA; ++e) red[(1 + e) * R + r] = alpha_acc[e];
    red[(1 + NETA) * R + r] = extra_acc;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid < (gradient ? NETA + 2 : 1)) {
    double t = 0.0;
    for (int q = 0; q < R; ++q) t += red[lid * R + q];
    out[lid == NETA + 1 ? 1 + NETA + k * NETA : lid] = t;
  }
  /* d beta: slots of one column (Q > 1) meet in local memory */
  barrier(CLK_LOCAL_MEM_FENCE);
  if (Q > 1)
    for (int e = 0; e < NETA; ++e) red[e * TILE_WG + lid] = lid < Q * k ? acc[0][e] : 0.0;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (gradient && Q > 1) {
    for (int c = lid; c < k * NETA; c += TILE_WG) {
      const int e = c / k, j = c % k;
      double t = 0.0;
      for (int q = 0; q < Q; ++q) t += red[e * TILE_WG + q * k + j];
      out[1 + NETA + c] = t;
    }
  }
  if (gradient && Q == 1) {
    for (int c = 0; c < GCOLS; ++c) {
      const int j = lid + TILE_WG * c;
      if (j < k)
        for (int e = 0; e < NETA; ++e) out[1 + NETA + e * k + j] = acc[c][e];
    }
  }
}
)";

/** Options: FAMILY, OFFSET, NETA, TILE_WG, TILE_ROWS, LPI, GCOLS, FIXED_WG
 *  (1: the work-group size is declared, reqd_work_group_size; NVIDIA's
 *  compiler takes that as launch bounds, which override a register cap)
 *  and the cap -cl-nv-maxrregcount; set for each call by
 *  glm_lp_tiled_launch (glm/glm_tiled.hpp). */
inline kernel_cl<out_buffer, out_buffer, in_buffer, in_buffer, in_buffer, in_buffer,
                 in_out_buffer, int,
                 int, int, int, int, int, int, int, int, cl::LocalSpaceArg, cl::LocalSpaceArg,
                 cl::LocalSpaceArg, cl::LocalSpaceArg, cl::LocalSpaceArg>
    glm_lp_tiled("glm_lp_tiled", glm_program<&glm_lp_tiled_source>(),
                 {{"FAMILY", 0}, {"OFFSET", 0}, {"NETA", 1}, {"TILE_WG", 128}, {"TILE_ROWS", 32},
                  {"LPI", 25}, {"GCOLS", 1}, {"FIXED_WG", 1}});

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
