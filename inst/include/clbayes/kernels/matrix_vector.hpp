#ifndef CLBAYES_KERNELS_MATRIX_VECTOR_HPP
#define CLBAYES_KERNELS_MATRIX_VECTOR_HPP

// Products with a vector operand (stan-opencl.txt, section 3.1.3): the 2D
// GEMM grid would leave most work items idle, so y = A x runs on a 1D grid
// of one work item per row, and y = x A (x a row vector) on one work group
// per column that reduces its dot product in local memory.

#include "../opencl/kernel_cl.hpp"

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {
namespace kernels {

inline const char* matrix_vector_source = R"(
/**
 * y (m) = A (m x k, column-major) * x (k). view 1 (lower) or 2 (upper)
 * limits the dot product of row i to the non-zeros of A. Consecutive work
 * items read consecutive rows, so every read of A is coalesced.
 * Launch: global m (any local size).
 */
__kernel void matrix_vector(__global double* y, __global const double* A,
                            __global const double* x, int m, int k,
                            int view) {
  const int i = get_global_id(0);
  if (i >= m) return;
  const int lo = view == 2 ? i : 0;
  const int hi = view == 1 ? min(k, i + 1) : k;
  double acc = 0.0;
  for (int p = lo; p < hi; ++p) acc = fma(A[(long)p * m + i], x[p], acc);
  y[i] = acc;
}

/**
 * y (1 x n) = x (1 x k) * A (k x n, column-major). Work group j computes
 * y[j]: its LOCAL_SIZE work items stride down column j and then halve a
 * local-memory tree. view 1 (lower) or 2 (upper) skips the zeros of A.
 * Launch: global n * LOCAL_SIZE, local LOCAL_SIZE (a power of two).
 */
__kernel void row_vector_matrix(__global double* y, __global const double* x,
                                __global const double* A, int k, int n,
                                int view) {
  __local double part[LOCAL_SIZE];
  const int j = get_group_id(0);
  const int l = get_local_id(0);
  const int lo = view == 1 ? j : 0;
  const int hi = view == 2 ? min(k, j + 1) : k;
  double acc = 0.0;
  for (int p = lo + l; p < hi; p += LOCAL_SIZE)
    acc = fma(x[p], A[(long)j * k + p], acc);
  part[l] = acc;
  for (int s = LOCAL_SIZE / 2; s > 0; s /= 2) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l < s) part[l] += part[l + s];
  }
  if (l == 0 && j < n) y[j] = part[0];
}
)";

inline kernel_cl<out_buffer, in_buffer, in_buffer, int, int, int> matrix_vector(
    "matrix_vector", matrix_vector_source, {{"LOCAL_SIZE", 64}});
inline kernel_cl<out_buffer, in_buffer, in_buffer, int, int, int>
    row_vector_matrix("row_vector_matrix", matrix_vector_source,
                      {{"LOCAL_SIZE", 64}});

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
