#ifndef CLBAYES_LINALG_CHOLESKY_PANEL_HPP
#define CLBAYES_LINALG_CHOLESKY_PANEL_HPP

// The device schedule of the Cholesky: the blocked algorithm of
// stan-opencl.txt, section 3.3.1, as a right-looking loop over panels of
// nb columns with look-ahead depth 1. For each panel at k:
//   factor the panel (cholesky_panel: by halves, down to leaves of ib <=
//   CHOLESKY_BLOCK columns):
//     L_cc, L_cc^{-1}  = one work group (kernels/cholesky_leaf.hpp)
//     L_below          = A_below L_cc^{-T}        (one product, in place)
//     the right half  -= L_left L_left^T           (lower part of the panel only)
//   A22 -= L21 L21^T                               (lower-only products, k = nb)
// The panels run on the side queue while the main queue updates the
// trailing matrix (cholesky_lookahead below), so that the serial chain of
// small launches in a panel hides behind the large products.

#include "../interrupt.hpp"
#include "../kernels/cholesky_leaf.hpp"
#include "../opencl/profile.hpp"
#include "../opencl/sub_block.hpp"
#include "gemm.hpp"

#include <algorithm>
#include <functional>
#include <vector>

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace linalg {
namespace internal {

// L_cc and L_cc^{-1} of the wc x wc block at (c, c) of w
// (kernels/cholesky_leaf.hpp, built by linalg::cholesky for its settings).
inline void panel_leaf(matrix_cl& w, int c, int wc, matrix_cl& inv, const cl::Buffer& flag) {
  opencl::phase_scope ph("leaf");
  const int lt = opencl::kernels::cholesky_leaf.option("LEAF_T");
  opencl::kernels::cholesky_leaf(cl::NDRange(wc, lt), cl::NDRange(wc, lt), w, w.rows(), c, wc,
                                 inv, inv.rows(), flag);
}

// L_below = A_below L_cc^{-T} for the wc columns at c. In place when the
// product has one column of tiles (TN >= wc) and no split-k: each work
// group then reads only its own rows of A_below, all before it writes
// them. Otherwise through the scratch t and a copy.
inline void panel_solve(matrix_cl& w, int c, int wc, int below, const matrix_cl& inv,
                        matrix_cl& t, const gemm_settings& g) {
  opencl::phase_scope ph("panel solve");
  gemm_block inv_t{&inv, 0, 0, true, matrix_view::lower};
  gemm_block a{&w, c + wc, c};
  gemm_options opt(g);
  opt.splits = 1;
  if (choose_tiles(below, wc, 1, false, g).tiles.tn >= wc) {
    linalg::gemm(w, c + wc, c, 0, a, inv_t, below, wc, wc, opt);
    return;
  }
  linalg::gemm(t, 0, 0, 0, a, inv_t, below, wc, wc, opt);
  opencl::sub_block(w, t, 0, 0, c + wc, c, below, wc);
}

// w(r0 .. r0 + rows, r0 .. r0 + cols) -= L L(0 .. cols, :)^T on and below
// the diagonal, where L = w(r0 .. r0 + rows, k .. k + b): one lower-only
// product with inner dimension b (L is not written); max_groups > 0 caps
// its work groups (gemm_options::max_groups).
inline void lower_update(matrix_cl& w, int r0, int rows, int cols, int k, int b,
                         const gemm_settings& g, const char* phase, int max_groups = 0) {
  opencl::phase_scope ph(phase);
  gemm_options opt(g);
  opt.alpha = -1.0;
  opt.beta = 1.0;
  opt.lower_only = true;
  opt.max_groups = max_groups;
  linalg::gemm(w, r0, r0, 0, gemm_block{&w, r0, k}, gemm_block{&w, r0, k, true}, rows, cols, b,
               opt);
}

// Factor the columns [k, k + b) of the n x n w (rows k .. n) by halves:
// factor the left half, update the right half with inner dimension b / 2,
// factor the right half, down to leaves of at most ib columns. Most of the
// flops are then in products with a long inner dimension, which a GEMM
// does far faster than many with inner dimension ib. t (at least
// (n - k - 1) x ib) and inv (ib x ib) are scratch.
inline void cholesky_panel(matrix_cl& w, int k, int b, int ib, matrix_cl& t, matrix_cl& inv,
                           const cl::Buffer& flag, const gemm_settings& g) {
  const int n = w.rows();
  if (b > ib) {
    const int h = std::max(ib, (b / 2) / ib * ib);
    cholesky_panel(w, k, h, ib, t, inv, flag, g);
    if (n - k - h > 0) lower_update(w, k + h, n - k - h, b - h, k, h, g, "panel update");
    cholesky_panel(w, k + h, b - h, ib, t, inv, flag, g);
    return;
  }
  panel_leaf(w, k, b, inv, flag);
  const int below = n - k - b;
  if (below > 0) panel_solve(w, k, b, below, inv, t, g);
}

// Makes `q` wait for `events` (enqueued on any queue of the context).
inline void queue_wait(cl::CommandQueue& q, const std::vector<cl::Event>& events) {
  if (events.empty()) return;
  try {
    q.enqueueBarrierWithWaitList(&events);
  } catch (const cl::Error& e) {
    throw opencl_error("ordering the Cholesky's two queues", e.err());
  }
}

// An event that completes when everything enqueued on `q` so far has.
inline cl::Event queue_marker(cl::CommandQueue& q) {
  cl::Event e;
  try {
    q.enqueueMarkerWithWaitList(nullptr, &e);
  } catch (const cl::Error& err) {
    throw opencl_error("marking the Cholesky's queues", err.err());
  }
  return e;
}


// The whole factorisation of w in place (lower triangle), panels of nb
// columns (a multiple of ib), leaves of ib <= CHOLESKY_BLOCK, with
// look-ahead depth 1 (the classic schedule of LAPACK-style GPU
// factorisations): the panels are factored on the side queue while the
// main queue updates the trailing matrix. After panel k is factored, the
// main queue first updates only the columns of panel k + 1, then the rest
// of the trailing matrix (on at most max_groups work groups when > 0, so
// that the panel finds free units); the side queue factors panel k + 1 as
// soon as its columns are updated, concurrently with the rest of the
// update (the two touch disjoint columns). Ordering is by markers and
// barriers between the queues; each queue works on its own alias of w, so
// that kernel_cl's per-matrix events do not serialise the two. The caller
// orders w's earlier work before the main queue's and records the main
// queue's end on w. A matrix of one panel is factored on the main queue.
inline void cholesky_lookahead(matrix_cl& w, int nb, int ib, const cl::Buffer& flag,
                               int max_groups, const gemm_settings& g) {
  opencl::context& ctx = opencl::context::instance();
  const int n = w.rows();
  matrix_cl t(std::max(1, n - 1), ib);
  matrix_cl inv(ib, ib);
  cl::CommandQueue& main_q = ctx.main_queue();
  if (n <= nb) {
    cholesky_panel(w, 0, n, ib, t, inv, flag, g);
    return;
  }
  cl::CommandQueue& side_q = ctx.side_queue();
  matrix_cl panel = w.alias();   // side queue only
  matrix_cl update = w.alias();  // main queue only
  queue_wait(side_q, {queue_marker(main_q)});  // after w is written
  auto factor = [&](int k) {
    opencl::queue_scope side(opencl::queue_role::side);
    cholesky_panel(panel, k, std::min(nb, n - k), ib, t, inv, flag, g);
    return queue_marker(side_q);
  };
  cl::Event panel_done = factor(0);
  for (int k = 0; k < n; k += nb) {
    check_interrupt();
    const int b = std::min(nb, n - k);
    const int rest = n - k - b;
    if (rest == 0) break;
    queue_wait(main_q, {panel_done});
    const int next = std::min(nb, rest);
    lower_update(update, k + b, rest, next, k, b, g, "look-ahead update");
    queue_wait(side_q, {queue_marker(main_q)});
    panel_done = factor(k + b);
    if (rest == next) continue;
    lower_update(update, k + b + next, rest - next, rest - next, k, b, g, "trailing update",
                 max_groups);
  }
  queue_wait(main_q, {panel_done});
}

// The left-looking order of the same blocked algorithm, for a matrix that
// arrives by block columns (linalg/cholesky_host.hpp): block column j is
// first updated by every finished column left of it in one product,
//   A(j.., j) -= L(j.., 0..j) L(j, 0..j)^T      (lower-only, inner dim. j nb)
// and then factored (cholesky_panel). It reads no column right of it, so
// it is factored as soon as it has arrived and is final right after, and
// the host path copies it back while later columns still arrive (the
// right-looking loop above needs every column before its third panel). On
// the H200 it took the host-to-host time from 52.6 / 221.0 ms (the
// look-ahead loop, streamed) to 41.0 / 155.1 at n = 8192 / 16384 (log
// 2026-11-25-h200-host-chol).
// One queue, in order.
//
// Where the block columns of the matrix come from (block column j: columns
// j nb .. j nb + nb - 1): a function that enqueues on the main queue what
// brings block column j into w; called once per block column, in order,
// before the first command that touches the column.
using block_arrival = std::function<void(int)>;

// Called once block column k is enqueued, with an event after which block
// column k of L is final, while the main queue (the one that factored it)
// is what context::queue() routes to: what the callback enqueues there
// follows it.
using panel_final = std::function<void(int, const cl::Event&)>;

inline void cholesky_left_looking(matrix_cl& w, int nb, int ib, const cl::Buffer& flag,
                                  const gemm_settings& g, const block_arrival& arrive,
                                  const panel_final& finished) {
  cl::CommandQueue& main_q = opencl::context::instance().main_queue();
  const int n = w.rows();
  matrix_cl t(std::max(1, n - 1), ib);
  matrix_cl inv(ib, ib);
  for (int k = 0; k < n; k += nb) {
    check_interrupt();
    const int b = std::min(nb, n - k);
    if (arrive) arrive(k / nb);
    if (k > 0) lower_update(w, k, n - k, b, 0, k, g, "left-looking update");
    cholesky_panel(w, k, b, ib, t, inv, flag, g);
    if (finished) finished(k / nb, queue_marker(main_q));
  }
}

}  // namespace internal
}  // namespace linalg
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
