#ifndef CLBAYES_KERNELS_ADD_SUBTRACT_HPP
#define CLBAYES_KERNELS_ADD_SUBTRACT_HPP

// Element-wise C = A + B and C = A - B (stan-opencl.txt, section 3.5.1).

#include "../opencl/kernel_cl.hpp"

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {
namespace kernels {

inline const char* add_subtract_source = R"(
/**
 * C = A + B for rows x cols matrices; one work item per element.
 */
__kernel void add(__global double* C, __global const double* A,
                  __global const double* B, int rows, int cols) {
  const int i = get_global_id(0);
  const int j = get_global_id(1);
  if (i < rows && j < cols) {
    const long k = (long)j * rows + i;
    C[k] = A[k] + B[k];
  }
}

/**
 * C = A - B for rows x cols matrices; one work item per element.
 */
__kernel void subtract(__global double* C, __global const double* A,
                       __global const double* B, int rows, int cols) {
  const int i = get_global_id(0);
  const int j = get_global_id(1);
  if (i < rows && j < cols) {
    const long k = (long)j * rows + i;
    C[k] = A[k] - B[k];
  }
}
)";

inline kernel_cl<out_buffer, in_buffer, in_buffer, int, int> add(
    "add", add_subtract_source);
inline kernel_cl<out_buffer, in_buffer, in_buffer, int, int> subtract(
    "subtract", add_subtract_source);

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
