#ifndef CLBAYES_KERNELS_REDUCE_HPP
#define CLBAYES_KERNELS_REDUCE_HPP

// Parallel reduction without floating-point absorption
// (accurate-reduction.txt, section III; Harris's sequential addressing and
// first add during load). Build options:
//   METHOD      0 pairwise (a + b), 1 div2 ((a + b) / 2), 2 kahan
//               (compensated: every value is a pair s + c)
//   REAL_FLOAT  1: accumulate in float, 0: in double
//   SRC_DOUBLE  1: the input array holds doubles (converted to the working
//               type as they are loaded), 0: it holds the working type
//   BLOCK       reduce_blocks: elements per work group (a power of two,
//               the paper's block size B)
//   WG          reduce_blocks: work items per group (a power of two,
//               BLOCK / WG >= the vector width); each item loads
//               BLOCK / WG elements with vector loads and reduces them in
//               registers before the group's tree in local memory
//   P_MAX       reduce_partials: largest block (local memory holds it)
// Every level of the launch sequence reduces each block of its input,
// zero-padded to the full block, by a perfect binary tree; div2 halves at
// every node, so each block's result is the block mean over the padded
// block, and the host multiplies by C = 2^D / n at the end.

#include "../opencl/kernel_cl.hpp"

#include <string>

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {
namespace kernels {

// The working types and the combine of one method.
inline const char* reduce_preamble = R"(
#pragma OPENCL FP_CONTRACT OFF
#if REAL_FLOAT
#define REAL_T float
#else
#define REAL_T double
#endif
#if SRC_DOUBLE
#define SRC_T double
#else
#define SRC_T REAL_T
#endif
/* VW: values per vector load of reduce_blocks (16 bytes) */
#if REAL_FLOAT
#define VW 4
#else
#define VW 2
#endif
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
typedef REAL_T real;
typedef SRC_T src;
typedef CAT(REAL_T, VW) realv;
typedef CAT(SRC_T, VW) srcv;
#define convert_realv CAT(convert_, CAT(REAL_T, VW))
#define HALF ((real)0.5)

/* a <- a (+) b for one value of the method; for kahan (a, ac) + (b, bc) is
 * the compensated sum of two compensated values, TwoSum being exact. */
#if METHOD == 2
#define COMBINE(a, ac, b, bc)                         \
  {                                                   \
    const real s_ = (a) + (b);                        \
    const real z_ = s_ - (a);                         \
    const real e_ = ((a) - (s_ - z_)) + ((b) - z_);   \
    (ac) = (ac) + (bc) + e_;                          \
    (a) = s_;                                         \
  }
#elif METHOD == 1
#define COMBINE(a, ac, b, bc) { (a) = HALF * (a) + HALF * (b); }
#else
#define COMBINE(a, ac, b, bc) { (a) = (a) + (b); }
#endif
)";

/** The preamble joined to `body`, once, with static storage: the program
 *  cache keys on the source's address. Safe during static initialisation. */
#define CLBAYES_REDUCE_SOURCE(fn, body)                           \
  inline const char* fn() {                                       \
    static const std::string s = std::string(reduce_preamble) + body; \
    return s.c_str();                                             \
  }

CLBAYES_REDUCE_SOURCE(reduce_source, R"(
/* Both kernels share one program: each needs the other's options defined. */
#ifndef BLOCK
#define BLOCK 1024
#endif
#ifndef WG
#define WG 256
#endif
#ifndef P_MAX
#define P_MAX 1024
#endif

/**
 * Level 0 of the reduction: block g of x (BLOCK elements, the last one
 * zero-padded) becomes out_s[g] (and out_c[g] for kahan).
 *
 * Work item t loads vector k * WG + t of its block for k < BLOCK / WG / VW,
 * so consecutive items read consecutive addresses. Kahan accumulates the
 * loads compensated, lane by lane; pairwise and div2 combine them by a
 * perfect tree (over vectors, then over lanes). The WG partials are then
 * combined by a tree in local memory with sequential addressing.
 */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce_blocks(__global const src* x, long n, __global real* out_s,
                   __global real* out_c) {
  __local real ls[WG];
#if METHOD == 2
  __local real lc[WG];
#endif
  const int t = get_local_id(0);
  const long g = get_group_id(0);
  const long base = g * (long)BLOCK;
  realv v[BLOCK / WG / VW];
  if (base + BLOCK <= n) {
    __global const srcv* xv = (__global const srcv*)(x + base);
#pragma unroll
    for (int k = 0; k < BLOCK / WG / VW; ++k)
      v[k] = convert_realv(xv[k * WG + t]);
  } else {
    for (int k = 0; k < BLOCK / WG / VW; ++k) {
      const long i = base + (long)(k * WG + t) * VW;
      real e[VW];
      for (int l = 0; l < VW; ++l) e[l] = i + l < n ? (real)x[i + l] : (real)0;
#if VW == 4
      v[k] = (realv)(e[0], e[1], e[2], e[3]);
#else
      v[k] = (realv)(e[0], e[1]);
#endif
    }
  }
  real s, c = 0;
#if METHOD == 2
  realv vs = v[0], vc = (realv)0;
#pragma unroll
  for (int k = 1; k < BLOCK / WG / VW; ++k) {
    const realv ts = vs + v[k];
    const realv z = ts - vs;
    vc += (vs - (ts - z)) + (v[k] - z);
    vs = ts;
  }
  /* lanes: a perfect tree of compensated pairs */
#if VW == 4
  real a0 = vs.s0, c0 = vc.s0, a1 = vs.s1, c1 = vc.s1;
  real a2 = vs.s2, c2 = vc.s2, a3 = vs.s3, c3 = vc.s3;
  COMBINE(a0, c0, a2, c2);
  COMBINE(a1, c1, a3, c3);
  COMBINE(a0, c0, a1, c1);
  s = a0; c = c0;
#else
  real a0 = vs.s0, c0 = vc.s0, a1 = vs.s1, c1 = vc.s1;
  COMBINE(a0, c0, a1, c1);
  s = a0; c = c0;
#endif
#else
  /* first adds during load: a perfect tree over the loaded vectors */
#pragma unroll
  for (int w = BLOCK / WG / VW / 2; w > 0; w >>= 1)
    for (int k = 0; k < w; ++k) {
#if METHOD == 1
      v[k] = HALF * v[k] + HALF * v[k + w];
#else
      v[k] = v[k] + v[k + w];
#endif
    }
#if VW == 4
  real a0 = v[0].s0, a1 = v[0].s1, a2 = v[0].s2, a3 = v[0].s3;
  COMBINE(a0, c, a2, c);
  COMBINE(a1, c, a3, c);
  COMBINE(a0, c, a1, c);
#else
  real a0 = v[0].s0, a1 = v[0].s1;
  COMBINE(a0, c, a1, c);
#endif
  s = a0;
#endif
  ls[t] = s;
#if METHOD == 2
  lc[t] = c;
#endif
  barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
  for (int w = WG / 2; w > 0; w >>= 1) {
    if (t < w) {
#if METHOD == 2
      real a = ls[t], ac = lc[t];
      COMBINE(a, ac, ls[t + w], lc[t + w]);
      ls[t] = a;
      lc[t] = ac;
#else
      real a = ls[t];
      COMBINE(a, c, ls[t + w], c);
      ls[t] = a;
#endif
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (t == 0) {
    out_s[g] = ls[0];
#if METHOD == 2
    out_c[g] = lc[0];
#endif
  }
}

/**
 * Any later level, and the single remaining block: block g of the m values
 * s_in (with compensations c_in when has_c), `block` of them zero-padded
 * (a power of two <= P_MAX), becomes out_s[g] (and out_c[g]). Any work
 * group size works: the block is staged in local memory and each level of
 * its tree is shared out over the work items.
 */
__kernel void reduce_partials(__global const src* s_in,
                              __global const real* c_in, int has_c, long m,
                              int block, __global real* out_s,
                              __global real* out_c) {
  __local real ls[P_MAX];
#if METHOD == 2
  __local real lc[P_MAX];
#endif
  const int t = get_local_id(0);
  const int nt = get_local_size(0);
  const long base = get_group_id(0) * (long)block;
  for (int i = t; i < block; i += nt) {
    const long j = base + i;
    ls[i] = j < m ? (real)s_in[j] : (real)0;
#if METHOD == 2
    lc[i] = (has_c && j < m) ? c_in[j] : (real)0;
#endif
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int w = block / 2; w > 0; w >>= 1) {
    for (int i = t; i < w; i += nt) {
      real a = ls[i];
#if METHOD == 2
      real ac = lc[i];
      COMBINE(a, ac, ls[i + w], lc[i + w]);
      lc[i] = ac;
#else
      real ac = 0;
      COMBINE(a, ac, ls[i + w], ac);
#endif
      ls[i] = a;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (t == 0) {
    out_s[get_group_id(0)] = ls[0];
#if METHOD == 2
    out_c[get_group_id(0)] = lc[0];
#endif
  }
}
)")

// The host (reduce/sum_device.hpp) copies these and sets METHOD,
// REAL_FLOAT, SRC_DOUBLE, BLOCK, WG and P_MAX for each launch; buffers are
// plain cl::Buffer because the working type may be float.
inline kernel_cl<cl::Buffer, cl_long, cl::Buffer, cl::Buffer> reduce_blocks(
    "reduce_blocks", reduce_source(),
    {{"METHOD", 2}, {"REAL_FLOAT", 0}, {"SRC_DOUBLE", 1}, {"BLOCK", 1024},
     {"WG", 256}});
inline kernel_cl<cl::Buffer, cl::Buffer, cl_int, cl_long, cl_int, cl::Buffer,
                 cl::Buffer>
    reduce_partials("reduce_partials", reduce_source(),
                    {{"METHOD", 2}, {"REAL_FLOAT", 0}, {"SRC_DOUBLE", 1},
                     {"P_MAX", 1024}});

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
