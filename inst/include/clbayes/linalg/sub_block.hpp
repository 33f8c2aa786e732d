#ifndef CLBAYES_LINALG_SUB_BLOCK_HPP
#define CLBAYES_LINALG_SUB_BLOCK_HPP

#include "../kernels/sub_block.hpp"
#include "../opencl/matrix_cl.hpp"

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {

/** Copy the rows x cols block of src at (src_i, src_j) (0-based) into dst
 *  at (dst_i, dst_j). `view` lower or upper copies only the elements of
 *  src on that side of its diagonal (the diagonal included). */
inline void sub_block(matrix_cl& dst, const matrix_cl& src, int src_i, int src_j,
                      int dst_i, int dst_j, int rows, int cols,
                      matrix_view view = matrix_view::entire) {
  if (rows < 0 || cols < 0)
    throw invalid_argument("size", "must be non-negative");
  if (src_i < 0 || src_j < 0 || src_i + rows > src.rows() ||
      src_j + cols > src.cols())
    throw invalid_argument("src", "is too small for the requested block");
  if (dst_i < 0 || dst_j < 0 || dst_i + rows > dst.rows() ||
      dst_j + cols > dst.cols())
    throw invalid_argument("dst", "is too small for the requested block");
  kernels::sub_block(cl::NDRange(rows, cols), dst, src, src_i, src_j, dst_i,
                     dst_j, rows, cols, src.rows(), dst.rows(),
                     static_cast<int>(view));
  dst.set_view(matrix_view::entire);
}

}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
