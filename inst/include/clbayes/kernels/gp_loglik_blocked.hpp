#ifndef CLBAYES_KERNELS_GP_LOGLIK_BLOCKED_HPP
#define CLBAYES_KERNELS_GP_LOGLIK_BLOCKED_HPP

// The two kernels around the blocked batched Cholesky in the GP
// log-likelihood for large n (batched/gp_loglik.hpp): gp_blocked_build
// writes, for every parameter row, the scaled and augmented matrix
//   M = [ Sigma / s     .  ]      s = kappa + psi,
//       [ r^T / sqrt(s) 0  ]      r = y - X beta,
// ((n + 1) x (n + 1), lower triangle), and gp_blocked_finish reads the log
// density off its Cholesky factor [L / sqrt(s), 0; z^T, .], L L^T = Sigma,
// z = L^-1 r: the forward substitution of parallel-slice.txt Algorithm 4
// is done by the factorization itself, so no separate (latency-bound)
// triangular solve is needed. The last pivot, -z'z, always fails, which
// the finish kernel expects (info = n + 1).
// Scaling by s makes the diagonal 1, so one pivot tolerance serves every
// row: pivot / s <= tol_factor is the fused kernel's pivot <= tol_factor * s.

#include "../opencl/kernel_cl.hpp"

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {
namespace kernels {

inline const char* gp_blocked_source = R"(
/**
 * Row g = get_global_id(1) of the launch is parameter row row0 + g of
 * theta (R x 3). Writes the lower triangle of M into S + g (n+1)^2
 * (column-major) and info[g]: 0, or -1 for a row outside the support
 * (kappa <= 0, psi < 0, phi <= 0, or not finite), which the Cholesky then
 * skips. Dimension 0 strides over the entries.
 */
__kernel void gp_blocked_build(__global double* S, __global int* info,
                               __global const double* theta, int R, int row0,
                               __global const double* y, __global const double* X,
                               int p, __global const double* beta,
                               __global const double* coords, int d, int n, int cov) {
  const int g = get_global_id(1), row = row0 + g;
  const double kappa = theta[row], psi = theta[R + row], phi = theta[2 * R + row];
  const int ok = kappa > 0.0 && psi >= 0.0 && phi > 0.0 && !isinf(kappa) &&
                 !isinf(psi) && !isinf(phi);
  if (get_global_id(0) == 0) info[g] = ok ? 0 : -1;
  if (!ok) return;
  const double s = kappa + psi, rho = kappa / s, rs = 1.0 / sqrt(s);
  const long N = n + 1;
  __global double* a = S + (long)g * N * N;
  for (long e = get_global_id(0); e < N * N; e += get_global_size(0)) {
    const int i = e % N, j = e / N;
    if (i < j) continue;
    double v;
    if (i == n) {
      if (j == n) {
        v = 0.0;
      } else {
        v = y[j];
        for (int k = 0; k < p; ++k) v -= X[(long)k * n + j] * beta[k];
        v *= rs;
      }
    } else if (i == j) {
      v = 1.0;
    } else {
      double dd = 0.0;
      for (int k = 0; k < d; ++k) {
        const double t = coords[(long)k * n + i] - coords[(long)k * n + j];
        dd += t * t;
      }
      v = cov == 0 ? rho * exp(-sqrt(dd) / phi) : rho * exp(-0.5 * dd / (phi * phi));
    }
    a[e] = v;
  }
}

/**
 * Work group g: out[row0 + g] = -(n log 2 pi + n log s + 2 sum log L_ii
 * + z'z) / 2 from the factor of M when info[g] = n + 1 (Sigma positive
 * definite, the augmented pivot failing as it must), else -INFINITY.
 * red: ls doubles (a power of two).
 */
__kernel void gp_blocked_finish(__global double* out, __global const double* S,
                                __global const int* info, __global const double* theta,
                                int R, int row0, int n, __local double* red) {
  const int g = get_group_id(0), row = row0 + g;
  const int lid = get_local_id(0), ls = get_local_size(0);
  const int st = info[g];
  if (st != n + 1) {
    if (lid == 0) out[row] = -INFINITY;
    return;
  }
  const long N = n + 1;
  __global const double* a = S + (long)g * N * N;
  double q = 0.0, ld = 0.0;
  for (int i = lid; i < n; i += ls) {
    const double z = a[n + i * N];
    q += z * z;
    ld += log(a[i + i * N]);
  }
  red[lid] = 2.0 * ld + q;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = ls / 2; h > 0; h /= 2) {
    if (lid < h) red[lid] += red[lid + h];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) {
    const double s = theta[row] + theta[R + row];
    out[row] = -0.5 * (n * log(2.0 * M_PI) + n * log(s) + red[0]);
  }
}
)";

inline auto& gp_blocked_build() {
  static kernel_cl<out_buffer, out_buffer, in_buffer, int, int, in_buffer, in_buffer, int,
                   in_buffer, in_buffer, int, int, int>
      k("gp_blocked_build", gp_blocked_source);
  return k;
}

inline auto& gp_blocked_finish() {
  static kernel_cl<out_buffer, in_buffer, in_buffer, in_buffer, int, int, int,
                   cl::LocalSpaceArg>
      k("gp_blocked_finish", gp_blocked_source);
  return k;
}

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
