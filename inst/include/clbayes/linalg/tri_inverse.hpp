#ifndef CLBAYES_LINALG_TRI_INVERSE_HPP
#define CLBAYES_LINALG_TRI_INVERSE_HPP

// Inverse of a lower-triangular matrix and triangular solves
// (stan-opencl.txt, section 3.2.1; tri-inverse-kernels.txt). On the device
// the batched algorithm: diag_inv inverts all small diagonal blocks at
// once, then for block sizes s = B, 2B, 4B, ... every pair of neighbouring
// inverted blocks C1 (top) and C2 (bottom) with the block A3 between them
// is joined by C3 = -C2 A3 C1, as two batched products (join_pairs; the
// paper's inv_lower_tri_multiply, T = C2 A3, and neg_rect_lower_tri_multiply,
// C3 = -T C1). On the CPU, the recursive in-place inverse of
// linalg/cholesky_inverse_cpu.hpp (n^3 / 6 multiply-adds, where solving
// against the identity costs n^3 / 2).

#include "../eigen.hpp"
#include "../error.hpp"
#include "../interrupt.hpp"
#include "../kernels/tri_inverse.hpp"
#include "check.hpp"
#include "cholesky_inverse_cpu.hpp"
#include "gemm.hpp"
#include "settings.hpp"
#include "sub_block.hpp"
#include "transpose.hpp"

#include <string>
#include <utility>
#include <vector>

namespace clbayes {
namespace linalg {

/** Throws unless b (rhs_rows rows) conforms to the triangular L of order n. */
inline void check_rhs_rows(long long rhs_rows, long long n) {
  if (rhs_rows != n)
    throw invalid_argument("b", "has " + std::to_string(rhs_rows) + " rows but `L` has " +
                                    std::to_string(n));
}

/** Throws unless every diagonal element of the triangular `x` is non-zero. */
inline void check_nonsingular_triangular(const Eigen::MatrixXd& x, const char* arg) {
  for (Eigen::Index i = 0; i < x.rows(); ++i)
    if (x(i, i) == 0.0)
      throw invalid_argument(arg, "is singular: diagonal element " +
                                      std::to_string(i + 1) + " is zero");
}

/** L^{-1} for lower-triangular L (upper = false) or U^{-1} for upper U. */
inline Eigen::MatrixXd tri_inverse(const Eigen::MatrixXd& x, bool upper = false) {
  check_nonsingular_triangular(x, "L");
  // U^{-1} = ((U^T)^{-1})^T: the lower triangle is inverted in place.
  Eigen::MatrixXd out;
  if (upper)
    out = x.transpose().triangularView<Eigen::Lower>();
  else
    out = x.triangularView<Eigen::Lower>();
  tri_inverse_lower_in_place(out);
  if (upper) out.transposeInPlace();
  return out;
}

/** Solve x y = b for triangular x (its lower or upper triangle). */
inline Eigen::MatrixXd tri_solve(const Eigen::MatrixXd& x, const Eigen::MatrixXd& b,
                                 bool lower = true) {
  check_rhs_rows(b.rows(), x.rows());
  check_nonsingular_triangular(x, "L");
  Eigen::MatrixXd y = b;
  if (lower)
    x.triangularView<Eigen::Lower>().solveInPlace(y);
  else
    x.triangularView<Eigen::Upper>().solveInPlace(y);
  return y;
}

#ifdef CLBAYES_OPENCL

namespace internal {

// Pairs first .. first + count - 1 of the inverted blocks of size s on the
// diagonal of the n x n w (2 s apart, C2 s2 x s2) joined: T_p = C2_p A3_p
// into columns p s .. p s + s - 1 of t, then C3_p = -T_p C1_p into w below
// C1_p.
inline void join_pairs(matrix_cl& w, matrix_cl& t, int s, int s2, int first, int count,
                       const gemm_settings& g) {
  const int o = 2 * s * first;
  const long long step = 2LL * s * (w.rows() + 1), t_step = static_cast<long long>(s) * s;
  gemm_options opt(g);
  opt.batch = count;
  const gemm_block c1{&w, o, o, false, matrix_view::lower, step};
  const gemm_block c2{&w, o + s, o + s, false, matrix_view::lower, step};
  const gemm_block a3{&w, o + s, o, false, matrix_view::entire, step};
  const gemm_block tp{&t, 0, first * s, false, matrix_view::entire, t_step};
  linalg::gemm(t, 0, first * s, t_step, c2, a3, s2, s, s2, opt);
  opt.alpha = -1.0;
  linalg::gemm(w, o + s, o, step, tp, c1, s2, s, s, opt);
}

// The lower triangle of the n x n w replaced by its inverse, without
// checks; view lower. Nothing above the diagonal is read (zeros there stay
// zeros, and the Cholesky's panels pass a block not cleared above it).
// `levels`, when given, holds the work matrices of the joining levels for
// this n: made on the first call, reused by the next ones (the Cholesky
// inverts many blocks of one size while another queue runs, and NVIDIA's
// OpenCL waits for the queues when a buffer is released between launches).
inline void tri_inverse_in_place(matrix_cl& w, const linalg_settings& tune,
                                 std::vector<matrix_cl>* levels = nullptr) {
  const int n = w.rows();
  w.set_view(matrix_view::lower);
  if (n == 0) return;
  const int bs = tune.diag_block;
  opencl::kernels::diag_inv.set_option("DIAG_BLOCK", bs);
  const int blocks = (n + bs - 1) / bs;
  opencl::kernels::diag_inv(cl::NDRange(static_cast<std::size_t>(blocks) * bs),
                            cl::NDRange(bs), w, n);
  if (blocks > 1) {
    std::size_t level = 0;
    for (int s = bs; s < n; s *= 2, ++level) {
      check_interrupt();
      const int pairs = (n + s - 1) / s / 2;  // pairs of blocks of size s
      const int last_s2 = std::min(s, n - (2 * (pairs - 1) * s + s));
      const int full = last_s2 == s ? pairs : pairs - 1;
      // The product T of pair p sits in columns p s .. p s + s - 1 of t.
      matrix_cl own;
      if (levels != nullptr && levels->size() == level) levels->emplace_back(s, s * pairs);
      matrix_cl& t = levels != nullptr ? (*levels)[level] : (own = matrix_cl(s, s * pairs));
      if (full > 0) join_pairs(w, t, s, s, 0, full, tune.gemm);
      if (full < pairs) join_pairs(w, t, s, last_s2, pairs - 1, 1, tune.gemm);
    }
  }
  w.set_view(matrix_view::lower);
}

}  // namespace internal

/** L^{-1} of a triangular device matrix (its lower triangle, or with
 *  `upper` its upper triangle, inverted through the transpose), with
 *  settings `tune` (by default the selected device's). Every element of x
 *  is checked for NaN and infinite values, the diagonal for zeros, in the
 *  kernel that copies the triangle into the working matrix; the flags come
 *  back in one read at the end. */
inline matrix_cl tri_inverse(const matrix_cl& x, bool upper = false,
                             const linalg_settings& tune = tuned_settings()) {
  x.check_device("L");
  check_square(x.rows(), x.cols(), "L");
  const int n = x.rows();
  matrix_cl w(n, n);
  const cl::Buffer flags = opencl::new_flags(2);  // [0] not finite, [1] zero diagonal
  const matrix_cl xt = upper ? opencl::transpose(x) : matrix_cl();
  opencl::kernels::copy_lower_flagged(cl::NDRange(n, n), upper ? xt : x, w, n, 0, n, flags, 0,
                                      1);
  internal::tri_inverse_in_place(w, tune);
  const std::vector<int> bad = opencl::read_flags(flags, 2);
  if (bad[0] != 0) throw invalid_argument("L", "contains NaN or infinite values");
  if (bad[1] != 0) throw invalid_argument("L", "is singular: a diagonal element is zero");
  return upper ? opencl::transpose(w) : std::move(w);
}

/** Solve x y = b on the device for triangular x, as x^{-1} b. */
inline matrix_cl tri_solve(const matrix_cl& x, const matrix_cl& b, bool lower = true) {
  check_rhs_rows(b.rows(), x.rows());
  matrix_cl inv = tri_inverse(x, !lower);
  return linalg::multiply(inv, b);
}

#endif  // CLBAYES_OPENCL

}  // namespace linalg
}  // namespace clbayes

#endif
