#ifndef CLBAYES_KERNELS_CHECK_HPP
#define CLBAYES_KERNELS_CHECK_HPP

// Input checks on data that lives on the device (stan-opencl.txt, section
// 3.5.6). Each kernel sets a flag when it finds a problem; no work item
// ever clears it, so there is no race.

#include "../opencl/kernel_cl.hpp"

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {
namespace kernels {

inline const char* check_source = R"(
#ifndef SYM_TILE  // the other kernels of this source are built without it
#define SYM_TILE 32
#define SYM_ROWS 8
#endif

/**
 * flag[0] = 1 if any element of the rows x cols matrix A is NaN or infinite.
 */
__kernel void check_nan(__global const double* A, int rows, int cols,
                        __global int* flag) {
  const int i = get_global_id(0);
  const int j = get_global_id(1);
  if (i < rows && j < cols && !isfinite(A[(long)j * rows + i])) flag[0] = 1;
}

/**
 * flag[slot] = 1 if |A[i,j] - A[j,i]| > tol * max(|A[i,j]|, |A[j,i]|) for
 * some i > j (a relative tolerance). A is n x n. Tiles of SYM_TILE x SYM_TILE:
 * the group of tile (bi, bj), bi >= bj, first reads the mirror tile
 * (bj, bi) into local memory along its columns, so that both tiles are
 * read with coalesced loads (reading A[i, j] and A[j, i] directly makes
 * one of the two a strided load per work item).
 * Launch: global (T * SYM_TILE, T * SYM_ROWS), local (SYM_TILE, SYM_ROWS),
 * T = ceil(n / SYM_TILE).
 */
__kernel void check_symmetric(__global const double* A, int n, double tol,
                              __global int* flag, int slot) {
  __local double t[SYM_TILE][SYM_TILE + 1];
  const int bi = get_group_id(0), bj = get_group_id(1);
  const int x = get_local_id(0), y = get_local_id(1);
  const int lower = bi >= bj;  // tiles above the diagonal only pass the barrier
  // t[c][r] = A[bj * SYM_TILE + r, bi * SYM_TILE + c]
  for (int c = y; lower && c < SYM_TILE; c += SYM_ROWS) {
    const int row = bj * SYM_TILE + x, col = bi * SYM_TILE + c;
    t[c][x] = row < n && col < n ? A[(long)col * n + row] : 0.0;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const int i = bi * SYM_TILE + x;
  for (int c = y; lower && c < SYM_TILE; c += SYM_ROWS) {
    const int j = bj * SYM_TILE + c;
    if (i < n && j < n && i > j) {
      const double a = A[(long)j * n + i];
      const double b = t[x][c];  // A[j, i]
      if (fabs(a - b) > tol * fmax(fabs(a), fabs(b))) flag[slot] = 1;
    }
  }
}

/**
 * W = the lower triangle of the n x n A (zeros above the diagonal), with
 * the checks of check_nan and check_symmetric on the way, in one pass over
 * A and without a read back of its own: flags[1] = 1 if an element of A is
 * NaN or infinite, flags[2] = 1 if A is not symmetric to relative
 * tolerance tol (the Cholesky reads them with its pivot flag, flags[0]).
 * Tiles and launch as check_symmetric, from tile column bj0 (the
 * Cholesky copies its first panel's columns first): the group of tile
 * (bi, bj), bi >= bj, reads the mirror tile through local memory, writes
 * the lower tile and zeros into the mirror's place.
 */
__kernel void copy_lower_checked(__global const double* A, __global double* W, int n,
                                 double tol, __global int* flags, int bj0) {
  __local double t[SYM_TILE][SYM_TILE + 1];
  const int bi = get_group_id(0), bj = bj0 + get_group_id(1);
  const int x = get_local_id(0), y = get_local_id(1);
  if (bi < bj) return;  // uniform over the group
  for (int c = y; c < SYM_TILE; c += SYM_ROWS) {  // t[c][r] = A[bj T + r, bi T + c]
    const int row = bj * SYM_TILE + x, col = bi * SYM_TILE + c;
    t[c][x] = row < n && col < n ? A[(long)col * n + row] : 0.0;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  int bad = 0, asym = 0;
  const int i = bi * SYM_TILE + x;
  for (int c = y; c < SYM_TILE; c += SYM_ROWS) {
    const int j = bj * SYM_TILE + c;
    if (i < n && j < n && i >= j) {
      const double a = A[(long)j * n + i];
      const double b = t[x][c];  // A[j, i]
      bad |= !isfinite(a) || !isfinite(b);
      asym |= i > j && fabs(a - b) > tol * fmax(fabs(a), fabs(b));
      W[(long)j * n + i] = a;
    }
    // The mirror's place: row bj T + x, column bi T + c, zero above the diagonal.
    const int row = bj * SYM_TILE + x, col = bi * SYM_TILE + c;
    if (row < n && col < n && row < col) W[(long)col * n + row] = 0.0;
  }
  if (bad) flags[1] = 1;
  if (asym) flags[2] = 1;
}

/**
 * Columns c0 .. c0 + nc - 1 of W = the lower triangle of the n x n A, zeros
 * above the diagonal, with checks of those columns of A on the way, in
 * the same pass: flags[nan_slot] = 1 if an element is NaN or infinite,
 * flags[zero_slot] = 1 if a diagonal element is zero (zero_slot < 0: not
 * checked). The caller reads the flags once, after the work that uses W
 * (linalg/tri_inverse.hpp, cholesky_grad.hpp; by block columns as they
 * arrive, linalg/cholesky_host.hpp). Launch: global (n, nc).
 */
__kernel void copy_lower_flagged(__global const double* A, __global double* W, int n, int c0,
                                 int nc, __global int* flags, int nan_slot, int zero_slot) {
  const int i = get_global_id(0), j = c0 + get_global_id(1);
  if (i >= n || j >= c0 + nc) return;
  const long at = (long)j * n + i;
  const double a = A[at];
  if (!isfinite(a)) flags[nan_slot] = 1;
  if (zero_slot >= 0 && i == j && a == 0.0) flags[zero_slot] = 1;
  W[at] = i >= j ? a : 0.0;
}

/**
 * flag[0] = 1 if a diagonal element of the rows x cols matrix A is zero.
 */
__kernel void check_diagonal_zeros(__global const double* A, int rows,
                                   int cols, __global int* flag) {
  const int i = get_global_id(0);
  if (i < rows && i < cols && A[(long)i * rows + i] == 0.0) flag[0] = 1;
}
)";

// The flag is a one-element device buffer of int, created by the host
// function that runs the check; it is passed as a plain cl::Buffer.
inline kernel_cl<in_buffer, int, int, cl::Buffer> check_nan("check_nan",
                                                            check_source);
inline kernel_cl<in_buffer, int, double, cl::Buffer, int> check_symmetric(
    "check_symmetric", check_source, {{"SYM_TILE", 32}, {"SYM_ROWS", 8}});
inline kernel_cl<in_buffer, out_buffer, int, double, cl::Buffer, int> copy_lower_checked(
    "copy_lower_checked", check_source, {{"SYM_TILE", 32}, {"SYM_ROWS", 8}});
inline kernel_cl<in_buffer, out_buffer, int, int, int, cl::Buffer, int, int> copy_lower_flagged(
    "copy_lower_flagged", check_source);
inline kernel_cl<in_buffer, int, int, cl::Buffer> check_diagonal_zeros(
    "check_diagonal_zeros", check_source);

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
