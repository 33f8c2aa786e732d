#ifndef CLBAYES_KERNELS_GEMM_HPP
#define CLBAYES_KERNELS_GEMM_HPP

// The GEMM kernel (stan-opencl.txt, section 3.1), one kernel for every
// product of the package: C = alpha op(A) op(B) + beta C on sub-blocks
// (offsets, leading dimensions: the blocked Cholesky works in place);
// triangular operands (dot products start and stop where the views say the
// operands are zero); a lower-triangle-only C (section 3.1.2); batches of
// equal-shaped products at fixed strides (the batched triangular inverse,
// tri-inverse-kernels.txt); split-k (section 3.1.1: `splits` parts of the
// k range, each into its own copy of C, added by gemm_split_sum). The
// products run as FMAs on double-buffered local tiles or, with MMA = 1, on
// the FP64 tensor cores fed by a ring of local stages (both in the kernel).
// Build options: TM x TN, the tile of C of a work group; TK, the depth of a
// step; WPTM x WPTN (even), the block of a work item: the group is (TM /
// WPTM) x (TN / WPTN); TRANS_A / TRANS_B, op(), so each variant reads
// coalesced; PERSISTENT and HEAVY_FIRST, the order of the tiles (in the
// kernel). The local tiles (linalg's gemm_local_bytes) must fit the local
// memory a work group can use (gemm_settings).

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
// The helpers' loops over an operand's share count to these constants, so
// that they unroll before inlining.
#define LMAX (LA > LB ? LA : LB)
#define PAIRS_MAX ((TM > TN ? TM : TN) * TK / 2 / NT)
// Local tiles of the FMA path: TK rows of SA and SB doubles (one double2 of
// padding), op(A) (ii, kk) at kk SA + ii, op(B) (kk, jj) at kk SB + jj.
#define SA (TM + 2)
#define SB (TN + 2)

#if MMA
// The tensor-core path's ring of MMA_STAGES stages in local memory, each TK
// depths of op(A) and op(B), laid out so that the copies are 16 bytes along
// the operand's contiguous dimension and a fragment pair is one 16-byte
// load: op(A) (ii, kk) at RA_AT, op(B) (kk, jj) at RB_AT. The padding puts
// the 8 lanes of a quarter-warp's 16-byte loads in distinct banks; a
// transposed B's 8-byte loads fall two lanes to a bank (TN + 2 would not:
// not yet measured).
#define NS MMA_STAGES
#if NS < 2
#error "the ring needs 2 or more stages"
#endif
#if TRANS_A
#define RA (TK + 4)
#define A_STAGE (TM * RA)
#else
#define RA (TM + 2)
#define A_STAGE (TK * RA)
#endif
#if TRANS_B
#define RB (TN + 4)
#define B_STAGE (TK * RB)
#else
#define RB (TK % 16 ? TK + 16 : TK + 8)
#define B_STAGE (TN * RB)
#endif
// Element (ii, kk) of X in a slot whose rows of R doubles run along X's
// contiguous dimension (the depth when `trans`; see OP_A below).
#define RING_AT(kk, ii, R, trans) ((trans) ? (ii) * (R) + (kk) : (kk) * (R) + (ii))
#define RA_AT(kk, ii) RING_AT(kk, ii, RA, TRANS_A)
#define RB_AT(kk, jj) RING_AT(kk, jj, RB, !TRANS_B)
#endif

#define A_LOWER 1
#define A_UPPER 2
#define B_LOWER 4
#define B_UPPER 8
#define C_LOWER_ONLY 16

// op(A) and op(B) go through the same routines, op(B) as op(B)^T: X is a
// T x TK tile of op(A) (T = TM) or op(B)^T (T = TN), `trans` when X's
// depth is its stored contiguous dimension (TRANS_A; !TRANS_B), and the
// view bits `lower` / `upper` clear X's elements of depth above / below
// their index. OP_A and OP_B are these four arguments.
#define OP_A TM, TRANS_A, A_LOWER, A_UPPER
#define OP_B TN, !TRANS_B, B_UPPER, B_LOWER

// Element e of a group's share of X's tile: its index ii and depth kk, in
// the order of X's contiguous dimension (coalesced reads). For even e, e
// and e + 1 are neighbours there (the ring's 16-byte copies).
void coords(int e, int T, int trans, int* ii, int* kk) {
  *ii = trans ? e / TK : e % T;
  *kk = trans ? e % TK : e / T;
}

// Whether element (gi, gk) of X lies inside X (m indices), the k range and
// the view, and its offset.
int inside(int gi, int gk, int m, int k_hi, int views, int lower, int upper) {
  return gi < m && gk < k_hi && !((views & lower) && gk > gi) && !((views & upper) && gk < gi);
}

long offset(long base, int ld, int gi, int gk, int trans) {
  return trans ? base + (long)gi * ld + gk : base + (long)gk * ld + gi;
}

// Global -> registers: element l of this work item's share of X's tile
// at index i0 and depth t (LA or LB elements), zero outside; `full` (a
// tile inside everything, the bulk of a large product): no tests, so that
// the addresses are a fixed offset per element plus the depth (so too the
// ring's fast stages; RESULTS.md, "Dense linear algebra defaults").
void load_tile(double* st, __global const double* X, long base, int ld, int m, int i0, int t,
               int k_hi, int views, int tid, int full, int T, int trans, int lower, int upper) {
#pragma unroll
  for (int l = 0; l < LMAX; ++l) {
    const int e = tid + l * NT;
    int ii, kk;
    coords(e, T, trans, &ii, &kk);
    const int gi = i0 + ii, gk = t + kk;
    if (l * NT < T * TK && e < T * TK)  // (the first: st's length, a constant)
      st[l] = full || inside(gi, gk, m, k_hi, views, lower, upper)
                  ? X[offset(base, ld, gi, gk, trans)]
                  : 0.0;
  }
}

// Registers -> the local tile, (ii, kk) at kk (T + 2) + ii (SA, SB).
void store_tile(__local double* tile, const double* st, int tid, int T, int trans) {
#pragma unroll
  for (int l = 0; l < LMAX; ++l) {
    const int e = tid + l * NT;
    int ii, kk;
    coords(e, T, trans, &ii, &kk);
    if (l * NT < T * TK && e < T * TK) tile[kk * (T + 2) + ii] = st[l];
  }
}

#if MMA
// The ring's copies and its order, by inline PTX (tensor-core path only,
// compute capability 9.0): cp.async (sm_80) copies from global to local
// memory without a register stage; an mbarrier's phase completes once its
// count of arrivals has come, and cp_arrive arrives for this item once its
// copies so far have landed (the "full" barrier of a slot); waits name the
// parity of the phase they wait for.
uint local_address(__local const void* p) { return (uint)(ulong)p; }

void cp_async16(__local double* dst, __global const double* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(local_address(dst)), "l"(src)
               : "memory");
}

// One double, or a zero when !ok (then nothing is read).
void cp_async8(__local double* dst, __global const double* src, int ok) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" ::"r"(local_address(dst)),
               "l"(src), "r"(ok ? 8 : 0)
               : "memory");
}

void cp_arrive(__local ulong* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(local_address(bar))
               : "memory");
}

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

// This item's share of X's stage at depth t into the ring slot r (RA_AT,
// RB_AT). `fast`: the stage lies inside X, the k range and the view, and X
// is 16-byte aligned, so pairs go by 16-byte copies without tests, the
// item's pairs a fixed stride apart (few registers); otherwise one double
// each, zero outside.
#if (TM * TK / 2) % NT || (TN * TK / 2) % NT || (2 * NT) % TM || (2 * NT) % TN || (2 * NT) % TK
#error "the ring's copies need whole pairs per work item"
#endif
void copy_stage(__local double* r, int R, __global const double* X, long base, int ld, int m,
                int i0, int t, int k_hi, int views, int tid, int fast, int T, int trans,
                int lower, int upper) {
  int ii, kk;
  if (fast) {
    coords(2 * tid, T, trans, &ii, &kk);
    const int gap = 2 * NT / (trans ? TK : T);  // between the item's pairs: indices or depths
    // (pointer steps: through offset(), DGEMM at n = 16384 lost 5% on the
    // H200; RESULTS.md, "Dense linear algebra defaults")
    __global const double* p = trans ? X + base + (long)(i0 + ii) * ld + t + kk
                                     : X + base + (long)(t + kk) * ld + i0 + ii;
    const long step = (long)gap * ld;
    const int r_step = gap * R;
    r += RING_AT(kk, ii, R, trans);
#pragma unroll
    for (int l = 0; l < PAIRS_MAX; ++l)
      if (l < T * TK / 2 / NT) cp_async16(r + l * r_step, p + l * step);
    return;
  }
  // Exactly T TK / NT elements of the stage per item (the #error above).
#pragma unroll 1
  for (int l = 0; l < T * TK / NT; ++l) {
    coords(tid + l * NT, T, trans, &ii, &kk);
    const int ok = inside(i0 + ii, t + kk, m, k_hi, views, lower, upper);
    cp_async8(r + RING_AT(kk, ii, R, trans),
              X + (ok ? offset(base, ld, i0 + ii, t + kk, trans) : 0), ok);
  }
}
#endif

// C(i, j) = alpha v + beta C(i, j) (C not read when beta is 0) where (i,
// j) lies inside C and, with C_LOWER_ONLY, its lower triangle.
void store_c(__global double* C, long c_base, int ldc, int i, int j, int m, int n, int views,
             double alpha, double beta, double v) {
  if (i >= m || j >= n || ((views & C_LOWER_ONLY) && i < j)) return;
  const long at = c_base + (long)j * ldc + i;
  C[at] = beta != 0.0 ? alpha * v + beta * C[at] : alpha * v;
}

// Tile g of a tiles_m x tiles_n grid of C's tiles, taken in panels of
// SWIZZLE tile columns, row by row within a panel: the groups that run at
// once cover a squarish block of C, so the slices of A and B they read are
// shared in the L2 cache rather than each tile column streaming all of A
// (CUTLASS's threadblock swizzle).
#define SWIZZLE 8
void tile_of(int g, int tiles_m, int tiles_n, int* gi, int* gj) {
  const int panel = g / (tiles_m * SWIZZLE);
  const int r = g - panel * tiles_m * SWIZZLE;
  const int w = min(SWIZZLE, tiles_n - panel * SWIZZLE);
  *gi = r / w;
  *gj = panel * SWIZZLE + r % w;
}

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
#if MMA
  __local double2 ring_a[NS * A_STAGE / 2];
  __local double2 ring_b[NS * B_STAGE / 2];
#else
  __local double2 a_tile[2][TK][SA / 2];
  __local double2 b_tile[2][TK][SB / 2];
#endif
  const int tid = get_local_id(1) * RTSM + get_local_id(0);
  const int z = get_global_id(2);
  const int item = z / splits;
  const int split = z % splits;
#if MMA
  // full[b] completes a phase once every item's copies into slot b have
  // landed, empty[b] once every item has read it; issued and used count the
  // stages copied and multiplied by this group over all its tiles, so stage
  // u is the (u / NS)-th use of slot u % NS.
  __local ulong full[NS], empty[NS];
  if (tid == 0)
    for (int b = 0; b < NS; ++b) {
      mbar_init(&full[b], NT);
      mbar_init(&empty[b], NT);
    }
  barrier(CLK_LOCAL_MEM_FENCE);
  uint issued = 0, used = 0;
#endif
#if PERSISTENT
  // Fewer groups than tiles: each group takes every G-th tile, in the
  // order of the one-group-per-tile launch.
  const int tiles_m = (m + TM - 1) / TM, tiles_n = (n + TN - 1) / TN;
  for (int tile = get_group_id(0) + get_num_groups(0) * get_group_id(1);
       tile < tiles_m * tiles_n; tile += get_num_groups(0) * get_num_groups(1)) {
  int gi, gj;
  tile_of(tile, tiles_m, tiles_n, &gi, &gj);
  const int i0 = gi * TM, j0 = gj * TN;
  if ((views & C_LOWER_ONLY) && i0 + TM - 1 < j0) continue;  // uniform
#else
  {
  // HEAVY_FIRST: where op(A) is lower (its depth grows with the row) or
  // op(B) upper, the longest tiles take the first group numbers, so they do
  // not start last (the Cholesky's panel solve; RESULTS.md, "Dense linear algebra defaults").
#if HEAVY_FIRST
  const int gi = views & A_LOWER ? get_num_groups(0) - 1 - get_group_id(0) : get_group_id(0);
  const int gj = views & B_UPPER ? get_num_groups(1) - 1 - get_group_id(1) : get_group_id(1);
#else
  int gi, gj;
  tile_of(get_group_id(0) + get_num_groups(0) * get_group_id(1), get_num_groups(0),
          get_num_groups(1), &gi, &gj);
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
  // Uniform: the tile lies inside op(A) and op(B).
  const bool interior = i0 + TM <= m && j0 + TN <= n;
  const int stages = k_lo < k_hi ? (k_hi - k_lo + TK - 1) / TK : 0;  // of TK depths

#if MMA
  // The NT / 32 warps in a 2 x (NT / 64) grid over the tile: warp (wm, wn)
  // owns MT x NTL blocks of 16 x 8 of C from row wm0, column wn0, each
  // accumulated by mma.m16n8k8 on the FP64 tensor cores (PTX, sm_90;
  // fragment layouts of the PTX ISA, lane = 4 lg + lt). The fragments' rows
  // lg and lg + 8 are the tile's rows 2 lg and 2 lg + 1 of the block, and
  // their depths lt and lt + 4 the stage's 2 lt and 2 lt + 1 (the same for
  // A and B, so the sum is unchanged): a fragment pair is one 16-byte load.
#define MT (TM / 32)
#define NTL (8 * TN / NT)
  const int lane = tid % 32, lg = lane >> 2, lt = lane & 3;
  const int wm0 = (tid / 32) % 2 * (TM / 2), wn0 = (tid / 64) * (8 * NTL);
  double acc[MT][NTL][4];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int nt = 0; nt < NTL; ++nt)
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[mt][nt][c] = 0.0;

  // The stages are copied NS - 1 ahead of the products by cp.async (the
  // multistage pipeline of CUTLASS's sm80 GEMMs: no register staging, so
  // several stages' copies are in flight), ordered by mbarriers: a warp
  // waits only for the slot it reads or overwrites, never for the whole
  // group, so the tensor pipe does not drain at every stage (H200, n =
  // 8192: 50.8 TFLOP/s against 42.5 with a barrier() per stage; RESULTS.md,
  // "Dense linear algebra defaults"). A stage takes the 16-byte copies where it lies
  // inside everything (uniform).
  const bool aligned = ((a_base | b_base | lda | ldb) & 1) == 0;
#define FAST_STAGE(t)                                                              \
  (interior && aligned && (t) + TK <= k_hi &&                                      \
   !((views & A_LOWER) && (t) + TK - 1 > i0) && !((views & A_UPPER) && (t) < i0 + TM - 1) && \
   !((views & B_LOWER) && (t) < j0 + TN - 1) && !((views & B_UPPER) && (t) + TK - 1 > j0))
// Stage s into the next slot, once that slot's previous stage has been
// read by every item.
// (One branch for both operands: their 16-byte copies issue back to back.)
#define COPY_OPERANDS(fast)                                                               \
  copy_stage(sa, RA, A, a_base, lda, m, i0, t, k_hi, views, tid, fast, OP_A);             \
  copy_stage(sb, RB, B, b_base, ldb, n, j0, t, k_hi, views, tid, fast, OP_B)
#define COPY_STAGE(s)                                                                     \
  {                                                                                       \
    const int t = k_lo + (s) * TK;                                                        \
    const uint sl = issued % NS;                                                          \
    if (issued >= NS) mbar_wait(&empty[sl], (issued / NS - 1) & 1);                        \
    __local double* sa = (__local double*)ring_a + sl * A_STAGE;                          \
    __local double* sb = (__local double*)ring_b + sl * B_STAGE;                          \
    if (FAST_STAGE(t)) {                                                                  \
      COPY_OPERANDS(1);                                                                   \
    } else {                                                                              \
      COPY_OPERANDS(0);                                                                   \
    }                                                                                     \
    cp_arrive(&full[sl]);                                                                 \
    ++issued;                                                                             \
  }
  for (int s = 0; s < NS - 1 && s < stages; ++s) COPY_STAGE(s);
#else
  double acc[WPTM][WPTN];
#pragma unroll
  for (int wm = 0; wm < WPTM; ++wm)
#pragma unroll
    for (int wn = 0; wn < WPTN; ++wn) acc[wm][wn] = 0.0;
  // Two buffers: stage s + 1 is read into registers while stage s is
  // multiplied, then stored into the other buffer.
  double a_st[LA];
  double b_st[LB];
  const bool plain = interior && (views & (A_LOWER | A_UPPER | B_LOWER | B_UPPER)) == 0;
#define LOAD_STAGE(s)                                                                     \
  {                                                                                       \
    const int t = k_lo + (s) * TK, full = plain && t + TK <= k_hi;                        \
    load_tile(a_st, A, a_base, lda, m, i0, t, k_hi, views, tid, full, OP_A);           \
    load_tile(b_st, B, b_base, ldb, n, j0, t, k_hi, views, tid, full, OP_B);           \
  }
#define STORE_STAGE(s)                                                                    \
  {                                                                                       \
    store_tile((__local double*)a_tile[(s) & 1], a_st, tid, TM, TRANS_A);              \
    store_tile((__local double*)b_tile[(s) & 1], b_st, tid, TN, !TRANS_B);             \
  }
  barrier(CLK_LOCAL_MEM_FENCE);  // (PERSISTENT) the last tile's reads are done
  if (stages > 0) {
    LOAD_STAGE(0);
    STORE_STAGE(0);
  }
#endif

  for (int s = 0; s < stages; ++s) {
#if MMA
    const uint slot = used % NS;
    mbar_wait(&full[slot], (used / NS) & 1);
    if (s + NS - 1 < stages) COPY_STAGE(s + NS - 1);
    __local const double* at = (__local const double*)ring_a + slot * A_STAGE;
    __local const double* bt = (__local const double*)ring_b + slot * B_STAGE;
#pragma unroll
    for (int k8 = 0; k8 < TK; k8 += 8) {
      double2 af[MT][2];  // {a0, a1}, {a2, a3} (TRANS_A: {a0, a2}, {a1, a3})
      double2 bf[NTL];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        const int r = wm0 + mt * 16 + 2 * lg, d = k8 + 2 * lt;
        af[mt][0] = *(__local const double2*)(at + RA_AT(d, r));
        af[mt][1] = *(__local const double2*)(at + (TRANS_A ? RA_AT(d, r + 1) : RA_AT(d + 1, r)));
      }
#pragma unroll
      for (int nt = 0; nt < NTL; ++nt) {
        const int jj = wn0 + nt * 8 + lg, d = k8 + 2 * lt;
#if TRANS_B
        bf[nt] = (double2)(bt[RB_AT(d, jj)], bt[RB_AT(d + 1, jj)]);
#else
        bf[nt] = *(__local const double2*)(bt + RB_AT(d, jj));
#endif
      }
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        const double a1 = TRANS_A ? af[mt][1].x : af[mt][0].y;
        const double a2 = TRANS_A ? af[mt][0].y : af[mt][1].x;
#pragma unroll
        for (int nt = 0; nt < NTL; ++nt)
          asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 "
              "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
              : "+d"(acc[mt][nt][0]), "+d"(acc[mt][nt][1]), "+d"(acc[mt][nt][2]),
                "+d"(acc[mt][nt][3])
              : "d"(af[mt][0].x), "d"(a1), "d"(a2), "d"(af[mt][1].y), "d"(bf[nt].x),
                "d"(bf[nt].y));
      }
    }
    mbar_arrive(&empty[slot]);
    ++used;
#else
    // Stage s is in buffer s & 1 for every item, and every item is done
    // with the other buffer (read at s - 1). An item owns pairs of
    // neighbouring rows and columns of C: one 16-byte local load feeds two.
    barrier(CLK_LOCAL_MEM_FENCE);
    if (s + 1 < stages) LOAD_STAGE(s + 1);  // in flight while the FMAs run
    const int buf = s & 1, tx = get_local_id(0), ty = get_local_id(1);
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
    if (s + 1 < stages) STORE_STAGE(s + 1);
#endif
  }

  const long c_base = c_off + z * c_stride;
#if MMA
#undef COPY_STAGE
#undef COPY_OPERANDS
#undef FAST_STAGE
  // acc[.][.][q] and [2 + q] are rows 2 lg and 2 lg + 1 of column 2 lt + q
  // of the block, neighbours in C: one 16-byte store where the tile lies
  // inside C (and its lower triangle) and C's columns are 16-byte aligned.
  const bool pairs = interior && (!(views & C_LOWER_ONLY) || i0 >= j0 + TN - 1) &&
                     ((c_base | ldc) & 1) == 0;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int nt = 0; nt < NTL; ++nt)
#pragma unroll
      for (int q = 0; q < 2; ++q) {
        const int i = i0 + wm0 + mt * 16 + 2 * lg, j = j0 + wn0 + nt * 8 + 2 * lt + q;
        if (pairs) {
          __global double2* at = (__global double2*)(C + c_base + (long)j * ldc + i);
          const double2 v = alpha * (double2)(acc[mt][nt][q], acc[mt][nt][2 + q]);
          *at = beta != 0.0 ? v + beta * *at : v;
        } else {
          store_c(C, c_base, ldc, i, j, m, n, views, alpha, beta, acc[mt][nt][q]);
          store_c(C, c_base, ldc, i + 1, j, m, n, views, alpha, beta, acc[mt][nt][2 + q]);
        }
      }
#else
#undef LOAD_STAGE
#undef STORE_STAGE
  const int tx = get_local_id(0), ty = get_local_id(1);
#pragma unroll
  for (int wn = 0; wn < WPTN; ++wn)
#pragma unroll
    for (int wm = 0; wm < WPTM; ++wm)
      store_c(C, c_base, ldc, i0 + 2 * (tx + (wm / 2) * RTSM) + (wm & 1),
              j0 + 2 * (ty + (wn / 2) * RTSN) + (wn & 1), m, n, views, alpha, beta,
              acc[wm][wn]);
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
          {"HEAVY_FIRST", heavy_first}, {"MMA", 0}, {"MMA_STAGES", 2}};
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
