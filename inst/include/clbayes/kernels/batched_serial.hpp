#ifndef CLBAYES_KERNELS_BATCHED_SERIAL_HPP
#define CLBAYES_KERNELS_BATCHED_SERIAL_HPP

// Serial-level batched device functions (batched-linalg.txt, "Serial
// interface"): one work item owns one small matrix and calls these like
// BLAS / LAPACK routines. They are not kernels but OpenCL C functions that
// composed kernels (kernels/batched_chol.hpp, batched_solve.hpp) include, so
// several of them run back to back on data the work item already touches.
//
// Every matrix is strided: element (i, j) of A lives at A[i * rs + j * cs].
// Contiguous column-major storage is rs = 1, cs = m; the interleaved batch
// layout (item index fastest, coalesced on a GPU) is rs = B, cs = B * m; a
// transpose is the same pointer with rs and cs swapped.
//
// The source is written once over the address space ASP and instantiated
// for __global (names ending _g) and __local (_l) by batched_instantiate().

#include <initializer_list>
#include <string>

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {
namespace kernels {

inline const char* batched_common_source = R"(
/* Element (i, j) of a strided matrix. */
#define EL(A, rs, cs, i, j) (A)[(i) * (rs) + (j) * (cs)]
/* True when a Cholesky pivot d is not usable: not above tol, or not finite. */
#define BAD_PIVOT(d, tol) (!((d) > (tol)) || isinf(d))
)";

inline const char* batched_serial_source = R"(
/**
 * Cholesky A = L L^T of the m x m matrix A (lower triangle read), in place,
 * left-looking (column j from the columns before it). The upper triangle is
 * set to zero. Returns 0, or j + 1 when pivot j is <= tol or not finite
 * (LAPACK's info; tol = 0 gives potrf's rule).
 */
int FN(serial_chol)(ASP double* A, int rs, int cs, int m, double tol) {
  for (int j = 0; j < m; ++j) {
    double d = EL(A, rs, cs, j, j);
    for (int k = 0; k < j; ++k) {
      const double l = EL(A, rs, cs, j, k);
      d -= l * l;
    }
    if (BAD_PIVOT(d, tol)) return j + 1;
    d = sqrt(d);
    EL(A, rs, cs, j, j) = d;
    const double inv = 1.0 / d;
    for (int i = j + 1; i < m; ++i) {
      double s = EL(A, rs, cs, i, j);
      for (int k = 0; k < j; ++k) s -= EL(A, rs, cs, i, k) * EL(A, rs, cs, j, k);
      EL(A, rs, cs, i, j) = s * inv;
    }
    for (int i = 0; i < j; ++i) EL(A, rs, cs, i, j) = 0.0;
  }
  return 0;
}

/**
 * LU without pivoting, A = L U in place (L unit lower, U upper).
 * Returns 0, or k + 1 when pivot k is exactly zero.
 */
int FN(serial_lu)(ASP double* A, int rs, int cs, int m) {
  for (int k = 0; k < m; ++k) {
    const double p = EL(A, rs, cs, k, k);
    if (p == 0.0) return k + 1;
    const double inv = 1.0 / p;
    for (int i = k + 1; i < m; ++i) EL(A, rs, cs, i, k) *= inv;
    for (int j = k + 1; j < m; ++j) {
      const double u = EL(A, rs, cs, k, j);
      for (int i = k + 1; i < m; ++i) EL(A, rs, cs, i, j) -= EL(A, rs, cs, i, k) * u;
    }
  }
  return 0;
}

/**
 * LU with partial pivoting, P A = L U in place (getrf). piv[k] (stride ps)
 * is the row swapped with row k at step k. Returns 0, or k + 1 when U[k, k]
 * is exactly zero (the factorization is then complete but singular).
 */
int FN(serial_lu_piv)(ASP double* A, int rs, int cs, int m, ASP int* piv, int ps) {
  int info = 0;
  for (int k = 0; k < m; ++k) {
    int p = k;
    double best = fabs(EL(A, rs, cs, k, k));
    for (int i = k + 1; i < m; ++i) {
      const double v = fabs(EL(A, rs, cs, i, k));
      if (v > best) { best = v; p = i; }
    }
    piv[k * ps] = p;
    if (p != k)
      for (int j = 0; j < m; ++j) {
        const double t = EL(A, rs, cs, k, j);
        EL(A, rs, cs, k, j) = EL(A, rs, cs, p, j);
        EL(A, rs, cs, p, j) = t;
      }
    const double d = EL(A, rs, cs, k, k);
    if (d == 0.0) { if (info == 0) info = k + 1; continue; }
    const double inv = 1.0 / d;
    for (int i = k + 1; i < m; ++i) EL(A, rs, cs, i, k) *= inv;
    for (int j = k + 1; j < m; ++j) {
      const double u = EL(A, rs, cs, k, j);
      for (int i = k + 1; i < m; ++i) EL(A, rs, cs, i, j) -= EL(A, rs, cs, i, k) * u;
    }
  }
  return info;
}

/** Apply the row swaps piv[0..m-1] (stride ps) to the m x r matrix B (laswp). */
void FN(serial_laswp)(ASP double* B, int rs, int cs, int m, int r, ASP const int* piv,
                      int ps) {
  for (int k = 0; k < m; ++k) {
    const int p = piv[k * ps];
    if (p == k) continue;
    for (int c = 0; c < r; ++c) {
      const double t = EL(B, rs, cs, k, c);
      EL(B, rs, cs, k, c) = EL(B, rs, cs, p, c);
      EL(B, rs, cs, p, c) = t;
    }
  }
}

/**
 * Solve L X = B in place for the m x r matrix B, L the lower triangle of A
 * (unit diagonal when unit != 0): forward substitution, column-oriented.
 */
void FN(serial_trsm_lower)(ASP const double* A, int ars, int acs, int m, int unit,
                           ASP double* B, int brs, int bcs, int r) {
  for (int c = 0; c < r; ++c)
    for (int k = 0; k < m; ++k) {
      double x = EL(B, brs, bcs, k, c);
      if (!unit) x /= EL(A, ars, acs, k, k);
      EL(B, brs, bcs, k, c) = x;
      for (int i = k + 1; i < m; ++i) EL(B, brs, bcs, i, c) -= EL(A, ars, acs, i, k) * x;
    }
}

/** Solve U X = B in place, U the upper triangle of A: back substitution. */
void FN(serial_trsm_upper)(ASP const double* A, int ars, int acs, int m, int unit,
                           ASP double* B, int brs, int bcs, int r) {
  for (int c = 0; c < r; ++c)
    for (int k = m - 1; k >= 0; --k) {
      double x = EL(B, brs, bcs, k, c);
      if (!unit) x /= EL(A, ars, acs, k, k);
      EL(B, brs, bcs, k, c) = x;
      for (int i = 0; i < k; ++i) EL(B, brs, bcs, i, c) -= EL(A, ars, acs, i, k) * x;
    }
}

/** Vector right-hand sides: x (stride inc) overwritten by L^-1 x / U^-1 x. */
void FN(serial_trsv_lower)(ASP const double* A, int ars, int acs, int m, int unit,
                           ASP double* x, int inc) {
  FN(serial_trsm_lower)(A, ars, acs, m, unit, x, inc, 0, 1);
}
void FN(serial_trsv_upper)(ASP const double* A, int ars, int acs, int m, int unit,
                           ASP double* x, int inc) {
  FN(serial_trsm_upper)(A, ars, acs, m, unit, x, inc, 0, 1);
}

/**
 * C = alpha A B + beta C with A m x k, B k x n, C m x n (gemm). Transposes
 * are strides: pass A's cs, rs to use A^T.
 */
void FN(serial_gemm)(double alpha, ASP const double* A, int ars, int acs,
                     ASP const double* B, int brs, int bcs, double beta,
                     ASP double* C, int crs, int ccs, int m, int n, int k) {
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double s = 0.0;
      for (int l = 0; l < k; ++l) s += EL(A, ars, acs, i, l) * EL(B, brs, bcs, l, j);
      const double c0 = beta == 0.0 ? 0.0 : beta * EL(C, crs, ccs, i, j);
      EL(C, crs, ccs, i, j) = alpha * s + c0;
    }
}

/** y = alpha A x + beta y with A m x n (gemv); x, y with strides incx, incy. */
void FN(serial_gemv)(double alpha, ASP const double* A, int ars, int acs,
                     ASP const double* x, int incx, double beta, ASP double* y,
                     int incy, int m, int n) {
  FN(serial_gemm)(alpha, A, ars, acs, x, incx, 0, beta, y, incy, 0, m, 1, n);
}
)";

/**
 * The source `body`, written over the address-space macro ASP and the name
 * macro FN, instantiated for one address space: __global (names ending _g)
 * when global is true, else __local (_l). FENCE is the barrier flag that
 * makes that space's writes visible to the work group.
 */
inline std::string batched_instance(const char* body, bool global) {
  const std::string head =
      global ? "#define ASP __global\n#define FN(n) n##_g\n"
               "#define FENCE (CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE)\n"
             : "#define ASP __local\n#define FN(n) n##_l\n"
               "#define FENCE CLK_LOCAL_MEM_FENCE\n";
  return head + body + "\n#undef ASP\n#undef FN\n#undef FENCE\n";
}

/** Both instances: global memory and local memory. */
inline std::string batched_instantiate(const char* body) {
  return batched_instance(body, true) + batched_instance(body, false);
}

// A kernel's program: the common macros, the device functions it calls (in
// the address spaces it uses) and itself; smaller programs build faster, and
// the build is once per session (and cached by most runtimes). Each kernel
// object is a function-local static beside its program's text, which exists
// before the kernel_cl keeps its address.
inline std::string batched_program(std::initializer_list<std::string> parts) {
  std::string s = batched_common_source;
  for (const std::string& p : parts) s += p;
  return s;
}

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
