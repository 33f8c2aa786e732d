#ifndef CLBAYES_KERNELS_TRI_INVERSE_HPP
#define CLBAYES_KERNELS_TRI_INVERSE_HPP

// First step of the batched lower-triangular inverse (tri-inverse-kernels.txt,
// "diag_inv"; stan-opencl.txt, section 3.2.1, blocks S1 of Figure 3): every
// DIAG_BLOCK x DIAG_BLOCK block on the diagonal is replaced by its inverse,
// one work group per block. The later steps (C3 = -C2 A3 C1 over growing
// block sizes) are batched products of the GEMM kernel (kernels/gemm.hpp).

#include "../opencl/kernel_cl.hpp"

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {
namespace kernels {

inline const char* tri_inverse_source = R"(
/**
 * In the n x n lower-triangular matrix A, replace each diagonal block
 * [g B, min(n, (g + 1) B)) (B = DIAG_BLOCK, g = the work group) by its
 * inverse. Work item t solves L x = e_t by forward substitution for column
 * t of the inverse, so no work item waits for another; the block and the
 * result sit in local memory and go back to A with coalesced writes.
 * Launch: global ceil(n / B) * B, local B.
 */
__kernel void diag_inv(__global double* A, int n) {
  __local double L[DIAG_BLOCK][DIAG_BLOCK + 1];
  __local double X[DIAG_BLOCK][DIAG_BLOCK + 1];
  const int t = get_local_id(0);
  const int o = get_group_id(0) * DIAG_BLOCK;
  const int b = min(DIAG_BLOCK, n - o);
  if (t < b)
    for (int c = 0; c < b; ++c) L[t][c] = A[(long)(o + c) * n + o + t];
  barrier(CLK_LOCAL_MEM_FENCE);
  if (t < b) {
    for (int r = 0; r < t; ++r) X[r][t] = 0.0;
    X[t][t] = 1.0 / L[t][t];
    for (int r = t + 1; r < b; ++r) {
      double s = 0.0;
      for (int q = t; q < r; ++q) s = fma(L[r][q], X[q][t], s);
      X[r][t] = -s / L[r][r];
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (t < b)
    for (int c = 0; c < b; ++c) A[(long)(o + c) * n + o + t] = X[t][c];
}
)";

inline kernel_cl<in_out_buffer, int> diag_inv("diag_inv", tri_inverse_source,
                                              {{"DIAG_BLOCK", 32}});

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
