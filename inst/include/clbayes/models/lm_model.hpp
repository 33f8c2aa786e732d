#ifndef CLBAYES_MODELS_LM_MODEL_HPP
#define CLBAYES_MODELS_LM_MODEL_HPP

// parallel-slice.txt Example 1: linear regression y = X b + e, e ~ N(0, 1)
// with known variance and flat priors on b (lm_model(y, X); the formula
// lm_model(), with sigma unknown, is a normal_id glm_evaluator). The posterior is
// N(bhat, (X'X)^-1) with bhat = (X'X)^-1 X'y, so up to a constant
//   log p(b | y) = -0.5 (b - bhat)' X'X (b - bhat),
// which equals -0.5 ||y - X b||^2 + const but costs p^2 per point instead
// of n p, and does not lose digits to cancellation.

#include <clbayes/eigen.hpp>
#include <clbayes/error.hpp>
#include <clbayes/mcmc/evaluator.hpp>

namespace clbayes {
namespace models {

class lm_evaluator : public mcmc::batch_evaluator {
 public:
  /** @param X n x p design (column-major), @param y n responses. */
  lm_evaluator(const Eigen::Ref<const Eigen::MatrixXd>& X,
               const Eigen::Ref<const Eigen::VectorXd>& y) {
    if (X.rows() != y.size())
      throw invalid_argument("X", "must have one row per element of `y`");
    if (!X.allFinite()) throw invalid_argument("X", "must be finite");
    if (!y.allFinite()) throw invalid_argument("y", "must be finite");
    xtx_ = X.transpose() * X;
    Eigen::LDLT<Eigen::MatrixXd> ldlt(xtx_);
    const double scale = xtx_.diagonal().cwiseAbs().maxCoeff();
    if (ldlt.info() != Eigen::Success || !(scale > 0) ||
        ldlt.vectorD().minCoeff() <= 1e-12 * scale)
      throw invalid_argument("X", "must have full column rank (the posterior "
                                  "under flat priors is improper otherwise)");
    bhat_ = ldlt.solve(X.transpose() * y);
  }

  void operator()(const Eigen::MatrixXd& points, Eigen::VectorXd& out) override {
    const Eigen::MatrixXd d = points.rowwise() - bhat_.transpose();
    out = -0.5 * ((d * xtx_).cwiseProduct(d)).rowwise().sum();
  }

  bool has_gradient() const override { return true; }

  /** The gradient -X'X (b - bhat) of each row, from the same product. */
  void gradient(const Eigen::MatrixXd& points, Eigen::VectorXd& out,
                Eigen::MatrixXd& grad) override {
    const Eigen::MatrixXd d = points.rowwise() - bhat_.transpose();
    grad.noalias() = -(d * xtx_);
    out = 0.5 * (grad.cwiseProduct(d)).rowwise().sum();
  }

  const Eigen::VectorXd& mean() const { return bhat_; }
  const Eigen::MatrixXd& precision() const { return xtx_; }

 private:
  Eigen::MatrixXd xtx_;
  Eigen::VectorXd bhat_;
};

}  // namespace models
}  // namespace clbayes

#endif
