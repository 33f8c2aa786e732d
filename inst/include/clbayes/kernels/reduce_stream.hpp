#ifndef CLBAYES_KERNELS_REDUCE_STREAM_HPP
#define CLBAYES_KERNELS_REDUCE_STREAM_HPP

// One-launch reduction for long inputs: a grid of a few resident work groups
// per compute unit streams over the whole input (a grid-stride loop), and
// the last group to finish combines the group partials, so gpu_sum needs
// one launch and one read instead of the three launches of Fig. 2 of
// accurate-reduction.txt.
//
// div2 and pairwise: the tree is still the paper's perfect binary tree over
// the input zero-padded to N = 2^D values, D = ceil(log2 n), halving at
// every node for div2. Section III.A needs two things of it: every node is
// the mean of the 2^k padded leaves below it (so, for non-negative data, it
// lies in [0, max] and an addition never meets an addend beyond the data's
// range: nothing is absorbed), and every leaf is halved exactly D times (so
// the root is the padded mean and eq. 8's C = 2^D / n corrects it). Neither
// depends on which leaves pair up, only on the tree being perfect; a
// running sequence per thread (x1 + x2) / 2, then (. + x3) / 2, ... would
// not do: it weights the leaves unequally, and a running mean would add
// increments (x - m) / k far below the data's range, the absorption the
// paper avoids. So the grid-stride loop keeps a perfect tree per work item:
// with T = groups * WG work items, vector v of the input goes to item
// v mod T (every load of a warp reads consecutive addresses), and item t
// reduces its N / T leaves (a power of two, the host sees to it):
//   - each iteration issues UNROLL independent vector loads of VW values
//     before using any (memory-level parallelism), then combines them by a
//     perfect tree over the loads and the lanes: one chunk value, the mean
//     of UNROLL * VW leaves;
//   - the `iters` chunk values (a power of two) are combined as a binary
//     counter: st[l] holds the pending subtree of 2^l chunks, chunk i
//     completes one subtree per trailing 1 bit of i. LSTACK levels (the
//     host sets LSTACK >= log2(iters)) live in registers, indexed statically;
//   - then the work group's tree in local memory, and the tree over the
//     groups' partials (their number a power of two) in the last group.
// The tail past n reads zeros: the paper's zero padding of the last,
// non-full block (section III.C) with the full depth. The single-block
// case of section III.C (padding only to next_pow2(n)) holds because N is
// the nearest power of two >= n: there is no extra level.
// kahan: each item accumulates its values compensated (TwoSum into a
// value and a compensation per lane, i.e. Neumaier's exact-error variant),
// and every later combine adds compensated pairs, as in kernels/reduce.hpp.
//
// Vector loads go through a pointer to the vector type, not vloadN: the
// buffer is aligned to the vector (CL_DEVICE_MEM_BASE_ADDR_ALIGN), and the
// compiler can then emit one wide load where vloadN, which only assumes
// the element's alignment, may be split.
//
// Build options besides METHOD, REAL_FLOAT and SRC_DOUBLE (kernels/reduce.hpp):
//   VW      values per vector load (1, 2, 4 or 8)
//   WG      work items per group (a power of two)
//   UNROLL  vector loads in flight per work item and iteration (power of two)
//   LSTACK  levels of the binary counter: iters <= 2^LSTACK (0 for kahan)
//   RMAX    partials per work item in the last group: groups <= WG * RMAX
//   FUSE    1: the last group to finish writes the root to result[0..1];
//           0: only the group partials are written (the host reduces them)
//
// The last group is found with an atomic counter on an int (OpenCL 1.1):
// each group writes its partial, fences, and increments; the group that
// sees groups - 1 reads all partials through volatile loads (past any
// incoherent cache) and resets the counter to 0 for the next launch.

#include "reduce.hpp"

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {
namespace kernels {

CLBAYES_REDUCE_SOURCE(reduce_stream_source, R"(
#ifndef WG
#define WG 256
#endif
#ifndef UNROLL
#define UNROLL 4
#endif
#ifndef LSTACK
#define LSTACK 8
#endif
#ifndef RMAX
#define RMAX 8
#endif
#ifndef FUSE
#define FUSE 1
#endif
#if METHOD == 1
#define VCOMB(a, b) (HALF * (a) + HALF * (b))
#else
#define VCOMB(a, b) ((a) + (b))
#endif
#if VW == 1
#define VSTORE(v, p) ((p)[0] = (v))
#define VLOAD(p) ((p)[0])
#else
#define VSTORE(v, p) CAT(vstore, VW)((v), 0, (p))
#define VLOAD(p) CAT(vload, VW)(0, (p))
#endif

/* Vector v of x (elements v * VW ...), zero past n; reads nothing past n. */
inline realv load_tail(__global const src* x, long v, long n) {
  const long e = v * VW;
  real el[VW];
  for (int l = 0; l < VW; ++l) el[l] = e + l < n ? (real)x[e + l] : (real)0;
  return VLOAD(el);
}

/* Combine the lanes of a (s, c) vector pair by a perfect tree; c unused
 * except for kahan. */
inline void lanes(realv vs, realv vc, real* s, real* c) {
  real a[VW], ac[VW];
  VSTORE(vs, a);
  VSTORE(vc, ac);
#pragma unroll
  for (int w = VW / 2; w > 0; w >>= 1)
#pragma unroll
    for (int l = 0; l < w; ++l) COMBINE(a[l], ac[l], a[l + w], ac[l + w]);
  *s = a[0];
  *c = ac[0];
}

/* Tree over the first `active` entries (a power of two <= WG) of ls (lc);
 * the root ends in ls[0] (lc[0]). Every item of the group must call it. */
inline void group_tree(__local real* ls, __local real* lc, int active, int t) {
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int w = active / 2; w > 0; w >>= 1) {
    if (t < w) {
      real a = ls[t];
#if METHOD == 2
      real ac = lc[t];
      COMBINE(a, ac, ls[t + w], lc[t + w]);
      lc[t] = ac;
#else
      real ac = 0;
      COMBINE(a, ac, ls[t + w], ac);
#endif
      ls[t] = a;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}

/**
 * Reduce x[0 .. n) zero-padded to get_global_size(0) * UNROLL * VW * iters
 * elements: part_s[g] (part_c[g]) is group g's partial; with FUSE, result[0]
 * (result[1] for kahan, else 0) is the root. counter must be 0 at launch.
 */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce_stream(__global const src* restrict x, long n, int iters,
                   __global real* part_s, __global real* part_c,
                   __global int* counter, __global real* result) {
  __local real ls[WG];
#if METHOD == 2
  __local real lc[WG];
#else
  __local real* lc = ls;  /* unused */
#endif
  __local int is_last;
  const int t = get_local_id(0);
  const long T = get_global_size(0);
  const long id = get_global_id(0);
  __global const srcv* restrict xv = (__global const srcv*)x; /* read-only path */
  /* iterations whose UNROLL * T vectors all lie in x: no bounds checks */
  const long full = n / ((long)UNROLL * VW * T);
  real s, c = 0;
#if METHOD == 2
  realv vs = (realv)0, vc = (realv)0;
#else
  real st[LSTACK > 0 ? LSTACK : 1];
  real root = 0;
#endif
  for (int i = 0; i < iters; ++i) {
    realv v[UNROLL];
    const long v0 = (long)i * UNROLL * T + id;
    if (i < full) { /* uniform over the grid */
#pragma unroll
      for (int k = 0; k < UNROLL; ++k) v[k] = convert_realv(xv[v0 + k * T]);
    } else {
#pragma unroll
      for (int k = 0; k < UNROLL; ++k) v[k] = load_tail(x, v0 + k * T, n);
    }
#if METHOD == 2
#pragma unroll
    for (int k = 0; k < UNROLL; ++k) {
      const realv ts = vs + v[k];
      const realv z = ts - vs;
      vc += (vs - (ts - z)) + (v[k] - z);
      vs = ts;
    }
#else
#pragma unroll
    for (int w = UNROLL / 2; w > 0; w >>= 1)
#pragma unroll
      for (int k = 0; k < w; ++k) v[k] = VCOMB(v[k], v[k + w]);
    real cv, unused;
    lanes(v[0], v[0], &cv, &unused);
    /* binary counter: chunk i completes one subtree per trailing 1 bit */
#pragma unroll
    for (int l = 0; l < LSTACK; ++l) {
      if (((i >> l) & 1) == 0) {
        st[l] = cv;
        break;
      }
      real a = st[l], ac = 0;
      COMBINE(a, ac, cv, ac);
      cv = a;
    }
    root = cv; /* after the last chunk (iters a power of two): the root */
#endif
  }
#if METHOD == 2
  lanes(vs, vc, &s, &c);
  lc[t] = c;
#else
  s = root;
#endif
  ls[t] = s;
  group_tree(ls, lc, WG, t);
  if (t == 0) {
    part_s[get_group_id(0)] = ls[0];
#if METHOD == 2
    part_c[get_group_id(0)] = lc[0];
#endif
#if FUSE
    mem_fence(CLK_GLOBAL_MEM_FENCE); /* the partial is visible before the count */
    is_last = atomic_inc(counter) == (int)get_num_groups(0) - 1;
#endif
  }
#if FUSE
  barrier(CLK_LOCAL_MEM_FENCE);
  if (!is_last) return; /* uniform over the group */
  mem_fence(CLK_GLOBAL_MEM_FENCE);
  const int G = get_num_groups(0);
  const int active = G < WG ? G : WG;
  const int r = G / active; /* partials per item, a power of two <= RMAX */
  volatile __global real* ps = part_s;
  real a[RMAX], ac[RMAX];
#pragma unroll
  for (int j = 0; j < RMAX; ++j) {
    const bool in = j < r && t < active;
    a[j] = in ? ps[t + j * active] : (real)0;
#if METHOD == 2
    volatile __global real* pc = part_c;
    ac[j] = in ? pc[t + j * active] : (real)0;
#else
    ac[j] = 0;
#endif
  }
#pragma unroll
  for (int w = RMAX / 2; w > 0; w >>= 1)
    if (2 * w <= r) {
#pragma unroll
      for (int k = 0; k < w; ++k) COMBINE(a[k], ac[k], a[k + w], ac[k + w]);
    }
  ls[t] = a[0];
#if METHOD == 2
  lc[t] = ac[0];
#endif
  group_tree(ls, lc, active, t);
  if (t == 0) {
    result[0] = ls[0];
#if METHOD == 2
    result[1] = lc[0];
#else
    result[1] = 0;
#endif
    atomic_xchg(counter, 0);
  }
#endif
}
)")

// The host (reduce/sum_stream.hpp) copies this and sets every option for
// each launch.
inline kernel_cl<cl::Buffer, cl_long, cl_int, cl::Buffer, cl::Buffer, cl::Buffer,
                 cl::Buffer>
    reduce_stream("reduce_stream", reduce_stream_source(),
                  {{"METHOD", 2}, {"REAL_FLOAT", 0}, {"SRC_DOUBLE", 1}, {"VW", 2},
                   {"WG", 256}, {"UNROLL", 4}, {"LSTACK", 8}, {"RMAX", 8},
                   {"FUSE", 1}});

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
