#ifndef CLBAYES_KERNELS_BATCHED_CHOL_HPP
#define CLBAYES_KERNELS_BATCHED_CHOL_HPP

// Batched Cholesky kernels, each composed from the serial or team device
// functions (batched_serial.hpp, batched_team.hpp) for a whole batch in one
// launch. Item b's matrix starts at A + b * bs with strides rs, cs; info[b]
// receives 0 or the LAPACK-style index of the failing pivot.

#include "../opencl/kernel_cl.hpp"
#include "batched_team.hpp"

#include <string>

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {
namespace kernels {

inline const char* chol_batched_serial_source = R"(
/**
 * Serial level, any layout: work item b factors item b where it lies. With
 * the interleaved layout (bs = 1, rs = B) neighbouring work items read
 * neighbouring addresses, so every access is coalesced.
 */
__kernel void chol_batched_serial(__global double* A, __global int* info, int B,
                                  int m, int rs, int cs, int bs, double tol) {
  const int b = get_global_id(0);
  if (b >= B) return;
  info[b] = serial_chol_g(A + (long)b * bs, rs, cs, m, tol);
}
)";

inline const char* chol_batched_staged_source = R"(
/**
 * Serial level, contiguous layout, staged through local memory: the group's
 * ls consecutive items are copied in with coalesced reads (work holds
 * ls * (m * m + 1) doubles; the odd stride spreads the items over the
 * banks), each work item factors its own, and the group writes them back.
 */
__kernel void chol_batched_staged(__global double* A, __global int* info, int B,
                                  int m, double tol, __local double* work) {
  const int lid = get_local_id(0), ls = get_local_size(0);
  const int first = get_group_id(0) * ls;
  const int count = min(ls, B - first);
  const int mm = m * m, ld = mm + 1;
  __global double* a = A + (long)first * mm;
  for (int t = lid; t < count * mm; t += ls) work[(t / mm) * ld + t % mm] = a[t];
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid < count) info[first + lid] = serial_chol_l(work + lid * ld, 1, m, m, tol);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int t = lid; t < count * mm; t += ls) a[t] = work[(t / mm) * ld + t % mm];
}
)";

inline const char* chol_batched_team_source = R"(
/**
 * Team level: work group b factors item b, in local memory (work holds
 * m * m doubles) when use_local != 0, else in place in global memory.
 */
__kernel void chol_batched_team(__global double* A, __global int* info, int m,
                                int rs, int cs, int bs, double tol,
                                __local double* work, int use_local) {
  const int lid = get_local_id(0), ls = get_local_size(0);
  __global double* a = A + (long)get_group_id(0) * bs;
  __local double slot[2];
  int r;
  if (use_local) {
    for (int t = lid; t < m * m; t += ls) work[t] = EL(a, rs, cs, t % m, t / m);
    barrier(CLK_LOCAL_MEM_FENCE);
    r = team_chol_l(work, 1, m, m, tol, slot);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int t = lid; t < m * m; t += ls) EL(a, rs, cs, t % m, t / m) = work[t];
  } else {
    r = team_chol_g(a, rs, cs, m, tol, slot);
  }
  if (lid == 0) info[get_group_id(0)] = r;
}
)";

inline auto& chol_batched_serial() {
  static const std::string src =
      batched_program({batched_instance(batched_serial_source, true), chol_batched_serial_source});
  static kernel_cl<in_out_buffer, out_buffer, int, int, int, int, int, double> k(
      "chol_batched_serial", src.c_str());
  return k;
}

inline auto& chol_batched_staged() {
  static const std::string src =
      batched_program({batched_instance(batched_serial_source, false), chol_batched_staged_source});
  static kernel_cl<in_out_buffer, out_buffer, int, int, double, cl::LocalSpaceArg> k(
      "chol_batched_staged", src.c_str());
  return k;
}

inline auto& chol_batched_team() {
  static const std::string src =
      batched_program({batched_instantiate(batched_team_chol_source), chol_batched_team_source});
  static kernel_cl<in_out_buffer, out_buffer, int, int, int, int, double,
                   cl::LocalSpaceArg, int>
      k("chol_batched_team", src.c_str(), {{"CHOL_PANEL", 16}});
  return k;
}

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
