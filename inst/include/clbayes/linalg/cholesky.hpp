#ifndef CLBAYES_LINALG_CHOLESKY_HPP
#define CLBAYES_LINALG_CHOLESKY_HPP

// Cholesky decomposition A = L L^T of a symmetric positive-definite matrix.
// Device: the blocked recursion of stan-opencl.txt, section 3.3.1
// (Louter-Nool 1992), in place on one working copy:
//   L11 = chol(A11)                 (recursion; cholesky_block kernel at the
//                                    smallest size)
//   L21 = A21 (L11^{-1})^T          (batched triangular inverse + GEMM)
//   A22 = A22 - L21 L21^T           (GEMM on the lower triangle only)
//   L22 = chol(A22)                 (recursion)
// By default (cholesky_tuning::outer_block > 0, panel = 1) the same
// algorithm runs as a right-looking loop over panels with a fused leaf
// kernel (linalg/cholesky_panel.hpp): far fewer launches, one large
// lower-triangle update per panel. outer_block = 0 selects the recursion.
// CPU: Eigen's blocked LLT, which also reports the failing pivot.

#include "../eigen.hpp"
#include "../error.hpp"
#include "../interrupt.hpp"
#include "../kernels/cholesky.hpp"
#include "../opencl/arithmetic.hpp"
#include "../opencl/checks.hpp"
#include "../opencl/initialize.hpp"
#include "../opencl/sub_block.hpp"
#include "../opencl/transfer.hpp"
#include "cholesky_panel.hpp"
#include "cholesky_trsm.hpp"
#include "gemm.hpp"
#include "tri_inverse.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace clbayes {
namespace linalg {

/** Relative tolerance of the symmetry checks. */
constexpr double symmetry_tolerance = 1e-8;

/** Tuning of the device recursion: the first block of a matrix of b rows
 *  has b / partition rows (rounded down to a multiple of 32); blocks of at
 *  most the kernel's CHOLESKY_BLOCK rows go to the single-work-group
 *  kernel. */
struct cholesky_tuning {
  int partition = 4;
  /** 0: the recursion above over the whole matrix (the first device path).
   *  > 0: right-looking loop over diagonal blocks of this many rows (a
   *  multiple of 32); each diagonal block is factored by the recursion,
   *  and every step ends in one lower-triangle update of the whole
   *  trailing matrix with inner dimension outer_block. Few steps, each a
   *  large product, instead of ~log(n) / log(p / (p - 1)) ever-smaller
   *  levels each with a triangular inverse of a block of b / p rows. */
  int outer_block = 1024;  // H200 sweep at n = 8192 (logs/history.md, H200 runs of 2026-11-24)
  /** outer_block for matrices of at least large_from rows (0: outer_block):
   *  the larger the trailing products, the more a wide panel pays. */
  int outer_block_large = 2048;  // H200 sweep at n = 16384 (logs/history.md, H200 runs of 2026-11-24)
  int large_from = 12288;
  /** With outer_block > 0: 1 factors each panel with the fused leaf
   *  kernel (linalg/cholesky_panel.hpp: factor and inverse of blocks of
   *  CHOLESKY_BLOCK rows in one launch, no triangular inverses), 0 with
   *  the recursion above on the diagonal block. */
  int panel = 1;
  /** Partition of the recursion inside a diagonal block (panel = 0). */
  int inner_partition = 2;
  /** With panel = 1, the leaf kernel: 2 the two-dimensional
   *  kernels/cholesky_leaf.hpp, 1 cholesky_block_inv (one work item per
   *  row), 3 the leaf and the solve below it in one launch
   *  (kernels/cholesky_leaf_solve.hpp; leaf 2 where its local memory does
   *  not fit). */
  int leaf = 2;  // H200 sweep at n = 8192 (logs/history.md, H200 runs of 2026-11-24)
  /** With leaf = 3: rows of the solve per work group (a multiple of 64).
   *  Every group repeats the leaf's factorisation: fewer, longer groups
   *  where the panel shares the device with the trailing update. */
  int leaf_solve_rows = 64;
  /** With panel = 1: 1 factors the panels on a second queue while the
   *  trailing updates run (cholesky_lookahead), 0 one queue. */
  int lookahead = 1;
  /** With panel = 1: 1 factors each panel by halves (cholesky_panel), 0
   *  block by block. */
  int panel_recursive = 1;
  /** With lookahead = 1: the trailing update of each step in this many
   *  products, so that the side queue's panel can start between them. */
  int trailing_chunks = 1;
  /** With lookahead = 1 and > 0: the trailing updates run on at most
   *  (compute units - trailing_reserve) work groups (large tiles, about
   *  one resident per unit), so that the panel on the side queue finds
   *  free units instead of waiting behind every tile of the update. Used
   *  only on devices with more than 4 * trailing_reserve compute units
   *  (H200 sweeps with the tensor-core GEMM, logs/history.md, H200 runs of 2026-11-24: 8 to
   *  32 of 132 units within 0.5 ms of each other at n = 8192; 8 kept by
   *  the greedy sweep with leaf 2 and narrow tiles up to 32 columns). */
  int trailing_reserve = 8;
  /** With trailing_reserve > 0 and panel_share > 0: each step reserves at
   *  least panel_share * (compute units) * b / (rows + b) units for the
   *  side queue's panel of b columns and `rows` rows (at most half the
   *  units): the panel's share of the step's flops, which grows as the
   *  trailing matrix shrinks. 0: trailing_reserve units at every step. */
  double panel_share = 0;
  /** With panel = 1: 1 runs the serial chain of small launches on the
   *  diagonal block only and computes the panel below it by one product
   *  with the block's inverse (linalg/cholesky_trsm.hpp), 0 factors the
   *  whole tall panel with the chain (linalg/cholesky_panel.hpp). */
  int panel_trsm = 0;
};
inline cholesky_tuning& cholesky_settings() {
  static cholesky_tuning t;
  return t;
}

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
  if (a.rows() != a.cols())
    throw invalid_argument(arg, "must be square (it is " + std::to_string(a.rows()) +
                                    " x " + std::to_string(a.cols()) + ")");
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

// Factor the b x b block at (o, o) of w in place (lower triangle).
// Blocks split at b / partition.
inline void cholesky_recursive(matrix_cl& w, int o, int b, const cl::Buffer& flag,
                               int partition) {
  if (b == 0) return;
  auto& kern = opencl::kernels::cholesky_block;
  int min_block = kern.option("CHOLESKY_BLOCK");
  const int max_wg =
      static_cast<int>(opencl::context::instance().info().max_work_group_size);
  if (max_wg < min_block) min_block = max_wg;
  if (b <= min_block) {
    kern(cl::NDRange(b), cl::NDRange(b), w, w.rows(), o, b, flag);
    return;
  }
  check_interrupt();
  int blk = (b / partition) / 32 * 32;
  if (blk < min_block) blk = min_block;
  const int rest = b - blk;
  cholesky_recursive(w, o, blk, flag, partition);
  const matrix_cl l11_inv = tri_inverse_block(w, o, blk);
  // L21 = A21 L11^{-T}: into t, then back into w.
  matrix_cl t(rest, blk);
  gemm_block inv_t{&l11_inv, 0, 0, true, matrix_view::lower};
  linalg::gemm(t, 0, 0, 0, gemm_block{&w, o + blk, o}, inv_t, rest, blk, blk);
  opencl::sub_block(w, t, 0, 0, o + blk, o, rest, blk);
  // A22 -= L21 L21^T, lower triangle only.
  gemm_options opt;
  opt.alpha = -1.0;
  opt.beta = 1.0;
  opt.lower_only = true;
  linalg::gemm(w, o + blk, o + blk, 0, gemm_block{&t}, gemm_block{&t, 0, 0, true}, rest, rest,
       blk, opt);
  cholesky_recursive(w, o + blk, rest, flag, partition);
}

// The right-looking loop of cholesky_tuning::outer_block: for each
// diagonal block at k of b rows, L11 = chol(A11) (recursion), L21 =
// A21 L11^{-T} (triangular inverse + one product, into the scratch panel t
// allocated once), A22 -= L21 L21^T (one lower-only product).
inline void cholesky_blocked(matrix_cl& w, int nb, const cl::Buffer& flag) {
  const int n = w.rows();
  const int partition = std::max(2, cholesky_settings().inner_partition);
  matrix_cl t(std::max(0, n - nb), std::min(nb, n));
  for (int k = 0; k < n; k += nb) {
    check_interrupt();
    const int b = std::min(nb, n - k);
    const int rest = n - k - b;
    cholesky_recursive(w, k, b, flag, partition);
    if (rest == 0) break;
    const matrix_cl l11_inv = tri_inverse_block(w, k, b);
    gemm_block inv_t{&l11_inv, 0, 0, true, matrix_view::lower};
    linalg::gemm(t, 0, 0, 0, gemm_block{&w, k + b, k}, inv_t, rest, b, b);
    opencl::sub_block(w, t, 0, 0, k + b, k, rest, b);
    gemm_options opt;
    opt.alpha = -1.0;
    opt.beta = 1.0;
    opt.lower_only = true;
    linalg::gemm(w, k + b, k + b, 0, gemm_block{&t}, gemm_block{&t, 0, 0, true}, rest,
                 rest, b, opt);
  }
}

}  // namespace internal

/** L with a = L L^T on the device (lower view). Checks, all on the device:
 *  square, finite, symmetric to relative tolerance, positive definite (the
 *  error names the first pivot that is not positive). The finite and
 *  symmetry checks run in the kernel that copies a's lower triangle into
 *  the working matrix, and every flag comes back in one read at the end:
 *  no synchronisation before the factorisation starts. */
inline matrix_cl cholesky(const matrix_cl& a) {
  a.check_device("x");
  if (a.rows() != a.cols())
    throw invalid_argument("x", "must be square (it is " + std::to_string(a.rows()) +
                                    " x " + std::to_string(a.cols()) + ")");
  matrix_cl w(a.rows(), a.cols());
  if (w.size() == 0) return w;
  opencl::context& ctx = opencl::context::instance();
  // The failing pivot; the fused leaf's counter; A has NaN/Inf; A is not
  // symmetric. All four come back in one read at the end.
  int flags[4] = {0, 0, 0, 0};
  cl::Buffer flag;
  try {
    flag = cl::Buffer(ctx.cl_context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                      sizeof(flags), flags);
  } catch (const cl::Error& e) {
    throw opencl_error("allocating the Cholesky pivot flag", e.err());
  }
  {  // w = lower triangle of a, checked for NaN/Inf and symmetry on the way
    const int tile = opencl::kernels::copy_lower_checked.option("SYM_TILE");
    const int rows = opencl::kernels::copy_lower_checked.option("SYM_ROWS");
    const std::size_t tiles = (a.rows() + tile - 1) / tile;
    opencl::kernels::copy_lower_checked(cl::NDRange(tiles * tile, tiles * rows),
                                        cl::NDRange(tile, rows), a, w, a.rows(),
                                        symmetry_tolerance, flag);
  }
  const cholesky_tuning& s = cholesky_settings();
  const int max_wg = static_cast<int>(ctx.info().max_work_group_size);
  internal::cholesky_leaf_solve_rows() = s.leaf_solve_rows;
  const int ib = s.leaf >= 2
                     ? std::min(opencl::kernels::cholesky_leaf.option("CHOLESKY_BLOCK"),
                                max_wg / opencl::kernels::cholesky_leaf.option("LEAF_T"))
                     : std::min(opencl::kernels::cholesky_block_inv.option("CHOLESKY_BLOCK"),
                                max_wg);
  const int outer =
      s.outer_block_large > 0 && w.rows() >= s.large_from ? s.outer_block_large : s.outer_block;
  const int nb = s.panel ? std::max(ib, outer / ib * ib) : outer / 32 * 32;
  const int max_groups =
      s.trailing_reserve > 0 && ctx.info().compute_units > 4 * s.trailing_reserve
          ? ctx.info().compute_units - s.trailing_reserve
          : 0;
  const bool halves = s.panel_recursive != 0;
  // Hundreds of short launches, ordered by the in-order queues and the
  // look-ahead's markers: no per-launch event bookkeeping (untracked_scope).
  internal::queue_wait(ctx.main_queue(), w.read_write_events());
  {
  opencl::untracked_scope untracked;
  if (s.outer_block > 0 && s.panel && s.panel_trsm && s.lookahead && w.rows() > nb)
    internal::cholesky_lookahead_trsm(w, nb, ib, flag, s.leaf, halves,
                                      std::max(1, s.trailing_chunks), max_groups);
  else if (s.outer_block > 0 && s.panel && s.panel_trsm)
    internal::cholesky_trsm(w, nb, ib, flag, s.leaf, halves);
  else if (s.outer_block > 0 && s.panel && s.lookahead && w.rows() > nb)
    internal::cholesky_lookahead(w, nb, ib, flag, s.leaf, halves,
                                 std::max(1, s.trailing_chunks), max_groups,
                                 max_groups > 0 ? s.panel_share : 0.0);
  else if (s.outer_block > 0 && s.panel)
    internal::cholesky_right_looking(w, nb, ib, flag, s.leaf, s.panel_recursive != 0);
  else if (s.outer_block > 0 && w.rows() > nb)
    internal::cholesky_blocked(w, nb, flag);
  else
    internal::cholesky_recursive(w, 0, w.rows(), flag,
                                 std::max(2, cholesky_settings().partition));
  }
  w.add_write_event(internal::queue_marker(ctx.main_queue()));
  opencl::zeros_in_place(w, matrix_view::upper);  // view becomes lower
  try {
    // The queue is in order: this read follows every kernel above.
    ctx.queue().enqueueReadBuffer(flag, CL_TRUE, 0, sizeof(flags), flags);
  } catch (const cl::Error& e) {
    throw opencl_error("reading the Cholesky pivot flag", e.err());
  }
  // A factorisation of bad input is discarded: the input errors come first.
  if (flags[2] != 0) throw invalid_argument("x", "contains NaN or infinite values");
  if (flags[3] != 0) throw invalid_argument("x", "must be symmetric");
  if (flags[0] != 0) throw invalid_argument("x", internal::not_pd_message(flags[0]));
  return w;
}

#endif  // CLBAYES_OPENCL

}  // namespace linalg
}  // namespace clbayes

#endif
