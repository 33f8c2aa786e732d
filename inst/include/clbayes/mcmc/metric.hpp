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
      : center_(Eigen::VectorXd::Zero(dim)),
        scale_(Eigen::MatrixXd::Identity(dim, dim)) {}

  bool identity() const { return identity_; }
  const Eigen::VectorXd& center() const { return center_; }
  /** S, lower triangular. */
  const Eigen::MatrixXd& scale() const { return scale_; }

  /** Rows of z to rows of x. */
  void to_x(const Eigen::MatrixXd& z, Eigen::MatrixXd& x) const {
    if (identity_) {
      x = z;
      return;
    }
    // A triangular product: Eigen runs it on this thread, where a general
    // product of this size would start OpenMP workers whose spin-wait then
    // slows the R density called next (5x on 2 cores).
    x.noalias() = z * scale_.triangularView<Eigen::Lower>().transpose();
    x.rowwise() += center_.transpose();
  }

  /** Rows of x to rows of z. */
  Eigen::MatrixXd to_z(const Eigen::MatrixXd& x) const {
    if (identity_) return x;
    Eigen::MatrixXd centred = x.rowwise() - center_.transpose();
    // z^T = S^{-1} (x - c)^T
    return scale_.triangularView<Eigen::Lower>()
        .solve(centred.transpose())
        .transpose();
  }

  /**
   * Set the metric from draws (rows) of x: center = their mean, S = the
   * Cholesky factor of their covariance shrunk towards its diagonal by
   * 5 / (n + 5) (few draws give a noisy estimate), or of the diagonal alone
   * when there are fewer than dim + 10 draws or `dense` is false (a
   * diagonal metric). Returns false and changes nothing when a variance is
   * zero or not finite (e.g. chains that have not moved).
   */
  bool estimate(const Eigen::MatrixXd& draws, bool dense = true) {
    const Eigen::Index n = draws.rows(), k = draws.cols();
    if (n < 3 || k != center_.size()) return false;
    const Eigen::VectorXd mean = draws.colwise().mean().transpose();
    const Eigen::MatrixXd centred = draws.rowwise() - mean.transpose();
    Eigen::MatrixXd cov = (centred.transpose() * centred) / static_cast<double>(n - 1);
    for (Eigen::Index j = 0; j < k; ++j)
      if (!(cov(j, j) > 0) || !std::isfinite(cov(j, j))) return false;
    if (!dense || n < k + 10) {
      cov = Eigen::MatrixXd(cov.diagonal().asDiagonal());
    } else {
      const double keep = static_cast<double>(n) / (static_cast<double>(n) + 5.0);
      const Eigen::VectorXd diag = cov.diagonal();
      cov *= keep;
      cov.diagonal() += (1.0 - keep) * diag;
    }
    Eigen::LLT<Eigen::MatrixXd> llt(cov);
    if (llt.info() != Eigen::Success) return false;
    center_ = mean;
    scale_ = llt.matrixL();
    identity_ = false;
    return true;
  }

 private:
  Eigen::VectorXd center_;
  Eigen::MatrixXd scale_;
  bool identity_ = true;
};

}  // namespace mcmc
}  // namespace clbayes

#endif
