#ifndef CLBAYES_KERNELS_BATCHED_BLOCKED_CHOL_HPP
#define CLBAYES_KERNELS_BATCHED_BLOCKED_CHOL_HPP

// The two kernels of the blocked, multi-work-group batched Cholesky
// (batched/chol_blocked.hpp): per block column of width w <= CHOL_NB,
//   chol_blocked_panel: factor the diagonal block and solve the panel below,
//                       work groups = row tiles x items;
//   chol_blocked_syrk:  A22 -= L21 L21^T on the lower tiles of the trailing
//                       matrix, work groups = tiles x items.
// This is the right-looking blocked algorithm (stan-opencl.txt, blocked
// Cholesky; batched-linalg.txt for the batch as a launch dimension): with
// few large items, one work group per item leaves most of a GPU idle, so
// each item is spread over many work groups and the batch index is the
// second global dimension.
//
// Item b of A starts at A + b * bs with strides rs, cs (EL). info[b] != 0
// marks an item that failed (or that the caller excluded): later launches
// skip it, so a matrix that is not positive definite never touches another
// item and never receives NaN (its pivot is tested before any sqrt).

#include "../opencl/kernel_cl.hpp"
#include "batched_team.hpp"

#include <string>

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {
namespace kernels {

inline const char* chol_blocked_panel_source = R"(
#ifndef CHOL_NB
#define CHOL_NB 32
#endif

/**
 * Block column j0 .. j0 + w - 1 of item get_group_id(1); work group
 * get_group_id(0) owns rows j0 + w + tile * ls ... of the panel below.
 * Every group of the item factors the diagonal block in local memory (the
 * same computation, so the same L11 in each: cheaper than a launch of its
 * own) and solves its rows, L21 = A21 L11^-T, one row per work item with
 * the row in registers (forward substitution, CHOL_NB unrolled).
 * L11 goes back in place when the item has one group (direct != 0); with
 * several, the other groups may still be reading A11, so L11 goes to
 * D (CHOL_NB^2 doubles per item) and chol_blocked_syrk copies it in place.
 * The upper triangle of the block row is zeroed when zero_upper != 0 (the
 * diagonal block's always). With init != 0 (first
 * block column) info[b] is written (0 or the pivot); otherwise items with
 * info[b] != 0 are skipped and a failing pivot is recorded as j0 + index.
 * After a failure the diagonal block (partially factored, finite) is
 * still written when direct: the GP likelihood reads the finished columns.
 */
__kernel void chol_blocked_panel(__global double* A, __global int* info,
                                 __global double* D, int m, int rs, int cs, int bs,
                                 int j0, int w, double tol, int init, int direct,
                                 int zero_upper) {
  __local double L11[CHOL_NB * CHOL_NB];
  __local double slot[2];
  const int lid = get_local_id(0), ls = get_local_size(0);
  const int tile = get_group_id(0), b = get_group_id(1);
  /* info[b] may be written by group 0 of this launch while another group
     reads it here: either value leads to the same outcome (skip, or fail
     at the same pivot below). */
  if (!init && info[b] != 0) return;
  __global double* a = A + (long)b * bs;
  for (int t = lid; t < w * w; t += ls) {
    const int i = t % w, j = t / w;
    L11[t] = i >= j ? EL(a, rs, cs, j0 + i, j0 + j) : 0.0;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const int r = team_chol_l(L11, 1, w, w, tol, slot);
  if (tile == 0) {
    if (lid == 0 && (init || r)) info[b] = r ? j0 + r : 0;
    if (direct) {
      for (int t = lid; t < w * w; t += ls) EL(a, rs, cs, j0 + t % w, j0 + t / w) = L11[t];
    } else if (!r) {
      __global double* d = D + (long)b * CHOL_NB * CHOL_NB;
      for (int t = lid; t < w * w; t += ls) d[t] = L11[t];
    }
  }
  if (r) return;
  const int i0 = j0 + w + tile * ls, i = i0 + lid;
  if (i < m) {
    double x[CHOL_NB];
#pragma unroll
    for (int c = 0; c < CHOL_NB; ++c)
      if (c < w) x[c] = EL(a, rs, cs, i, j0 + c);
#pragma unroll
    for (int c = 0; c < CHOL_NB; ++c) {
      if (c < w) {
        double s = x[c];
#pragma unroll
        for (int k = 0; k < c; ++k) s -= x[k] * L11[c + k * w];
        x[c] = s / L11[c + c * w];
        EL(a, rs, cs, i, j0 + c) = x[c];
      }
    }
  }
  /* Zero the upper triangle above the panel, w consecutive rows of each
     column at a time (coalesced for column-major items). */
  const int cols = zero_upper ? min(ls, m - i0) : 0;
  for (int t = lid; t < w * cols; t += ls) EL(a, rs, cs, j0 + t % w, i0 + t / w) = 0.0;
}
)";

inline const char* chol_blocked_syrk_source = R"(
#ifndef SYRK_TILE
#define SYRK_TILE 64
#endif
#ifndef SYRK_WPT
#define SYRK_WPT 4
#endif
#ifndef SYRK_KC
#define SYRK_KC 16
#endif
#define SYRK_TS (SYRK_TILE / SYRK_WPT)

/**
 * A22 -= L21 L21^T for block column j0 .. j0 + w - 1 of item
 * get_group_id(1): A22 starts at n0 = j0 + w, and work group t of
 * dimension 0 updates lower tile t (row-major numbering of the tiles
 * ti >= tj) of SYRK_TILE^2 entries, SYRK_WPT^2 of them per work item
 * (register blocking; the work items of a row of threads take rows tx,
 * tx + TS, ... so that reads and writes are coalesced). The w columns of
 * L21 stream through local memory SYRK_KC at a time. Group 0 also copies
 * the block column's L11 from D into place when copy_diag != 0.
 */
__kernel void chol_blocked_syrk(__global double* A, __global const int* info,
                                __global const double* D, int m, int rs, int cs, int bs,
                                int j0, int w, int copy_diag) {
  __local double La[SYRK_KC * SYRK_TILE];
  __local double Lb[SYRK_KC * SYRK_TILE];
  const int b = get_group_id(1);
  if (info[b] != 0) return;
  const int lid = get_local_id(0), t = get_group_id(0);
  __global double* a = A + (long)b * bs;
  if (t == 0 && copy_diag) {
    __global const double* d = D + (long)b * CHOL_NB * CHOL_NB;
    for (int e = lid; e < w * w; e += SYRK_TS * SYRK_TS)
      EL(a, rs, cs, j0 + e % w, j0 + e / w) = d[e];
  }
  int ti = (int)((sqrt(8.0 * t + 1.0) - 1.0) * 0.5);
  while ((ti + 1) * (ti + 2) / 2 <= t) ++ti;
  while (ti * (ti + 1) / 2 > t) --ti;
  const int tj = t - ti * (ti + 1) / 2;
  const int n0 = j0 + w;
  const int r0 = n0 + ti * SYRK_TILE, c0 = n0 + tj * SYRK_TILE;
  const int tx = lid % SYRK_TS, ty = lid / SYRK_TS;
  double acc[SYRK_WPT][SYRK_WPT];
#pragma unroll
  for (int p = 0; p < SYRK_WPT; ++p)
#pragma unroll
    for (int q = 0; q < SYRK_WPT; ++q) acc[p][q] = 0.0;
  for (int k0 = 0; k0 < w; k0 += SYRK_KC) {
    for (int e = lid; e < SYRK_KC * SYRK_TILE; e += SYRK_TS * SYRK_TS) {
      const int i = e % SYRK_TILE, k = k0 + e / SYRK_TILE;
      La[e] = k < w && r0 + i < m ? EL(a, rs, cs, r0 + i, j0 + k) : 0.0;
      Lb[e] = k < w && c0 + i < m ? EL(a, rs, cs, c0 + i, j0 + k) : 0.0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int k = 0; k < SYRK_KC; ++k) {
      double x[SYRK_WPT], y[SYRK_WPT];
#pragma unroll
      for (int p = 0; p < SYRK_WPT; ++p) x[p] = La[k * SYRK_TILE + tx + p * SYRK_TS];
#pragma unroll
      for (int q = 0; q < SYRK_WPT; ++q) y[q] = Lb[k * SYRK_TILE + ty + q * SYRK_TS];
#pragma unroll
      for (int p = 0; p < SYRK_WPT; ++p)
#pragma unroll
        for (int q = 0; q < SYRK_WPT; ++q) acc[p][q] = fma(x[p], y[q], acc[p][q]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
#pragma unroll
  for (int q = 0; q < SYRK_WPT; ++q) {
    const int j = c0 + ty + q * SYRK_TS;
#pragma unroll
    for (int p = 0; p < SYRK_WPT; ++p) {
      const int i = r0 + tx + p * SYRK_TS;
      if (i < m && j <= i) EL(a, rs, cs, i, j) -= acc[p][q];
    }
  }
}
)";

inline auto& chol_blocked_panel() {
  static const std::string src = batched_program(
      {batched_instance(batched_team_chol_source, false), chol_blocked_panel_source});
  static kernel_cl<in_out_buffer, in_out_buffer, in_out_buffer, int, int, int, int, int,
                   int, double, int, int, int>
      k("chol_blocked_panel", src.c_str(),
        {{"CHOL_NB", 32}, {"CHOL_PANEL", 16}});
  return k;
}

inline auto& chol_blocked_syrk() {
  static const std::string src =
      batched_program({"#ifndef CHOL_NB\n#define CHOL_NB 32\n#endif\n", chol_blocked_syrk_source});
  static kernel_cl<in_out_buffer, in_buffer, in_buffer, int, int, int, int, int, int, int>
      k("chol_blocked_syrk", src.c_str(),
        {{"CHOL_NB", 32}, {"SYRK_TILE", 64}, {"SYRK_WPT", 4}, {"SYRK_KC", 16}});
  return k;
}

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
