#ifndef CLBAYES_KERNELS_GEMM_HPP
#define CLBAYES_KERNELS_GEMM_HPP

// The GEMM kernel (stan-opencl.txt, section 3.1), one kernel for every
// product of the package: C = alpha op(A) op(B) + beta C on sub-blocks
// (offsets, leading dimensions: the blocked Cholesky works in place);
// triangular operands (dot products start and stop where the views say the
// operands are zero); a lower-triangle-only C (section 3.1.2); batches of
// equal-shaped products at fixed strides (the batched triangular inverse,
// tri-inverse-kernels.txt); split-k (section 3.1.1: `splits` parts of the
// k range, each into its own copy of C, added by gemm_split_sum).
//   - double-buffered local tiles: the next k-tile is read into registers
//     while the current one is multiplied, then stored into the other
//     buffer: one barrier per k-step, the load latency behind the products;
//   - FMA path: a work item owns pairs of neighbouring rows and columns of
//     C, so one 16-byte local load feeds two rows; rows padded by a double2;
//   - FAST_INTERIOR = 1: tiles inside op(A), op(B) and their views load
//     without bounds and view tests (logs/history.md, 2026-11-24);
//   - MMA = 1: the products on the FP64 tensor cores (mma.sync.m16n8k8 by
//     inline PTX, compute capability 9.0), the two buffers ordered by
//     mbarriers instead of barrier() (mbar_init), the tiles laid out so
//     that fragment pairs are 16-byte loads (A_AT, B_AT).
// Build options: TM x TN, the tile of C of a work group; TK, the depth of a
// step; WPTM x WPTN (even), the block of a work item: the group is (TM /
// WPTM) x (TN / WPTN); TRANS_A / TRANS_B, op(), so each variant reads
// coalesced; PERSISTENT = 1: each group loops over tiles (fewer groups than
// tiles); HEAVY_FIRST = 1: where op(A) is lower (its depth grows with the
// row) or op(B) upper (with the column), the longest tiles take the first
// group numbers and so do not start last (the Cholesky's panel solve; log
// 2026-11-27-heavy-first). The local tiles (gemm_local_bytes) must
// fit the device's local memory (48 KB on NVIDIA: TK <= 8 for 128 x 128).

#include "../opencl/kernel_cl.hpp"

#include <map>
#include <string>
#include <vector>

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {
namespace kernels {

inline const char* gemm_source = R"(
#define RTSM (TM / WPTM)
#define RTSN (TN / WPTN)
#define NT (RTSM * RTSN)
#define LA ((TM * TK + NT - 1) / NT)
#define LB ((TN * TK + NT - 1) / NT)
// Local tiles: TK rows of SA and SB doubles (one double2 of padding). With
// MMA, rows i and i + 8 of each 16 of A sit side by side (an A fragment
// pair is one 16-byte load), and a B read along the depth (TRANS_B = 0) is
// stored transposed, TN rows of SB (padded where TK % 16 = 0: a
// quarter-warp's two rows in different banks; a B pair is one load too).
#define SA (TM + 2)
#if MMA
#define A_AT(kk, ii) ((kk) * SA + ((ii) & ~15) + (((ii) & 7) << 1) + (((ii) >> 3) & 1))
#else
#define A_AT(kk, ii) ((kk) * SA + (ii))
#endif
#if MMA && !TRANS_B
#define B_PAIRS 1
#define SB (TK % 16 ? TK : TK + 8)
#define B_AT(kk, jj) ((jj) * SB + (kk))
#else
#define B_PAIRS 0
#define SB (TN + 2)
#define B_AT(kk, jj) ((kk) * SB + (jj))
#endif

#define A_LOWER 1
#define A_UPPER 2
#define B_LOWER 4
#define B_UPPER 8
#define C_LOWER_ONLY 16

// Element e of a group's share of the TM x TK tile of op(A): its row ii and
// depth kk, read coalesced; with MMA a transposed A in chunks of 32 over 8
// depths of rows b, b + 1, b + 8, b + 9 (stores to A_AT in distinct banks).
void a_coords(int e, int* ii, int* kk) {
#if TRANS_A && MMA
  const int c = (e / 32) % (TM / 4), q = (e % 32) / 8;
  *ii = 16 * (c / 4) + 2 * (c % 4) + q / 2 + 8 * (q % 2);
  *kk = (e / 32) / (TM / 4) * 8 + e % 8;
#elif TRANS_A
  *kk = e % TK; *ii = e / TK;
#else
  *ii = e % TM; *kk = e / TM;
#endif
}

void b_coords(int e, int* jj, int* kk) {
#if TRANS_B
  *jj = e % TN; *kk = e / TN;
#else
  *kk = e % TK; *jj = e / TK;
#endif
}

// Global -> registers: element l of this work item's share of the TM x TK
// tile of op(A) that starts at depth t (zero outside the views).
void load_a(double* st, __global const double* A, long a_base, int lda,
                   int m, int i0, int t, int k_hi, int views, int tid) {
#pragma unroll
  for (int l = 0; l < LA; ++l) {
    const int e = tid + l * NT;
    int ii, kk;
    a_coords(e, &ii, &kk);
    const int gi = i0 + ii, gk = t + kk;
    double v = 0.0;
    if (e < TM * TK && gi < m && gk < k_hi && !((views & A_LOWER) && gk > gi) &&
        !((views & A_UPPER) && gk < gi)) {
#if TRANS_A
      v = A[a_base + (long)gi * lda + gk];
#else
      v = A[a_base + (long)gk * lda + gi];
#endif
    }
    st[l] = v;
  }
}

void load_b(double* st, __global const double* B, long b_base, int ldb,
                   int n, int j0, int t, int k_hi, int views, int tid) {
#pragma unroll
  for (int l = 0; l < LB; ++l) {
    const int e = tid + l * NT;
    int jj, kk;
    b_coords(e, &jj, &kk);
    const int gj = j0 + jj, gk = t + kk;
    double v = 0.0;
    if (e < TN * TK && gj < n && gk < k_hi && !((views & B_LOWER) && gk < gj) &&
        !((views & B_UPPER) && gk > gj)) {
#if TRANS_B
      v = B[b_base + (long)gk * ldb + gj];
#else
      v = B[b_base + (long)gj * ldb + gk];
#endif
    }
    st[l] = v;
  }
}

// load_a / load_b for a whole tile inside op(A) / op(B) and the views
// (interior tiles, the bulk of a large product): no bounds or view tests,
// so that the addresses are a fixed offset per element plus the depth.
void load_a_full(double* st, __global const double* A, long a_base, int lda, int i0,
                 int t, int tid) {
#pragma unroll
  for (int l = 0; l < LA; ++l) {
    const int e = tid + l * NT;
    int ii, kk;
    a_coords(e, &ii, &kk);
#if TRANS_A
    if (e < TM * TK) st[l] = A[a_base + (long)(i0 + ii) * lda + t + kk];
#else
    if (e < TM * TK) st[l] = A[a_base + (long)(t + kk) * lda + i0 + ii];
#endif
  }
}

void load_b_full(double* st, __global const double* B, long b_base, int ldb, int j0,
                 int t, int tid) {
#pragma unroll
  for (int l = 0; l < LB; ++l) {
    const int e = tid + l * NT;
    int jj, kk;
    b_coords(e, &jj, &kk);
#if TRANS_B
    if (e < TN * TK) st[l] = B[b_base + (long)(t + kk) * ldb + j0 + jj];
#else
    if (e < TN * TK) st[l] = B[b_base + (long)(j0 + jj) * ldb + t + kk];
#endif
  }
}

// Registers -> local tile (A_AT, B_AT).
void store_a(__local double* tile, const double* st, int tid) {
#pragma unroll
  for (int l = 0; l < LA; ++l) {
    const int e = tid + l * NT;
    int ii, kk;
    a_coords(e, &ii, &kk);
    if (e < TM * TK) tile[A_AT(kk, ii)] = st[l];
  }
}

void store_b(__local double* tile, const double* st, int tid) {
#pragma unroll
  for (int l = 0; l < LB; ++l) {
    const int e = tid + l * NT;
    int jj, kk;
    b_coords(e, &jj, &kk);
    if (e < TN * TK) tile[B_AT(kk, jj)] = st[l];
  }
}

#if MMA
// The tensor-core path orders its two local buffers by mbarriers (PTX,
// sm_90) instead of a barrier() per step: each warp arrives on full[b] once
// its share of buffer b is stored and on empty[b] once it has read its
// fragments from b, and waits only for the phase it needs, so it runs its
// products while others still store or read and the tensor pipe does not
// drain at every step. H200, n = 8192: 38.9-39.5 TFLOP/s with barrier(),
// 42.4-43.5 with the mbarriers; the products and fragment reads alone
// run at the tensor cores' peak (log 2026-11-25-h200-gemm-mbarrier).
uint local_address(__local ulong* p) { return (uint)(ulong)p; }

void mbar_init(__local ulong* bar, uint count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(local_address(bar)), "r"(count)
               : "memory");
}

void mbar_arrive(__local ulong* bar) {
  ulong state;
  asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];"
               : "=l"(state)
               : "r"(local_address(bar))
               : "memory");
}

// Returns once the phase of `bar` with this parity has completed.
void mbar_wait(__local ulong* bar, uint parity) {
  uint done = 0;
  while (!done)
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; "
        "selp.u32 %0, 1, 0, p; }"
        : "=r"(done)
        : "r"(local_address(bar)), "r"(parity)
        : "memory");
}
#endif

/**
 * C = alpha * op(A) * op(B) + beta * C, column-major, op(A) m x k and op(B)
 * k x n. Element (i, j) of C is C[c_off + z * c_stride + j * ldc + i] where
 * z = get_global_id(2); A and B advance by a_stride / b_stride per batch
 * item (z / splits). With splits > 1, work items z cover the k range in
 * `splits` parts and C must be a scratch buffer of partial products (beta
 * is then 0). When beta is 0, C is not read.
 * Launch: global (groups_m * RTSM, groups_n * RTSN, batch * splits), local
 * (RTSM, RTSN, 1), one group per tile of C (fewer with PERSISTENT). The
 * fixed work-group size lets the compiler give each work item the
 * registers of its WPTM x WPTN block.
 */
__kernel __attribute__((reqd_work_group_size(RTSM, RTSN, 1)))
void gemm(__global double* C, __global const double* A,
                      __global const double* B, int m, int n, int k,
                      long a_off, int lda, long a_stride,
                      long b_off, int ldb, long b_stride,
                      long c_off, int ldc, long c_stride,
                      double alpha, double beta, int views, int splits) {
  __local double2 a_tile[2][TK][SA / 2];
#if B_PAIRS
  __local double2 b_tile[2][TN][SB / 2];
#else
  __local double2 b_tile[2][TK][SB / 2];
#endif
  const int tid = get_local_id(1) * RTSM + get_local_id(0);
  const int z = get_global_id(2);
  const int item = z / splits;
  const int split = z % splits;
#if MMA
  // full[b], empty[b] of buffer b (see mbar_init); `step` counts the k-steps
  // of this group over all its tiles: step s computes from buffer s % 2,
  // the (s / 2)-th use of that buffer.
  __local ulong full[2], empty[2];
  if (tid == 0) {
    for (int b = 0; b < 2; ++b) {
      mbar_init(&full[b], NT);
      mbar_init(&empty[b], NT);
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  uint step = 0;
#endif
#if PERSISTENT
  // Fewer groups than tiles: each group takes every G-th tile, in the
  // order of the one-group-per-tile launch.
  const int tiles_m = (m + TM - 1) / TM;
  const int tiles = tiles_m * ((n + TN - 1) / TN);
  for (int tile = get_group_id(0) + get_num_groups(0) * get_group_id(1); tile < tiles;
       tile += get_num_groups(0) * get_num_groups(1)) {
  const int i0 = (tile % tiles_m) * TM;
  const int j0 = (tile / tiles_m) * TN;
  if ((views & C_LOWER_ONLY) && i0 + TM - 1 < j0) continue;  // uniform
#else
  {
#if HEAVY_FIRST  // groups start in order of their number: the longest depths first
  const int gi = views & A_LOWER ? get_num_groups(0) - 1 - get_group_id(0) : get_group_id(0);
  const int gj = views & B_UPPER ? get_num_groups(1) - 1 - get_group_id(1) : get_group_id(1);
#else
  const int gi = get_group_id(0), gj = get_group_id(1);
#endif
  const int i0 = gi * TM, j0 = gj * TN;
  if ((views & C_LOWER_ONLY) && i0 + TM - 1 < j0) return;  // uniform
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
  const long a_base = a_off + item * a_stride;
  const long b_base = b_off + item * b_stride;

#if MMA
  // The 8 warps (32 consecutive tid) in a 2 x 4 grid over the tile: warp
  // (wm, wn) owns MT x NTL blocks of 16 x 8 of C from row wm0, column wn0,
  // each accumulated by mma.m16n8k8 on the FP64 tensor cores (PTX, sm_90;
  // fragment layouts of the PTX ISA: lane = 4 lg + lt).
#define MT (TM / 32)
#define NTL (TN / 32)
  const int lane = tid % 32, lg = lane >> 2, lt = lane & 3;
  const int wm0 = (tid / 32) % 2 * (TM / 2), wn0 = (tid / 64) * (TN / 4);
  double acc[MT][NTL][4];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int nt = 0; nt < NTL; ++nt)
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[mt][nt][c] = 0.0;
#else
  double acc[WPTM][WPTN];
#pragma unroll
  for (int wm = 0; wm < WPTM; ++wm)
#pragma unroll
    for (int wn = 0; wn < WPTN; ++wn) acc[wm][wn] = 0.0;
#endif

  double a_st[LA];
  double b_st[LB];
  // Uniform: the tile lies inside op(A) and op(B) and no view cuts it.
  const bool interior = FAST_INTERIOR != 0 &&
                        (views & (A_LOWER | A_UPPER | B_LOWER | B_UPPER)) == 0 &&
                        i0 + TM <= m && j0 + TN <= n;
#if MMA
  int buf = step & 1;
#else
  int buf = 0;
#endif
  if (k_lo < k_hi) {
    if (interior && k_lo + TK <= k_hi) {
      load_a_full(a_st, A, a_base, lda, i0, k_lo, tid);
      load_b_full(b_st, B, b_base, ldb, j0, k_lo, tid);
    } else {
      load_a(a_st, A, a_base, lda, m, i0, k_lo, k_hi, views, tid);
      load_b(b_st, B, b_base, ldb, n, j0, k_lo, k_hi, views, tid);
    }
#if MMA
    if (step >= 2) mbar_wait(&empty[buf], ((step - 2) >> 1) & 1);  // read at step - 2
#endif
    store_a((__local double*)a_tile[buf], a_st, tid);
    store_b((__local double*)b_tile[buf], b_st, tid);
#if MMA
    mbar_arrive(&full[buf]);
#endif
  }
#if !MMA
  barrier(CLK_LOCAL_MEM_FENCE);
#endif
  for (int t = k_lo; t < k_hi; t += TK) {
    const int more = t + TK < k_hi;  // uniform over the work group
    if (more && interior && t + 2 * TK <= k_hi) {  // in flight while the FMAs run
      load_a_full(a_st, A, a_base, lda, i0, t + TK, tid);
      load_b_full(b_st, B, b_base, ldb, j0, t + TK, tid);
    } else if (more) {
      load_a(a_st, A, a_base, lda, m, i0, t + TK, k_hi, views, tid);
      load_b(b_st, B, b_base, ldb, n, j0, t + TK, k_hi, views, tid);
    }
#if MMA
    mbar_wait(&full[buf], (step >> 1) & 1);
#pragma unroll
    for (int k8 = 0; k8 < TK; k8 += 8) {
      // The fragments' depth lt + 4 h is the tiles' depth 2 lt + h (the
      // same for A and B, so the sum is unchanged): A(rows lg, lg + 8) at
      // depth 2 lt + h is one 16-byte load, and so is B(col lg) at depths
      // 2 lt, 2 lt + 1 with B_PAIRS.
      double2 af[MT][2];
      double2 bf[NTL];
      __local const double* at = (__local const double*)a_tile[buf] + (k8 + 2 * lt) * SA;
      __local const double* bt = (__local const double*)b_tile[buf];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int h = 0; h < 2; ++h)
          af[mt][h] = *(__local const double2*)(at + h * SA + wm0 + mt * 16 + 2 * lg);
#pragma unroll
      for (int nt = 0; nt < NTL; ++nt) {
        const int jj = wn0 + nt * 8 + lg;
#if B_PAIRS
        bf[nt] = *(__local const double2*)(bt + B_AT(k8 + 2 * lt, jj));
#else
        bf[nt] = (double2)(bt[B_AT(k8 + 2 * lt, jj)], bt[B_AT(k8 + 2 * lt + 1, jj)]);
#endif
      }
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < NTL; ++nt)
          asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 "
              "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
              : "+d"(acc[mt][nt][0]), "+d"(acc[mt][nt][1]), "+d"(acc[mt][nt][2]),
                "+d"(acc[mt][nt][3])
              : "d"(af[mt][0].x), "d"(af[mt][0].y), "d"(af[mt][1].x), "d"(af[mt][1].y),
                "d"(bf[nt].x), "d"(bf[nt].y));
    }
    mbar_arrive(&empty[buf]);
#else
    const int tx = get_local_id(0), ty = get_local_id(1);
#pragma unroll
    for (int kk = 0; kk < TK; ++kk) {
      double2 a_reg[WPTM / 2];
      double2 b_reg[WPTN / 2];
#pragma unroll
      for (int q = 0; q < WPTM / 2; ++q) a_reg[q] = a_tile[buf][kk][tx + q * RTSM];
#pragma unroll
      for (int r = 0; r < WPTN / 2; ++r) b_reg[r] = b_tile[buf][kk][ty + r * RTSN];
#pragma unroll
      for (int q = 0; q < WPTM / 2; ++q)
#pragma unroll
        for (int r = 0; r < WPTN / 2; ++r) {
          acc[2 * q][2 * r] = fma(a_reg[q].x, b_reg[r].x, acc[2 * q][2 * r]);
          acc[2 * q + 1][2 * r] = fma(a_reg[q].y, b_reg[r].x, acc[2 * q + 1][2 * r]);
          acc[2 * q][2 * r + 1] = fma(a_reg[q].x, b_reg[r].y, acc[2 * q][2 * r + 1]);
          acc[2 * q + 1][2 * r + 1] =
              fma(a_reg[q].y, b_reg[r].y, acc[2 * q + 1][2 * r + 1]);
        }
    }
#endif
#if MMA
    // The other buffer was last read at step - 1.
    if (more) {
      if (step >= 1) mbar_wait(&empty[buf ^ 1], ((step - 1) >> 1) & 1);
      store_a((__local double*)a_tile[buf ^ 1], a_st, tid);
      store_b((__local double*)b_tile[buf ^ 1], b_st, tid);
      mbar_arrive(&full[buf ^ 1]);
    }
    ++step;
#else
    // The other buffer was last read before the previous barrier.
    if (more) {
      store_a((__local double*)a_tile[buf ^ 1], a_st, tid);
      store_b((__local double*)b_tile[buf ^ 1], b_st, tid);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
    buf ^= 1;
  }

  const long c_base = c_off + z * c_stride;
#if MMA
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int nt = 0; nt < NTL; ++nt)
#pragma unroll
      for (int c = 0; c < 4; ++c) {  // C(row lg + 8 (c / 2), col 2 lt + c % 2)
        const int i = i0 + wm0 + mt * 16 + lg + 8 * (c / 2);
        const int j = j0 + wn0 + nt * 8 + 2 * lt + (c % 2);
        if (i < m && j < n && !((views & C_LOWER_ONLY) && i < j)) {
          const long at = c_base + (long)j * ldc + i;
          double v = alpha * acc[mt][nt][c];
          if (beta != 0.0) v += beta * C[at];
          C[at] = v;
        }
      }
#else
  const int tx = get_local_id(0), ty = get_local_id(1);
#pragma unroll
  for (int wn = 0; wn < WPTN; ++wn) {
    const int j = j0 + 2 * (ty + (wn / 2) * RTSN) + (wn & 1);
#pragma unroll
    for (int wm = 0; wm < WPTM; ++wm) {
      const int i = i0 + 2 * (tx + (wm / 2) * RTSM) + (wm & 1);
      if (i < m && j < n && !((views & C_LOWER_ONLY) && i < j)) {
        const long at = c_base + (long)j * ldc + i;
        double v = alpha * acc[wm][wn];
        if (beta != 0.0) v += beta * C[at];
        C[at] = v;
      }
    }
  }
#endif
  }  // tile
}

/**
 * C = sum over s of the `splits` partial products in P (each m x n,
 * contiguous, one after another) + beta * C, where element (i, j) of C is
 * C[c_off + j * ldc + i]. With lower_only, only i >= j are written.
 * Launch: global (m, n).
 */
__kernel void gemm_split_sum(__global double* C, __global const double* P,
                             int m, int n, int splits, long c_off, int ldc,
                             double beta, int lower_only) {
  const int i = get_global_id(0);
  const int j = get_global_id(1);
  if (i >= m || j >= n || (lower_only && i < j)) return;
  const long mn = (long)m * n;
  double s = 0.0;
  for (int p = 0; p < splits; ++p) s += P[p * mn + (long)j * m + i];
  const long at = c_off + (long)j * ldc + i;
  if (beta != 0.0) s += beta * C[at];
  C[at] = s;
}
)";

/** Build options of the kernel objects: op() and PERSISTENT are fixed per
 *  object; the tiles and MMA here are only the first build's, since
 *  linalg::gemm sets them from its gemm_settings (linalg/settings.hpp)
 *  before every launch. */
inline std::map<std::string, int> gemm_options(int trans_a, int trans_b, int persistent = 0,
                                               int heavy_first = 0) {
  return {{"TM", 128}, {"TN", 128}, {"TK", 8}, {"WPTM", 8}, {"WPTN", 8},
          {"TRANS_A", trans_a}, {"TRANS_B", trans_b}, {"PERSISTENT", persistent},
          {"HEAVY_FIRST", heavy_first}, {"FAST_INTERIOR", 1}, {"MMA", 0}};
}

using gemm_kernel =
    kernel_cl<in_out_buffer, in_buffer, in_buffer, int, int, int, cl_long, int,
              cl_long, cl_long, int, cl_long, cl_long, int, cl_long, double,
              double, int, int>;

/** Which of linalg::gemm_settings' tiles a launch runs with; `persistent`
 *  is the large tiles with each group looping over tiles (launches with
 *  fewer groups than tiles, which leave units to another queue),
 *  `heavy_first` the large tiles numbered longest depth first (HEAVY_FIRST;
 *  its own object, so that no other product's code changes). */
enum class gemm_shape { large, small, narrow, persistent, heavy_first };

/** The kernel object for a shape and op(): one object each, because an
 *  object remembers the variant it last built and the Cholesky's panels
 *  alternate shapes at every step. */
inline gemm_kernel& gemm_for(gemm_shape shape, bool trans_a, bool trans_b) {
  static std::vector<gemm_kernel> objects = [] {  // thread-safe initialisation
    std::vector<gemm_kernel> v;
    for (int sh = 0; sh < 5; ++sh)
      for (int t = 0; t < 4; ++t)
        v.emplace_back("gemm", gemm_source,
                       gemm_options(t / 2, t % 2, sh == static_cast<int>(gemm_shape::persistent),
                                    sh == static_cast<int>(gemm_shape::heavy_first)));
    return v;
  }();
  return objects[4 * static_cast<int>(shape) + 2 * trans_a + trans_b];
}

inline kernel_cl<in_out_buffer, in_buffer, int, int, int, cl_long, int, double, int>
    gemm_split_sum("gemm_split_sum", gemm_source, gemm_options(0, 0));

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
