#ifndef CLBAYES_LINALG_CHOLESKY_HOST_HPP
#define CLBAYES_LINALG_CHOLESKY_HOST_HPP

// The Cholesky factor of a matrix in host memory, computed on the device
// with its transfers overlapped: A crosses the bus by block columns
// (cholesky_settings::host_block) on an upload thread, the left-looking
// schedule of linalg/cholesky_panel.hpp updates and factors each block
// column as soon as it has arrived, and each block column of L (or of
// U = L^T) goes back on a download thread as soon as it is final
// (opencl/block_transfer.hpp). Host to host then takes about the larger of
// the transfers and the factorisation rather than their sum. This thread
// only enqueues kernels: NVIDIA's driver lets it run only so far ahead of
// the device, so host copies on it would leave the device idle (RESULTS.md,
// "Dense linear algebra defaults"). The checks of linalg::cholesky happen on the
// way in: NaN and Inf in the kernel that copies each block column into
// the working matrix, symmetry over all of A once it is on the device
// (beside the factorisation, on the side queue); every flag comes back in
// one read at the end.

#include "../error.hpp"
#include "../kernels/check.hpp"
#include "../kernels/transpose.hpp"
#include "../opencl/block_transfer.hpp"
#include "cholesky.hpp"
#include "settings.hpp"

#include <string>

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace linalg {

/** The Cholesky factor of the rows x cols host matrix a (column-major),
 *  written whole into out (rows * cols doubles): L with zeros above the
 *  diagonal, or with `upper` U = L^T (what base::chol() returns). Checks
 *  and errors as linalg::cholesky; the schedule's settings `s` default to
 *  the selected device's, the pinned staging's `pin` to its defaults. */
inline void cholesky_host(const double* a, int rows, int cols, bool upper, double* out,
                          const linalg_settings& s = tuned_settings(),
                          const opencl::pinned_tuning& pin = opencl::pinned_tuning()) {
  check_square(rows, cols, "x");
  const int n = rows;
  if (n == 0) return;
  opencl::context& ctx = opencl::context::instance();
  matrix_cl a_dev(n, n);  // A as it arrives, read by the checks only
  matrix_cl w(n, n);      // the working matrix: A's lower triangle, then L
  matrix_cl u = upper ? matrix_cl(n, n) : matrix_cl();
  const cl::Buffer flag = internal::new_flags();
  const internal::schedule_shape sh = internal::shape_for(s, n, s.cholesky.host_block);
  const opencl::block_columns blocks{n, sh.nb};
  try {
    opencl::untracked_scope untracked;  // ordered by the queues and markers below
    cl::CommandQueue& main_q = ctx.main_queue();
    cl::CommandQueue& side_q = ctx.side_queue();
    opencl::internal::block_downloader down((upper ? u : w).buffer(), out, blocks, pin);
    opencl::internal::block_uploader up(a, a_dev.buffer(), blocks, pin);
    // Block column j: into w with the NaN check once it has arrived, and
    // after the last one the symmetry check over all of A on the side
    // queue, beside the factorisation.
    auto arrive = [&](int j) {
      main_q.flush();  // what is enqueued runs while this thread waits
      const cl::Event there = up.arrived(j);
      opencl::queue_wait(main_q, {there});
      opencl::phase_scope ph("arrival");
      opencl::kernels::copy_lower_flagged(cl::NDRange(n, blocks.width(j)), a_dev, w, n,
                                          blocks.first(j), blocks.width(j), flag, 1, -1);
      if (j + 1 == blocks.count()) {
        opencl::queue_scope side(opencl::queue_role::side);
        opencl::queue_wait(side_q, {there});
        const int tile = opencl::kernels::check_symmetric.option("SYM_TILE");
        const int tile_rows = opencl::kernels::check_symmetric.option("SYM_ROWS");
        const std::size_t tiles = (n + tile - 1) / tile;
        opencl::kernels::check_symmetric(cl::NDRange(tiles * tile, tiles * tile_rows),
                                         cl::NDRange(tile, tile_rows), a_dev, n,
                                         symmetry_tolerance, flag, 2);
        side_q.flush();
      }
    };
    // Block column k of L is final once panel k is; block column k of U
    // reads row block k of L, final then too: made on the main queue (the
    // schedule's only one), right after the panel.
    auto finished = [&](int k, const cl::Event& done) {
      cl::Event ready = done;
      if (upper) {
        opencl::kernels::upper_columns_of_lower(cl::NDRange(n, blocks.width(k)), u, w, n,
                                                blocks.first(k), blocks.width(k));
        ready = opencl::queue_marker(main_q);
      }
      // The download thread waits for `ready`: submitted before it sees it.
      main_q.flush();
      down.push(ready);
    };
    internal::cholesky_left_looking(w, sh, flag, s, arrive, finished);
    main_q.flush();
    down.finish();
    ctx.finish_all();
  } catch (const cl::Error& e) {
    throw opencl_error(std::string(e.what()) + " in the Cholesky of a host matrix", e.err());
  }
  internal::check_flags(ctx.main_queue(), flag);
}

}  // namespace linalg
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
