#ifndef CLBAYES_KERNELS_BATCHED_OPS_HPP
#define CLBAYES_KERNELS_BATCHED_OPS_HPP

// One serial- or team-level device function applied to every item of a
// batch, chosen by an op code. This is how the tests (and anyone composing a
// new batched kernel) check each building block on its own, at both levels,
// in both address spaces and with any strides, before trusting it inside a
// fused kernel.
//
// Op codes: 0 chol, 1 lu (no pivoting), 2 lu_piv, 3 trsm_lower, 4 trsm_upper,
// 5 gemm (C = alpha A B + beta C), 6 gemv (r = 1), 7 trsv_lower,
// 8 trsv_upper. A is m x m; B (input) and C (in/out) are m x r with the same
// strides.

#include "../opencl/kernel_cl.hpp"
#include "batched_team.hpp"

#include <string>

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {
namespace kernels {

inline const char* serial_op_source = R"(
/** Serial op on one item; piv has stride 1. Returns the op's info. */
int FN(serial_op)(int op, ASP double* a, int ars, int acs, ASP const double* bi,
                  ASP double* c, int xrs, int xcs, int m, int r, int unit,
                  double alpha, double beta, ASP int* piv) {
  switch (op) {
    case 0: return FN(serial_chol)(a, ars, acs, m, 0.0);
    case 1: return FN(serial_lu)(a, ars, acs, m);
    case 2: return FN(serial_lu_piv)(a, ars, acs, m, piv, 1);
    case 3: FN(serial_trsm_lower)(a, ars, acs, m, unit, c, xrs, xcs, r); return 0;
    case 4: FN(serial_trsm_upper)(a, ars, acs, m, unit, c, xrs, xcs, r); return 0;
    case 5: FN(serial_gemm)(alpha, a, ars, acs, bi, xrs, xcs, beta, c, xrs, xcs, m, r, m);
            return 0;
    case 6: FN(serial_gemv)(alpha, a, ars, acs, bi, xrs, beta, c, xrs, m, m); return 0;
    case 7: FN(serial_trsv_lower)(a, ars, acs, m, unit, c, xrs); return 0;
    case 8: FN(serial_trsv_upper)(a, ars, acs, m, unit, c, xrs); return 0;
  }
  return -1;
}
)";

inline const char* team_op_source = R"(
/** Team op on one item (the whole group calls it). */
int FN(team_op)(int op, ASP double* a, int ars, int acs, ASP const double* bi,
                ASP double* c, int xrs, int xcs, int m, int r, int unit, double alpha,
                double beta, __local int* piv, __local double* rv, __local int* ri,
                __local double* slot) {
  switch (op) {
    case 0: return FN(team_chol)(a, ars, acs, m, 0.0, slot);
    case 1: return FN(team_lu)(a, ars, acs, m);
    case 2: return FN(team_lu_piv)(a, ars, acs, m, piv, rv, ri);
    case 3: FN(team_trsm_lower)(a, ars, acs, m, unit, c, xrs, xcs, r); return 0;
    case 4: FN(team_trsm_upper)(a, ars, acs, m, unit, c, xrs, xcs, r); return 0;
    case 5: FN(team_gemm)(alpha, a, ars, acs, bi, xrs, xcs, beta, c, xrs, xcs, m, r, m);
            return 0;
    case 6: FN(team_gemv)(alpha, a, ars, acs, bi, xrs, beta, c, xrs, m, m); return 0;
    case 7: FN(team_trsv_lower)(a, ars, acs, m, unit, c, xrs); return 0;
    case 8: FN(team_trsv_upper)(a, ars, acs, m, unit, c, xrs); return 0;
  }
  return -1;
}
)";

inline const char* batched_op_serial_source = R"(
/** Work item b applies op to item b in global memory. */
__kernel void batched_op_serial(__global double* A, __global double* Bin,
                                __global double* C, __global int* piv,
                                __global int* info, int nb, int op, int m, int r,
                                int unit, double alpha, double beta, int ars, int acs,
                                int abs_, int xrs, int xcs, int xbs) {
  const int b = get_global_id(0);
  if (b >= nb) return;
  info[b] = serial_op_g(op, A + (long)b * abs_, ars, acs, Bin + (long)b * xbs,
                        C + (long)b * xbs, xrs, xcs, m, r, unit, alpha, beta,
                        piv + (long)b * m);
}
)";

inline const char* batched_op_team_source = R"(
/**
 * Work group b applies op to item b: in local memory (work: m * m + 2 m r
 * doubles, column-major copies) when use_local != 0, else in place.
 */
__kernel void batched_op_team(__global double* A, __global double* Bin,
                              __global double* C, __global int* piv,
                              __global int* info, int op, int m, int r, int unit,
                              double alpha, double beta, int ars, int acs, int abs_,
                              int xrs, int xcs, int xbs, __local double* work,
                              __local int* lpiv, __local double* rv, __local int* ri,
                              int use_local) {
  const int lid = get_local_id(0), ls = get_local_size(0), b = get_group_id(0);
  __local double slot[2];
  __global double* a = A + (long)b * abs_;
  __global double* bi = Bin + (long)b * xbs;
  __global double* c = C + (long)b * xbs;
  int f;
  if (use_local) {
    __local double* la = work;
    __local double* lb = work + m * m;
    __local double* lc = lb + m * r;
    for (int t = lid; t < m * m; t += ls) la[t] = EL(a, ars, acs, t % m, t / m);
    for (int t = lid; t < m * r; t += ls) {
      lb[t] = EL(bi, xrs, xcs, t % m, t / m);
      lc[t] = EL(c, xrs, xcs, t % m, t / m);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    f = team_op_l(op, la, 1, m, lb, lc, 1, m, m, r, unit, alpha, beta, lpiv, rv, ri,
                  slot);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int t = lid; t < m * m; t += ls) EL(a, ars, acs, t % m, t / m) = la[t];
    for (int t = lid; t < m * r; t += ls) EL(c, xrs, xcs, t % m, t / m) = lc[t];
  } else {
    f = team_op_g(op, a, ars, acs, bi, c, xrs, xcs, m, r, unit, alpha, beta, lpiv, rv, ri,
                  slot);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int t = lid; t < m; t += ls) piv[(long)b * m + t] = op == 2 ? lpiv[t] : t;
  if (lid == 0) info[b] = f;
}
)";

inline auto& batched_op_serial() {
  static const std::string src = batched_program(
      {batched_instance(batched_serial_source, true), batched_instance(serial_op_source, true),
       batched_op_serial_source});
  static kernel_cl<in_out_buffer, in_buffer, in_out_buffer, out_buffer, out_buffer, int,
                   int, int, int, int, double, double, int, int, int, int, int, int>
      k("batched_op_serial", src.c_str());
  return k;
}

inline auto& batched_op_team() {
  static const std::string src = batched_program(
      {batched_instantiate(batched_team_chol_source), batched_instantiate(batched_team_lu_source),
       batched_instantiate(batched_team_blas_source), batched_instantiate(team_op_source),
       batched_op_team_source});
  static kernel_cl<in_out_buffer, in_buffer, in_out_buffer, out_buffer, out_buffer, int,
                   int, int, int, double, double, int, int, int, int, int, int,
                   cl::LocalSpaceArg, cl::LocalSpaceArg, cl::LocalSpaceArg,
                   cl::LocalSpaceArg, int>
      k("batched_op_team", src.c_str());
  return k;
}

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
