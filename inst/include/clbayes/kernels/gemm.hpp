#ifndef CLBAYES_KERNELS_GEMM_HPP
#define CLBAYES_KERNELS_GEMM_HPP

// The GEMM family (stan-opencl.txt, section 3.1): one register-blocked,
// local-memory tiled kernel that covers
//   - C = alpha op(A) op(B) + beta C on sub-blocks (offsets and leading
//     dimensions), so the blocked Cholesky works in place;
//   - triangular operands: the dot products start and stop where the views
//     say the operands are zero (section 3.1), and elements outside a view
//     are read as zero even if the buffer holds something else there;
//   - a lower-triangle-only result (C = A A^T computes one triangle,
//     section 3.1.2);
//   - batches of equal-shaped products at fixed strides (the batched
//     triangular inverse, tri-inverse-kernels.txt);
//   - split-k for long inner dimensions (section 3.1.1): the k range is cut
//     into `splits` parts, each written to its own copy of C, and
//     gemm_split_sum adds the copies.
// Tuning knobs are build options: TM x TN is the tile of C of one work
// group, TK the depth of a local-memory step, WPTM x WPTN the register block
// of one work item (work per thread); the work group is
// (TM / WPTM) x (TN / WPTN). TRANS_A / TRANS_B pick op() at build time so
// each variant loads its tiles with coalesced reads.

#include "../opencl/kernel_cl.hpp"

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {
namespace kernels {

inline const char* gemm_source = R"(
#define RTSM (TM / WPTM)
#define RTSN (TN / WPTN)
#define NT (RTSM * RTSN)

// Bits of `views`: which op() operand is triangular, and whether only the
// lower triangle of C is computed.
#define A_LOWER 1
#define A_UPPER 2
#define B_LOWER 4
#define B_UPPER 8
#define C_LOWER_ONLY 16

/**
 * C = alpha * op(A) * op(B) + beta * C, column-major, op(A) m x k and op(B)
 * k x n. Element (i, j) of C is C[c_off + z * c_stride + j * ldc + i] where
 * z = get_global_id(2); A and B advance by a_stride / b_stride per batch
 * item (z / splits). With splits > 1, work items z cover the k range in
 * `splits` parts and C must be a scratch buffer of partial products (beta
 * is then 0). When beta is 0, C is not read.
 * Launch: global (ceil(m / TM) * RTSM, ceil(n / TN) * RTSN, batch * splits),
 * local (RTSM, RTSN, 1).
 */
__kernel void gemm(__global double* C, __global const double* A,
                   __global const double* B, int m, int n, int k,
                   long a_off, int lda, long a_stride,
                   long b_off, int ldb, long b_stride,
                   long c_off, int ldc, long c_stride,
                   double alpha, double beta, int views, int splits) {
  __local double a_tile[TK][TM];
  __local double b_tile[TK][TN + 1];
  const int tx = get_local_id(0);
  const int ty = get_local_id(1);
  const int tid = ty * RTSM + tx;
  const int i0 = get_group_id(0) * TM;
  const int j0 = get_group_id(1) * TN;
  const int z = get_global_id(2);
  const int item = z / splits;
  const int split = z % splits;
  // A whole tile above the diagonal of a lower-only result: nothing to do.
  // The condition is uniform over the work group, so no barrier is skipped.
  if ((views & C_LOWER_ONLY) && i0 + TM - 1 < j0) return;

  // The k range where both operands of this tile can be non-zero.
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

  double acc[WPTM][WPTN];
#pragma unroll
  for (int wm = 0; wm < WPTM; ++wm)
#pragma unroll
    for (int wn = 0; wn < WPTN; ++wn) acc[wm][wn] = 0.0;

  for (int t = k_lo; t < k_hi; t += TK) {
    for (int e = tid; e < TM * TK; e += NT) {
#if TRANS_A
      const int kk = e % TK, ii = e / TK;  // A is k x m: contiguous in k
#else
      const int ii = e % TM, kk = e / TM;  // A is m x k: contiguous in i
#endif
      const int gi = i0 + ii, gk = t + kk;
      double v = 0.0;
      if (gi < m && gk < k_hi && !((views & A_LOWER) && gk > gi) &&
          !((views & A_UPPER) && gk < gi)) {
#if TRANS_A
        v = A[a_base + (long)gi * lda + gk];
#else
        v = A[a_base + (long)gk * lda + gi];
#endif
      }
      a_tile[kk][ii] = v;
    }
    for (int e = tid; e < TN * TK; e += NT) {
#if TRANS_B
      const int jj = e % TN, kk = e / TN;  // B is n x k: contiguous in j
#else
      const int kk = e % TK, jj = e / TK;  // B is k x n: contiguous in k
#endif
      const int gj = j0 + jj, gk = t + kk;
      double v = 0.0;
      if (gj < n && gk < k_hi && !((views & B_LOWER) && gk < gj) &&
          !((views & B_UPPER) && gk > gj)) {
#if TRANS_B
        v = B[b_base + (long)gk * ldb + gj];
#else
        v = B[b_base + (long)gj * ldb + gk];
#endif
      }
      b_tile[kk][jj] = v;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    // Fully unrolled so that acc, a_reg and b_reg live in registers.
#pragma unroll
    for (int kk = 0; kk < TK; ++kk) {
      double a_reg[WPTM];
      double b_reg[WPTN];
#pragma unroll
      for (int wm = 0; wm < WPTM; ++wm) a_reg[wm] = a_tile[kk][tx + wm * RTSM];
#pragma unroll
      for (int wn = 0; wn < WPTN; ++wn) b_reg[wn] = b_tile[kk][ty + wn * RTSN];
#pragma unroll
      for (int wm = 0; wm < WPTM; ++wm)
#pragma unroll
        for (int wn = 0; wn < WPTN; ++wn)
          acc[wm][wn] = fma(a_reg[wm], b_reg[wn], acc[wm][wn]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  const long c_base = c_off + z * c_stride;
  for (int wn = 0; wn < WPTN; ++wn) {
    const int j = j0 + ty + wn * RTSN;
    if (j >= n) break;
    for (int wm = 0; wm < WPTM; ++wm) {
      const int i = i0 + tx + wm * RTSM;
      if (i >= m) break;
      if ((views & C_LOWER_ONLY) && i < j) continue;
      const long at = c_base + (long)j * ldc + i;
      double v = alpha * acc[wm][wn];
      if (beta != 0.0) v += beta * C[at];
      C[at] = v;
    }
  }
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

/** Tile of a work group, its depth and the register block: the first
 *  build's (linalg::gemm sets them from its gemm_settings before every
 *  launch; gemm_split_sum keeps these). */
inline std::map<std::string, int> gemm_options(int trans_a, int trans_b) {
  return {{"TM", 64}, {"TN", 64}, {"TK", 16}, {"WPTM", 4}, {"WPTN", 4},
          {"TRANS_A", trans_a}, {"TRANS_B", trans_b}};
}

using gemm_kernel =
    kernel_cl<in_out_buffer, in_buffer, in_buffer, int, int, int, cl_long, int,
              cl_long, cl_long, int, cl_long, cl_long, int, cl_long, double,
              double, int, int>;

inline gemm_kernel gemm_nn("gemm", gemm_source, gemm_options(0, 0));
inline gemm_kernel gemm_tn("gemm", gemm_source, gemm_options(1, 0));
inline gemm_kernel gemm_nt("gemm", gemm_source, gemm_options(0, 1));
inline gemm_kernel gemm_tt("gemm", gemm_source, gemm_options(1, 1));

inline kernel_cl<in_out_buffer, in_buffer, int, int, int, cl_long, int, double,
                 int>
    gemm_split_sum("gemm_split_sum", gemm_source, gemm_options(0, 0));

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
