#ifndef CLBAYES_KERNELS_CHOLESKY_LEAF_HPP
#define CLBAYES_KERNELS_CHOLESKY_LEAF_HPP

// The leaf of the right-looking Cholesky (linalg/cholesky_panel.hpp): the
// factor and the inverse of one diagonal block in one work group, with one
// work item per element (row i, a strided set of columns). A kernel with
// one work item per row runs O(b^2) dependent local-memory operations in
// each item; here each of the 2 b steps is O(b / LEAF_T) per item and one
// barrier, which is what makes the leaf short enough for the critical
// path of the panel loop (stan-opencl.txt, section 3.3.1: the leaf is the
// serial part).
//
// Factorisation: Gaussian elimination on the symmetric block without
// square roots (A[i][c] -= A[i][j] A[c][j] / A[j][j] for j < c <= i), then
// every column is scaled by 1 / sqrt of its pivot. Column j is only read
// in step j, so one barrier per step suffices.
// Inverse: forward substitution L X = I with X in registers, the finished
// row j of X broadcast through a double-buffered local row, interleaved
// with the elimination (row j is finished in step j, used in step j + 1).

#include "../opencl/kernel_cl.hpp"

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {
namespace kernels {

inline const char* cholesky_leaf_source = R"(
#define CPT ((CHOLESKY_BLOCK + LEAF_T - 1) / LEAF_T)

/* Row q of X = L^{-1} (in row) into this item's part of row i > q:
   x -= L_iq x_q, with L_iq = L[i][q] rs (L unscaled, rs = 1 / sqrt(pivot q)). */
void take_row(double* x, __local double (*L)[CHOLESKY_BLOCK + 1], __local const double* row,
              int i, int t, int q, double rs) {
  if (i <= q) return;
  const double liq = L[i][q] * rs;
  for (int s = 0; s < CPT; ++s) {
    const int c = t + s * LEAF_T;
    if (c <= q) x[s] = fma(-liq, row[c], x[s]);
  }
}

/**
 * Factor in place the b x b block at (o, o) of the n x n column-major A
 * (lower triangle L, zeros above) and write L^{-1} into the top left
 * b x b block of inv (leading dimension ldi, zeros above the diagonal).
 * A pivot that is not positive (or NaN) at column j sets flag[0] = o + j + 1
 * unless it is set already, and leaves A and inv unwritten.
 * Launch: global (b, LEAF_T), local (b, LEAF_T), b <= CHOLESKY_BLOCK.
 * Work item (i, t) owns the columns c = t + s LEAF_T of row i.
 */
__kernel void cholesky_leaf(__global double* A, int n, int o, int b,
                            __global double* inv, int ldi,
                            __global int* flag) {
  __local double L[CHOLESKY_BLOCK][CHOLESKY_BLOCK + 1];
  __local double xrow[2][CHOLESKY_BLOCK];
  const int i = get_local_id(0);
  const int t = get_local_id(1);
  const long base = (long)o * n + o;
  for (int s = 0; s < CPT; ++s) {
    const int c = t + s * LEAF_T;
    if (c < b) L[i][c] = A[base + (long)c * n + i];
  }
  // Step j eliminates with pivot j and finishes row j of X = L^{-1}; the
  // rows below take row j's contribution after the next barrier, so the
  // factor and the inverse share b + 1 barriers. Column j of the
  // unscaled L and the pivot are final at step j, so L_ij = L[i][j] /
  // sqrt(p_j) is known then; row j of X has had every earlier row's
  // contribution: x_j = (e_j - sum_{q<j} L_jq x_q) / L_jj.
  double x[CPT];
  for (int s = 0; s < CPT; ++s) x[s] = (t + s * LEAF_T == i) ? 1.0 : 0.0;
  double rs = 0.0;  // 1 / sqrt(pivot j - 1) at step j
  for (int j = 0; j < b; ++j) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (j > 0) take_row(x, L, xrow[(j - 1) & 1], i, t, j - 1, rs);
    const double p = L[j][j];
    if (!(p > 0.0)) {  // uniform: every item reads the same pivot
      if (i == 0 && t == 0) atomic_cmpxchg(flag, 0, o + j + 1);
      return;
    }
    rs = 1.0 / sqrt(p);
    if (i == j) {  // readers of this buffer (step j - 1's) passed the last barrier
      __local double* row = xrow[j & 1];
      for (int s = 0; s < CPT; ++s) {
        const int c = t + s * LEAF_T;
        x[s] *= rs;
        if (c < b) row[c] = x[s];
      }
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
  if (b > 0) take_row(x, L, xrow[(b - 1) & 1], i, t, b - 1, rs);
  // Scale: L[i][c] / sqrt(pivot c); the diagonal becomes sqrt(pivot).
  for (int s = 0; s < CPT; ++s) {
    const int c = t + s * LEAF_T;
    if (c < b) A[base + (long)c * n + i] =
        c > i ? 0.0 : c == i ? sqrt(L[i][i]) : L[i][c] / sqrt(L[c][c]);
  }
  for (int s = 0; s < CPT; ++s) {
    const int c = t + s * LEAF_T;
    if (c < b) inv[(long)c * ldi + i] = c <= i ? x[s] : 0.0;
  }
}
)";

/** Leaf of at most CHOLESKY_BLOCK rows, LEAF_T work items per row. */
inline kernel_cl<in_out_buffer, int, int, int, out_buffer, int, cl::Buffer> cholesky_leaf(
    "cholesky_leaf", cholesky_leaf_source, {{"CHOLESKY_BLOCK", 32}, {"LEAF_T", 32}});

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
