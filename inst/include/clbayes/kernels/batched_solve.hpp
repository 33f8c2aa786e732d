#ifndef CLBAYES_KERNELS_BATCHED_SOLVE_HPP
#define CLBAYES_KERNELS_BATCHED_SOLVE_HPP

// Batched linear solves A X = B, composed per item exactly as in the
// batched-linalg.txt example: LU (partial pivoting), then the forward and
// the back triangular solve, in one launch. A (m x m per item) is overwritten
// by its LU factors and B (m x r per item) by the solution; info[b] is 0 or
// the index of the first exactly zero pivot of U.

#include "../opencl/kernel_cl.hpp"
#include "batched_team.hpp"

#include <string>

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {
namespace kernels {

inline const char* solve_batched_serial_source = R"(
/** Serial level: work item b solves item b; piv holds m ints per item. */
__kernel void solve_batched_serial(__global double* A, __global double* X,
                                   __global int* piv, __global int* info, int nb,
                                   int m, int r, int ars, int acs, int abs_,
                                   int xrs, int xcs, int xbs) {
  const int b = get_global_id(0);
  if (b >= nb) return;
  __global double* a = A + (long)b * abs_;
  __global double* x = X + (long)b * xbs;
  __global int* p = piv + (long)b * m;
  const int f = serial_lu_piv_g(a, ars, acs, m, p, 1);
  info[b] = f;
  if (f) return;
  serial_laswp_g(x, xrs, xcs, m, r, p, 1);
  serial_trsm_lower_g(a, ars, acs, m, 1, x, xrs, xcs, r);
  serial_trsm_upper_g(a, ars, acs, m, 0, x, xrs, xcs, r);
}
)";

inline const char* solve_batched_team_source = R"(
/**
 * Team level: work group b solves item b. With use_local != 0, A and X are
 * copied into work (m * m + m * r doubles) and the group works there;
 * otherwise in place in global memory. piv holds m ints, rv / ri one double
 * / int per work item.
 */
__kernel void solve_batched_team(__global double* A, __global double* X,
                                 __global int* info, int m, int r, int ars,
                                 int acs, int abs_, int xrs, int xcs, int xbs,
                                 __local double* work, __local int* piv,
                                 __local double* rv, __local int* ri, int use_local) {
  const int lid = get_local_id(0), ls = get_local_size(0);
  __global double* a = A + (long)get_group_id(0) * abs_;
  __global double* x = X + (long)get_group_id(0) * xbs;
  int f;
  if (use_local) {
    __local double* la = work;
    __local double* lx = work + m * m;
    for (int t = lid; t < m * m; t += ls) la[t] = EL(a, ars, acs, t % m, t / m);
    for (int t = lid; t < m * r; t += ls) lx[t] = EL(x, xrs, xcs, t % m, t / m);
    f = team_lu_piv_l(la, 1, m, m, piv, rv, ri);
    if (!f) {
      team_laswp_l(lx, 1, m, m, r, piv);
      team_trsm_lower_l(la, 1, m, m, 1, lx, 1, m, r);
      team_trsm_upper_l(la, 1, m, m, 0, lx, 1, m, r);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int t = lid; t < m * m; t += ls) EL(a, ars, acs, t % m, t / m) = la[t];
    for (int t = lid; t < m * r; t += ls) EL(x, xrs, xcs, t % m, t / m) = lx[t];
  } else {
    f = team_lu_piv_g(a, ars, acs, m, piv, rv, ri);
    if (!f) {
      team_laswp_g(x, xrs, xcs, m, r, piv);
      team_trsm_lower_g(a, ars, acs, m, 1, x, xrs, xcs, r);
      team_trsm_upper_g(a, ars, acs, m, 0, x, xrs, xcs, r);
    }
  }
  if (lid == 0) info[get_group_id(0)] = f;
}
)";

inline auto& solve_batched_serial() {
  static const std::string src =
      batched_program({batched_instance(batched_serial_source, true), solve_batched_serial_source});
  static kernel_cl<in_out_buffer, in_out_buffer, out_buffer, out_buffer, int, int,
                   int, int, int, int, int, int, int>
      k("solve_batched_serial", src.c_str());
  return k;
}

inline auto& solve_batched_team() {
  static const std::string src = batched_program(
      {batched_instantiate(batched_team_lu_source), batched_instantiate(batched_team_blas_source),
       solve_batched_team_source});
  static kernel_cl<in_out_buffer, in_out_buffer, out_buffer, int, int, int, int, int,
                   int, int, int, cl::LocalSpaceArg, cl::LocalSpaceArg,
                   cl::LocalSpaceArg, cl::LocalSpaceArg, int>
      k("solve_batched_team", src.c_str());
  return k;
}

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
