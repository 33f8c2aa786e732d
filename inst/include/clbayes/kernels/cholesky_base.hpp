#ifndef CLBAYES_KERNELS_CHOLESKY_BASE_HPP
#define CLBAYES_KERNELS_CHOLESKY_BASE_HPP

// A base of the Cholesky's panel (linalg/cholesky_panel.hpp; stan-opencl.txt,
// section 3.3.1): bw columns at k, factored left-looking in steps of IB
// columns by one launch. Group g owns the IB rows at k + g IB; step s (the
// columns c = k + s IB) is, for the groups g >= s:
//   update  A(r, c) -= L(r, k..c) L(c, k..c)^T   g > s: once group s has
//                                                 solved its rows; g = s:
//                                                 summed as it solved them
//   leaf    L_cc and L_cc^{-1}                    group s, then publishes
//   solve   L(r, c) = A(r, c) L_cc^{-T}           g > s
// so that only group s's last solve, its leaf and the waits are on the
// chain of steps (before, one launch per step with its update on the chain:
// 1.27x the kernel time at n = 8192; RESULTS.md, "Dense linear algebra defaults"). Groups
// wait only for groups of lower index, which start first (the assumption
// of single-pass scans with decoupled look-back).
// Leaf: symmetric Gaussian elimination without square roots, one barrier
// per column, each item owning a strided set of the columns of one row;
// then each column scaled by 1 / sqrt of its pivot. With MMA the update
// and dacc run on the FP64 tensor cores, fast enough to hide under the
// leaves of bases of 512 columns (RESULTS.md, "Dense linear algebra defaults").

#include "../opencl/kernel_cl.hpp"

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {
namespace kernels {

inline const char* cholesky_base_source = R"(
#define IB CHOLESKY_BLOCK
#define CPT ((IB + LEAF_T - 1) / LEAF_T)
#if MMA  // IB = LEAF_T = 32: one warp per t; c += a b^T, m16n8k8 (PTX, sm_90)
#define MMA_16x8x8(c, a, b)                                                        \
  asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 "                         \
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"            \
      : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])                              \
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]))
#define DACC 4
#else
#define DACC CPT
#endif

// Orders this item's global memory operations before and after it for
// the whole device (a grid-wide sync's fence).
void fence_device() {
#if NV_PTX
  asm volatile("membar.gl;" ::: "memory");
#else
  mem_fence(CLK_GLOBAL_MEM_FENCE);
#endif
}

// The word groups wait on, for the step at column c: 2 c + 1 once the leaf
// group has solved its rows for the steps before, 2 c + 2 once it has
// written L_cc and L_cc^{-1}, -(2 c + 2) if the leaf found a pivot that is
// not positive. Each is published after the one before it (the leaf group
// solves once it sees it) and after its writes (a barrier orders them), so
// the word only grows through a factorisation.
void publish(__global int* word, int value) {
  fence_device();
  atomic_xchg(word, value);
}

// The whole group waits for the word to reach `value`; false once a leaf
// has failed (state: the group's copy of the word).
bool group_wait(__global int* word, int value, __local int* state) {
  if (get_local_id(0) == 0 && get_local_id(1) == 0) {
    int v;
    do v = atomic_or(word, 0);
    while (v < value && v >= 0);
    fence_device();
    *state = v;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  return *state >= 0;
}

// 1 / v. On NVIDIA the hardware's coarse estimate and two Newton steps,
// each doubling its correct bits: the leaf divides once per column on its
// serial chain, where IEEE division is a long sequence. (H100: the same
// residuals as with division, 8.9e-16 / 7.8e-16 at n = 8192 / 16384.)
double recip(double v) {
#if NV_PTX
  double r;
  asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(v));
  r = fma(r, fma(-v, r, 1.0), r);
  return fma(r, fma(-v, r, 1.0), r);
#else
  return 1.0 / v;
#endif
}

/**
 * The base of bw columns at k of the n x n column-major A, rows k ..
 * rows_end - 1 (a ragged last step ends at rows_end). Column block s of
 * inv (leading dimension ldi) gets step s's L_cc^{-1}, zeros above the
 * diagonal. A pivot that is not positive (or NaN) at column j sets flag[0]
 * = j + 1 unless set, and the groups waiting stop. sync: the word groups
 * wait on, zero when the factorisation starts. Launch: global (IB *
 * groups, LEAF_T), local (IB, LEAF_T), a group per IB rows from k. Item
 * (i, t) owns the columns cc = t + s LEAF_T of row i of its group's tile.
 */
__kernel __attribute__((reqd_work_group_size(IB, LEAF_T, 1)))
void cholesky_base(__global double* A, int n, int k, int bw, int rows_end,
                   __global double* inv, int ldi, __global int* flag, __global int* sync) {
  __local double T[IB][IB + 1];   // the tile A(r0 + i, c + cc)
  __local double Ra[IB][IB + 1];  // the update's partial sums (MMA); L_cc^{-1}
  __local double Rb[IB][IB + 1];  // the same; the solved tile L(r0 + i, c + cc)
  __local double rpiv[IB];        // 1 / pivot j, by the item that finished it
  __local int state;              // group_wait's
  __local int bad;  // the leaf's first pivot that is not positive, or b
  const int i = get_local_id(0);
  const int t = get_local_id(1);
  const int g = get_group_id(0);
  const int r0 = k + g * IB;
  const int rows = min(IB, rows_end - r0);
  const int steps_all = (bw + IB - 1) / IB;
  const int steps = min(g + 1, steps_all);
  // rows that other groups write in this launch: past L1 (volatile)
  __global volatile double* Av = (__global volatile double*)A;
#if MMA
  // fragment f = t % 8 of a 32 x 32 tile: rows ra, ra + 8, columns rc,
  // rc + 1; rows rb of the right operand
  const int lg = i >> 2, lt = i & 3, ra = 16 * ((t & 7) >> 2) + lg;
  const int rb = 8 * (t & 3) + lg, rc = 8 * (t & 3) + 2 * lt;
#endif
  // this group's diagonal tile's update, a piece per solve: -dacc[s] at
  // (i, t + s LEAF_T); with MMA +dacc[h] at fragment t's h-th place (t < 8)
  double dacc[DACC];
  for (int s = 0; s < DACC; ++s) dacc[s] = 0.0;
  for (int st = 0; st < steps; ++st) {
    const int c = k + st * IB;
    const int wc = min(IB, k + bw - c);
    const int kk = c - k;
    if (g == st) {  // the leaf's update is dacc: its rows are this group's
      if (i == 0 && t == 0 && st > 0) publish(sync, 2 * c + 1);
#if MMA
      T[i][t] = i < wc && t < wc ? A[(long)(c + t) * n + c + i] : 0.0;
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int h = 0; h < 4 && t < 8; ++h) T[ra + 8 * (h >> 1)][rc + (h & 1)] -= dacc[h];
      barrier(CLK_LOCAL_MEM_FENCE);
#else
      for (int s = 0, cc = t; s < CPT && cc < IB; ++s, cc += LEAF_T)
        T[i][cc] = i < wc && cc < wc ? A[(long)(c + cc) * n + c + i] + dacc[s] : 0.0;
#endif
      break;
    }
    // Update, once group st has solved its rows (word 2 c + 1).
    if (kk > 0 && !group_wait(sync, 2 * c + 1, &state)) return;
    for (int s = 0, cc = t; s < CPT && cc < IB; ++s, cc += LEAF_T)
      T[i][cc] = i < rows && cc < wc ? A[(long)(c + cc) * n + r0 + i] : 0.0;
#if MMA
    // On the FP64 tensor cores: warp t holds fragment f = t % 8 of the tile
    // (rows ra, ra + 8 of this group's, columns rb of the step's) over the
    // depths 8 (t / 8) + 32 m, its operands read straight from global
    // memory; the four quarters of the depth are summed in Ra and Rb.
    {
      const int qt = t >> 3;
      double F[4] = {0.0, 0.0, 0.0, 0.0}, a[4], b[2];
      for (int q = 8 * qt + 2 * lt; q < kk; q += 32) {
        const long d = (long)(k + q) * n;
        for (int h = 0; h < 4; ++h)  // rows ra, ra + 8; depths q, q + 1
          a[h] = ra + 8 * (h & 1) < rows ? A[d + (h >> 1) * n + r0 + ra + 8 * (h & 1)] : 0.0;
        for (int h = 0; h < 2; ++h) b[h] = rb < wc ? Av[d + h * n + c + rb] : 0.0;
        MMA_16x8x8(F, a, b);
      }
      __local double(*P)[IB + 1] = qt & 1 ? Rb : Ra;
      for (int h = 0; h < 4 && qt < 2; ++h) P[ra + 8 * (h >> 1)][rc + (h & 1)] = F[h];
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int h = 0; h < 4 && qt >= 2; ++h) P[ra + 8 * (h >> 1)][rc + (h & 1)] += F[h];
      barrier(CLK_LOCAL_MEM_FENCE);
      T[i][t] -= Ra[i][t] + Rb[i][t];
    }
#else
    double acc[CPT];  // one FMA chain per item, operands from global memory
    for (int s = 0; s < CPT; ++s) acc[s] = 0.0;
#if NV_PTX  // loads ahead of their FMAs (FMA path, 8192: 1.01x the chunked update, 1.04x without)
#pragma unroll 8
#endif
    for (int q = 0; q < kk; ++q) {
      const long at = (long)(k + q) * n;
      const double a = i < rows ? A[at + r0 + i] : 0.0;
      for (int s = 0, cc = t; s < CPT && cc < wc; ++s, cc += LEAF_T)
        acc[s] = fma(-a, Av[at + c + cc], acc[s]);
    }
    for (int s = 0, cc = t; s < CPT && cc < IB; ++s, cc += LEAF_T) T[i][cc] += acc[s];
#endif
    // Solve with step st's L_cc^{-1}, once group st has it (word 2 c + 2);
    // the solved tile (in Rb) also updates dacc when this group's diagonal
    // tile is in the base.
    if (!group_wait(sync, 2 * c + 2, &state)) return;
    for (int s = 0, cc = t; s < CPT && cc < IB; ++s, cc += LEAF_T)
      Ra[i][cc] = ((__global volatile double*)inv)[(long)(st * IB + cc) * ldi + i];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = 0, cc = t; s < CPT && cc < IB; ++s, cc += LEAF_T) {
      double v = 0.0;  // L(i, cc) = sum_{q <= cc} T(i, q) inv(cc, q)
      for (int q = 0; q <= cc && cc < wc; ++q) v = fma(T[i][q], Ra[cc][q], v);
      Rb[i][cc] = v;
      if (cc < wc && i < rows) A[(long)(c + cc) * n + r0 + i] = v;
    }
    // the next step's update reads these rows, group g's word follows
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
#if MMA
    for (int q = 2 * lt; q < IB && g < steps_all && t < 8; q += 8) {
      const double a[4] = {Rb[ra][q], Rb[ra + 8][q], Rb[ra][q + 1], Rb[ra + 8][q + 1]};
      const double b[2] = {Rb[rb][q], Rb[rb][q + 1]};
      MMA_16x8x8(dacc, a, b);
    }
#else
    for (int q = 0; q < IB && g < steps_all; ++q)
      for (int s = 0; s < CPT; ++s)
        if (t + s * LEAF_T < IB) dacc[s] = fma(-Rb[i][q], Rb[t + s * LEAF_T][q], dacc[s]);
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (g >= steps_all) return;
  // Leaf (group g, step g): T's top left b x b block. X (in Ra) starts as
  // the identity and takes every row operation of the elimination, so that
  // it ends as L'^{-1} of A = L' D L'^T (L' unit lower): the inverse costs
  // one FMA per item and step, with no steps of its own.
  const int c = r0;
  const int b = min(IB, k + bw - c);
  for (int s = 0, cc = t; s < CPT && cc < IB; ++s, cc += LEAF_T)
    Ra[i][cc] = cc == i && i < b ? 1.0 : 0.0;
  // The item that finishes pivot j checks it and takes its reciprocal, one
  // FP64 division per step instead of one per item; the first pivot that
  // is not positive (or NaN) is kept in `bad` and acted on after the
  // loop, off the chain of steps (what follows it is discarded).
  if (i == 0 && t == 0) {
    bad = T[0][0] > 0.0 ? b : 0;
    rpiv[0] = recip(T[0][0]);
  }
  for (int j = 0; j < b; ++j) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (i > j && i < b) {
      const double f = T[i][j] * rpiv[j];
      for (int s = 0, cc = t; s < CPT; ++s, cc += LEAF_T) {
        if (cc > j && cc <= i) {
          const double v = fma(-f, T[cc][j], T[i][cc]);
          T[i][cc] = v;
          if (cc == i && cc == j + 1) {
            rpiv[cc] = recip(v);
            if (!(v > 0.0)) atomic_min(&bad, cc);
          }
        } else if (cc <= j) {  // row j of X is final: rows below take f times it
          Ra[i][cc] = fma(-f, Ra[j][cc], Ra[i][cc]);
        }
      }
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (bad < b) {  // uniform
    if (i == 0 && t == 0) {
      atomic_cmpxchg(flag, 0, c + bad + 1);
      publish(sync, -(2 * c + 2));
    }
    return;
  }
  // L = L' D^{1/2}: T[i][cc] / sqrt(pivot cc), the diagonal sqrt(pivot);
  // L^{-1} = D^{-1/2} L'^{-1}: row i of X / sqrt(pivot i).
  for (int s = 0, cc = t; s < CPT; ++s, cc += LEAF_T) {
    if (cc < b && i < b) {
      const double d = sqrt(T[i][i]);
      const double l = cc == i ? d : cc < i ? T[i][cc] / sqrt(T[cc][cc]) : 0.0;
      A[(long)(c + cc) * n + c + i] = l;
      inv[(long)(g * IB + cc) * ldi + i] = cc <= i ? Ra[i][cc] / d : 0.0;
    }
  }
  barrier(CLK_GLOBAL_MEM_FENCE);
  if (i == 0 && t == 0) publish(sync, 2 * c + 2);
}
)";

/** Steps of at most CHOLESKY_BLOCK columns, LEAF_T work items per row;
 *  NV_PTX: NVIDIA's PTX for the fences and reciprocals; MMA: the update
 *  and dacc on the FP64 tensor cores (compute capability 9.0). */
inline kernel_cl<in_out_buffer, int, int, int, int, out_buffer, int, cl::Buffer, cl::Buffer>
    cholesky_base("cholesky_base", cholesky_base_source,
                  {{"CHOLESKY_BLOCK", 32}, {"LEAF_T", 32}, {"NV_PTX", 0}, {"MMA", 0}});

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
