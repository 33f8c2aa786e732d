#ifndef CLBAYES_MCMC_METRIC_HPP
#define CLBAYES_MCMC_METRIC_HPP

// The sampler's coordinates. The updates (hyperrectangle or univariate) run
// on z, where the target's variables are x = center + S z with S lower
// triangular. With S = I they run on x itself. In warmup, S can be set to
// the Cholesky factor of the draws' covariance (a "dense metric", as in
// adaptive MCMC): z is then roughly uncorrelated with unit scales, so the
// axis-aligned box of Neal (2003, Section 5.1), or coordinate-wise updates,
// no longer have to fit a narrow diagonal ridge such as Example 1's
// (correlation -0.99) or the kappa-phi ridge of the GP posterior. The
// Jacobian |S| is a constant, so log f(x(z)) is the target's log density on
// z up to a constant and the slice levels carry over unchanged. S is fixed
// after warmup, so the kept draws come from a valid sampler. (Where the
// variables are bounded, the metric acts on their unconstrained scale u:
// see support.hpp and coordinates.hpp; "x" below is then u.)

#include <clbayes/eigen.hpp>

#include <cmath>

namespace clbayes {
namespace mcmc {

class affine_metric {
 public:
  explicit affine_metric(int dim)
      : center_(Eigen::VectorXd::Zero(dim)), diagonal_(Eigen::VectorXd::Ones(dim)) {}

  bool identity() const { return identity_; }
  /** Whether S is a full lower triangle; otherwise it is diagonal, kept as
   *  a vector (a model with 10^4 group-level effects has a 10^4 x 10^4
   *  S that a diagonal metric never needs). */
  bool dense() const { return dense_; }
  const Eigen::VectorXd& center() const { return center_; }
  /** The diagonal of a diagonal metric's S. */
  const Eigen::VectorXd& scale_diagonal() const { return diagonal_; }
  /** S, lower triangular (dense metrics only). */
  const Eigen::MatrixXd& scale() const { return scale_; }
  /** The Euclidean norm of each row of S: the length in x of a unit step
   *  in z along each variable's row. */
  Eigen::VectorXd row_norms() const {
    return dense_ ? Eigen::VectorXd(scale_.rowwise().norm()) : diagonal_.cwiseAbs();
  }

  /** Rows of z to rows of x. */
  void to_x(const Eigen::MatrixXd& z, Eigen::MatrixXd& x) const {
    if (identity_) {
      x = z;
      return;
    }
    if (dense_) {
      // A triangular product: Eigen runs it on this thread, where a general
      // product of this size would start OpenMP workers whose spin-wait then
      // slows the R density called next (5x on 2 cores).
      x.noalias() = z * scale_.triangularView<Eigen::Lower>().transpose();
    } else {
      x = z.array().rowwise() * diagonal_.transpose().array();
    }
    x.rowwise() += center_.transpose();
  }

  /** Rows of x to rows of z. */
  Eigen::MatrixXd to_z(const Eigen::MatrixXd& x) const {
    if (identity_) return x;
    Eigen::MatrixXd centred = x.rowwise() - center_.transpose();
    if (!dense_) return centred.array().rowwise() / diagonal_.transpose().array();
    // z^T = S^{-1} (x - c)^T
    return scale_.triangularView<Eigen::Lower>()
        .solve(centred.transpose())
        .transpose();
  }

  /** Gradients in x (rows) to gradients in z: on_x S. */
  void gradient_to_z(Eigen::MatrixXd& grad) const {
    if (identity_) return;
    if (!dense_) {
      grad.array().rowwise() *= diagonal_.transpose().array();
      return;
    }
    const Eigen::MatrixXd on_x = grad;
    grad.noalias() = on_x * scale_.triangularView<Eigen::Lower>();
  }

  /**
   * Set the metric from draws (rows) of x: center = their mean, S = the
   * Cholesky factor of their covariance shrunk towards its diagonal by
   * 5 / (n + 5) (few draws give a noisy estimate), or of the diagonal alone
   * when there are fewer than dim + 10 draws or `dense` is false (a
   * diagonal metric, computed from the variances alone). Returns false and
   * changes nothing when a variance is zero or not finite (e.g. chains that
   * have not moved).
   */
  bool estimate(const Eigen::MatrixXd& draws, bool dense = true) {
    const Eigen::Index n = draws.rows(), k = draws.cols();
    if (n < 3 || k != center_.size()) return false;
    const Eigen::VectorXd mean = draws.colwise().mean().transpose();
    const Eigen::MatrixXd centred = draws.rowwise() - mean.transpose();
    if (!dense || n < k + 10) {
      const Eigen::VectorXd var =
          centred.colwise().squaredNorm().transpose() / static_cast<double>(n - 1);
      for (Eigen::Index j = 0; j < k; ++j)
        if (!(var[j] > 0) || !std::isfinite(var[j])) return false;
      center_ = mean;
      diagonal_ = var.cwiseSqrt();
      scale_.resize(0, 0);
      dense_ = false;
      identity_ = false;
      return true;
    }
    Eigen::MatrixXd cov = (centred.transpose() * centred) / static_cast<double>(n - 1);
    for (Eigen::Index j = 0; j < k; ++j)
      if (!(cov(j, j) > 0) || !std::isfinite(cov(j, j))) return false;
    const double keep = static_cast<double>(n) / (static_cast<double>(n) + 5.0);
    const Eigen::VectorXd diag = cov.diagonal();
    cov *= keep;
    cov.diagonal() += (1.0 - keep) * diag;
    Eigen::LLT<Eigen::MatrixXd> llt(cov);
    if (llt.info() != Eigen::Success) return false;
    center_ = mean;
    scale_ = llt.matrixL();
    dense_ = true;
    identity_ = false;
    return true;
  }

 private:
  Eigen::VectorXd center_;
  Eigen::VectorXd diagonal_;  // S of a diagonal metric
  Eigen::MatrixXd scale_;     // S of a dense metric
  bool identity_ = true;
  bool dense_ = false;
};

}  // namespace mcmc
}  // namespace clbayes

#endif
