#ifndef CLBAYES_MCMC_SUPPORT_HPP
#define CLBAYES_MCMC_SUPPORT_HPP

// Bounded variables on an unconstrained scale. A variable with lower bound
// a and upper bound b is sampled as u with
//   x = a + exp(u)                     (a finite, b = +Inf)
//   x = b - exp(u)                     (a = -Inf, b finite)
//   x = a + (b - a) / (1 + exp(-u))    (both finite)
//   x = u                              (neither)
// and the target on u is f(x(u)) |dx/du|, so log |dx/du| is added to the
// log density: u, u, log(b - a) - softplus(u) - softplus(-u), 0. A
// positive scale parameter with a long right tail (the GP's kappa, psi and
// phi) is far closer to normal on the log scale, so slices are rounder and
// the widths fit them everywhere, not only near the mode.

#include <clbayes/eigen.hpp>
#include <clbayes/error.hpp>

#include <cmath>
#include <limits>
#include <string>

namespace clbayes {
namespace mcmc {

class support {
 public:
  /** No bounds in `dim` dimensions. */
  explicit support(int dim)
      : lower_(Eigen::VectorXd::Constant(dim, -inf())),
        upper_(Eigen::VectorXd::Constant(dim, inf())) {}

  support(const Eigen::VectorXd& lower, const Eigen::VectorXd& upper)
      : lower_(lower), upper_(upper) {
    if (lower.size() != upper.size())
      throw invalid_argument("upper", "must have as many values as `lower`");
    for (Eigen::Index j = 0; j < lower.size(); ++j) {
      if (std::isnan(lower[j]) || lower[j] == inf())
        throw invalid_argument("lower", "must be numbers below +Inf");
      if (std::isnan(upper[j]) || upper[j] == -inf())
        throw invalid_argument("upper", "must be numbers above -Inf");
      if (!(lower[j] < upper[j]))
        throw invalid_argument("upper", "must be greater than `lower` in every dimension");
    }
  }

  int dim() const { return static_cast<int>(lower_.size()); }
  bool unbounded() const {
    for (Eigen::Index j = 0; j < lower_.size(); ++j)
      if (std::isfinite(lower_[j]) || std::isfinite(upper_[j])) return false;
    return true;
  }
  const Eigen::VectorXd& lower() const { return lower_; }
  const Eigen::VectorXd& upper() const { return upper_; }

  /** x from u, one coordinate. */
  double to_x(int j, double u) const {
    const double a = lower_[j], b = upper_[j];
    if (std::isfinite(a) && std::isfinite(b)) return a + (b - a) / (1.0 + std::exp(-u));
    if (std::isfinite(a)) return a + std::exp(u);
    if (std::isfinite(b)) return b - std::exp(u);
    return u;
  }

  /** u from x, one coordinate; x must lie strictly inside the bounds. */
  double to_u(int j, double x) const {
    const double a = lower_[j], b = upper_[j];
    if (std::isfinite(a) && std::isfinite(b)) return std::log((x - a) / (b - x));
    if (std::isfinite(a)) return std::log(x - a);
    if (std::isfinite(b)) return std::log(b - x);
    return x;
  }

  /** log |dx/du|, one coordinate. */
  double log_jacobian(int j, double u) const {
    const double a = lower_[j], b = upper_[j];
    if (std::isfinite(a) && std::isfinite(b))
      return std::log(b - a) - softplus(u) - softplus(-u);
    if (std::isfinite(a) || std::isfinite(b)) return u;
    return 0.0;
  }

  /** dx/du at u (signed: negative for an upper bound alone), for the
   *  chain rule of the gradient samplers. */
  double slope(int j, double u) const {
    const double a = lower_[j], b = upper_[j];
    if (std::isfinite(a) && std::isfinite(b)) {
      const double s = 1.0 / (1.0 + std::exp(-u));
      return (b - a) * s * (1.0 - s);
    }
    if (std::isfinite(a)) return std::exp(u);
    if (std::isfinite(b)) return -std::exp(u);
    return 1.0;
  }

  /** d log |dx/du| / du, one coordinate. */
  double d_log_jacobian(int j, double u) const {
    const double a = lower_[j], b = upper_[j];
    if (std::isfinite(a) && std::isfinite(b)) return 1.0 - 2.0 / (1.0 + std::exp(-u));
    if (std::isfinite(a) || std::isfinite(b)) return 1.0;
    return 0.0;
  }

  /** |dx/du| at x (converts widths given on x to u). */
  double dx_du(int j, double x) const {
    const double a = lower_[j], b = upper_[j];
    if (std::isfinite(a) && std::isfinite(b)) return (x - a) * (b - x) / (b - a);
    if (std::isfinite(a)) return x - a;
    if (std::isfinite(b)) return b - x;
    return 1.0;
  }

  /** Whether x lies strictly inside the bounds. */
  bool inside(int j, double x) const { return x > lower_[j] && x < upper_[j]; }

 private:
  Eigen::VectorXd lower_, upper_;
  static double inf() { return std::numeric_limits<double>::infinity(); }
  static double softplus(double t) {
    return std::max(t, 0.0) + std::log1p(std::exp(-std::fabs(t)));
  }
};

}  // namespace mcmc
}  // namespace clbayes

#endif
