#ifndef CLBAYES_KERNELS_CHECK_HPP
#define CLBAYES_KERNELS_CHECK_HPP

// Input checks on data that lives on the device (stan-opencl.txt, section
// 3.5.6). Each kernel sets a flag when it finds a problem; no work item
// ever clears it, so there is no race.

#include "../opencl/kernel_cl.hpp"

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {
namespace kernels {

inline const char* check_source = R"(
/**
 * flag[0] = 1 if any element of the rows x cols matrix A is NaN or infinite.
 */
__kernel void check_nan(__global const double* A, int rows, int cols,
                        __global int* flag) {
  const int i = get_global_id(0);
  const int j = get_global_id(1);
  if (i < rows && j < cols && !isfinite(A[(long)j * rows + i])) flag[0] = 1;
}

/**
 * flag[0] = 1 if |A[i,j] - A[j,i]| > tol * max(|A[i,j]|, |A[j,i]|) for some
 * i > j (a relative tolerance). A is n x n.
 */
__kernel void check_symmetric(__global const double* A, int n, double tol,
                              __global int* flag) {
  const int i = get_global_id(0);
  const int j = get_global_id(1);
  if (i >= n || j >= n || i <= j) return;
  const double a = A[(long)j * n + i];
  const double b = A[(long)i * n + j];
  if (fabs(a - b) > tol * fmax(fabs(a), fabs(b))) flag[0] = 1;
}

/**
 * flag[0] = 1 if a diagonal element of the rows x cols matrix A is zero.
 */
__kernel void check_diagonal_zeros(__global const double* A, int rows,
                                   int cols, __global int* flag) {
  const int i = get_global_id(0);
  if (i < rows && i < cols && A[(long)i * rows + i] == 0.0) flag[0] = 1;
}
)";

// The flag is a one-element device buffer of int, created by the host
// function that runs the check; it is passed as a plain cl::Buffer.
inline kernel_cl<in_buffer, int, int, cl::Buffer> check_nan("check_nan",
                                                            check_source);
inline kernel_cl<in_buffer, int, double, cl::Buffer> check_symmetric(
    "check_symmetric", check_source);
inline kernel_cl<in_buffer, int, int, cl::Buffer> check_diagonal_zeros(
    "check_diagonal_zeros", check_source);

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
