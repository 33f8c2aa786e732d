#ifndef CLBAYES_LINALG_TRANSPOSE_HPP
#define CLBAYES_LINALG_TRANSPOSE_HPP

#include "../kernels/transpose.hpp"
#include "../opencl/matrix_cl.hpp"

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {

/** t(A); a lower view becomes upper and the reverse. */
inline matrix_cl transpose(const matrix_cl& a) {
  matrix_cl b(a.cols(), a.rows(), transpose_view(a.view()));
  kernels::transpose(cl::NDRange(a.rows(), a.cols()), b, a, a.rows(), a.cols());
  return b;
}

/** Make the square matrix A symmetric in place by copying its lower
 *  (`from` = lower) or upper triangle onto the other; the view becomes
 *  entire. */
inline void triangular_transpose(matrix_cl& a, matrix_view from) {
  if (a.rows() != a.cols())
    throw invalid_argument("x", "must be square for a triangular transpose");
  if (from == matrix_view::entire)
    throw invalid_argument("from", "must be \"lower\" or \"upper\"");
  kernels::triangular_transpose(cl::NDRange(a.rows(), a.rows()), a, a.rows(),
                                from == matrix_view::lower ? 1 : 0);
  a.set_view(matrix_view::entire);
}

}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
