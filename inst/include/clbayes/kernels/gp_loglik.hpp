#ifndef CLBAYES_KERNELS_GP_LOGLIK_HPP
#define CLBAYES_KERNELS_GP_LOGLIK_HPP

// The fused Gaussian-process log-likelihood (parallel-slice.txt, section
// 4.1.2 and Appendix A): one work group per parameter row builds Sigma a
// panel of columns at a time, each panel going straight into the blocked
// left-looking Cholesky (team_chol_panel),
// then solves L z = y - X beta, and reduces z'z and log det in the same
// launch. Only one double per row leaves the device.

#include "../opencl/kernel_cl.hpp"
#include "batched_team.hpp"

#include <string>

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {
namespace kernels {

inline const char* gp_loglik_body_source = R"(
/**
 * Log density of N(0, Sigma) at r for one parameter row, by the whole work
 * group. S (n x n, column-major) and z (n) are the row's workspace; red is
 * ls doubles and slot 2 doubles of local scratch. Returns -INFINITY when a Cholesky pivot is
 * <= tol (Sigma numerically not positive definite).
 */
double FN(gp_row)(ASP double* S, ASP double* z, __global const double* y,
                  __global const double* X, int p, __global const double* beta,
                  __global const double* coords, int d, int n, int cov,
                  double kappa, double psi, double phi, double tol,
                  __local double* red, __local double* slot) {
  const int lid = get_local_id(0), ls = get_local_size(0);
  for (int i = lid; i < n; i += ls) {
    double s = y[i];
    for (int k = 0; k < p; ++k) s -= X[(long)k * n + i] * beta[k];
    z[i] = s;
  }
  for (int j0 = 0; j0 < n; j0 += CHOL_PANEL) {
    /* Step 1 of Algorithm 4 for the panel's columns, rows j0..n-1, then
       step 2 for them: the columns go straight into the factorization. */
    const int nb = min(CHOL_PANEL, n - j0);
    for (int i = j0 + lid; i < n; i += ls) {
      for (int j = j0; j < j0 + nb && j <= i; ++j) {
        double v;
        if (i == j) {
          v = kappa + psi;
        } else {
          double dd = 0.0;
          for (int k = 0; k < d; ++k) {
            const double t = coords[(long)k * n + i] - coords[(long)k * n + j];
            dd += t * t;
          }
          v = cov == 0 ? kappa * exp(-sqrt(dd) / phi)
                       : kappa * exp(-0.5 * dd / (phi * phi));
        }
        S[i + j * n] = v;
      }
    }
    if (FN(team_chol_panel)(S, 1, n, n, j0, nb, tol, slot)) return -INFINITY;
  }
  /* Steps 3-5: z = L^-1 r, then z'z and log det Sigma = 2 sum log L_ii. */
  FN(team_trsv_lower)(S, 1, n, n, 0, z, 1);
  double q = 0.0, ld = 0.0;
  for (int i = lid; i < n; i += ls) {
    q += z[i] * z[i];
    ld += log(S[i + i * n]);
  }
  q = FN(team_sum)(q, red);
  ld = FN(team_sum)(ld, red);
  return -0.5 * (n * log(2.0 * M_PI) + 2.0 * ld + q);
}
)";

inline const char* gp_loglik_kernel_source = R"(
/**
 * out[row0 + g] for work group g: theta is R x 3 (kappa, psi, phi columns).
 * A row outside the support (kappa <= 0, psi < 0, phi <= 0, or not finite)
 * gives -INFINITY. With use_local != 0 the workspace is local memory (work:
 * n * n + n doubles), otherwise the group's slice of scratch.
 */
__kernel void gp_loglik(__global double* out, __global const double* theta, int R,
                        int row0, __global const double* y,
                        __global const double* X, int p, __global const double* beta,
                        __global const double* coords, int d, int n, int cov,
                        double tol_factor, __global double* scratch,
                        __local double* work, __local double* red, int use_local) {
  const int g = get_group_id(0), row = row0 + g;
  __local double slot[2];
  const double kappa = theta[row], psi = theta[R + row], phi = theta[2 * R + row];
  double v;
  if (!(kappa > 0.0) || !(psi >= 0.0) || !(phi > 0.0) || isinf(kappa) ||
      isinf(psi) || isinf(phi)) {
    v = -INFINITY;
  } else {
    const double tol = tol_factor * (kappa + psi);
    if (use_local) {
      v = gp_row_l(work, work + n * n, y, X, p, beta, coords, d, n, cov, kappa, psi,
                   phi, tol, red, slot);
    } else {
      __global double* s = scratch + (long)g * ((long)n * n + n);
      v = gp_row_g(s, s + (long)n * n, y, X, p, beta, coords, d, n, cov, kappa, psi,
                   phi, tol, red, slot);
    }
  }
  if (get_local_id(0) == 0) out[row] = v;
}
)";

inline auto& gp_loglik() {
  static const std::string src = batched_program(
      {batched_instantiate(batched_team_chol_source), batched_instantiate(batched_team_blas_source),
       batched_instantiate(gp_loglik_body_source), gp_loglik_kernel_source});
  static kernel_cl<out_buffer, in_buffer, int, int, in_buffer, in_buffer, int,
                   in_buffer, in_buffer, int, int, int, double, in_out_buffer,
                   cl::LocalSpaceArg, cl::LocalSpaceArg, int>
      k("gp_loglik", src.c_str(), {{"CHOL_PANEL", 16}});
  return k;
}

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
