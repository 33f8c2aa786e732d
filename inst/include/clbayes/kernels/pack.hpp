#ifndef CLBAYES_KERNELS_PACK_HPP
#define CLBAYES_KERNELS_PACK_HPP

// Packed transfer of triangular matrices (stan-opencl.txt, section 2.2,
// Figure 1). Packed layout, column-major: for view lower, column j holds rows
// j..n-1; for view upper, column j holds rows 0..j. A packed n x n triangle
// has n (n + 1) / 2 entries.

#include "../opencl/kernel_cl.hpp"

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {
namespace kernels {

inline const char* pack_source = R"(
// Offset of column j in the packed layout.
inline long packed_offset(long n, long j, int lower) {
  return lower ? j * n - j * (j - 1) / 2 : j * (j + 1) / 2;
}

/**
 * Unpack a packed triangle into the n x n matrix A; the other triangle is
 * set to zero. One work item per element of A.
 * @param[out] A n x n matrix
 * @param[in] packed n (n + 1) / 2 values
 * @param n order of A
 * @param lower 1 for the lower triangle, 0 for the upper
 */
__kernel void unpack(__global double* A, __global const double* packed,
                     int n, int lower) {
  const int i = get_global_id(0);
  const int j = get_global_id(1);
  if (i >= n || j >= n) return;
  const int inside = lower ? (i >= j) : (i <= j);
  const long off = packed_offset(n, j, lower) + (lower ? i - j : i);
  A[(long)j * n + i] = inside ? packed[off] : 0.0;
}

/**
 * Pack the lower or upper triangle of the n x n matrix A.
 * One work item per element of A; those outside the triangle do nothing.
 */
__kernel void pack(__global double* packed, __global const double* A,
                   int n, int lower) {
  const int i = get_global_id(0);
  const int j = get_global_id(1);
  if (i >= n || j >= n) return;
  if (lower ? (i < j) : (i > j)) return;
  const long off = packed_offset(n, j, lower) + (lower ? i - j : i);
  packed[off] = A[(long)j * n + i];
}
)";

inline kernel_cl<out_buffer, in_buffer, int, int> unpack("unpack", pack_source);
inline kernel_cl<out_buffer, in_buffer, int, int> pack("pack", pack_source);

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
