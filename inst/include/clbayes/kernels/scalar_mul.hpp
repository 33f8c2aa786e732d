#ifndef CLBAYES_KERNELS_SCALAR_MUL_HPP
#define CLBAYES_KERNELS_SCALAR_MUL_HPP

// Multiplication by a scalar (stan-opencl.txt, section 3.5.2): of every
// element, or of the diagonal alone.

#include "../opencl/kernel_cl.hpp"

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {
namespace kernels {

inline const char* scalar_mul_source = R"(
/**
 * B = scalar * A for rows x cols matrices; one work item per element.
 */
__kernel void scalar_mul(__global double* B, __global const double* A,
                         double scalar, int rows, int cols) {
  const int i = get_global_id(0);
  const int j = get_global_id(1);
  if (i < rows && j < cols) {
    const long k = (long)j * rows + i;
    B[k] = scalar * A[k];
  }
}

/**
 * A[i, i] *= scalar for i < min(rows, cols), in place; one work item per
 * diagonal element.
 */
__kernel void scalar_mul_diagonal(__global double* A, double scalar,
                                  int rows, int cols) {
  const int i = get_global_id(0);
  if (i < rows && i < cols) A[(long)i * rows + i] *= scalar;
}
)";

inline kernel_cl<out_buffer, in_buffer, double, int, int> scalar_mul(
    "scalar_mul", scalar_mul_source);
inline kernel_cl<in_out_buffer, double, int, int> scalar_mul_diagonal(
    "scalar_mul_diagonal", scalar_mul_source);

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
