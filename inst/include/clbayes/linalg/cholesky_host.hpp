#ifndef CLBAYES_LINALG_CHOLESKY_HOST_HPP
#define CLBAYES_LINALG_CHOLESKY_HOST_HPP

// The Cholesky factor of a matrix in host memory, computed on the device
// with its transfers overlapped: A crosses the bus by block columns of the
// panel width on the transfer queue (opencl/context.hpp), the schedule of
// linalg/cholesky_panel.hpp factors each block column as soon as it has
// arrived, and each block column of L (or of U = L^T) is copied back as
// soon as it is final, while the rest is factored. Host to host then takes
// about the larger of the transfers and the factorisation rather than
// their sum. The checks of linalg::cholesky happen on the way in: NaN and
// Inf in the kernel that copies each block column into the working matrix,
// symmetry over all of A once it is on the device (beside the
// factorisation, on the transfer queue); every flag comes back in one read
// at the end.

#include "../error.hpp"
#include "../kernels/check.hpp"
#include "../kernels/transpose.hpp"
#include "../opencl/pinned_transfer.hpp"
#include "cholesky.hpp"
#include "settings.hpp"

#include <algorithm>
#include <string>
#include <vector>

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
  if (rows != cols)
    throw invalid_argument("x", "must be square (it is " + std::to_string(rows) + " x " +
                                    std::to_string(cols) + ")");
  const int n = rows;
  if (n == 0) return;
  opencl::context& ctx = opencl::context::instance();
  matrix_cl a_dev(n, n);  // A as it arrives, read by the checks only
  matrix_cl w(n, n);      // the working matrix: A's lower triangle, then L
  matrix_cl u = upper ? matrix_cl(n, n) : matrix_cl();
  const cl::Buffer flag = internal::new_flags();
  const internal::schedule_shape sh = internal::shape_for(s.cholesky, n);
  cl::CommandQueue& tq = ctx.transfer_queue();
  const std::size_t column_bytes = sizeof(double) * static_cast<std::size_t>(n);
  auto columns = [&](int j) {  // first column and width of block column j
    const int c0 = j * sh.nb;
    return std::make_pair(c0, std::min(sh.nb, n - c0));
  };
  try {
    opencl::untracked_scope untracked;  // ordered by the queues and markers below
    opencl::internal::pinned_stream stream(tq, pin);
    // Block column j: A's columns into a_dev, then into w with the NaN
    // check, and after the last one the symmetry check over all of A.
    auto arrive = [&](int j) {
      ctx.main_queue().flush();  // what is enqueued runs while the host copies
      ctx.side_queue().flush();
      const auto cc = columns(j);
      stream.write(a_dev.buffer(), cc.first * column_bytes,
                   reinterpret_cast<const char*>(a + static_cast<std::size_t>(cc.first) * n),
                   cc.second * column_bytes);
      opencl::queue_scope transfer(opencl::queue_role::transfer);
      opencl::kernels::copy_columns_checked(cl::NDRange(n, cc.second), a_dev, w, n, cc.first,
                                            cc.second, flag);
      cl::Event there = internal::queue_marker(tq);
      if (cc.first + cc.second == n) {  // after the marker: the schedule need not wait for it
        const int tile = opencl::kernels::check_symmetric.option("SYM_TILE");
        const int tile_rows = opencl::kernels::check_symmetric.option("SYM_ROWS");
        const std::size_t tiles = (n + tile - 1) / tile;
        opencl::kernels::check_symmetric(cl::NDRange(tiles * tile, tiles * tile_rows),
                                         cl::NDRange(tile, tile_rows), a_dev, n,
                                         symmetry_tolerance, flag, 2);
      }
      tq.flush();
      return there;
    };
    const std::vector<cl::Event> done =
        internal::cholesky_lookahead(w, sh.nb, sh.ib, flag, sh.max_groups, s.gemm, arrive);
    ctx.main_queue().flush();
    ctx.side_queue().flush();
    // Block column k of L is final once panel k is; block column k of U
    // reads row block k of L, final then too.
    for (std::size_t k = 0; k < done.size(); ++k) {
      check_interrupt();
      const auto cc = columns(static_cast<int>(k));
      internal::queue_wait(tq, {done[k]});
      if (upper) {
        opencl::queue_scope transfer(opencl::queue_role::transfer);
        opencl::kernels::upper_columns_of_lower(cl::NDRange(n, cc.second), u, w, n, cc.first,
                                                cc.second);
      }
      stream.read((upper ? u : w).buffer(), cc.first * column_bytes,
                  reinterpret_cast<char*>(out + static_cast<std::size_t>(cc.first) * n),
                  cc.second * column_bytes);
    }
    ctx.finish_all();
  } catch (const cl::Error& e) {
    throw opencl_error(std::string(e.what()) + " in the Cholesky of a host matrix", e.err());
  }
  internal::check_flags(tq, flag);
}

}  // namespace linalg
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
