#ifndef CLBAYES_LINALG_CHOLESKY_PANEL_HPP
#define CLBAYES_LINALG_CHOLESKY_PANEL_HPP

// The device schedule of the Cholesky: the blocked algorithm of
// stan-opencl.txt, section 3.3.1, as a right-looking loop over panels of
// nb columns with look-ahead depth 1. For each panel at k:
//   its nb x nb diagonal block by halves (factor_by_halves), the right half
//     -= L_left L_left^T, down to bases of one launch (kernels/cholesky_base.hpp)
//   L_kk^{-1}          = the batched triangular inverse (linalg/tri_inverse.hpp)
//   L_below            = A_below L_kk^{-T}         (one product, all rows below)
//   A22 -= L21 L21^T                               (lower-only products, k = nb)
// The panels and each panel's update of the next one's columns run on the
// side queue while the main queue updates the rest of the trailing matrix
// (cholesky_lookahead below), so that the serial chain of small launches
// hides behind the large products.

#include "../interrupt.hpp"
#include "../kernels/cholesky_base.hpp"
#include "../opencl/profile.hpp"
#include "../opencl/queue_order.hpp"
#include "check.hpp"
#include "gemm.hpp"
#include "settings.hpp"
#include "sub_block.hpp"
#include "tri_inverse.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <vector>

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace linalg {
namespace internal {

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

// The schedule's shape for an n x n matrix: leaves (steps) of ib columns,
// bases of `base` columns (a multiple of ib), panels of nb columns, the
// trailing updates on at most max_groups work groups (0: all). Builds the
// base kernel for the settings.
struct schedule_shape {
  int ib, base, nb, max_groups;
};

inline schedule_shape shape_for(const linalg_settings& s, int n, int outer_block = 0) {
  const opencl::device_info& info = opencl::context::instance().info();
  const cholesky_settings& cs = s.cholesky;
  schedule_shape sh;
  sh.ib = std::min(cs.step_cols, static_cast<int>(info.max_work_group_size) / cs.step_threads);
  sh.base = std::max(sh.ib, cs.step_base / sh.ib * sh.ib);
  auto& kernel = opencl::kernels::cholesky_base;
  kernel.set_option("CHOLESKY_BLOCK", sh.ib);
  kernel.set_option("LEAF_T", cs.step_threads);
  kernel.set_option("NV_PTX", info.nv_compute_capability > 0 ? 1 : 0);
  // the f64 m16n8k8 shape, one warp per column of the leaf's tile, where
  // the GEMM has it (the same probe of the device's compiler)
  const bool mma = sh.ib == 32 && cs.step_threads == 32 && tensor_cores_on(s.gemm);
  kernel.set_option("MMA", mma);
  const int outer = outer_block > 0 ? outer_block
                    : cs.outer_block_large > 0 && n >= cs.large_from ? cs.outer_block_large
                                                                     : cs.outer_block;
  sh.nb = std::max(sh.ib, outer / sh.ib * sh.ib);
  sh.max_groups = cs.trailing_reserve > 0 && info.compute_units > 4 * cs.trailing_reserve
                      ? info.compute_units - cs.trailing_reserve
                      : 0;
  return sh;
}

// Work matrices of an n x n factorisation (panels of nb, bases of `base`,
// steps of ib): inv and sync (cholesky_base's L_cc^{-1} per step and the
// word its groups wait on, zero for each factorisation), and t_below, d_inv
// and levels for a panel's rows below its diagonal block (an nb-wide
// panel). Made once: a buffer released between launches makes NVIDIA's
// OpenCL wait for the queues (H200, 2026-11-25: 18.29 / 67.94 ms at 8192 /
// 16384 with the inverse's made per panel, 13.91 / 55.90 made once).
struct panel_work {
  panel_work(int n, int nb, int ib, int base)
      : inv(ib, base),
        t_below(n > nb ? n - nb : 1, n > nb ? nb : 1),  // one panel: no rows below
        d_inv(n > nb ? nb : 1, n > nb ? nb : 1) {}
  matrix_cl inv, t_below, d_inv;
  cl::Buffer sync = opencl::new_flags(1);
  std::vector<matrix_cl> levels;  // tri_inverse_in_place's, for nb
};

// Factor the columns [k, k + b) of w on its rows k .. rows - 1 by halves
// (the left half, then the right half updated with inner dimension b / 2,
// then the right half) down to bases of at most `base` columns, each
// factored by one cholesky_base launch (the kernel shape_for built).
inline void factor_by_halves(matrix_cl& w, int k, int b, int rows, int base, int ib,
                             panel_work& work, const cl::Buffer& flag, const gemm_settings& g) {
  if (b > base) {
    const int h = std::max(base, (b / 2) / base * base);
    factor_by_halves(w, k, h, rows, base, ib, work, flag, g);
    if (rows - k - h > 0) lower_update(w, k + h, rows - k - h, b - h, k, h, g, "panel update");
    factor_by_halves(w, k + h, b - h, rows, base, ib, work, flag, g);
    return;
  }
  opencl::phase_scope ph("base");
  auto& kernel = opencl::kernels::cholesky_base;
  const int groups = (rows - k + ib - 1) / ib, lt = kernel.option("LEAF_T");  // ib rows each
  kernel(cl::NDRange(groups * ib, lt), cl::NDRange(ib, lt), w, w.rows(), k, b, rows, work.inv,
         work.inv.rows(), flag, work.sync);
}

// Factor the columns [k, k + b) of the n x n w (rows k .. n): the b x b
// diagonal block by halves, then its inverse (the batched triangular
// inverse, linalg/tri_inverse.hpp) and every row below it in one product,
// L_below = A_below L_kk^{-T} (by halves over all n - k rows, the same
// flops would be hundreds of short products; RESULTS.md, "Dense linear algebra defaults").
inline void cholesky_panel(matrix_cl& w, int k, int b, const schedule_shape& sh,
                           panel_work& work, const cl::Buffer& flag, const linalg_settings& s) {
  const int below = w.rows() - k - b;
  factor_by_halves(w, k, b, k + b, sh.base, sh.ib, work, flag, s.gemm);
  if (below == 0) return;
  if (work.d_inv.rows() != b)
    throw std::logic_error("cholesky_panel: a panel with rows below must be nb wide");
  // Only the lower triangle of d_inv is read (views), so it is not cleared.
  {
    opencl::phase_scope ph("panel inverse");
    opencl::sub_block(work.d_inv, w, k, k, 0, 0, b, b, matrix_view::lower);
    tri_inverse_in_place(work.d_inv, s, &work.levels);
  }
  // L_below into the scratch t_below, then copied back: the product's work
  // groups read rows that others write
  opencl::phase_scope ph("panel solve");
  gemm_options opt(s.gemm);
  opt.splits = 1;
  linalg::gemm(work.t_below, 0, 0, 0, gemm_block{&w, k + b, k},
               gemm_block{&work.d_inv, 0, 0, true, matrix_view::lower}, below, b, b, opt);
  opencl::sub_block(w, work.t_below, 0, 0, k + b, k, below, b);
}

// The whole factorisation of w in place (lower triangle), shaped by sh,
// with look-ahead depth 1. The side queue holds the chain: panel k, its
// update of panel k + 1's columns, panel k + 1, ... The main queue updates
// the columns right of panel k + 1 meanwhile (disjoint columns; on at most
// max_groups work groups when > 0, so that the panel finds free units).
// Markers and barriers order the queues; each works on its own alias of w.
// The caller has enqueued on the main queue what writes w's first panel;
// copy_rest enqueues there what writes the other columns, which runs while
// the first panel is factored. The caller records the main queue's end on
// w. A matrix of one panel is factored on the main queue.
inline void cholesky_lookahead(matrix_cl& w, const schedule_shape& sh, const cl::Buffer& flag,
                               const linalg_settings& s, const std::function<void()>& copy_rest) {
  const int nb = sh.nb;
  opencl::context& ctx = opencl::context::instance();
  const gemm_settings& g = s.gemm;
  const int n = w.rows();
  cl::CommandQueue& main_q = ctx.main_queue();
  panel_work work(n, std::min(nb, n), sh.ib, sh.base);
  if (n <= nb) {
    copy_rest();
    cholesky_panel(w, 0, n, sh, work, flag, s);
    return;
  }
  cl::CommandQueue& side_q = ctx.side_queue();
  matrix_cl panel = w.alias();   // side queue only
  matrix_cl update = w.alias();  // main queue only
  opencl::queue_wait(side_q, {opencl::queue_marker(main_q)});  // after w is written
  opencl::queue_scope side(opencl::queue_role::side);
  cholesky_panel(panel, 0, nb, sh, work, flag, s);
  cl::Event trailing_done;  // the main queue's work on the columns right of panel k + 1
  {
    opencl::queue_scope main(opencl::queue_role::main);
    copy_rest();
    trailing_done = opencl::queue_marker(main_q);
  }
  for (int k = 0; k < n; k += nb) {
    check_interrupt();
    const int b = std::min(nb, n - k);
    const int rest = n - k - b;
    if (rest == 0) break;
    const int next = std::min(nb, rest);
    // The chain stays on the side queue: panel k's update of panel k + 1's
    // columns, then panel k + 1, once the main queue's update by panel k - 1
    // has reached those columns.
    opencl::queue_wait(side_q, {trailing_done});
    lower_update(panel, k + b, rest, next, k, b, g, "look-ahead update");
    const cl::Event lookahead_done = opencl::queue_marker(side_q);
    cholesky_panel(panel, k + b, next, sh, work, flag, s);
    if (rest == next) continue;
    opencl::queue_wait(main_q, {lookahead_done});
    opencl::queue_scope main(opencl::queue_role::main);
    lower_update(update, k + b + next, rest - next, rest - next, k, b, g, "trailing update",
                 sh.max_groups);
    trailing_done = opencl::queue_marker(main_q);
  }
  opencl::queue_wait(main_q, {opencl::queue_marker(side_q)});
}

// The left-looking order of the same blocked algorithm, for a matrix that
// arrives by block columns (linalg/cholesky_host.hpp): block column j is
// updated by every finished column left of it in one lower-only product,
//   A(j.., j) -= L(j.., 0..j) L(j, 0..j)^T,
// then factored (cholesky_panel): it is final as soon as it has arrived,
// and is copied back while later columns still arrive (RESULTS.md,
// "Dense linear algebra defaults"). One queue, in order. `arrive` enqueues on the
// main queue what brings block column j (columns j nb ..) into w, once per
// column, in order; `finished` gets block column k and an event after
// which it is final, and what it enqueues on context::queue() follows it.
using block_arrival = std::function<void(int)>;
using panel_final = std::function<void(int, const cl::Event&)>;

inline void cholesky_left_looking(matrix_cl& w, const schedule_shape& sh, const cl::Buffer& flag,
                                  const linalg_settings& s, const block_arrival& arrive,
                                  const panel_final& finished) {
  cl::CommandQueue& main_q = opencl::context::instance().main_queue();
  const gemm_settings& g = s.gemm;
  const int n = w.rows();
  const int nb = sh.nb;
  panel_work work(n, std::min(nb, n), sh.ib, sh.base);
  for (int k = 0; k < n; k += nb) {
    check_interrupt();
    const int b = std::min(nb, n - k);
    if (arrive) arrive(k / nb);
    if (k > 0) lower_update(w, k, n - k, b, 0, k, g, "left-looking update");
    cholesky_panel(w, k, b, sh, work, flag, s);
    if (finished) finished(k / nb, opencl::queue_marker(main_q));
  }
}

}  // namespace internal
}  // namespace linalg
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
