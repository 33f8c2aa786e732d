#ifndef CLBAYES_KERNELS_CHOLESKY_STEP_HPP
#define CLBAYES_KERNELS_CHOLESKY_STEP_HPP

// One step of the left-looking factorisation of a base of the Cholesky's
// panel (linalg/cholesky_panel.hpp; stan-opencl.txt, section 3.3.1), for
// the ib columns at c of a base that starts at column k, in one launch:
//   update  A(c.., c) -= L(c.., k..c) L(c, k..c)^T    every work group
//   leaf    L_cc and L_cc^{-1}                         group 0
//   solve   L(r, c) = A(r, c) L_cc^{-T}                groups 1.., once
//                                                      group 0 publishes
// One launch where the right-looking recursion spent three (on NVIDIA's
// OpenCL each costs about 5.5 us; the leaves are the serial chain: log
// 2026-11-27-h100-leaf). Groups wait only for group 0, which starts first
// (groups start in index order: the assumption of single-pass scans with
// decoupled look-back) and waits for no one.
// Leaf: symmetric Gaussian elimination without square roots, one barrier
// per column, each item owning a strided set of the columns of one row;
// then each column scaled by 1 / sqrt of its pivot.

#include "../opencl/kernel_cl.hpp"

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {
namespace kernels {

inline const char* cholesky_step_source = R"(
#define IB CHOLESKY_BLOCK
#define CPT ((IB + LEAF_T - 1) / LEAF_T)
// chunks of IB columns in the longest update (inner dimension < STEP_BASE)
#define NCH (STEP_BASE > IB ? (STEP_BASE - 1) / IB : 1)

// Orders this item's global memory operations before and after it for
// the whole device (a grid-wide sync's fence).
void fence_device() {
#if NV_PTX
  asm volatile("membar.gl;" ::: "memory");
#else
  mem_fence(CLK_GLOBAL_MEM_FENCE);
#endif
}

// The word groups 1.. wait on: epoch (c + 1) once group 0 has written
// L_cc^{-1}, -epoch if the leaf found a pivot that is not positive. Group 0's writes
// are ordered before publish() by a barrier.
void publish(__global int* word, int value) {
  fence_device();
  atomic_xchg(word, value);
}

int wait_for(__global int* word, int epoch) {
  int v;
  do {
    v = atomic_or(word, 0);
  } while (v != epoch && v != -epoch);
  fence_device();
  return v;
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
 * Step c of the base at column k of the n x n column-major A, rows c ..
 * rows_end - 1; wc <= IB columns, inner dimension c - k < STEP_BASE. inv
 * (leading dimension ldi) gets L_cc^{-1}, zeros above the diagonal. A
 * pivot that is not positive (or NaN) at column j sets flag[0] = c + j + 1
 * unless set and leaves the step's columns as they were. sync is the word
 * groups 1.. wait on: zero when the factorisation starts, then c + 1 of
 * the last step (each step of a factorisation has its own c).
 * Launch: global (groups IB, LEAF_T), local (IB, LEAF_T): group 0 for the
 * diagonal block, then a group per IB rows from c + wc. Item (i, t) owns
 * the columns cc = t + s LEAF_T of row i of its group's tile.
 */
__kernel __attribute__((reqd_work_group_size(IB, LEAF_T, 1)))
void cholesky_step(__global double* A, int n, int k, int c, int wc, int rows_end,
                   __global double* inv, int ldi, __global int* flag, __global int* sync) {
  __local double T[IB][IB + 1];   // the tile A(r0 + i, c + cc)
  __local double Ra[IB][IB + 1];  // a chunk of L(r0 + i, q); later L_cc^{-1}
  __local double Rb[IB][IB + 1];  // the same chunk of L(c + cc, q)
  __local double rpiv[IB];        // 1 / pivot j, by the item that finished it
  __local int state;              // groups 1..: the sync word as they read it
  __local int bad;  // the leaf's first pivot that is not positive, or b
  const int i = get_local_id(0);
  const int t = get_local_id(1);
  const int g = get_group_id(0);
  const int r0 = g == 0 ? c : c + wc + (g - 1) * IB;
  const int rows = g == 0 ? wc : min(IB, rows_end - r0);
  const int kk = c - k;
  const int epoch = c + 1;

  // Update. Every chunk's loads are issued at once, into registers: the
  // inner dimension is short (below STEP_BASE), and one round trip to
  // global memory costs more than the chunk's FMAs.
  double pa[NCH][CPT], pb[NCH][CPT];
#pragma unroll
  for (int ch = 0; ch < NCH; ++ch)
#pragma unroll
    for (int s = 0; s < CPT; ++s) {
      const int q = ch * IB + t + s * LEAF_T;
      const long at = (long)(k + q) * n;
      pa[ch][s] = q < kk && t + s * LEAF_T < IB && i < rows ? A[at + r0 + i] : 0.0;
      pb[ch][s] = q < kk && t + s * LEAF_T < IB && i < wc ? A[at + c + i] : 0.0;
    }
  for (int s = 0, cc = t; s < CPT && cc < IB; ++s, cc += LEAF_T)
    T[i][cc] = i < rows && cc < wc ? A[(long)(c + cc) * n + r0 + i] : 0.0;
  double acc[CPT];
  for (int s = 0; s < CPT; ++s) acc[s] = 0.0;
#if NV_PTX  // (PoCL takes minutes to build an unrolled loop with a barrier)
#pragma unroll
#endif
  for (int ch = 0; ch < NCH; ++ch) {
    if (ch * IB < kk) {  // uniform
      for (int s = 0, q = t; s < CPT; ++s, q += LEAF_T) {
        if (q < IB) {
          Ra[i][q] = pa[ch][s];
          Rb[i][q] = pb[ch][s];
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int q = 0; q < IB; ++q) {
        const double a = Ra[i][q];
        for (int s = 0; s < CPT; ++s)
          if (t + s * LEAF_T < IB) acc[s] = fma(-a, Rb[t + s * LEAF_T][q], acc[s]);
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
  for (int s = 0, cc = t; s < CPT && cc < IB; ++s, cc += LEAF_T) T[i][cc] += acc[s];

  if (g > 0) {  // solve, once group 0 has L_cc^{-1}
    if (i == 0 && t == 0) state = wait_for(sync, epoch);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (state < 0) return;  // uniform
    // volatile: L1 may hold no line of inv that group 0 wrote after it was read
    for (int s = 0, cc = t; s < CPT && cc < IB; ++s, cc += LEAF_T)
      Ra[i][cc] = ((__global volatile double*)inv)[(long)cc * ldi + i];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = 0, cc = t; s < CPT; ++s, cc += LEAF_T) {
      if (cc < wc && i < rows) {  // L(i, cc) = sum_{q <= cc} T(i, q) inv(cc, q)
        double v = 0.0;
        for (int q = 0; q <= cc; ++q) v = fma(T[i][q], Ra[cc][q], v);
        A[(long)(c + cc) * n + r0 + i] = v;
      }
    }
    return;
  }

  // Leaf (group 0): T's top left wc x wc block. X (in Ra) starts as the
  // identity and takes every row operation of the elimination, so that it
  // ends as L'^{-1} of A = L' D L'^T (L' unit lower): the inverse costs one
  // FMA per item and step, with no steps of its own.
  const int b = wc;
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
      publish(sync, -epoch);
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
      inv[(long)cc * ldi + i] = cc <= i ? Ra[i][cc] / d : 0.0;
    }
  }
  barrier(CLK_GLOBAL_MEM_FENCE);
  if (i == 0 && t == 0) publish(sync, epoch);
}
)";

/** A step of at most CHOLESKY_BLOCK columns, LEAF_T work items per row,
 *  updates of inner dimension below STEP_BASE; NV_PTX: NVIDIA's PTX for
 *  the fences and reciprocals, the update's chunk loop unrolled. */
inline kernel_cl<in_out_buffer, int, int, int, int, int, out_buffer, int, cl::Buffer, cl::Buffer>
    cholesky_step("cholesky_step", cholesky_step_source,
                  {{"CHOLESKY_BLOCK", 32}, {"LEAF_T", 32}, {"STEP_BASE", 128}, {"NV_PTX", 0}});

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
