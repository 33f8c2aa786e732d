#ifndef CLBAYES_KERNELS_SUB_BLOCK_HPP
#define CLBAYES_KERNELS_SUB_BLOCK_HPP

// Sub-matrix copy (stan-opencl.txt, section 3.5.5).

#include "../opencl/kernel_cl.hpp"

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {
namespace kernels {

inline const char* sub_block_source = R"(
/**
 * Copy the rows x cols block of src starting at (src_i, src_j) into dst at
 * (dst_i, dst_j). view 1 copies only elements on or below the diagonal of
 * src, view 2 only those on or above it, view 0 all. One work item per
 * element of the block.
 */
__kernel void sub_block(__global double* dst, __global const double* src,
                        int src_i, int src_j, int dst_i, int dst_j,
                        int rows, int cols, int src_rows, int dst_rows,
                        int view) {
  const int i = get_global_id(0);
  const int j = get_global_id(1);
  if (i >= rows || j >= cols) return;
  const int si = src_i + i;
  const int sj = src_j + j;
  if ((view == 1 && si < sj) || (view == 2 && si > sj)) return;
  dst[(long)(dst_j + j) * dst_rows + dst_i + i] = src[(long)sj * src_rows + si];
}
)";

inline kernel_cl<in_out_buffer, in_buffer, int, int, int, int, int, int, int,
                 int, int>
    sub_block("sub_block", sub_block_source);

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
