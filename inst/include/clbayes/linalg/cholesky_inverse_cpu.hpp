#ifndef CLBAYES_LINALG_CHOLESKY_INVERSE_CPU_HPP
#define CLBAYES_LINALG_CHOLESKY_INVERSE_CPU_HPP

// A^{-1} from the Cholesky factor L of A (A = L L^T), on the CPU and in
// place, as LAPACK's dpotri does it: L -> L^{-1} (dtrtri) -> L^{-T} L^{-1}
// (dlauum), each n^3 / 6 multiply-adds. Both steps recurse on halves so
// that the work is in Eigen's blocked products and triangular solves;
// Eigen's own route, two triangular solves against the identity, costs
// n^3 multiply-adds, three times as many (at n = 500 on the dev CPU, 3.8
// ms against 10.8 ms: bench_gp_gradient; RESULTS.md, "GP gradient on the CPU").
// Only the lower triangle is read and written.

#include "../eigen.hpp"

namespace clbayes {
namespace linalg {

namespace internal {
/** Below this order the unblocked loops are faster than the recursion. */
constexpr Eigen::Index cholesky_inverse_leaf = 32;
}  // namespace internal

/** L <- L^{-1} for lower-triangular L with a non-zero diagonal:
 *  [L11 0; L21 L22]^{-1} = [L11^{-1} 0; -L22^{-1} L21 L11^{-1}  L22^{-1}]. */
inline void tri_inverse_lower_in_place(Eigen::Ref<Eigen::MatrixXd> l) {
  const Eigen::Index n = l.rows();
  if (n <= internal::cholesky_inverse_leaf) {
    // Column j of the inverse from the top down; columns right of j still
    // hold L.
    for (Eigen::Index j = 0; j < n; ++j) {
      l(j, j) = 1.0 / l(j, j);
      for (Eigen::Index i = j + 1; i < n; ++i) {
        double s = 0.0;
        for (Eigen::Index k = j; k < i; ++k) s += l(i, k) * l(k, j);
        l(i, j) = -s / l(i, i);
      }
    }
    return;
  }
  const Eigen::Index h = n / 2, m = n - h;
  tri_inverse_lower_in_place(l.topLeftCorner(h, h));
  l.bottomLeftCorner(m, h) =
      -(l.bottomLeftCorner(m, h) * l.topLeftCorner(h, h).triangularView<Eigen::Lower>());
  l.bottomRightCorner(m, m).triangularView<Eigen::Lower>().solveInPlace(l.bottomLeftCorner(m, h));
  tri_inverse_lower_in_place(l.bottomRightCorner(m, m));
}

/** X <- lower triangle of X^T X for lower-triangular X:
 *  with X = [A 0; B C], X^T X = [A^T A + B^T B, .; C^T B, C^T C]. */
inline void lower_crossprod_in_place(Eigen::Ref<Eigen::MatrixXd> x) {
  const Eigen::Index n = x.rows();
  if (n <= internal::cholesky_inverse_leaf) {
    // Entry (i, j), i >= j, needs rows i.. of columns i and j: top down
    // in column j, left to right, reads only entries not yet written.
    for (Eigen::Index j = 0; j < n; ++j)
      for (Eigen::Index i = j; i < n; ++i) {
        double s = 0.0;
        for (Eigen::Index k = i; k < n; ++k) s += x(k, i) * x(k, j);
        x(i, j) = s;
      }
    return;
  }
  const Eigen::Index h = n / 2, m = n - h;
  lower_crossprod_in_place(x.topLeftCorner(h, h));
  x.topLeftCorner(h, h).selfadjointView<Eigen::Lower>().rankUpdate(
      x.bottomLeftCorner(m, h).transpose());
  x.bottomLeftCorner(m, h) =
      x.bottomRightCorner(m, m).triangularView<Eigen::Lower>().transpose() *
      x.bottomLeftCorner(m, h);
  lower_crossprod_in_place(x.bottomRightCorner(m, m));
}

/** L (lower Cholesky factor of A) <- lower triangle of A^{-1}. */
inline void cholesky_inverse_in_place(Eigen::Ref<Eigen::MatrixXd> l) {
  tri_inverse_lower_in_place(l);
  lower_crossprod_in_place(l);
}

}  // namespace linalg
}  // namespace clbayes

#endif
