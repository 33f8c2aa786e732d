#ifndef CLBAYES_KERNELS_CHOLESKY_LEAF_SOLVE_HPP
#define CLBAYES_KERNELS_CHOLESKY_LEAF_SOLVE_HPP

// The leaf and the panel solve of the right-looking Cholesky
// (linalg/cholesky_panel.hpp) in one launch (cholesky_tuning::leaf = 3):
// every work group factors and inverts the b x b diagonal block in local
// memory exactly as kernels/cholesky_leaf.hpp does, then computes
// L_below = A_below L^{-T} for its own rows. The factorisation is repeated
// in every group, but it is short, and the chain of the panel loses one
// launch (and its latency) per block of columns (stan-opencl.txt, section
// 3.3.1: the leaf and the solve below it are the serial part).
// The diagonal block is written back by the last group to have read it (an
// atomic counter, reset by that group), so that no group reads a block
// another has already overwritten.

#include "../opencl/kernel_cl.hpp"

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {
namespace kernels {

inline const char* cholesky_leaf_solve_source = R"(
#define CPT ((CHOLESKY_BLOCK + LEAF_T - 1) / LEAF_T)
#define SOLVE_ROWS 64

/**
 * Factor the b x b block at (o, o) of the n x n column-major A in place
 * (lower triangle L, zeros above) and replace the `below` rows under it,
 * A(o + b .., o .. o + b), by A_below L^{-T}. Work group g solves the rows
 * [g rows_per_group, (g + 1) rows_per_group) of those. flag[0]: as in
 * cholesky_leaf (a pivot that is not positive: flag[0] = o + j + 1 unless
 * set, nothing written); flag[1]: a counter that is 0 between launches
 * (a failed pivot stops every group before it counts).
 * Launch: global (groups b, LEAF_T), local (b, LEAF_T), b <= CHOLESKY_BLOCK,
 * groups = max(1, ceil(below / rows_per_group)).
 */
__kernel void cholesky_leaf_solve(__global double* A, int n, int o, int b, int below,
                                  int rows_per_group, __global int* flag) {
  __local double L[CHOLESKY_BLOCK][CHOLESKY_BLOCK + 1];
  __local double X[CHOLESKY_BLOCK][CHOLESKY_BLOCK + 1];
  __local double R[SOLVE_ROWS][CHOLESKY_BLOCK + 1];
  __local int last;
  const int i = get_local_id(0);
  const int t = get_local_id(1);
  const int tid = t * b + i;
  const int items = b * LEAF_T;
  const long base = (long)o * n + o;
  for (int s = 0; s < CPT; ++s) {
    const int c = t + s * LEAF_T;
    if (c < b) L[i][c] = A[base + (long)c * n + i];
  }
  for (int j = 0; j < b; ++j) {  // as cholesky_leaf
    barrier(CLK_LOCAL_MEM_FENCE);
    const double p = L[j][j];
    if (!(p > 0.0)) {  // uniform, and before the counter
      if (tid == 0) atomic_cmpxchg(flag, 0, o + j + 1);
      return;
    }
    if (i > j) {
      const double f = L[i][j] / p;
      for (int s = 0; s < CPT; ++s) {
        const int c = t + s * LEAF_T;
        if (c > j && c <= i) L[i][c] = fma(-f, L[c][j], L[i][c]);
      }
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  // This group read the block long ago (into L); every group has once the
  // counter reaches the group count.
  if (tid == 0) last = atomic_inc(flag + 1) == (int)get_num_groups(0) - 1;
  double l[CPT];
  for (int s = 0; s < CPT; ++s) {
    const int c = t + s * LEAF_T;
    l[s] = 0.0;
    if (c < b && c <= i) l[s] = c == i ? sqrt(L[i][i]) : L[i][c] / sqrt(L[c][c]);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = 0; s < CPT; ++s) {
    const int c = t + s * LEAF_T;
    if (c < b) {
      L[i][c] = l[s];
      if (last) A[base + (long)c * n + i] = l[s];
    }
  }
  if (last && tid == 0) atomic_xchg(flag + 1, 0);
  // X = L^{-1} by forward substitution, one row of X finished per step
  // (as cholesky_leaf, with the rows kept in local memory).
  double x[CPT];
  for (int s = 0; s < CPT; ++s) x[s] = (t + s * LEAF_T == i) ? 1.0 : 0.0;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int j = 0; j < b; ++j) {
    if (i == j) {
      const double d = 1.0 / L[j][j];
      for (int s = 0; s < CPT; ++s) {
        const int c = t + s * LEAF_T;
        x[s] *= d;
        if (c < b) X[j][c] = x[s];
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (i > j) {
      const double lij = L[i][j];
      for (int s = 0; s < CPT; ++s) {
        const int c = t + s * LEAF_T;
        if (c <= j) x[s] = fma(-lij, X[j][c], x[s]);
      }
    }
  }
  // Rows of X are final and the upper part of X is never read:
  // out[r][c] = sum_{j <= c} A_below[r][j] X[c][j], in passes of SOLVE_ROWS.
  const int r_end = min(below, (int)(get_group_id(0) + 1) * rows_per_group);
  const long below_base = base + b;  // A(o + b, o)
  for (int r0 = get_group_id(0) * rows_per_group; r0 < r_end; r0 += SOLVE_ROWS) {
    const int rows = min(SOLVE_ROWS, r_end - r0);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int e = tid; e < SOLVE_ROWS * b; e += items) {
      const int rr = e % SOLVE_ROWS, c = e / SOLVE_ROWS;
      if (rr < rows) R[rr][c] = A[below_base + (long)c * n + r0 + rr];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int e = tid; e < SOLVE_ROWS * b; e += items) {
      const int rr = e % SOLVE_ROWS, c = e / SOLVE_ROWS;
      if (rr < rows) {
        double acc = 0.0;
        for (int j = 0; j <= c; ++j) acc = fma(R[rr][j], X[c][j], acc);
        A[below_base + (long)c * n + r0 + rr] = acc;
      }
    }
  }
}
)";

/** Leaf and panel solve of at most CHOLESKY_BLOCK columns, LEAF_T work
 *  items per row; linalg/cholesky_panel.hpp keeps both equal to
 *  cholesky_leaf's. */
inline kernel_cl<in_out_buffer, int, int, int, int, int, cl::Buffer> cholesky_leaf_solve(
    "cholesky_leaf_solve", cholesky_leaf_solve_source, {{"CHOLESKY_BLOCK", 32}, {"LEAF_T", 32}});

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
