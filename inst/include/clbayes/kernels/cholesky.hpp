#ifndef CLBAYES_KERNELS_CHOLESKY_HPP
#define CLBAYES_KERNELS_CHOLESKY_HPP

// The smallest block of the blocked Cholesky (stan-opencl.txt, section
// 3.3.1): the classic algorithm in one work group, one work item per row,
// with the block held in local memory. linalg/cholesky.hpp recurses down
// to blocks of at most CHOLESKY_BLOCK rows and calls this kernel on them;
// linalg/cholesky_panel.hpp calls the variant that also inverts the block.

#include "../opencl/kernel_cl.hpp"

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {
namespace kernels {

inline const char* cholesky_source = R"(
/**
 * Factor in place the b x b block of the n x n matrix A at (o, o): its
 * lower triangle becomes L with block = L L^T, its strict upper triangle
 * becomes zero. If a pivot is not positive (or not a number), the first
 * such pivot is recorded as flag[0] = o + j + 1 (1-based, the order of the
 * leading minor that is not positive definite) unless flag[0] is already
 * set, and the kernel stops. Launch: global b, local b (b <= CHOLESKY_BLOCK).
 */
__kernel void cholesky_block(__global double* A, int n, int o, int b,
                             __global int* flag) {
  __local double L[CHOLESKY_BLOCK][CHOLESKY_BLOCK + 1];
  __local int failed;
  const int i = get_local_id(0);
  if (i == 0) failed = 0;
  for (int c = 0; c < b; ++c) L[i][c] = A[(long)(o + c) * n + o + i];
  for (int j = 0; j < b; ++j) {
    barrier(CLK_LOCAL_MEM_FENCE);
    const double pivot = L[j][j];
    if (!(pivot > 0.0)) {  // also catches NaN
      if (i == 0) {
        failed = 1;
        if (flag[0] == 0) flag[0] = o + j + 1;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (failed) break;
    const double d = sqrt(pivot);
    if (i == j) L[j][j] = d;
    if (i > j) L[i][j] /= d;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (i > j) {
      const double lij = L[i][j];
      for (int c = j + 1; c <= i; ++c) L[i][c] -= lij * L[c][j];
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int c = 0; c < b; ++c)
    A[(long)(o + c) * n + o + i] = c <= i ? L[i][c] : 0.0;
}

/**
 * As cholesky_block, and also L^{-1} of the factored block into the
 * b x b block at the top left of inv (leading dimension ldi, zeros above
 * the diagonal), so that the panel below needs one product and no
 * separate triangular inverse (the leaf of the right-looking loop of
 * linalg/cholesky_panel.hpp). The inverse is LAPACK's unblocked dtrti2 in
 * local memory: from the last column back, column j of L becomes
 * -L22^{-1} l / l_jj with L22^{-1} the already inverted trailing block.
 * If a pivot fails, inv is left unwritten. Launch as cholesky_block.
 */
__kernel void cholesky_block_inv(__global double* A, int n, int o, int b,
                                 __global double* inv, int ldi,
                                 __global int* flag) {
  __local double L[CHOLESKY_BLOCK][CHOLESKY_BLOCK + 1];
  __local int failed;
  const int i = get_local_id(0);
  if (i == 0) failed = 0;
  for (int c = 0; c < b; ++c) L[i][c] = A[(long)(o + c) * n + o + i];
  for (int j = 0; j < b; ++j) {
    barrier(CLK_LOCAL_MEM_FENCE);
    const double pivot = L[j][j];
    if (!(pivot > 0.0)) {
      if (i == 0) {
        failed = 1;
        if (flag[0] == 0) flag[0] = o + j + 1;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (failed) return;  // uniform: every work item saw the same pivot
    const double d = sqrt(pivot);
    if (i == j) L[j][j] = d;
    if (i > j) L[i][j] /= d;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (i > j) {
      const double lij = L[i][j];
      for (int c = j + 1; c <= i; ++c) L[i][c] -= lij * L[c][j];
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int c = 0; c < b; ++c)
    A[(long)(o + c) * n + o + i] = c <= i ? L[i][c] : 0.0;
  for (int j = b - 1; j >= 0; --j) {
    const double ljj = L[j][j];
    double s0 = 0.0, s1 = 0.0;  // two chains: half the FMA latency
    if (i > j) {
      int c = j + 1;
      for (; c + 1 <= i; c += 2) {
        s0 = fma(L[i][c], L[c][j], s0);
        s1 = fma(L[i][c + 1], L[c + 1][j], s1);
      }
      if (c <= i) s0 = fma(L[i][c], L[c][j], s0);
    }
    barrier(CLK_LOCAL_MEM_FENCE);  // column j read by all before it changes
    if (i == j) L[j][j] = 1.0 / ljj;
    if (i > j) L[i][j] = -(s0 + s1) / ljj;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int c = 0; c < b; ++c) inv[(long)c * ldi + i] = c <= i ? L[i][c] : 0.0;
}
)";

inline kernel_cl<in_out_buffer, int, int, int, cl::Buffer> cholesky_block(
    "cholesky_block", cholesky_source, {{"CHOLESKY_BLOCK", 32}});

inline kernel_cl<in_out_buffer, int, int, int, out_buffer, int, cl::Buffer>
    cholesky_block_inv("cholesky_block_inv", cholesky_source, {{"CHOLESKY_BLOCK", 32}});

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
