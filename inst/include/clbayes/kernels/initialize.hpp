#ifndef CLBAYES_KERNELS_INITIALIZE_HPP
#define CLBAYES_KERNELS_INITIALIZE_HPP

// Matrix initialisation (stan-opencl.txt, section 3.5.4): zeros (all, or
// the strictly lower / strictly upper triangle only), identity, and a batch
// of identity matrices in one buffer.

#include "../opencl/kernel_cl.hpp"

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {
namespace kernels {

inline const char* initialize_source = R"(
/**
 * Set elements of the rows x cols matrix A to zero: part 0 all of them,
 * part 1 the strictly lower triangle, part 2 the strictly upper triangle.
 */
__kernel void zeros(__global double* A, int rows, int cols, int part) {
  const int i = get_global_id(0);
  const int j = get_global_id(1);
  if (i >= rows || j >= cols) return;
  if (part == 0 || (part == 1 && i > j) || (part == 2 && i < j))
    A[(long)j * rows + i] = 0.0;
}

/**
 * A = the rows x cols identity (ones on the main diagonal).
 */
__kernel void identity(__global double* A, int rows, int cols) {
  const int i = get_global_id(0);
  const int j = get_global_id(1);
  if (i < rows && j < cols) A[(long)j * rows + i] = (i == j) ? 1.0 : 0.0;
}

/**
 * `batch` n x n identity matrices stored one after the other in A.
 * Launched on batch x n x n work items: dimension 0 picks the matrix.
 */
__kernel void batch_identity(__global double* A, int n, int batch) {
  const int b = get_global_id(0);
  const int i = get_global_id(1);
  const int j = get_global_id(2);
  if (b < batch && i < n && j < n)
    A[(long)b * n * n + (long)j * n + i] = (i == j) ? 1.0 : 0.0;
}
)";

inline kernel_cl<out_buffer, int, int, int> zeros("zeros", initialize_source);
inline kernel_cl<out_buffer, int, int> identity("identity", initialize_source);
inline kernel_cl<out_buffer, int, int> batch_identity("batch_identity",
                                                      initialize_source);

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
