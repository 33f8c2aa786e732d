#ifndef CLBAYES_LINALG_ARITHMETIC_HPP
#define CLBAYES_LINALG_ARITHMETIC_HPP

// Element-wise arithmetic and the product on device matrices.
// Results carry the view their values imply (a sum of two lower triangles
// is lower, and so on).

#include "../kernels/add_subtract.hpp"
#include "../kernels/scalar_mul.hpp"
#include "../opencl/matrix_cl.hpp"
#include "gemm.hpp"

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {

namespace internal {
inline void check_same_dims(const matrix_cl& a, const matrix_cl& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols())
    throw invalid_argument("e2", "has dimensions " + format_dims(b.rows(), b.cols()) +
                                     " but `e1` has " + format_dims(a.rows(), a.cols()));
}

// A + sign B (sign 1 or -1).
inline matrix_cl add_signed(const matrix_cl& a, const matrix_cl& b, double sign) {
  check_same_dims(a, b);
  matrix_cl c(a.rows(), a.cols(), union_view(a.view(), b.view()));
  kernels::add_signed(cl::NDRange(a.rows(), a.cols()), c, a, b, sign, a.rows(), a.cols());
  return c;
}
}  // namespace internal

inline matrix_cl add(const matrix_cl& a, const matrix_cl& b) {
  return internal::add_signed(a, b, 1.0);
}

inline matrix_cl subtract(const matrix_cl& a, const matrix_cl& b) {
  return internal::add_signed(a, b, -1.0);
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

/** C = A B: the register-blocked GEMM of linalg/gemm.hpp (triangular
 *  views skip known zeros; vector operands use the vector kernels). */
inline matrix_cl multiply(const matrix_cl& a, const matrix_cl& b) {
  return linalg::multiply(a, b);
}

}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
