#ifndef CLBAYES_BATCHED_CHOL_BATCHED_HPP
#define CLBAYES_BATCHED_CHOL_BATCHED_HPP

// Batched Cholesky A_b = L_b L_b^T for B small m x m matrices. The device
// path picks the level by size (batched-linalg.txt): serial (one work item
// per matrix) up to batched_settings::serial_max_m, team (one work group
// per matrix) beyond, in local memory while the matrix fits and in global
// memory after, and from batched_settings::blocked_min_m on the blocked
// multi-work-group algorithm of chol_blocked.hpp (many work groups per
// item).
// The CPU path is Eigen's LLT per item, parallel over items with OpenMP.
//
// Both paths factor in place, read the lower triangle, zero the upper one,
// and report per item 0 or (device) the failing pivot's 1-based index /
// (CPU) 1 when the item is not positive definite.

#include "../eigen.hpp"
#include "batch.hpp"

#include <vector>

#ifdef CLBAYES_OPENCL
#include "../kernels/batched_chol.hpp"
#include "chol_blocked.hpp"
#include "../opencl/transfer.hpp"
#endif

namespace clbayes {
namespace batched {

/** CPU path: the B contiguous column-major m x m matrices at a, in place. */
inline std::vector<int> chol_batched_cpu(double* a, int m, int B) {
  check_batch_size("a", m, m, B);
  std::vector<int> info(static_cast<std::size_t>(B), 0);
  const std::size_t mm = static_cast<std::size_t>(m) * m;
  for_each_item(B, static_cast<double>(mm) * m / 3.0, [&](int b) {
    Eigen::Map<Eigen::MatrixXd> x(a + b * mm, m, m);
    Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>, Eigen::Lower> llt(x);
    if (llt.info() != Eigen::Success) info[b] = 1;
    x.triangularView<Eigen::StrictlyUpper>().setZero();
  });
  return info;
}

#ifdef CLBAYES_OPENCL

/**
 * Device path, device-resident: factor the B m x m items of `a` (stored with
 * `layout`) in place; info (an int_buffer of B ints) receives the status.
 * Nothing is read back. tol: a pivot <= tol fails (0 as LAPACK's potrf).
 * The settings `t` (by default the selected device's) choose the path.
 */
inline void chol_batched(opencl::matrix_cl& a, int m, int B, batch_layout layout,
                         opencl::matrix_cl& info, double tol = 0.0,
                         const batched_settings& t = tuned_settings()) {
  using opencl::round_up;
  if (B == 0 || m == 0) return;
  check_batch_size("a", m, m, B);
  if (a.size() < static_cast<long long>(m) * m * B)
    throw invalid_argument("a", "is smaller than the batch it should hold");
  const std::size_t budget = local_budget(t);
  const bool contiguous_layout =
      layout.rs == 1 && layout.cs == m && layout.bs == m * m;
  if (m <= t.serial_max_m) {
    int g = t.staged_items;
    while (g > 1 && static_cast<std::size_t>(g) * (m * m + 1) * sizeof(double) > budget)
      g /= 2;
    const bool staged = contiguous_layout &&
                        static_cast<std::size_t>(g) * (m * m + 1) * sizeof(double) <=
                            budget &&
                        g <= team_size_limit(t);
    if (staged) {
      opencl::kernels::chol_batched_staged()(
          cl::NDRange(round_up(B, g)), cl::NDRange(g), a, info, B, m, tol,
          cl::Local(sizeof(double) * g * (m * m + 1)));
    } else {
      opencl::kernels::chol_batched_serial()(cl::NDRange(B), a, info, B, m, layout.rs,
                                             layout.cs, layout.bs, tol);
    }
    return;
  }
  if (m >= t.blocked_min_m) {
    chol_batched_blocked(a, m, B, layout, info, tol, false, nullptr, true, t);
    return;
  }
  const int ls = pow2_size(m, 32, team_size_limit(t));
  const bool use_local = static_cast<std::size_t>(m) * m * sizeof(double) <= budget;
  opencl::kernels::chol_batched_team()(
      cl::NDRange(static_cast<std::size_t>(B) * ls), cl::NDRange(ls), a, info, m,
      layout.rs, layout.cs, layout.bs, tol,
      cl::Local(use_local ? sizeof(double) * m * m : sizeof(double)), use_local ? 1 : 0);
}

/** Device path from host memory: contiguous items at a, in place. */
inline std::vector<int> chol_batched_device(double* a, int m, int B,
                                            const batched_settings& t = tuned_settings()) {
  check_batch_size("a", m, m, B);
  if (B == 0 || m == 0) return std::vector<int>(static_cast<std::size_t>(B), 0);
  opencl::matrix_cl x = opencl::to_matrix_cl(a, m, m * B);
  opencl::matrix_cl info = int_buffer(B);
  chol_batched(x, m, B, contiguous(m, m), info, 0.0, t);
  opencl::from_matrix_cl(x, a);
  return read_ints(info, B);
}

#endif  // CLBAYES_OPENCL

}  // namespace batched
}  // namespace clbayes

#endif
