#ifndef CLBAYES_LINALG_CHOLESKY_HPP
#define CLBAYES_LINALG_CHOLESKY_HPP

// Cholesky decomposition A = L L^T of a symmetric positive-definite matrix.
// Device: the blocked algorithm of stan-opencl.txt, section 3.3.1
// (Louter-Nool 1992), in place on one working copy, as a right-looking
// loop over panels with look-ahead (linalg/cholesky_panel.hpp).
// CPU: Eigen's blocked LLT, which also reports the failing pivot.

#include "../eigen.hpp"
#include "../error.hpp"
#include "../interrupt.hpp"
#include "../opencl/transfer.hpp"
#include "arithmetic.hpp"
#include "check.hpp"
#include "cholesky_panel.hpp"
#include "gemm.hpp"
#include "settings.hpp"
#include "sub_block.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace clbayes {
namespace linalg {

/** Relative tolerance of the symmetry checks. */
constexpr double symmetry_tolerance = 1e-8;

namespace internal {

inline std::string not_pd_message(long long pivot) {
  return "is not positive definite: the leading minor of order " +
         std::to_string(pivot) + " is not positive (pivot " + std::to_string(pivot) +
         ")";
}

}  // namespace internal

/** Throws unless the square a is symmetric to relative tolerance `tol`. */
inline void check_symmetric(const Eigen::Ref<const Eigen::MatrixXd>& a, const char* arg,
                            double tol = symmetry_tolerance) {
  check_square(a.rows(), a.cols(), arg);
  for (Eigen::Index j = 0; j < a.cols(); ++j)
    for (Eigen::Index i = j + 1; i < a.rows(); ++i) {
      const double x = a(i, j), y = a(j, i);
      if (std::fabs(x - y) > tol * std::fmax(std::fabs(x), std::fabs(y)))
        throw invalid_argument(arg, "must be symmetric (element [" + std::to_string(i + 1) +
                                        ", " + std::to_string(j + 1) + "] differs from [" +
                                        std::to_string(j + 1) + ", " +
                                        std::to_string(i + 1) + "])");
    }
}

/** In place: the lower triangle of the symmetric positive-definite `a`
 *  becomes L (the strict upper triangle zero), or with `upper` the upper
 *  triangle becomes U = L^T (what base::chol() returns). Only the lower
 *  triangle of `a` is read; checks are the caller's (check_symmetric). */
inline void cholesky_in_place(Eigen::Map<Eigen::MatrixXd>& a, bool upper = false) {
  const Eigen::Index fail = Eigen::internal::llt_inplace<double, Eigen::Lower>::blocked(a);
  if (fail >= 0) throw invalid_argument("x", internal::not_pd_message(fail + 1));
  if (upper) {
    a.triangularView<Eigen::StrictlyUpper>() = a.transpose();
    a.triangularView<Eigen::StrictlyLower>().setZero();
  } else {
    a.triangularView<Eigen::StrictlyUpper>().setZero();
  }
}

/** L with a = L L^T for the symmetric positive-definite `a` (CPU). */
inline Eigen::MatrixXd cholesky(const Eigen::MatrixXd& a) {
  check_symmetric(a, "x");
  Eigen::MatrixXd l = a;
  Eigen::Map<Eigen::MatrixXd> m(l.data(), l.rows(), l.cols());
  cholesky_in_place(m);
  return l;
}

#ifdef CLBAYES_OPENCL

namespace internal {

// The flags the factorisation's kernels set: [0] the failing pivot
// (1-based), [1] A has NaN or infinite values, [2] A is not symmetric.
constexpr int flag_count = 3;

inline cl::Buffer new_flags() { return opencl::new_flags(flag_count); }

// Read the flags on queue q (after everything enqueued on it) and throw the
// error they name: a factorisation of bad input is discarded, and the input
// errors come first.
inline void check_flags(cl::CommandQueue& q, const cl::Buffer& flag) {
  const std::vector<int> flags = opencl::read_flags(flag, flag_count, q);
  if (flags[1] != 0) throw invalid_argument("x", "contains NaN or infinite values");
  if (flags[2] != 0) throw invalid_argument("x", "must be symmetric");
  if (flags[0] != 0) throw invalid_argument("x", not_pd_message(flags[0]));
}

}  // namespace internal

/** L with a = L L^T on the device (lower view), with the schedule's
 *  settings `s` (by default the selected device's). Checks, all on the
 *  device: square, finite, symmetric to relative tolerance, positive
 *  definite (the error names the first pivot that is not positive). The
 *  finite and symmetry checks run in the kernel that copies a's lower
 *  triangle into the working matrix, and every flag comes back in one read
 *  at the end: no synchronisation before the factorisation starts. */
inline matrix_cl cholesky(const matrix_cl& a, const linalg_settings& s = tuned_settings()) {
  a.check_device("x");
  check_square(a.rows(), a.cols(), "x");
  matrix_cl w(a.rows(), a.cols());
  if (w.size() == 0) return w;
  opencl::context& ctx = opencl::context::instance();
  const cl::Buffer flag = internal::new_flags();
  const internal::schedule_shape sh = internal::shape_for(s, w.rows());
  // w's tile columns [t0, t1) = a's lower triangle there, zeros above it
  // (nothing the factorisation writes is above the diagonal), checked for
  // NaN/Inf and symmetry on the way: first the columns of the first panel,
  // then the rest while that panel is factored.
  const int tile = opencl::kernels::copy_lower_checked.option("SYM_TILE");
  const int rows = opencl::kernels::copy_lower_checked.option("SYM_ROWS");
  const int tiles = (w.rows() + tile - 1) / tile;
  const int split = std::min(tiles, (sh.nb + tile - 1) / tile);  // in tiles
  auto copy = [&](int t0, int t1) {
    if (t1 > t0)
      opencl::kernels::copy_lower_checked(
          cl::NDRange(static_cast<std::size_t>(tiles) * tile, (t1 - t0) * rows),
          cl::NDRange(tile, rows), a, w, a.rows(), symmetry_tolerance, flag, t0);
  };
  copy(0, split);
  // Hundreds of short launches, ordered by the in-order queues and the
  // look-ahead's markers: no per-launch event bookkeeping (untracked_scope).
  opencl::queue_wait(ctx.main_queue(), w.read_write_events());
  {
    opencl::untracked_scope untracked;
    internal::cholesky_lookahead(w, sh, flag, s, [&] { copy(split, tiles); });
  }
  const cl::Event done = opencl::queue_marker(ctx.main_queue());
  w.add_write_event(done);
  a.add_read_event(done);  // the second copy, untracked
  w.set_view(matrix_view::lower);
  // The queue is in order: this read follows every kernel above.
  internal::check_flags(ctx.queue(), flag);
  return w;
}

#endif  // CLBAYES_OPENCL

}  // namespace linalg
}  // namespace clbayes

#endif
