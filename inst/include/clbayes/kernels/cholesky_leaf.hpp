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
// in step j, so one barrier per step suffices. The reciprocal of pivot j
// is computed once, by the item that finishes the pivot in step j - 1.
// Inverse: forward substitution L X = I with X in registers, the finished
// row j of X broadcast through a double-buffered local row.

#include "../opencl/kernel_cl.hpp"

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {
namespace kernels {

inline const char* cholesky_leaf_source = R"(
#define CPT ((CHOLESKY_BLOCK + LEAF_T - 1) / LEAF_T)

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
  __local double rpiv[CHOLESKY_BLOCK];  // 1 / pivot j, by the item that finished it
  const int i = get_local_id(0);
  const int t = get_local_id(1);
  const long base = (long)o * n + o;
  for (int s = 0; s < CPT; ++s) {
    const int c = t + s * LEAF_T;
    if (c < b) L[i][c] = A[base + (long)c * n + i];
  }
  if (i == 0 && t == 0) rpiv[0] = 1.0 / A[base];
  for (int j = 0; j < b; ++j) {
    barrier(CLK_LOCAL_MEM_FENCE);
    const double p = L[j][j];
    if (!(p > 0.0)) {  // uniform: every item reads the same pivot
      if (i == 0 && t == 0) atomic_cmpxchg(flag, 0, o + j + 1);
      return;
    }
    if (i > j) {
      // One FP64 division per step, not one per item: pivot j + 1 is
      // final once its item has updated it here, and that item divides.
      const double f = L[i][j] * rpiv[j];
      for (int s = 0; s < CPT; ++s) {
        const int c = t + s * LEAF_T;
        if (c > j && c <= i) {
          const double v = fma(-f, L[c][j], L[i][c]);
          L[i][c] = v;
          if (c == i && c == j + 1) rpiv[c] = 1.0 / v;
        }
      }
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  // Scale: L[i][c] / sqrt(pivot c); the diagonal becomes sqrt(pivot).
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
      A[base + (long)c * n + i] = l[s];
    }
  }
  // X = L^{-1}, row j finished at step j: x_j = (e_j - sum_{c<j} L_jc x_c) / L_jj.
  double x[CPT];
  for (int s = 0; s < CPT; ++s) x[s] = (t + s * LEAF_T == i) ? 1.0 : 0.0;
  barrier(CLK_LOCAL_MEM_FENCE);
  const double d = 1.0 / L[i][i];  // every row's at once, off the chain below
  for (int j = 0; j < b; ++j) {
    __local double* row = xrow[j & 1];
    if (i == j) {
      for (int s = 0; s < CPT; ++s) {
        const int c = t + s * LEAF_T;
        x[s] *= d;
        if (c < b) row[c] = x[s];
      }
    }
    // Readers of this buffer two steps ago have all passed the last barrier.
    barrier(CLK_LOCAL_MEM_FENCE);
    if (i > j) {
      const double lij = L[i][j];
      for (int s = 0; s < CPT; ++s) {
        const int c = t + s * LEAF_T;
        if (c <= j) x[s] = fma(-lij, row[c], x[s]);
      }
    }
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
