#ifndef CLBAYES_EIGEN_HPP
#define CLBAYES_EIGEN_HPP

// Eigen for the CPU paths. Its vectorised packet types trip GCC's
// -Wignored-attributes inside Eigen's own headers; silence that there only.

#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"
#endif
#include <Eigen/Dense>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#include <cmath>

namespace clbayes {

/** Whether every entry of `a` is finite, by SIMD sums down its columns
 *  (contiguous in column-major storage): x * 0 is 0 for a finite x and NaN
 *  for NaN or +-Inf, and a sum with a NaN is NaN. Eigen's allFinite()
 *  compares entry by entry without SIMD: on a GLM's x it took 2.5 times as
 *  long, and longer than the matrix-vector product that reads x. */
template <typename Derived>
bool all_finite(const Eigen::MatrixBase<Derived>& a) {
  double s = 0;
  for (Eigen::Index j = 0; j < a.cols(); ++j) s += (a.col(j).array() * 0.0).sum();
  return std::isfinite(s);
}

}  // namespace clbayes

#endif
