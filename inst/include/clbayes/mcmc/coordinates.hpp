#ifndef CLBAYES_MCMC_COORDINATES_HPP
#define CLBAYES_MCMC_COORDINATES_HPP

// The coordinates the updates run on. A point z of the sampler maps to the
// unconstrained scale u = center + S z (metric.hpp) and on to the target's
// variables x = x(u) (support.hpp); the sampler's target is
// log f(x(u(z))) + log |dx/du|, up to the constant log |S|.

#include <clbayes/mcmc/evaluator.hpp>
#include <clbayes/mcmc/metric.hpp>
#include <clbayes/mcmc/support.hpp>

#include <cmath>
#include <limits>

namespace clbayes {
namespace mcmc {

class coordinates {
 public:
  coordinates(const affine_metric& metric, const support& bounds)
      : metric_(metric), bounds_(bounds), unbounded_(bounds.unbounded()) {}

  /** Rows of z to rows of u. */
  void to_u(const Eigen::MatrixXd& z, Eigen::MatrixXd& u) const { metric_.to_x(z, u); }

  /** Rows of u to rows of x. */
  void u_to_x(const Eigen::MatrixXd& u, Eigen::MatrixXd& x) const {
    x = u;
    if (unbounded_) return;
    for (Eigen::Index j = 0; j < u.cols(); ++j)
      for (Eigen::Index i = 0; i < u.rows(); ++i)
        x(i, j) = bounds_.to_x(static_cast<int>(j), u(i, j));
  }

  /** Rows of z to rows of x. */
  void to_x(const Eigen::MatrixXd& z, Eigen::MatrixXd& x) const {
    Eigen::MatrixXd u;
    to_u(z, u);
    u_to_x(u, x);
  }

  /** Rows of x (strictly inside the bounds) to rows of u. */
  Eigen::MatrixXd x_to_u(const Eigen::MatrixXd& x) const {
    Eigen::MatrixXd u = x;
    if (unbounded_) return u;
    for (Eigen::Index j = 0; j < x.cols(); ++j)
      for (Eigen::Index i = 0; i < x.rows(); ++i)
        u(i, j) = bounds_.to_u(static_cast<int>(j), x(i, j));
    return u;
  }

  /** log |dx/du| of each row of u. */
  void add_log_jacobian(const Eigen::MatrixXd& u, Eigen::VectorXd& out) const {
    if (unbounded_) return;
    for (Eigen::Index i = 0; i < u.rows(); ++i)
      for (Eigen::Index j = 0; j < u.cols(); ++j)
        out[i] += bounds_.log_jacobian(static_cast<int>(j), u(i, j));
  }

  const affine_metric& metric() const { return metric_; }
  const support& bounds() const { return bounds_; }
  bool unbounded() const { return unbounded_; }

 private:
  const affine_metric& metric_;
  const support& bounds_;
  bool unbounded_;
};

/** The target seen on z: each batch of z goes to x for `inner`, and the
 *  log-Jacobian of the bounds transform is added. A point whose x is not
 *  finite (exp overflow far out on the log scale) is outside the support
 *  and gets -Inf, whatever `inner` says of its clamped value. The gradient
 *  on z follows by the chain rule: d/du_j = d/dx_j dx_j/du_j +
 *  d log|dx_j/du_j| / du_j, and d/dz = S' d/du. */
class coordinate_evaluator : public batch_evaluator {
 public:
  explicit coordinate_evaluator(const coordinates& coord) : coord_(coord) {}
  void bind(batch_evaluator& inner) { inner_ = &inner; }

  void operator()(const Eigen::MatrixXd& z, Eigen::VectorXd& out) override {
    if (coord_.metric().identity() && coord_.unbounded()) {
      (*inner_)(z, out);
      return;
    }
    const Eigen::MatrixXd& x = map(z);
    (*inner_)(x, out);
    if (out.size() != u_.rows()) return;  // counted_evaluator reports it
    finish(out);
  }

  bool has_gradient() const override { return inner_->has_gradient(); }

  void gradient(const Eigen::MatrixXd& z, Eigen::VectorXd& out,
                Eigen::MatrixXd& grad) override {
    if (coord_.metric().identity() && coord_.unbounded()) {
      inner_->gradient(z, out, grad);
      return;
    }
    const Eigen::MatrixXd& x = map(z);
    inner_->gradient(x, out, grad);
    if (out.size() != u_.rows() || grad.rows() != u_.rows() || grad.cols() != u_.cols())
      return;  // counted_evaluator reports it
    if (!coord_.unbounded()) {
      const support& b = coord_.bounds();
      for (Eigen::Index j = 0; j < u_.cols(); ++j)
        for (Eigen::Index i = 0; i < u_.rows(); ++i)
          grad(i, j) = grad(i, j) * b.slope(static_cast<int>(j), u_(i, j)) +
                       b.d_log_jacobian(static_cast<int>(j), u_(i, j));
    }
    coord_.metric().gradient_to_z(grad);
    finish(out);
  }

 private:
  const coordinates& coord_;
  batch_evaluator* inner_ = nullptr;
  Eigen::MatrixXd u_, x_;
  Eigen::Array<bool, Eigen::Dynamic, 1> bad_;

  /** u_ and x_ of the rows of z; returns the points `inner` sees. */
  const Eigen::MatrixXd& map(const Eigen::MatrixXd& z) {
    coord_.to_u(z, u_);
    bad_.setConstant(u_.rows(), false);
    if (coord_.unbounded()) return u_;
    coord_.u_to_x(u_, x_);
    bad_ = !x_.array().isFinite().rowwise().all();
    const double big = std::numeric_limits<double>::max();
    if (bad_.any()) x_ = x_.cwiseMax(-big).cwiseMin(big);
    return x_;
  }

  /** The log-Jacobian, and -Inf where x was not finite. */
  void finish(Eigen::VectorXd& out) const {
    if (coord_.unbounded()) return;
    coord_.add_log_jacobian(u_, out);
    for (Eigen::Index i = 0; i < u_.rows(); ++i)
      if (bad_[i]) out[i] = -std::numeric_limits<double>::infinity();
  }
};

}  // namespace mcmc
}  // namespace clbayes

#endif
