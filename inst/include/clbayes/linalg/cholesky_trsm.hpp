#ifndef CLBAYES_LINALG_CHOLESKY_TRSM_HPP
#define CLBAYES_LINALG_CHOLESKY_TRSM_HPP

// Right-looking blocked Cholesky whose serial chain covers only the
// diagonal blocks (cholesky_tuning::panel_trsm = 1). The panel schedule of
// linalg/cholesky_panel.hpp factors the whole tall panel (n - k rows x nb)
// with hundreds of small launches, tall-skinny products among them, all on
// the critical path; here, as in stan-opencl.txt, section 3.3.1, and the
// usual GPU factorisations, each step is
//   L11 = chol(A11), L11^{-1}   nb x nb only: the leaf chain of
//                               cholesky_panel on nb rows, then the batched
//                               inverse (tri-inverse-kernels.txt)
//   L21 = A21 L11^{-T}          one product over all rows below (the
//                               triangular view of L11^{-T} skips its zeros)
//   A22 -= L21 L21^T            as before
// The chain is short (its products have at most nb rows) and runs on the
// side queue beside the trailing update; the long products, L21 included,
// use the whole device on the main queue.

#include "../interrupt.hpp"
#include "../opencl/profile.hpp"
#include "../opencl/sub_block.hpp"
#include "cholesky_panel.hpp"
#include "gemm.hpp"
#include "tri_inverse.hpp"

#include <algorithm>

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace linalg {
namespace internal {

// L11 and L11^{-1} of the b x b diagonal block at (k, k) of w: the leaf
// chain restricted to the block's rows, then the batched inverse.
inline matrix_cl factor_diagonal(matrix_cl& w, int k, int b, int ib, matrix_cl& t,
                                 matrix_cl& inv, const cl::Buffer& flag, int leaf,
                                 bool recursive) {
  cholesky_panel(w, k, b, ib, t, inv, flag, leaf, recursive, k + b);
  opencl::phase_scope ph("diagonal inverse");
  return tri_inverse_block(w, k, b);
}

// L21 = A21 L11^{-T} for the `rest` rows below the diagonal block at k
// (b columns): into the scratch t (at least rest x b), then back into w.
inline void solve_below(matrix_cl& w, int k, int b, int rest, const matrix_cl& l11_inv,
                        matrix_cl& t) {
  opencl::phase_scope ph("solve below");
  gemm_block inv_t{&l11_inv, 0, 0, true, matrix_view::lower};
  linalg::gemm(t, 0, 0, 0, gemm_block{&w, k + b, k}, inv_t, rest, b, b);
  opencl::sub_block(w, t, 0, 0, k + b, k, rest, b);
}

// The whole factorisation on one queue.
inline void cholesky_trsm(matrix_cl& w, int nb, int ib, const cl::Buffer& flag, int leaf,
                          bool recursive) {
  const int n = w.rows();
  matrix_cl t_chain(std::max(1, nb - 1), ib);
  matrix_cl inv(ib, ib);
  matrix_cl t(std::max(1, n - nb), std::min(nb, n));
  for (int k = 0; k < n; k += nb) {
    check_interrupt();
    const int b = std::min(nb, n - k);
    const int rest = n - k - b;
    const matrix_cl l11_inv =
        factor_diagonal(w, k, b, ib, t_chain, inv, flag, leaf, recursive);
    if (rest == 0) break;
    solve_below(w, k, b, rest, l11_inv, t);
    lower_update(w, k + b, rest, rest, k, b, "trailing update");
  }
}

// cholesky_trsm with look-ahead depth 1 (the schedule of cholesky_lookahead
// in linalg/cholesky_panel.hpp): the main queue computes L21 of step k,
// updates the next block column, then the rest of the trailing matrix;
// the side queue factors and inverts the next diagonal block as soon as
// its columns are updated, during the rest of the update.
inline void cholesky_lookahead_trsm(matrix_cl& w, int nb, int ib, const cl::Buffer& flag,
                                    int leaf, bool recursive, int chunks, int max_groups) {
  opencl::context& ctx = opencl::context::instance();
  const int n = w.rows();
  cl::CommandQueue& main_q = ctx.main_queue();
  cl::CommandQueue& side_q = ctx.side_queue();
  matrix_cl panel = w.alias();   // side queue only
  matrix_cl update = w.alias();  // main queue only
  matrix_cl t_chain(std::max(1, nb - 1), ib);  // side queue only
  matrix_cl inv(ib, ib);
  matrix_cl t(std::max(1, n - nb), std::min(nb, n));  // main queue only
  matrix_cl l11_inv;
  queue_wait(main_q, w.read_write_events());
  queue_wait(side_q, {queue_marker(main_q)});  // after w is written
  auto factor = [&](int k) {
    opencl::side_queue_scope side;
    // The previous inverse may still be read by the main queue: OpenCL
    // keeps its buffer until those reads are done.
    l11_inv = factor_diagonal(panel, k, std::min(nb, n - k), ib, t_chain, inv, flag, leaf,
                              recursive);
    return queue_marker(side_q);
  };
  cl::Event diag_done = factor(0);
  for (int k = 0; k < n; k += nb) {
    check_interrupt();
    const int b = std::min(nb, n - k);
    const int rest = n - k - b;
    if (rest == 0) break;
    queue_wait(main_q, {diag_done});
    solve_below(update, k, b, rest, l11_inv, t);
    const int next = std::min(nb, rest);
    lower_update(update, k + b, rest, next, k, b, "look-ahead update");
    queue_wait(side_q, {queue_marker(main_q)});
    diag_done = factor(k + b);
    if (rest > next)
      trailing_update(update, k + b + next, rest - next, k, b, chunks, max_groups);
  }
  queue_wait(main_q, {diag_done});
  w.add_write_event(queue_marker(main_q));
}

}  // namespace internal
}  // namespace linalg
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
