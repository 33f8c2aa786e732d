#ifndef CLBAYES_LINALG_CHOLESKY_GRAD_HPP
#define CLBAYES_LINALG_CHOLESKY_GRAD_HPP

// Reverse mode of the Cholesky decomposition, blocked (Murray 2016;
// stan-opencl.txt, section 3.3.2). Given L = chol(A) and the adjoint L_adj
// of L (lower triangles), the loop over diagonal blocks from the bottom
// right turns L_adj into the adjoint of the lower triangle of A, A_adj.
// With the partition of rows j:k into
//   R = L[j:k, 0:j], D = L[j:k, j:k], B = L[k:N, 0:j], C = L[k:N, j:k]
// and the same blocks of the adjoint:
//   C_adj = C_adj D^{-1}
//   B_adj -= C_adj R
//   D_adj -= C_adj^T C
//   S = D^{-T} sym(D^T D_adj) D^{-1}  (sym: copy the lower triangle up)
//   R_adj -= S R + C_adj^T B
//   D_adj = lower triangle of S with the diagonal halved.
// The result returned is the symmetric G = (A_adj + A_adj^T) / 2: for every
// symmetric direction V, d f = sum(G * V).

#include "../eigen.hpp"
#include "../error.hpp"
#include "../interrupt.hpp"
#include "../opencl/profile.hpp"
#include "../opencl/queue_order.hpp"
#include "arithmetic.hpp"
#include "gemm.hpp"
#include "settings.hpp"
#include "sub_block.hpp"
#include "transpose.hpp"
#include "tri_inverse.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace clbayes {
namespace linalg {

namespace internal {

inline void check_grad_args(long long l_rows, long long l_cols, long long a_rows,
                            long long a_cols) {
  check_square(l_rows, l_cols, "L");
  if (a_rows != l_rows || a_cols != l_cols)
    throw invalid_argument("L_adj", "must have the dimensions of `L` (" +
                                        format_dims(l_rows, l_cols) + "), not " +
                                        format_dims(a_rows, a_cols));
}

}  // namespace internal

/** The symmetric adjoint of A given L = chol(A) and L_adj (CPU), in
 *  diagonal blocks of `block` rows (the device's default). Only the lower
 *  triangles of `l` and `l_adj` are used. */
inline Eigen::MatrixXd cholesky_grad(const Eigen::MatrixXd& l_in,
                                     const Eigen::MatrixXd& l_adj,
                                     int block = cholesky_settings().grad_block) {
  internal::check_grad_args(l_in.rows(), l_in.cols(), l_adj.rows(), l_adj.cols());
  const int n = static_cast<int>(l_in.rows());
  for (int i = 0; i < n; ++i)
    if (!(l_in(i, i) > 0.0))
      throw invalid_argument("L", "must have a positive diagonal (a Cholesky factor); "
                                  "element " + std::to_string(i + 1) + " is not");
  Eigen::MatrixXd l = l_in.triangularView<Eigen::Lower>();
  Eigen::MatrixXd g = l_adj.triangularView<Eigen::Lower>();
  const int bs = std::max(1, block);
  for (int k = n; k > 0; k -= bs) {
    check_interrupt();
    const int j = std::max(0, k - bs);
    const int bi = k - j, bk = n - k;
    Eigen::MatrixXd d_inv = l.block(j, j, bi, bi).triangularView<Eigen::Lower>();
    tri_inverse_lower_in_place(d_inv);
    if (bk > 0) {
      g.block(k, j, bk, bi) = g.block(k, j, bk, bi) * d_inv.triangularView<Eigen::Lower>();
      if (j > 0)
        g.block(k, 0, bk, j).noalias() -= g.block(k, j, bk, bi) * l.block(j, 0, bi, j);
      g.block(j, j, bi, bi).noalias() -=
          g.block(k, j, bk, bi).transpose() * l.block(k, j, bk, bi);
    }
    Eigen::MatrixXd m = l.block(j, j, bi, bi).transpose().triangularView<Eigen::Upper>() *
                        g.block(j, j, bi, bi);
    m.triangularView<Eigen::StrictlyUpper>() = m.transpose();
    Eigen::MatrixXd s = d_inv.transpose().triangularView<Eigen::Upper>() * m;
    s = (s * d_inv.triangularView<Eigen::Lower>()).eval();
    s.triangularView<Eigen::StrictlyUpper>() = s.transpose();
    if (j > 0) {
      g.block(j, 0, bi, j).noalias() -= s * l.block(j, 0, bi, j);
      if (bk > 0)
        g.block(j, 0, bi, j).noalias() -=
            g.block(k, j, bk, bi).transpose() * l.block(k, 0, bk, j);
    }
    s.diagonal() *= 0.5;
    g.block(j, j, bi, bi) = s.triangularView<Eigen::Lower>();
  }
  Eigen::MatrixXd out = 0.5 * g;
  out.diagonal() *= 2.0;
  out.triangularView<Eigen::StrictlyUpper>() = out.transpose();
  return out;
}

#ifdef CLBAYES_OPENCL

namespace internal {

// The device gradient's work matrices for blocks of bs rows (the first, at
// the top left, of r), made once (as panel_work); d_inv and s by the
// block's parity: block i + 1's are written while block i's are read (one
// block needs only d_first and s[0]).
struct grad_work {
  grad_work(int n, int bs, int r) : grad_work(n, bs, r, n > bs ? bs : 1) {}
  matrix_cl c_adj, m, p, d_first, d_inv[2], s[2];
  std::vector<matrix_cl> levels, levels_first;  // tri_inverse_in_place's

 private:
  grad_work(int n, int bs, int r, int e)  // e: bs with two blocks or more, else 1
      : c_adj(std::max(1, n - r), bs), m(bs, bs), p(bs, bs), d_first(r, r),
        d_inv{matrix_cl(e, e), matrix_cl(e, e)}, s{matrix_cl(bs, bs), matrix_cl(e, e)} {}
};

// Columns [c0, c0 + w) of G left of block j .. k: rows below -= C_adj R,
// the block's rows -= S R + C_adj^T B.
inline void grad_left_update(matrix_cl& g, const matrix_cl& l, const matrix_cl& s, int j, int k,
                             int c0, int w, const gemm_options& sub, const char* phase) {
  if (w <= 0) return;
  opencl::phase_scope ph(phase);
  const int bi = k - j, bk = g.rows() - k;
  linalg::gemm(g, j, c0, 0, gemm_block{&s}, gemm_block{&l, j, c0}, bi, w, bi, sub);
  if (bk == 0) return;
  linalg::gemm(g, k, c0, 0, gemm_block{&g, k, j}, gemm_block{&l, j, c0}, bk, w, bi, sub);
  linalg::gemm(g, j, c0, 0, gemm_block{&g, k, j, true}, gemm_block{&l, k, c0}, bi, w, bk, sub);
}

}  // namespace internal

/** The symmetric adjoint of A given L = chol(A) and L_adj, on the device,
 *  with settings `tune` (by default the selected device's). Only the lower
 *  triangles of `l` and `l_adj` are used; every element of both is checked
 *  for NaN and infinite values, and L's diagonal for zeros, in the kernels
 *  that copy the triangles into the working matrices, the flags read once
 *  at the end. The factorisation's look-ahead (linalg/cholesky_panel.hpp)
 *  run backwards: the side queue takes block i's chain (C_adj, D_adj, S,
 *  then block i + 1's inverse), the main queue the columns of block i + 1
 *  left of it, then the other columns beside the side queue's next chain. */
inline matrix_cl cholesky_grad(const matrix_cl& l_in, const matrix_cl& l_adj,
                               const linalg_settings& tune = tuned_settings()) {
  l_in.check_device("L");
  l_adj.check_device("L_adj");
  internal::check_grad_args(l_in.rows(), l_in.cols(), l_adj.rows(), l_adj.cols());
  const int n = l_in.rows();
  // [0] L, [1] L_adj has NaN or infinite values, [2] L has a zero diagonal
  const cl::Buffer flags = opencl::new_flags(3);
  matrix_cl l(n, n);
  matrix_cl g(n, n);
  opencl::kernels::copy_lower_flagged(cl::NDRange(n, n), l_in, l, n, 0, n, flags, 0, 2);
  opencl::kernels::copy_lower_flagged(cl::NDRange(n, n), l_adj, g, n, 0, n, flags, 1, -1);
  if (n > 0) {
    opencl::context& ctx = opencl::context::instance();
    cl::CommandQueue &main_q = ctx.main_queue(), &side_q = ctx.side_queue();
    const cholesky_settings& cs = tune.cholesky;
    const int block = n >= cs.large_from ? cs.grad_block_large : cs.grad_block;
    const int bs = std::min(n, std::max(1, block));
    const int r = n - (n - 1) / bs * bs;  // rows of the first block
    internal::grad_work work(n, bs, r);
    const gemm_options plain(tune.gemm);
    gemm_options sub(tune.gemm);  // X -= Y Z
    sub.alpha = -1.0;
    sub.beta = 1.0;
    opencl::queue_wait(main_q, g.read_write_events());
    opencl::untracked_scope untracked;  // ordered by the queues and markers
    opencl::queue_wait(side_q, {opencl::queue_marker(main_q)});
    auto inverse_of = [&](int j, int i) {  // D^{-1} of block i, at row j
      opencl::queue_scope side(opencl::queue_role::side);
      opencl::phase_scope ph("gradient inverse");
      matrix_cl& d = j == 0 ? work.d_first : work.d_inv[i % 2];
      opencl::sub_block(d, l, j, j, 0, 0, d.rows(), d.rows(), matrix_view::lower);
      internal::tri_inverse_in_place(d, tune, j == 0 ? &work.levels_first : &work.levels);
      return &d;
    };
    const matrix_cl* d_inv = inverse_of(std::max(0, n - bs), 0);
    for (int k = n, i = 0; k > 0; k -= bs, ++i) {
      check_interrupt();
      const int j = std::max(0, k - bs), bi = k - j, bk = n - k;
      const int j2 = std::max(0, j - bs);  // the next block: rows j2 .. j
      matrix_cl& s = work.s[i % 2];
      {
        opencl::queue_scope side(opencl::queue_role::side);
        opencl::phase_scope ph("gradient block");
        const gemm_block d{d_inv, 0, 0, false, matrix_view::lower};
        if (bk > 0) {
          linalg::gemm(work.c_adj, 0, 0, 0, gemm_block{&g, k, j}, d, bk, bi, bi, plain);
          opencl::sub_block(g, work.c_adj, 0, 0, k, j, bk, bi);
          linalg::gemm(g, j, j, 0, gemm_block{&g, k, j, true}, gemm_block{&l, k, j}, bi, bi,
                       bk, sub);
        }
        linalg::gemm(work.m, 0, 0, 0, gemm_block{&l, j, j, true, matrix_view::lower},
                     gemm_block{&g, j, j}, bi, bi, bi, plain);
        opencl::triangular_transpose(work.m, matrix_view::lower);
        linalg::gemm(work.p, 0, 0, 0, gemm_block{d_inv, 0, 0, true, matrix_view::lower},
                     gemm_block{&work.m}, bi, bi, bi, plain);
        linalg::gemm(s, 0, 0, 0, gemm_block{&work.p}, d, bi, bi, bi, plain);
        opencl::triangular_transpose(s, matrix_view::lower);
        opencl::queue_wait(main_q, {opencl::queue_marker(side_q)});
      }
      if (j > 0) d_inv = inverse_of(j2, i + 1);  // beside the look-ahead
      internal::grad_left_update(g, l, s, j, k, j2, j - j2, sub, "gradient look-ahead");
      opencl::queue_wait(side_q, {opencl::queue_marker(main_q)});
      internal::grad_left_update(g, l, s, j, k, 0, j2, sub, "gradient update");
      opencl::scalar_multiply_diagonal(s, 0.5);  // D_adj: lower(S), half diagonal
      opencl::sub_block(g, s, 0, 0, j, j, bi, bi, matrix_view::lower);
    }
    g.add_write_event(opencl::queue_marker(main_q));
  }
  // G = (A_adj + A_adj^T) / 2 from the lower-triangular A_adj.
  matrix_cl out = opencl::scalar_multiply(g, 0.5);
  opencl::scalar_multiply_diagonal(out, 2.0);
  opencl::triangular_transpose(out, matrix_view::lower);
  const std::vector<int> bad = opencl::read_flags(flags, 3);
  if (bad[0] != 0) throw invalid_argument("L", "contains NaN or infinite values");
  if (bad[1] != 0) throw invalid_argument("L_adj", "contains NaN or infinite values");
  if (bad[2] != 0)
    throw invalid_argument("L", "must have a positive diagonal (a Cholesky factor)");
  return out;
}

#endif  // CLBAYES_OPENCL

}  // namespace linalg
}  // namespace clbayes

#endif
