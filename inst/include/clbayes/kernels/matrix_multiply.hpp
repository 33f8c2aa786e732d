#ifndef CLBAYES_KERNELS_MATRIX_MULTIPLY_HPP
#define CLBAYES_KERNELS_MATRIX_MULTIPLY_HPP

// C = A B with square local-memory tiles: each work group computes one
// TILE x TILE block of C, stepping through k one pair of tiles at a time.
// A plain, correct multiply; the tuned GEMM family lives in linalg/.

#include "../opencl/kernel_cl.hpp"

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {
namespace kernels {

inline const char* matrix_multiply_source = R"(
/**
 * C (m x n) = A (m x k) * B (k x n), all column-major. Launched on
 * round_up(m, TILE) x round_up(n, TILE) work items in TILE x TILE groups.
 */
__kernel void matrix_multiply(__global double* C, __global const double* A,
                              __global const double* B, int m, int n, int k) {
  __local double a_tile[TILE][TILE];
  __local double b_tile[TILE][TILE];
  const int li = get_local_id(0);
  const int lj = get_local_id(1);
  const int i = get_global_id(0);
  const int j = get_global_id(1);
  double acc = 0.0;
  for (int t = 0; t < k; t += TILE) {
    // a_tile[col][row] holds A[i, t + col]; b_tile[col][row] B[t + row, j].
    a_tile[lj][li] = (i < m && t + lj < k) ? A[(long)(t + lj) * m + i] : 0.0;
    b_tile[lj][li] = (t + li < k && j < n) ? B[(long)j * k + t + li] : 0.0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int p = 0; p < TILE; ++p) acc += a_tile[p][li] * b_tile[lj][p];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (i < m && j < n) C[(long)j * m + i] = acc;
}
)";

inline kernel_cl<out_buffer, in_buffer, in_buffer, int, int, int>
    matrix_multiply("matrix_multiply", matrix_multiply_source, {{"TILE", 16}});

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
