#ifndef CLBAYES_BATCHED_SOLVE_BATCHED_HPP
#define CLBAYES_BATCHED_SOLVE_BATCHED_HPP

// Batched solves A_b X_b = B_b (A_b m x m, B_b m x r): LU with partial
// pivoting, then forward and back substitution, per item (batched-linalg.txt,
// the gemm / LU / trsv example). Device: serial level up to
// batched_settings::serial_max_m, team level beyond (local memory while A_b and B_b
// fit). CPU: Eigen's PartialPivLU per item, parallel over items.
//
// A is overwritten by its LU factors and B by the solution. Per item the
// status is 0, or k + 1 for the first exactly zero pivot U[k, k] (as
// LAPACK's getrf; the item's B is then left unsolved).

#include "../eigen.hpp"
#include "batch.hpp"

#include <vector>

#ifdef CLBAYES_OPENCL
#include "../kernels/batched_solve.hpp"
#include "../opencl/transfer.hpp"
#endif

namespace clbayes {
namespace batched {

/** CPU path on contiguous column-major items, in place. */
inline std::vector<int> solve_batched_cpu(double* a, double* x, int m, int r, int B) {
  check_batch_size("a", m, m, B);
  check_batch_size("b", m, r, B);
  std::vector<int> info(static_cast<std::size_t>(B), 0);
  const std::size_t mm = static_cast<std::size_t>(m) * m;
  const std::size_t mr = static_cast<std::size_t>(m) * r;
  for_each_item(B, static_cast<double>(mm) * (2.0 * m / 3.0 + 2.0 * r), [&](int b) {
    if (m == 0) return;
    Eigen::Map<Eigen::MatrixXd> ab(a + b * mm, m, m);
    Eigen::Map<Eigen::MatrixXd> xb(x + b * mr, m, r);
    Eigen::PartialPivLU<Eigen::Ref<Eigen::MatrixXd>> lu(ab);
    for (int k = 0; k < m; ++k)
      if (lu.matrixLU()(k, k) == 0.0) {
        info[b] = k + 1;
        return;
      }
    xb = lu.solve(xb);
  });
  return info;
}

#ifdef CLBAYES_OPENCL

/**
 * Device path, device-resident: a holds B m x m items (layout la), x holds B
 * m x r items (layout lx); both are overwritten; info (int_buffer of B)
 * receives the status. The settings `t` (by default the selected device's)
 * choose the path.
 */
inline void solve_batched(opencl::matrix_cl& a, batch_layout la, opencl::matrix_cl& x,
                          batch_layout lx, int m, int r, int B, opencl::matrix_cl& info,
                          const batched_settings& t = tuned_settings()) {
  using opencl::round_up;
  if (B == 0 || m == 0) return;
  check_batch_size("a", m, m, B);
  check_batch_size("b", m, r, B);
  if (a.size() < static_cast<long long>(m) * m * B)
    throw invalid_argument("a", "is smaller than the batch it should hold");
  if (x.size() < static_cast<long long>(m) * r * B)
    throw invalid_argument("b", "is smaller than the batch it should hold");
  if (m <= t.serial_max_m) {
    opencl::matrix_cl piv = int_buffer(static_cast<long long>(B) * m);
    opencl::kernels::solve_batched_serial()(cl::NDRange(B), a, x, piv, info, B, m, r,
                                            la.rs, la.cs, la.bs, lx.rs, lx.cs, lx.bs);
    return;
  }
  const int ls = pow2_size(m, 32, team_size_limit(t));
  const std::size_t scratch = sizeof(int) * m + (sizeof(double) + sizeof(int)) * ls;
  const std::size_t work = sizeof(double) * (static_cast<std::size_t>(m) * m +
                                             static_cast<std::size_t>(m) * r);
  const bool use_local = work + scratch <= local_budget(t);
  opencl::kernels::solve_batched_team()(
      cl::NDRange(static_cast<std::size_t>(B) * ls), cl::NDRange(ls), a, x, info, m, r,
      la.rs, la.cs, la.bs, lx.rs, lx.cs, lx.bs,
      cl::Local(use_local ? work : sizeof(double)), cl::Local(sizeof(int) * m),
      cl::Local(sizeof(double) * ls), cl::Local(sizeof(int) * ls), use_local ? 1 : 0);
}

/** Device path from host memory (contiguous items), in place. */
inline std::vector<int> solve_batched_device(double* a, double* x, int m, int r, int B,
                                             const batched_settings& t = tuned_settings()) {
  check_batch_size("a", m, m, B);
  check_batch_size("b", m, r, B);
  // Nothing to solve: no status to report either (an empty X).
  if (B == 0 || m == 0 || r == 0) return std::vector<int>(static_cast<std::size_t>(B), 0);
  opencl::matrix_cl ad = opencl::to_matrix_cl(a, m, m * B);
  opencl::matrix_cl xd = opencl::to_matrix_cl(x, m, r * B);
  opencl::matrix_cl info = int_buffer(B);
  solve_batched(ad, contiguous(m, m), xd, contiguous(m, r), m, r, B, info, t);
  opencl::from_matrix_cl(xd, x);
  return read_ints(info, B);
}

#endif  // CLBAYES_OPENCL

}  // namespace batched
}  // namespace clbayes

#endif
