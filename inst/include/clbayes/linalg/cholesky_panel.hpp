#ifndef CLBAYES_LINALG_CHOLESKY_PANEL_HPP
#define CLBAYES_LINALG_CHOLESKY_PANEL_HPP

// Right-looking blocked Cholesky with a fused leaf (the device path chosen
// by cholesky_tuning::panel): the blocked algorithm of stan-opencl.txt,
// section 3.3.1, reorganised so that the launches per column do not grow
// with the recursion depth. For each panel of nb columns at k:
//   for each inner block of ib <= CHOLESKY_BLOCK columns at c in the panel:
//     L_cc, L_cc^{-1}  = one work group (cholesky_block_inv)
//     L_below          = A_below L_cc^{-T}        (one product, in place)
//     A_panel_right   -= L_below L_below^T         (lower part of the panel only)
//   A22 -= L21 L21^T                               (one lower-only product, k = nb)
// That is 3 launches per ib columns plus one large update per panel,
// without the triangular inverses (9 launches for 256 rows, with
// allocations) and nested recursions of the first path; the one large
// update per panel keeps the inner dimension at nb for the GEMM.

#include "../interrupt.hpp"
#include "../kernels/cholesky.hpp"
#include "../opencl/sub_block.hpp"
#include "gemm.hpp"

#include <algorithm>

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace linalg {
namespace internal {

// L_below = A_below L_cc^{-T} for the wc columns at c. In place when the
// product has one column of tiles (TN >= wc) and no split-k: each work
// group then reads only its own rows of A_below, all before it writes
// them. Otherwise through the scratch t and a copy.
inline void panel_solve(matrix_cl& w, int c, int wc, int below, const matrix_cl& inv,
                        matrix_cl& t) {
  gemm_block inv_t{&inv, 0, 0, true, matrix_view::lower};
  gemm_block a{&w, c + wc, c};
  gemm_options opt;
  opt.splits = 1;
  if (choose_kernel(false, true, below, wc, 1, false).option("TN") >= wc) {
    linalg::gemm(w, c + wc, c, 0, a, inv_t, below, wc, wc, opt);
    return;
  }
  linalg::gemm(t, 0, 0, 0, a, inv_t, below, wc, wc, opt);
  opencl::sub_block(w, t, 0, 0, c + wc, c, below, wc);
}

// Factor the columns [k, k + b) of the n x n w (rows k and below), in
// inner blocks of ib; t (at least (n - k - 1) x ib) and inv (ib x ib)
// are scratch.
inline void cholesky_panel(matrix_cl& w, int k, int b, int ib, matrix_cl& t,
                           matrix_cl& inv, const cl::Buffer& flag) {
  const int n = w.rows();
  for (int c = k; c < k + b; c += ib) {
    const int wc = std::min(ib, k + b - c);
    const int below = n - c - wc;
    opencl::kernels::cholesky_block_inv(cl::NDRange(wc), cl::NDRange(wc), w, n, c, wc, inv,
                                        inv.rows(), flag);
    if (below == 0) return;
    panel_solve(w, c, wc, below, inv, t);
    const int right = k + b - c - wc;  // panel columns right of this block
    if (right > 0) {  // reads L_below from w (columns c .. c + wc), not written
      gemm_options opt;
      opt.alpha = -1.0;
      opt.beta = 1.0;
      opt.lower_only = true;
      linalg::gemm(w, c + wc, c + wc, 0, gemm_block{&w, c + wc, c},
                   gemm_block{&w, c + wc, c, true}, below, right, wc, opt);
    }
  }
}

// The whole factorisation of w in place (lower triangle), panels of nb
// columns (a multiple of ib), inner blocks of ib <= CHOLESKY_BLOCK.
inline void cholesky_right_looking(matrix_cl& w, int nb, int ib, const cl::Buffer& flag) {
  const int n = w.rows();
  matrix_cl t(std::max(1, n - 1), ib);
  matrix_cl inv(ib, ib);
  for (int k = 0; k < n; k += nb) {
    check_interrupt();
    const int b = std::min(nb, n - k);
    cholesky_panel(w, k, b, ib, t, inv, flag);
    const int rest = n - k - b;
    if (rest == 0) break;
    // A22 -= L21 L21^T: L21 is read from w (columns k .. k + b), which the
    // product does not write.
    gemm_options opt;
    opt.alpha = -1.0;
    opt.beta = 1.0;
    opt.lower_only = true;
    linalg::gemm(w, k + b, k + b, 0, gemm_block{&w, k + b, k},
                 gemm_block{&w, k + b, k, true}, rest, rest, b, opt);
  }
}

}  // namespace internal
}  // namespace linalg
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
