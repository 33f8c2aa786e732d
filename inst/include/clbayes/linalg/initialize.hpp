#ifndef CLBAYES_LINALG_INITIALIZE_HPP
#define CLBAYES_LINALG_INITIALIZE_HPP

#include "../kernels/initialize.hpp"
#include "../opencl/matrix_cl.hpp"

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {

/** A rows x cols matrix of zeros. */
inline matrix_cl zeros(int rows, int cols) {
  matrix_cl a(rows, cols);
  kernels::zeros(cl::NDRange(rows, cols), a, rows, cols, 0);
  return a;
}

/** Zero the strictly lower (`part` = lower) or strictly upper triangle of
 *  A in place, or all of it (`part` = entire). A triangle zeroed on a square
 *  matrix leaves the opposite view. */
inline void zeros_in_place(matrix_cl& a, matrix_view part) {
  kernels::zeros(cl::NDRange(a.rows(), a.cols()), a, a.rows(), a.cols(),
                 static_cast<int>(part));
  if (a.rows() == a.cols() && part != matrix_view::entire)
    a.set_view(transpose_view(part));
}

/** The rows x cols identity. */
inline matrix_cl identity(int rows, int cols) {
  matrix_cl a(rows, cols);
  kernels::identity(cl::NDRange(rows, cols), a, rows, cols);
  return a;
}

/** `batch` n x n identities stored one after another: an n x (n * batch)
 *  matrix whose b-th n x n block is the identity. */
inline matrix_cl batch_identity(int n, int batch) {
  if (batch < 0) throw invalid_argument("batch", "must be non-negative");
  matrix_cl a(n, n * batch);
  kernels::batch_identity(cl::NDRange(batch, n, n), a, n, batch);
  return a;
}

}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
