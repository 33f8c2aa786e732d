#ifndef CLBAYES_KERNELS_TRANSPOSE_HPP
#define CLBAYES_KERNELS_TRANSPOSE_HPP

// Transposes (stan-opencl.txt, section 3.5.3): B = t(A), and the in-place
// copy of one triangle onto the other, which makes a matrix symmetric.

#include "../opencl/kernel_cl.hpp"

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {
namespace kernels {

inline const char* transpose_source = R"(
/**
 * B = t(A); A is rows x cols, B is cols x rows; one work item per element.
 */
__kernel void transpose(__global double* B, __global const double* A,
                        int rows, int cols) {
  const int i = get_global_id(0);
  const int j = get_global_id(1);
  if (i < rows && j < cols) B[(long)i * cols + j] = A[(long)j * rows + i];
}

/**
 * Columns c0 .. c0 + nc - 1 of U = t(L) for the n x n lower-triangular L:
 * U[r, c] = L[c, r] on and above the diagonal, zero below (the host-to-host
 * Cholesky's upper factor, one block column as soon as the rows of L it
 * reads are final). Launch: global (n, nc).
 */
__kernel void upper_columns_of_lower(__global double* U, __global const double* L, int n,
                                     int c0, int nc) {
  const int r = get_global_id(0);
  const int c = c0 + get_global_id(1);
  if (r >= n || c >= c0 + nc) return;
  U[(long)c * n + r] = r <= c ? L[(long)r * n + c] : 0.0;
}

/**
 * Copy one triangle of the square matrix A onto the other, in place.
 * lower_to_upper = 1: A[j, i] = A[i, j] for i > j; 0: the reverse.
 * Work items on the side being read do the copy, the others do nothing.
 */
__kernel void triangular_transpose(__global double* A, int n,
                                   int lower_to_upper) {
  const int i = get_global_id(0);
  const int j = get_global_id(1);
  if (i >= n || j >= n) return;
  if (lower_to_upper ? (i > j) : (i < j))
    A[(long)i * n + j] = A[(long)j * n + i];
}
)";

inline kernel_cl<out_buffer, in_buffer, int, int> transpose("transpose",
                                                             transpose_source);
inline kernel_cl<in_out_buffer, int, int> triangular_transpose(
    "triangular_transpose", transpose_source);
inline kernel_cl<out_buffer, in_buffer, int, int, int> upper_columns_of_lower(
    "upper_columns_of_lower", transpose_source);

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
