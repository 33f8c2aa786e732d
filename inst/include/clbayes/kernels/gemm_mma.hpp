#ifndef CLBAYES_KERNELS_GEMM_MMA_HPP
#define CLBAYES_KERNELS_GEMM_MMA_HPP

// The GEMM on the FP64 tensor cores (linalg::gemm where the settings ask
// for them): same arguments and semantics as the kernels of
// kernels/gemm.hpp and kernels/gemm_db.hpp (views, lower-only C, batches,
// split-k, PERSISTENT), built around the two limits of NVIDIA's OpenCL on
// sm_90: 48 KB of local memory per group and 8 warps per unit at the
// registers a 64 x 32 warp tile needs.
//   - STAGES local buffers of op(A) and op(B) tiles filled by cp.async
//     (global -> local without registers), STAGES - 1 tiles in flight
//     while one is multiplied: one barrier per k-step, and the loads of
//     step s + 2 overlap the products of steps s and s + 1. Three stages
//     of 128 x 128 x 8 tiles fill the 48 KB exactly, so the tiles are not
//     padded: ...
//   - ... each tile is stored in the layout of its operand in global memory
//     (contiguous along the rows of C or along k), with an XOR swizzle of
//     16-byte pairs that keeps both the 16-byte copies and the fragment
//     reads of a half-warp free of bank conflicts;
//   - the products are mma.sync.m16n8k8 (PTX); the 8 warps of a group sit
//     in a 2 x 4 grid over its TM x TN tile of C, MT x NTL blocks of 16 x 8
//     each (fragment layouts of the PTX ISA: lane = 4 lg + lt).
// Tiles at the edges of op(A) and op(B), under a triangular view or
// misaligned for 16-byte copies are filled element by element (8-byte
// copies, zero-filled outside). Without PTX (ASYNC = 0, any other device)
// the copies are plain loads and the products plain FMAs over the same
// local layouts: slow, for testing the layouts and the pipeline on PoCL.
// Options: TM, TN (multiples of 32), TK (8 or 16), STAGES (>= 2), TRANS_A,
// TRANS_B, PERSISTENT, ASYNC; 256 work items as (TM / WPTM) x (TN / WPTN).

#include "../opencl/kernel_cl.hpp"
#include "gemm.hpp"

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {
namespace kernels {

inline const char* gemm_mma_source = R"(
#define NT 256
#define MT (TM / 32)   /* 16-row blocks per warp */
#define NTL (TN / 32)  /* 8-column blocks per warp */

#define A_LOWER 1
#define A_UPPER 2
#define B_LOWER 4
#define B_UPPER 8
#define C_LOWER_ONLY 16

/* Local index of element (o, k) of a TO x TK tile, o along the rows of C
   (op(A)) or its columns (op(B)). Contiguous along o ("o-runs": rows of TO
   per k) or along k (rows of TK per o), as the operand is in global memory;
   the XOR moves 16-byte pairs only. */
int at_o_runs(int o, int k, int to) { return k * to + (o ^ ((k & 3) << 2)); }
int at_k_runs(int o, int k) {
#if TK == 8
  return o * TK + (k ^ (((o >> 1) & 1) << 2));
#else
  return o * TK + (k ^ ((o & 3) << 2));
#endif
}

#if TRANS_A  /* op(A)(i, k) = A[k + i lda]: runs along k */
#define A_AT(o, k) at_k_runs(o, k)
#define A_O_RUNS 0
#else
#define A_AT(o, k) at_o_runs(o, k, TM)
#define A_O_RUNS 1
#endif
#if TRANS_B  /* op(B)(k, j) = B[j + k ldb]: runs along j */
#define B_AT(o, k) at_o_runs(o, k, TN)
#define B_O_RUNS 1
#else
#define B_AT(o, k) at_k_runs(o, k)
#define B_O_RUNS 0
#endif

#if ASYNC
void copy16(__local double* dst, __global const double* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;"
               :: "r"((uint)(ulong)dst), "l"(src) : "memory");
}
/* bytes = 0: no read, the destination is zeroed. */
void copy8(__local double* dst, __global const double* src, int bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;"
               :: "r"((uint)(ulong)dst), "l"(src), "r"(bytes) : "memory");
}
void commit_copies(void) { asm volatile("cp.async.commit_group;" ::: "memory"); }
/* Until at most STAGES - 2 groups of copies of this work item are pending. */
void wait_copies(void) {
#if STAGES == 2
  asm volatile("cp.async.wait_group 0;" ::: "memory");
#elif STAGES == 3
  asm volatile("cp.async.wait_group 1;" ::: "memory");
#else
  asm volatile("cp.async.wait_group 2;" ::: "memory");
#endif
}
#else
void copy16(__local double* dst, __global const double* src) {
  dst[0] = src[0];
  dst[1] = src[1];
}
void copy8(__local double* dst, __global const double* src, int bytes) {
  dst[0] = bytes ? src[0] : 0.0;
}
void commit_copies(void) {}
void wait_copies(void) {}
#endif

/* One stage: the TO x TK tile of an operand from depth t. Element (o, k) is
   X[base + o * so + k * sk] with the tile's origin folded into base; o_hi
   and k_hi bound it (zero beyond), and the view zeroes k > o (lo_view) or
   k < o (up_view), o and k global. o_runs: so == 1, else sk == 1 (a
   compile-time constant at each call). fast: whole tile inside, no view,
   16-byte aligned pairs. */
void fill(__local double* tile, __global const double* X, long base, int ld, int o0,
          int o_hi, int t, int k_hi, int lo_view, int up_view, int fast, int o_runs,
          int to, int tid) {
  const long so = o_runs ? 1 : ld, sk = o_runs ? ld : 1;
  if (fast) {
    for (int c = tid; c < to * TK / 2; c += NT) {
      int o, k;
      if (o_runs) { o = 2 * (c % (to / 2)); k = c / (to / 2); }
      else { k = 2 * (c % (TK / 2)); o = c / (TK / 2); }
      const int at = o_runs ? at_o_runs(o, k, to) : at_k_runs(o, k);
      copy16(tile + at, X + base + o * so + (t + k) * sk);
    }
  } else {
    for (int e = tid; e < to * TK; e += NT) {
      int o, k;
      if (o_runs) { o = e % to; k = e / to; }
      else { k = e % TK; o = e / TK; }
      const int go = o0 + o, gk = t + k;
      const int ok = go < o_hi && gk < k_hi && !(lo_view && gk > go) && !(up_view && gk < go);
      const int at = o_runs ? at_o_runs(o, k, to) : at_k_runs(o, k);
      copy8(tile + at, ok ? X + base + o * so + (t + k) * sk : X, ok ? 8 : 0);
    }
  }
}

/**
 * C = alpha * op(A) * op(B) + beta * C: arguments and launch as the kernel
 * `gemm` of kernels/gemm.hpp, work groups of (TM / WPTM) x (TN / WPTN) =
 * 256 items.
 */
__kernel __attribute__((reqd_work_group_size(NT, 1, 1)))
void gemm_mma(__global double* C, __global const double* A, __global const double* B,
              int m, int n, int k, long a_off, int lda, long a_stride, long b_off, int ldb,
              long b_stride, long c_off, int ldc, long c_stride, double alpha, double beta,
              int views, int splits) {
  __local double a_tile[STAGES * TM * TK] __attribute__((aligned(16)));
  __local double b_tile[STAGES * TN * TK] __attribute__((aligned(16)));
  const int tid = get_local_id(0);
  const int z = get_global_id(2);
  const int item = z / splits;
  const int split = z % splits;
  const int lane = tid % 32, lg = lane >> 2, lt = lane & 3;
  const int wm0 = (tid / 32) % 2 * (TM / 2), wn0 = (tid / 64) * (TN / 4);
#if PERSISTENT
  /* Fewer groups than tiles: each group takes every G-th tile, in the order
     of the one-group-per-tile launch. */
  const int tiles_m = (m + TM - 1) / TM;
  const int tiles = tiles_m * ((n + TN - 1) / TN);
  for (int tile = get_group_id(0) + get_num_groups(0) * get_group_id(1); tile < tiles;
       tile += get_num_groups(0) * get_num_groups(1)) {
  const int i0 = (tile % tiles_m) * TM;
  const int j0 = (tile / tiles_m) * TN;
  if ((views & C_LOWER_ONLY) && i0 + TM - 1 < j0) continue;  /* uniform */
  barrier(CLK_LOCAL_MEM_FENCE);  /* the previous tile's last stage is read */
#else
  {
  const int i0 = get_group_id(0) * TM;
  const int j0 = get_group_id(1) * TN;
  if ((views & C_LOWER_ONLY) && i0 + TM - 1 < j0) return;  /* uniform */
#endif

  int k_lo = 0;
  int k_hi = k;
  if (views & A_LOWER) k_hi = min(k_hi, i0 + TM);
  if (views & A_UPPER) k_lo = max(k_lo, i0);
  if (views & B_LOWER) k_lo = max(k_lo, j0);
  if (views & B_UPPER) k_hi = min(k_hi, j0 + TN);
  if (splits > 1) {
    const int chunk = (((k + splits - 1) / splits + TK - 1) / TK) * TK;
    k_lo = max(k_lo, split * chunk);
    k_hi = min(k_hi, (split + 1) * chunk);
  }
  /* The tiles' origins folded into the bases. */
  const long a_base = a_off + item * a_stride + (TRANS_A ? (long)i0 * lda : i0);
  const long b_base = b_off + item * b_stride + (TRANS_B ? j0 : (long)j0 * ldb);
  const int a_lo = (views & A_LOWER) != 0, a_up = (views & A_UPPER) != 0;
  const int b_lo = (views & B_UPPER) != 0, b_up = (views & B_LOWER) != 0;
  /* Uniform: 16-byte copies need even offsets and leading dimensions. */
  const int a_fast_tile = !a_lo && !a_up && i0 + TM <= m && a_base % 2 == 0 && lda % 2 == 0;
  const int b_fast_tile = !b_lo && !b_up && j0 + TN <= n && b_base % 2 == 0 && ldb % 2 == 0;
  const int steps = k_lo < k_hi ? (k_hi - k_lo + TK - 1) / TK : 0;

  double acc[MT][NTL][4];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int nt = 0; nt < NTL; ++nt)
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[mt][nt][c] = 0.0;

  /* Prologue: stages 0 .. STAGES - 2 in flight. Every item commits one
     group per stage, empty or not, so that the counts agree. */
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < steps) {
      const int t = k_lo + s * TK;
      const int fast = t % 2 == 0 && t + TK <= k_hi;
      fill(a_tile + s * TM * TK, A, a_base, lda, i0, m, t, k_hi, a_lo, a_up,
           fast && a_fast_tile, A_O_RUNS, TM, tid);
      fill(b_tile + s * TN * TK, B, b_base, ldb, j0, n, t, k_hi, b_lo, b_up,
           fast && b_fast_tile, B_O_RUNS, TN, tid);
    }
    commit_copies();
  }
  for (int step = 0; step < steps; ++step) {
    wait_copies();                 /* this item's copies of this step ... */
    barrier(CLK_LOCAL_MEM_FENCE);  /* ... everyone's; the oldest stage is free */
    const int ahead = step + STAGES - 1;
    if (ahead < steps) {
      const int t = k_lo + ahead * TK, s = ahead % STAGES;
      const int fast = t % 2 == 0 && t + TK <= k_hi;
      fill(a_tile + s * TM * TK, A, a_base, lda, i0, m, t, k_hi, a_lo, a_up,
           fast && a_fast_tile, A_O_RUNS, TM, tid);
      fill(b_tile + s * TN * TK, B, b_base, ldb, j0, n, t, k_hi, b_lo, b_up,
           fast && b_fast_tile, B_O_RUNS, TN, tid);
    }
    commit_copies();
    __local const double* as = a_tile + (step % STAGES) * TM * TK;
    __local const double* bs = b_tile + (step % STAGES) * TN * TK;
#pragma unroll
    for (int k8 = 0; k8 < TK; k8 += 8) {
#if ASYNC
      double af[MT][4];
      double bf[NTL][2];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int i = 0; i < 4; ++i)  /* A(row lg + 8 (i % 2), col lt + 4 (i / 2)) */
          af[mt][i] = as[A_AT(wm0 + mt * 16 + lg + 8 * (i % 2), k8 + lt + 4 * (i / 2))];
#pragma unroll
      for (int nt = 0; nt < NTL; ++nt)
#pragma unroll
        for (int i = 0; i < 2; ++i)  /* B(row lt + 4 i, col lg) */
          bf[nt][i] = bs[B_AT(wn0 + nt * 8 + lg, k8 + lt + 4 * i)];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < NTL; ++nt)
          asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 "
              "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
              : "+d"(acc[mt][nt][0]), "+d"(acc[mt][nt][1]), "+d"(acc[mt][nt][2]),
                "+d"(acc[mt][nt][3])
              : "d"(af[mt][0]), "d"(af[mt][1]), "d"(af[mt][2]), "d"(af[mt][3]),
                "d"(bf[nt][0]), "d"(bf[nt][1]));
#else
      /* The accumulator elements this lane holds, C(row lg + 8 (c / 2),
         col 2 lt + c % 2) of each block, as plain dot products. */
      for (int mt = 0; mt < MT; ++mt)
        for (int nt = 0; nt < NTL; ++nt)
          for (int c = 0; c < 4; ++c) {
            const int r = wm0 + mt * 16 + lg + 8 * (c / 2), q = wn0 + nt * 8 + 2 * lt + c % 2;
            double v = acc[mt][nt][c];
            for (int kk = 0; kk < 8; ++kk)
              v = fma(as[A_AT(r, k8 + kk)], bs[B_AT(q, k8 + kk)], v);
            acc[mt][nt][c] = v;
          }
#endif
    }
  }

  const long c_base = c_off + z * c_stride;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int nt = 0; nt < NTL; ++nt)
#pragma unroll
      for (int c = 0; c < 4; ++c) {  /* C(row lg + 8 (c / 2), col 2 lt + c % 2) */
        const int i = i0 + wm0 + mt * 16 + lg + 8 * (c / 2);
        const int j = j0 + wn0 + nt * 8 + 2 * lt + (c % 2);
        if (i < m && j < n && !((views & C_LOWER_ONLY) && i < j)) {
          const long at = c_base + (long)j * ldc + i;
          double v = alpha * acc[mt][nt][c];
          if (beta != 0.0) v += beta * C[at];
          C[at] = v;
        }
      }
  }  /* tile */
}
)";

/** Build options of a tensor-core GEMM kernel object: the tiles are the
 *  first build's (linalg::gemm sets them from its gemm_settings before
 *  every launch). */
inline std::map<std::string, int> gemm_mma_options(int trans_a, int trans_b, int persistent) {
  return {{"TM", 128}, {"TN", 128}, {"TK", 8}, {"STAGES", 3}, {"TRANS_A", trans_a},
          {"TRANS_B", trans_b}, {"PERSISTENT", persistent}, {"ASYNC", 0}};
}

/** One kernel object per tile class and op() pair, so that the Cholesky's
 *  alternating launches keep their built variants. */
enum class gemm_mma_class { large, persistent, small, narrow };

inline gemm_kernel& gemm_mma_kernel(gemm_mma_class c, bool ta, bool tb) {
  static gemm_kernel objects[4][2][2] = {
#define CLBAYES_MMA_CLASS(p)                                                            \
  {{gemm_kernel("gemm_mma", gemm_mma_source, gemm_mma_options(0, 0, p)),               \
    gemm_kernel("gemm_mma", gemm_mma_source, gemm_mma_options(0, 1, p))},              \
   {gemm_kernel("gemm_mma", gemm_mma_source, gemm_mma_options(1, 0, p)),               \
    gemm_kernel("gemm_mma", gemm_mma_source, gemm_mma_options(1, 1, p))}}
      CLBAYES_MMA_CLASS(0), CLBAYES_MMA_CLASS(1), CLBAYES_MMA_CLASS(0), CLBAYES_MMA_CLASS(0)
#undef CLBAYES_MMA_CLASS
  };
  return objects[static_cast<int>(c)][ta ? 1 : 0][tb ? 1 : 0];
}

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
