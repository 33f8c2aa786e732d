#ifndef CLBAYES_KERNELS_BATCHED_TEAM_HPP
#define CLBAYES_KERNELS_BATCHED_TEAM_HPP

// Team-level batched device functions (batched-linalg.txt, "Team
// interface"): the whole work group cooperates on one matrix, which lives in
// local memory when it fits (the _l instance) and in global memory beyond
// that (the _g instance). Every work item of the group must call a team
// function with the same arguments: the functions contain barriers, and a
// function that fails (a bad pivot) returns the same value in every work
// item, so control flow stays uniform.
//
// Strided storage as in batched_serial.hpp: A(i, j) = A[i * rs + j * cs].
// Local sizes are powers of two (team_sum and the pivot search reduce by
// halving).

#include "batched_serial.hpp"

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {
namespace kernels {

inline const char* batched_team_chol_source = R"(
#ifndef CHOL_PANEL
#define CHOL_PANEL 16
#endif

/**
 * Step j of a left-looking Cholesky (the paper's column-by-column scheme,
 * parallel-slice.txt section 4.1.2): column j, rows j..m-1, holds its
 * entries already updated with columns 0..k0-1; it is updated with the
 * finished columns k0..j-1 and scaled. Returns 0, or j + 1 when the pivot is
 * <= tol or not finite. The owner of row j broadcasts the pivot through
 * slot (2 local doubles, alternating between steps so one barrier per
 * phase suffices), and each work item keeps its first two rows' values in
 * registers between the phases: in global memory a step then costs one
 * round trip instead of three.
 */
int FN(team_chol_step)(ASP double* A, int rs, int cs, int m, int j, int k0, double tol,
                       __local double* slot) {
  const int lid = get_local_id(0), ls = get_local_size(0);
  double s0 = 0.0, s1 = 0.0;
  for (int i = j + lid, t = 0; i < m; i += ls, ++t) {
    double s = EL(A, rs, cs, i, j);
    for (int k = k0; k < j; ++k) s -= EL(A, rs, cs, i, k) * EL(A, rs, cs, j, k);
    if (t == 0) s0 = s;
    else if (t == 1) s1 = s;
    else EL(A, rs, cs, i, j) = s;
    if (i == j) slot[j & 1] = s;
  }
  barrier(FENCE);
  const double d = slot[j & 1];
  if (BAD_PIVOT(d, tol)) return j + 1;
  const double sd = sqrt(d), inv = 1.0 / sd;
  for (int i = j + lid, t = 0; i < m; i += ls, ++t) {
    const double s = t == 0 ? s0 : t == 1 ? s1 : EL(A, rs, cs, i, j);
    EL(A, rs, cs, i, j) = i == j ? sd : s * inv;
  }
  barrier(FENCE);
  return 0;
}

/**
 * Panel j0..j0+nb-1 (nb <= CHOL_PANEL) of a blocked left-looking Cholesky:
 * rows j0..m-1 of the panel hold original entries. Each work item owns rows
 * and updates them with all finished columns 0..j0-1 at once, reading each
 * A[i, k] once for the whole panel (CHOL_PANEL accumulators in registers),
 * which divides the memory traffic of the unblocked scheme by the panel
 * width; then the panel is factored column by column. Returns info.
 */
int FN(team_chol_panel)(ASP double* A, int rs, int cs, int m, int j0, int nb,
                        double tol, __local double* slot) {
  const int lid = get_local_id(0), ls = get_local_size(0);
  if (j0 > 0) {
    for (int i = j0 + lid; i < m; i += ls) {
      double acc[CHOL_PANEL];
      for (int c = 0; c < CHOL_PANEL; ++c) acc[c] = 0.0;
      for (int k = 0; k < j0; ++k) {
        const double l = EL(A, rs, cs, i, k);
        for (int c = 0; c < CHOL_PANEL; ++c)
          if (c < nb) acc[c] += l * EL(A, rs, cs, j0 + c, k);
      }
      for (int c = 0; c < nb && j0 + c <= i; ++c) EL(A, rs, cs, i, j0 + c) -= acc[c];
    }
  }
  barrier(FENCE);
  for (int j = j0; j < j0 + nb; ++j) {
    const int info = FN(team_chol_step)(A, rs, cs, m, j, j0, tol, slot);
    if (info) return info;
  }
  return 0;
}

/**
 * Team Cholesky A = L L^T in place; upper triangle zeroed. Returns info.
 * slot: 2 doubles of local scratch (a kernel declares __local double s[2]).
 */
int FN(team_chol)(ASP double* A, int rs, int cs, int m, double tol, __local double* slot) {
  const int lid = get_local_id(0), ls = get_local_size(0);
  for (int j0 = 0; j0 < m; j0 += CHOL_PANEL) {
    const int info =
        FN(team_chol_panel)(A, rs, cs, m, j0, min(CHOL_PANEL, m - j0), tol, slot);
    if (info) return info;
  }
  for (int t = lid; t < m * m; t += ls) {
    const int i = t % m, j = t / m;
    if (i < j) EL(A, rs, cs, i, j) = 0.0;
  }
  barrier(FENCE);
  return 0;
}

)";

// The LU family: elimination step, LU with and without pivoting, row swaps.
inline const char* batched_team_lu_source = R"(
/** Right-looking elimination step k of LU: scale column k, update the rest. */
void FN(team_lu_step)(ASP double* A, int rs, int cs, int m, int k) {
  const int lid = get_local_id(0), ls = get_local_size(0);
  const double inv = 1.0 / EL(A, rs, cs, k, k);
  for (int i = k + 1 + lid; i < m; i += ls) EL(A, rs, cs, i, k) *= inv;
  barrier(FENCE);
  const int w = m - k - 1;
  for (int t = lid; t < w * w; t += ls) {
    const int i = k + 1 + t % w, j = k + 1 + t / w;
    EL(A, rs, cs, i, j) -= EL(A, rs, cs, i, k) * EL(A, rs, cs, k, j);
  }
  barrier(FENCE);
}

/** Team LU without pivoting. Returns 0, or k + 1 at an exactly zero pivot. */
int FN(team_lu)(ASP double* A, int rs, int cs, int m) {
  barrier(FENCE);
  for (int k = 0; k < m; ++k) {
    if (EL(A, rs, cs, k, k) == 0.0) return k + 1;
    FN(team_lu_step)(A, rs, cs, m, k);
  }
  return 0;
}

/**
 * Team LU with partial pivoting, P A = L U (getrf); piv[k] is the row swapped
 * with row k. rv / ri are ls doubles / ints of local scratch for the pivot
 * search (ties go to the lowest row, as LAPACK's idamax). Returns 0, or k + 1
 * for the first exactly zero U[k, k].
 */
int FN(team_lu_piv)(ASP double* A, int rs, int cs, int m, __local int* piv,
                    __local double* rv, __local int* ri) {
  const int lid = get_local_id(0), ls = get_local_size(0);
  int info = 0;
  barrier(FENCE);
  for (int k = 0; k < m; ++k) {
    double best = -1.0;
    int p = m;
    for (int i = k + lid; i < m; i += ls) {
      const double v = fabs(EL(A, rs, cs, i, k));
      if (v > best) { best = v; p = i; }
    }
    rv[lid] = best;
    ri[lid] = p;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = ls / 2; h > 0; h /= 2) {
      if (lid < h && (rv[lid + h] > rv[lid] ||
                      (rv[lid + h] == rv[lid] && ri[lid + h] < ri[lid]))) {
        rv[lid] = rv[lid + h];
        ri[lid] = ri[lid + h];
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    p = ri[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) piv[k] = p;
    if (p != k)
      for (int j = lid; j < m; j += ls) {
        const double t = EL(A, rs, cs, k, j);
        EL(A, rs, cs, k, j) = EL(A, rs, cs, p, j);
        EL(A, rs, cs, p, j) = t;
      }
    barrier(FENCE);
    if (EL(A, rs, cs, k, k) == 0.0) {
      if (info == 0) info = k + 1;
      continue;
    }
    FN(team_lu_step)(A, rs, cs, m, k);
  }
  return info;
}

/** Apply the row swaps piv[0..m-1] to the m x r matrix B. */
void FN(team_laswp)(ASP double* B, int rs, int cs, int m, int r, __local const int* piv) {
  const int lid = get_local_id(0), ls = get_local_size(0);
  barrier(FENCE);
  for (int k = 0; k < m; ++k) {
    const int p = piv[k];
    if (p != k)
      for (int c = lid; c < r; c += ls) {
        const double t = EL(B, rs, cs, k, c);
        EL(B, rs, cs, k, c) = EL(B, rs, cs, p, c);
        EL(B, rs, cs, p, c) = t;
      }
    barrier(FENCE);
  }
}

)";

// Reductions, triangular solves and products.
inline const char* batched_team_blas_source = R"(
/** Sum of v over the work group, returned to every item; red holds ls doubles. */
double FN(team_sum)(double v, __local double* red) {
  const int lid = get_local_id(0), ls = get_local_size(0);
  red[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = ls / 2; h > 0; h /= 2) {
    if (lid < h) red[lid] += red[lid + h];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const double s = red[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return s;
}

/**
 * Solve L X = B in place (m x r), L the lower triangle of A, unit diagonal
 * when unit != 0. Step k: the r entries of row k are finished by the team,
 * then the team updates rows k+1..m-1 (the paper's Appendix A scheme, one
 * row at a time, every element of the update to its own work item).
 */
void FN(team_trsm_lower)(ASP const double* A, int ars, int acs, int m, int unit,
                         ASP double* B, int brs, int bcs, int r) {
  const int lid = get_local_id(0), ls = get_local_size(0);
  barrier(FENCE);
  for (int k = 0; k < m; ++k) {
    if (!unit) {
      const double inv = 1.0 / EL(A, ars, acs, k, k);
      for (int c = lid; c < r; c += ls) EL(B, brs, bcs, k, c) *= inv;
      barrier(FENCE);
    }
    const int w = m - k - 1;
    for (int t = lid; t < w * r; t += ls) {
      const int i = k + 1 + t % w, c = t / w;
      EL(B, brs, bcs, i, c) -= EL(A, ars, acs, i, k) * EL(B, brs, bcs, k, c);
    }
    barrier(FENCE);
  }
}

/** Solve U X = B in place, U the upper triangle of A (back substitution). */
void FN(team_trsm_upper)(ASP const double* A, int ars, int acs, int m, int unit,
                         ASP double* B, int brs, int bcs, int r) {
  const int lid = get_local_id(0), ls = get_local_size(0);
  barrier(FENCE);
  for (int k = m - 1; k >= 0; --k) {
    if (!unit) {
      const double inv = 1.0 / EL(A, ars, acs, k, k);
      for (int c = lid; c < r; c += ls) EL(B, brs, bcs, k, c) *= inv;
      barrier(FENCE);
    }
    for (int t = lid; t < k * r; t += ls) {
      const int i = t % k, c = t / k;
      EL(B, brs, bcs, i, c) -= EL(A, ars, acs, i, k) * EL(B, brs, bcs, k, c);
    }
    barrier(FENCE);
  }
}

/** Vector right-hand side x (stride inc). */
void FN(team_trsv_lower)(ASP const double* A, int ars, int acs, int m, int unit,
                         ASP double* x, int inc) {
  FN(team_trsm_lower)(A, ars, acs, m, unit, x, inc, 0, 1);
}
void FN(team_trsv_upper)(ASP const double* A, int ars, int acs, int m, int unit,
                         ASP double* x, int inc) {
  FN(team_trsm_upper)(A, ars, acs, m, unit, x, inc, 0, 1);
}

/** C = alpha A B + beta C (A m x k, B k x n); one entry of C per work item. */
void FN(team_gemm)(double alpha, ASP const double* A, int ars, int acs,
                   ASP const double* B, int brs, int bcs, double beta,
                   ASP double* C, int crs, int ccs, int m, int n, int k) {
  const int lid = get_local_id(0), ls = get_local_size(0);
  barrier(FENCE);
  for (int t = lid; t < m * n; t += ls) {
    const int i = t % m, j = t / m;
    double s = 0.0;
    for (int l = 0; l < k; ++l) s += EL(A, ars, acs, i, l) * EL(B, brs, bcs, l, j);
    const double c0 = beta == 0.0 ? 0.0 : beta * EL(C, crs, ccs, i, j);
    EL(C, crs, ccs, i, j) = alpha * s + c0;
  }
  barrier(FENCE);
}

/** y = alpha A x + beta y (A m x n). */
void FN(team_gemv)(double alpha, ASP const double* A, int ars, int acs,
                   ASP const double* x, int incx, double beta, ASP double* y,
                   int incy, int m, int n) {
  FN(team_gemm)(alpha, A, ars, acs, x, incx, 0, beta, y, incy, 0, m, 1, n);
}
)";

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
