#ifndef CLBAYES_OPENCL_ARITHMETIC_HPP
#define CLBAYES_OPENCL_ARITHMETIC_HPP

// Element-wise arithmetic and the plain tiled product on device matrices.
// Results carry the view their values imply (a sum of two lower triangles
// is lower, and so on).

#include "../kernels/add_subtract.hpp"
#include "../kernels/matrix_multiply.hpp"
#include "../kernels/scalar_mul.hpp"
#include "matrix_cl.hpp"

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {

namespace internal {
inline void check_same_dims(const matrix_cl& a, const matrix_cl& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols())
    throw invalid_argument("e2", "has dimensions " + std::to_string(b.rows()) +
                                     " x " + std::to_string(b.cols()) +
                                     " but `e1` has " + std::to_string(a.rows()) +
                                     " x " + std::to_string(a.cols()));
}
}  // namespace internal

inline matrix_cl add(const matrix_cl& a, const matrix_cl& b) {
  internal::check_same_dims(a, b);
  matrix_cl c(a.rows(), a.cols(), union_view(a.view(), b.view()));
  kernels::add(cl::NDRange(a.rows(), a.cols()), c, a, b, a.rows(), a.cols());
  return c;
}

inline matrix_cl subtract(const matrix_cl& a, const matrix_cl& b) {
  internal::check_same_dims(a, b);
  matrix_cl c(a.rows(), a.cols(), union_view(a.view(), b.view()));
  kernels::subtract(cl::NDRange(a.rows(), a.cols()), c, a, b, a.rows(), a.cols());
  return c;
}

inline matrix_cl scalar_multiply(const matrix_cl& a, double s) {
  matrix_cl b(a.rows(), a.cols(), a.view());
  kernels::scalar_mul(cl::NDRange(a.rows(), a.cols()), b, a, s, a.rows(), a.cols());
  return b;
}

/** A[i, i] *= s, in place. */
inline void scalar_multiply_diagonal(matrix_cl& a, double s) {
  kernels::scalar_mul_diagonal(cl::NDRange(std::min(a.rows(), a.cols())), a, s,
                               a.rows(), a.cols());
}

/** C = A B with the tiled kernel; the tile shrinks on devices with small
 *  work groups. */
inline matrix_cl multiply(const matrix_cl& a, const matrix_cl& b) {
  if (a.cols() != b.rows())
    throw invalid_argument("y", "has " + std::to_string(b.rows()) +
                                    " rows but `x` has " +
                                    std::to_string(a.cols()) + " columns");
  matrix_cl c(a.rows(), b.cols(), product_view(a.view(), b.view()));
  if (c.size() == 0) return c;
  // An empty inner dimension needs no special case: the kernel writes 0.
  std::size_t max_wg = context::instance().info().max_work_group_size;
  int tile = 16;
  while (tile > 1 && static_cast<std::size_t>(tile * tile) > max_wg) tile /= 2;
  if (kernels::matrix_multiply.option("TILE") != tile)
    kernels::matrix_multiply.set_option("TILE", tile);
  kernels::matrix_multiply(cl::NDRange(round_up(a.rows(), tile), round_up(b.cols(), tile)),
                           cl::NDRange(tile, tile), c, a, b, a.rows(), b.cols(),
                           a.cols());
  return c;
}

}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
