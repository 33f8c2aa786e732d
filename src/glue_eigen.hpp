#ifndef CLBAYES_GLUE_EIGEN_HPP
#define CLBAYES_GLUE_EIGEN_HPP

// R matrices as Eigen matrices and back, for the glue of the CPU paths.

#include "glue.hpp"
#include <clbayes/eigen.hpp>

namespace glue {

/** An R matrix seen as an Eigen matrix (no copy). */
inline Eigen::Map<const Eigen::MatrixXd> as_map(const Rcpp::NumericMatrix& x) {
  return Eigen::Map<const Eigen::MatrixXd>(x.begin(), x.nrow(), x.ncol());
}

/** An Eigen matrix copied into a new R matrix. */
inline Rcpp::NumericMatrix as_r(const Eigen::MatrixXd& m) {
  Rcpp::NumericMatrix out(m.rows(), m.cols());
  std::copy(m.data(), m.data() + m.size(), out.begin());
  return out;
}

}  // namespace glue

#endif
