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
 * C = A + sign * B for rows x cols matrices, sign 1 or -1 (exact: A - B);
 * one work item per element.
 */
__kernel void add_signed(__global double* C, __global const double* A,
                         __global const double* B, double sign, int rows, int cols) {
  const int i = get_global_id(0);
  const int j = get_global_id(1);
  if (i < rows && j < cols) {
    const long k = (long)j * rows + i;
    C[k] = A[k] + sign * B[k];
  }
}
)";

inline kernel_cl<out_buffer, in_buffer, in_buffer, double, int, int> add_signed(
    "add_signed", add_subtract_source);

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
