#ifndef CLBAYES_GLM_GLM_TILED_HPP
#define CLBAYES_GLM_GLM_TILED_HPP

// Shape and launch of the tiled GLM kernel (kernels/glm_lp_tiled.hpp).
// Per tile a group holds TILE_ROWS x k of x in local memory and, in flight,
// the next tile in registers (LPI doubles per item); the shape keeps both
// within the device: local memory within CL_DEVICE_LOCAL_MEM_SIZE, LPI
// within max_lpi. A design too wide for any tile of at least 4 rows (32-byte
// column segments) goes to the row-block kernel instead.

#include "../kernels/glm_lp_tiled.hpp"
#include "../opencl/matrix_cl.hpp"
#include "family.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace glm {

/** Which device kernel glm_lp_opencl runs. */
enum class glm_kernel : int { tiled = 0, rowblock = 1 };

/** Knobs of the tiled kernel. */
// Defaults from the H200 sweep of bench_glm --tune (2026-11-22; RESULTS.md, "GLM likelihood on a device"):
// bernoulli_logit at 10^6 x 100 took 0.333 ms with groups of 128 and tiles
// of 16 rows, against 0.415 ms with tiles of 32.
struct glm_tiled_launch {
  int group = 128;          // TILE_WG: work-group size (power of two)
  int rows = 16;            // TILE_ROWS: most rows per tile (power of two)
  int groups_per_cu = 8;    // persistent groups per compute unit
  int max_lpi = 64;         // most x values per item in flight (registers)
  /** NVIDIA only: registers per work item (-cl-nv-maxrregcount, with the
   *  work-group size left undeclared so that the cap holds; 0: the
   *  compiler's choice). 128 keeps 16 warps per unit: left to itself the
   *  compiler gives normal_id 137 registers and ordered_logistic 143, 12
   *  warps (H200; RESULTS.md, "GLM likelihood on a device"). */
  int max_registers = 0;
};

namespace internal {

/** m as a rows x 1 device matrix (at least one row, so that a kernel
 *  argument always has a buffer), reallocated only when its size changes. */
inline void ensure(opencl::matrix_cl& m, long long rows) {
  rows = std::max<long long>(rows, 1);
  if (m.rows() != rows || m.cols() != 1 || !m.on_current_device())
    m = opencl::matrix_cl(static_cast<int>(rows), 1);
}

/** Local sizes (in doubles) and options of one tiled launch. */
struct tiled_shape {
  int wg = 0;
  int rows = 0;  // 0: no tile fits, use the row-block kernel
  int lpi = 0;
  int gcols = 0;
  std::size_t xs = 0, red = 0, pl = 0, rowv = 0, cuts = 0;
  std::size_t bytes() const { return sizeof(double) * (xs + red + pl + rowv + cuts) + 16; }
};

inline tiled_shape tiled_shape_for(int wg, int rows_max, int k, int ne, int n_cuts,
                                   std::uint64_t local_mem, int max_lpi) {
  tiled_shape sh;
  sh.wg = wg;
  if (k < 1) return sh;
  int rows = 1;
  while (rows * 2 <= std::min(rows_max, wg)) rows *= 2;
  for (; rows >= 4; rows /= 2) {
    const int parts = wg / rows;
    sh.rows = rows;
    sh.lpi = (k + parts - 1) / parts;
    sh.gcols = (k + wg - 1) / wg;
    sh.xs = static_cast<std::size_t>(k) * (rows + 1);
    sh.red = std::max<std::size_t>(static_cast<std::size_t>(ne) * wg,
                                   static_cast<std::size_t>(ne + 2) * rows);
    sh.pl = static_cast<std::size_t>(k) * ne + ne + n_cuts;
    sh.rowv = static_cast<std::size_t>(ne + 3) * rows;
    sh.cuts = std::max(n_cuts, 1);
    if (sh.lpi <= max_lpi && sh.bytes() <= local_mem) return sh;
  }
  sh.rows = 0;
  return sh;
}

}  // namespace internal

/**
 * Enqueue the tiled kernel over data x (n x k) and y: partial sums per
 * group into `partials` (resized here), per-row gradients into row_grad.
 * `offset` is read only when `has_offset` (the OFFSET build option).
 * `counter` is an int on the device that is zero on entry (glm_lp_reduce
 * zeroes it again). Returns the number of groups, or 0 when no tile fits
 * (the caller then runs the row-block kernel).
 */
inline int glm_lp_tiled_launch(opencl::matrix_cl& partials, opencl::matrix_cl& row_grad,
                               const opencl::matrix_cl& x, const opencl::matrix_cl& y,
                               const opencl::matrix_cl& offset, int has_offset,
                               const opencl::matrix_cl& params, opencl::matrix_cl& counter,
                               int n, int k, const glm_params& p, int n_cuts,
                               int alpha_per_row, int extra_per_row, bool gradient,
                               bool propto, const glm_tiled_launch& tune) {
  opencl::context& ctx = opencl::context::instance();
  const opencl::device_info& info = ctx.info();
  const int ne = p.n_eta;
  auto& kern = opencl::kernels::glm_lp_tiled;
  int max_wg = static_cast<int>(std::min<std::size_t>(info.max_work_group_size, 1024));
  int wg = 32;
  while (wg * 2 <= std::min(std::max(tune.group, 32), max_wg)) wg *= 2;
  internal::tiled_shape sh;
  // A variant that cannot run with its own local size (registers) is
  // rebuilt with half the items.
  for (;;) {
    sh = internal::tiled_shape_for(wg, tune.rows, k, ne, n_cuts, info.local_mem, tune.max_lpi);
    if (sh.rows == 0) return 0;
    const std::map<std::string, int> options = {
        {"FAMILY", static_cast<int>(p.fam)}, {"LINK", link_option(p.fam, p.lk)},
        {"OFFSET", has_offset}, {"NETA", ne},
        {"TILE_WG", sh.wg},
        {"TILE_ROWS", sh.rows}, {"LPI", sh.lpi}, {"GCOLS", sh.gcols}};
    for (const auto& kv : options) kern.set_option(kv.first, kv.second);
    kern.set_option("-cl-nv-maxrregcount", tune.max_registers);
    kern.set_option("FIXED_WG", tune.max_registers > 0 ? 0 : 1);  // the cap holds without it
    if (static_cast<int>(kern.max_work_group_size()) >= wg) break;
    if (wg <= 32) return 0;
    wg /= 2;
  }
  const long long tiles = (static_cast<long long>(n) + sh.rows - 1) / sh.rows;
  const int groups = static_cast<int>(std::max<long long>(
      1, std::min<long long>(tiles, static_cast<long long>(info.compute_units) *
                                        std::max(tune.groups_per_cu, 1))));
  const long long stride = 2 + ne + static_cast<long long>(k) * ne + n_cuts;
  internal::ensure(partials, groups * stride);
  const int n_beta = k * ne;
  kern(cl::NDRange(static_cast<std::size_t>(groups) * sh.wg), cl::NDRange(sh.wg), partials,
       row_grad, x, y, offset, params, counter, p.n_alpha, p.n_alpha + n_beta, n, k, alpha_per_row,
       extra_per_row, n_cuts, gradient ? 1 : 0, propto ? 1 : 0,
       cl::Local(sizeof(double) * (gradient ? sh.xs : 1)), cl::Local(sizeof(double) * sh.red),
       cl::Local(sizeof(double) * sh.pl), cl::Local(sizeof(double) * sh.rowv),
       cl::Local(sizeof(double) * sh.cuts));
  return groups;
}

}  // namespace glm
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
