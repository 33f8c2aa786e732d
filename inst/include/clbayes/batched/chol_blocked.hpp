#ifndef CLBAYES_BATCHED_CHOL_BLOCKED_HPP
#define CLBAYES_BATCHED_CHOL_BLOCKED_HPP

// Blocked, multi-work-group batched Cholesky for large m: the right-looking
// blocked algorithm (stan-opencl.txt) as two launches per block column of
// width nb, each covering every item of the batch (the batch index is the
// second global dimension, batched-linalg.txt):
//   1. chol_blocked_panel: factor the nb x nb diagonal block (local memory)
//      and solve the panel below it, many work groups per item;
//   2. chol_blocked_syrk: the rank-nb update of the trailing lower
//      triangle, one work group per tile of it and item.
// A batch of 60 items of 500 x 500 then fills a GPU with thousands of work
// groups instead of 60, each latency-bound in global memory.
//
// Any strided layout works (the kernels index through EL); the kernels are
// tuned for column-major items (rs = 1), where every load is coalesced.

#include "batch.hpp"

#ifdef CLBAYES_OPENCL
#include "../kernels/batched_blocked_chol.hpp"

#include <algorithm>

namespace clbayes {
namespace batched {

/** Block width, tile and work-group sizes the blocked path will use. */
struct blocked_plan {
  int nb, rows, tile, wpt;
};

/** The block width for m x m items when batched_settings::blocked_nb is
 *  0: on the
 *  H200 (bench_batched, 2026-11-22; RESULTS.md, "Batched Cholesky") 32 was fastest up to the
 *  GP's n = 500, 48 at 1000 and 64 at 2000 (wider blocks, fewer launches
 *  and less trailing traffic, once the panels are long enough to fill the
 *  device). */
inline int blocked_width_for(int m) { return m < 768 ? 32 : (m < 1536 ? 48 : 64); }

inline blocked_plan make_blocked_plan(int m, const batched_settings& t) {
  blocked_plan p;
  p.nb = t.blocked_nb > 0 ? t.blocked_nb : blocked_width_for(m);
  p.rows = std::max(1, std::min(t.blocked_rows, team_size_limit(t)));
  p.wpt = std::max(1, t.blocked_wpt);
  p.tile = std::max(p.wpt, t.blocked_tile / p.wpt * p.wpt);
  const std::size_t local = sizeof(double) * (static_cast<std::size_t>(p.nb) * p.nb + 2);
  if (local > local_budget(t))
    throw invalid_argument("tuning", "blocked_nb is too large for the device's local memory");
  const std::size_t ts = static_cast<std::size_t>(p.tile / p.wpt) * (p.tile / p.wpt);
  if (ts > opencl::context::instance().info().max_work_group_size)
    throw invalid_argument("tuning", "blocked_tile / blocked_wpt gives work groups larger "
                                     "than the device allows");
  return p;
}

/**
 * Factor the B m x m items of `a` (stored with `layout`) in place, blocked.
 * info (an int_buffer of B ints) receives 0 or the failing pivot (1-based);
 * with info_preset the caller has already written info, and items with
 * info != 0 are left alone (gp_loglik marks rows outside the support so).
 * diag: optional scratch of nb * nb * B doubles, (re)allocated here when
 * too small, so a caller can keep it between calls. tol: a pivot <= tol
 * fails. zero_upper = false leaves the strict upper triangle outside the
 * diagonal blocks as it was (for callers that read only L). The settings
 * `t` (by default the selected device's) give the block and tile sizes.
 */
inline void chol_batched_blocked(opencl::matrix_cl& a, int m, int B, batch_layout layout,
                                 opencl::matrix_cl& info, double tol = 0.0,
                                 bool info_preset = false,
                                 opencl::matrix_cl* diag = nullptr,
                                 bool zero_upper = true,
                                 const batched_settings& t = tuned_settings()) {
  if (B == 0 || m == 0) return;
  // Item offsets are 64-bit in these kernels: only one item must fit int.
  check_batch_size("a", m, m, 1);
  blocked_plan p = make_blocked_plan(m, t);
  auto& panel = opencl::kernels::chol_blocked_panel();
  auto& syrk = opencl::kernels::chol_blocked_syrk();
  panel.set_option("CHOL_NB", p.nb);
  syrk.set_option("CHOL_NB", p.nb);
  syrk.set_option("SYRK_TILE", p.tile);
  syrk.set_option("SYRK_WPT", p.wpt);
  // Registers may make a kernel's largest work group smaller than the
  // device's: fewer panel rows per group, or a clear error for the tile.
  p.rows = std::min<int>(p.rows, static_cast<int>(panel.max_work_group_size()));
  const int ts = (p.tile / p.wpt) * (p.tile / p.wpt);
  if (static_cast<std::size_t>(ts) > syrk.max_work_group_size())
    throw invalid_argument("tuning", "blocked_tile / blocked_wpt gives a work group "
                                     "larger than the trailing-update kernel allows");
  const long long need = static_cast<long long>(p.nb) * p.nb * B;
  opencl::matrix_cl own;
  if (diag == nullptr) diag = &own;
  if (diag->size() < need || !diag->on_current_device())
    *diag = opencl::matrix_cl(p.nb * p.nb, B);
  for (int j0 = 0; j0 < m; j0 += p.nb) {
    const int w = std::min(p.nb, m - j0), below = m - j0 - w;
    const int tiles = std::max(1, (below + p.rows - 1) / p.rows);
    const int init = j0 == 0 && !info_preset;
    panel(cl::NDRange(static_cast<std::size_t>(tiles) * p.rows, B),
          cl::NDRange(p.rows, 1), a, info, *diag, m, layout.rs, layout.cs, layout.bs,
          j0, w, tol, init, tiles == 1 ? 1 : 0, zero_upper ? 1 : 0);
    if (below > 0) {
      const long long nt = (below + p.tile - 1) / p.tile;
      syrk(cl::NDRange(static_cast<std::size_t>(nt * (nt + 1) / 2) * ts, B),
           cl::NDRange(ts, 1), a, info, *diag, m, layout.rs, layout.cs, layout.bs, j0, w,
           tiles == 1 ? 0 : 1);
    }
  }
}

}  // namespace batched
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
