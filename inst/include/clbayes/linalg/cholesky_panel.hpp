#ifndef CLBAYES_LINALG_CHOLESKY_PANEL_HPP
#define CLBAYES_LINALG_CHOLESKY_PANEL_HPP

// Right-looking blocked Cholesky with a fused leaf (the device path chosen
// by cholesky_tuning::panel): the blocked algorithm of stan-opencl.txt,
// section 3.3.1, reorganised so that the launches per column do not grow
// with the recursion depth. For each panel of nb columns at k:
//   for each inner block of ib <= CHOLESKY_BLOCK columns at c in the panel:
//     L_cc, L_cc^{-1}  = one work group (cholesky_block_inv)
//     L_below          = A_below L_cc^{-T}        (one product, in place)
//     A_panel_right   -= L_below L_below^T         (lower part of the panel only)
//   A22 -= L21 L21^T                               (one lower-only product, k = nb)
// That is 3 launches per ib columns plus one large update per panel,
// without the triangular inverses (9 launches for 256 rows, with
// allocations) and nested recursions of the first path; the one large
// update per panel keeps the inner dimension at nb for the GEMM.
// With cholesky_tuning::lookahead the panels run on a second queue,
// overlapping the trailing updates (cholesky_lookahead below).

#include "../interrupt.hpp"
#include "../kernels/cholesky.hpp"
#include "../kernels/cholesky_leaf.hpp"
#include "../kernels/cholesky_leaf_solve.hpp"
#include "../opencl/profile.hpp"
#include "../opencl/sub_block.hpp"
#include "gemm.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace linalg {
namespace internal {

/** Rows of the panel solve per work group of the fused leaf (leaf 3). */
inline int& cholesky_leaf_solve_rows() {
  static int rows = 64;
  return rows;
}

// L_cc and L_cc^{-1} of the wc x wc block at (c, c): leaf 2 is the
// two-dimensional kernel of kernels/cholesky_leaf.hpp, leaf 1 the
// one-work-item-per-row cholesky_block_inv.
inline void panel_leaf(matrix_cl& w, int c, int wc, matrix_cl& inv, const cl::Buffer& flag,
                       int leaf) {
  opencl::phase_scope ph("leaf");
  const int n = w.rows();
  if (leaf == 2) {
    const int lt = opencl::kernels::cholesky_leaf.option("LEAF_T");
    opencl::kernels::cholesky_leaf(cl::NDRange(wc, lt), cl::NDRange(wc, lt), w, n, c, wc, inv,
                                   inv.rows(), flag);
  } else {
    opencl::kernels::cholesky_block_inv(cl::NDRange(wc), cl::NDRange(wc), w, n, c, wc, inv,
                                        inv.rows(), flag);
  }
}

// Leaf 3: L_cc and L_below = A_below L_cc^{-T} in one launch
// (kernels/cholesky_leaf_solve.hpp), `rows_per_group` rows of the `below`
// per work group; flag[1] is the kernel's counter. False (nothing done)
// where its local memory does not fit the device.
inline bool panel_leaf_solve(matrix_cl& w, int c, int wc, int below, const cl::Buffer& flag,
                             int rows_per_group) {
  auto& fused = opencl::kernels::cholesky_leaf_solve;
  const auto& leaf = opencl::kernels::cholesky_leaf;
  for (const char* key : {"CHOLESKY_BLOCK", "LEAF_T"})
    if (fused.option(key) != leaf.option(key)) fused.set_option(key, leaf.option(key));
  const std::uint64_t cb = fused.option("CHOLESKY_BLOCK");
  if ((2 * cb + 64) * (cb + 1) * 8 + 4 > opencl::context::instance().info().local_mem)
    return false;
  opencl::phase_scope ph("leaf + solve");
  const int lt = fused.option("LEAF_T");
  rows_per_group = std::max(64, rows_per_group / 64 * 64);
  const std::size_t groups = std::max(1, (below + rows_per_group - 1) / rows_per_group);
  fused(cl::NDRange(groups * wc, lt), cl::NDRange(wc, lt), w, w.rows(), c, wc, below,
        rows_per_group, flag);
  return true;
}

// L_below = A_below L_cc^{-T} for the wc columns at c. In place when the
// product has one column of tiles (TN >= wc) and no split-k: each work
// group then reads only its own rows of A_below, all before it writes
// them. Otherwise through the scratch t and a copy.
inline void panel_solve(matrix_cl& w, int c, int wc, int below, const matrix_cl& inv,
                        matrix_cl& t) {
  opencl::phase_scope ph("panel solve");
  gemm_block inv_t{&inv, 0, 0, true, matrix_view::lower};
  gemm_block a{&w, c + wc, c};
  gemm_options opt;
  opt.splits = 1;
  if (choose_kernel(false, true, below, wc, 1, false).option("TN") >= wc) {
    linalg::gemm(w, c + wc, c, 0, a, inv_t, below, wc, wc, opt);
    return;
  }
  linalg::gemm(t, 0, 0, 0, a, inv_t, below, wc, wc, opt);
  opencl::sub_block(w, t, 0, 0, c + wc, c, below, wc);
}

// w(r0 .. r0 + rows, r0 .. r0 + cols) -= L L(0 .. cols, :)^T on and below
// the diagonal, where L = w(r0 .. r0 + rows, k .. k + b): one lower-only
// product with inner dimension b (L is not written).
inline void lower_update(matrix_cl& w, int r0, int rows, int cols, int k, int b,
                         const char* phase) {
  opencl::phase_scope ph(phase);
  gemm_options opt;
  opt.alpha = -1.0;
  opt.beta = 1.0;
  opt.lower_only = true;
  linalg::gemm(w, r0, r0, 0, gemm_block{&w, r0, k}, gemm_block{&w, r0, k, true}, rows, cols, b,
               opt);
}

// Factor the columns [k, k + b) of the n x n w (rows k .. row_end, all
// rows when row_end < 0), in inner blocks of ib; t (at least
// (row_end - k - 1) x ib) and inv (ib x ib) are scratch. Left to right, one block of ib columns at a time, each
// updating the rest of the panel (inner dimension ib); or, with
// `recursive`, by halves: factor the left half, update the right half
// with inner dimension b / 2, factor the right half. The same flops, but
// most of them in products with a long inner dimension, which a GEMM does
// far faster than many with inner dimension ib.
inline void cholesky_panel(matrix_cl& w, int k, int b, int ib, matrix_cl& t,
                           matrix_cl& inv, const cl::Buffer& flag, int leaf,
                           bool recursive, int row_end = -1) {
  const int n = row_end < 0 ? w.rows() : row_end;
  if (recursive && b > ib) {
    const int h = std::max(ib, (b / 2) / ib * ib);
    cholesky_panel(w, k, h, ib, t, inv, flag, leaf, true, n);
    if (n - k - h > 0) lower_update(w, k + h, n - k - h, b - h, k, h, "panel update");
    cholesky_panel(w, k + h, b - h, ib, t, inv, flag, leaf, true, n);
    return;
  }
  for (int c = k; c < k + b; c += ib) {
    const int wc = std::min(ib, k + b - c);
    const int below = n - c - wc;
    if (leaf != 3 || !panel_leaf_solve(w, c, wc, below, flag, cholesky_leaf_solve_rows())) {
      panel_leaf(w, c, wc, inv, flag, std::min(leaf, 2));
      if (below > 0) panel_solve(w, c, wc, below, inv, t);
    }
    if (below == 0) return;
    const int right = k + b - c - wc;  // panel columns right of this block
    // Reads L_below from w (columns c .. c + wc), which it does not write.
    if (right > 0) lower_update(w, c + wc, below, right, c, wc, "panel update");
  }
}

// A22 -= L21 L21^T for the trailing matrix at r0 (rows x rows) with L21
// at columns k .. k + b: in `chunks` products over column ranges of about
// equal work (the lower triangle of a column range shrinks to the right),
// so that work on another queue can start between them; max_groups > 0
// caps the work groups of each (gemm_options::max_groups).
inline void trailing_update(matrix_cl& w, int r0, int rows, int k, int b, int chunks,
                            int max_groups) {
  int c0 = 0;
  for (int q = chunks; q >= 1 && c0 < rows; --q) {
    // Columns [c0, c1) hold about 1/q of the remaining lower triangle.
    const double left = rows - c0;
    int c1 = q == 1 ? rows
                    : rows - static_cast<int>(left * std::sqrt(1.0 - 1.0 / q));
    c1 = std::min(rows, std::max(c0 + 32, (c1 + 31) / 32 * 32));
    opencl::phase_scope ph("trailing update");
    gemm_options opt;
    opt.alpha = -1.0;
    opt.beta = 1.0;
    opt.lower_only = true;
    opt.max_groups = max_groups;
    linalg::gemm(w, r0 + c0, r0 + c0, 0, gemm_block{&w, r0 + c0, k},
                 gemm_block{&w, r0 + c0, k, true}, rows - c0, c1 - c0, b, opt);
    c0 = c1;
  }
}

// The whole factorisation of w in place (lower triangle), panels of nb
// columns (a multiple of ib), inner blocks of ib <= CHOLESKY_BLOCK.
inline void cholesky_right_looking(matrix_cl& w, int nb, int ib, const cl::Buffer& flag,
                                   int leaf, bool recursive) {
  const int n = w.rows();
  matrix_cl t(std::max(1, n - 1), ib);
  matrix_cl inv(ib, ib);
  for (int k = 0; k < n; k += nb) {
    check_interrupt();
    const int b = std::min(nb, n - k);
    cholesky_panel(w, k, b, ib, t, inv, flag, leaf, recursive);
    const int rest = n - k - b;
    if (rest == 0) break;
    // A22 -= L21 L21^T: L21 is read from w (columns k .. k + b), which the
    // product does not write.
    lower_update(w, k + b, rest, rest, k, b, "trailing update");
  }
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

// cholesky_right_looking with look-ahead depth 1 (the classic schedule of
// LAPACK-style GPU factorisations): the panels are factored on the side
// queue while the main queue updates the trailing matrix. After panel k is
// factored, the main queue first updates only the columns of panel k + 1,
// then the rest of the trailing matrix; the side queue starts factoring
// panel k + 1 as soon as its columns are updated, concurrently with the
// rest of the update (the two touch disjoint columns). The serial chain of
// small launches in the panels then hides behind the large products.
// Ordering is by markers and barriers between the queues; each queue works
// on its own alias of w, so that kernel_cl's per-matrix events do not
// serialise the two.
// With panel_share > 0, the trailing update of each step leaves the panel
// at least panel_share * units * b / (rows + b) units (cholesky_tuning).
inline void cholesky_lookahead(matrix_cl& w, int nb, int ib, const cl::Buffer& flag,
                               int leaf, bool recursive, int chunks, int max_groups,
                               double panel_share = 0.0) {
  opencl::context& ctx = opencl::context::instance();
  const int n = w.rows();
  cl::CommandQueue& main_q = ctx.main_queue();
  cl::CommandQueue& side_q = ctx.side_queue();
  matrix_cl panel = w.alias();   // side queue only
  matrix_cl update = w.alias();  // main queue only
  matrix_cl t(std::max(1, n - 1), ib);
  matrix_cl inv(ib, ib);
  queue_wait(main_q, w.read_write_events());
  queue_wait(side_q, {queue_marker(main_q)});  // after w is written
  auto factor = [&](int k) {
    opencl::side_queue_scope side;
    cholesky_panel(panel, k, std::min(nb, n - k), ib, t, inv, flag, leaf, recursive);
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
    lower_update(update, k + b, rest, next, k, b, "look-ahead update");
    queue_wait(side_q, {queue_marker(main_q)});
    panel_done = factor(k + b);
    int groups = max_groups;
    if (panel_share > 0 && max_groups > 0) {
      const int units = ctx.info().compute_units;
      const double share = panel_share * next / static_cast<double>(rest + next);
      const int reserve = std::min(units / 2, std::max(units - max_groups,
                                                       static_cast<int>(units * share + 0.5)));
      groups = units - reserve;
    }
    if (rest > next) trailing_update(update, k + b + next, rest - next, k, b, chunks, groups);
  }
  queue_wait(main_q, {panel_done});
  w.add_write_event(queue_marker(main_q));
}

}  // namespace internal
}  // namespace linalg
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
