#ifndef CLBAYES_MODELS_PRIORS_HPP
#define CLBAYES_MODELS_PRIORS_HPP

// Independent priors on the parameters of a model, one per parameter, with
// their log densities and gradients evaluated for a whole batch of points
// (one point per row) column by column. The distributions are rstanarm's:
// normal(location, scale), student_t(df, location, scale) (a Cauchy is a
// Student-t with df = 1), laplace(location, scale) (Stan's
// double_exponential), exponential(rate) (stored as its scale 1 / rate),
// and flat (no term); for the covariance parameters of multilevel models
// (group_covariance.hpp), gamma(shape, scale) and beta(shape, shape2); and
// for the regularised horseshoe's hyperparameters (horseshoe.hpp),
// inv_gamma(shape, scale). A prior on a positive parameter (sigma, phi) is the
// half (truncated at zero) distribution: the truncation changes the density
// by a constant, and the model gives -Inf at values <= 0, so the same
// formulas serve. Densities keep their normalising constants.

#include <clbayes/eigen.hpp>
#include <clbayes/error.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace clbayes {
namespace models {

enum class prior_family { flat = 0, normal = 1, student_t = 2, exponential = 3, gamma = 4,
                          beta = 5, laplace = 6, inv_gamma = 7 };

/** The prior of one parameter. `location` is unused by exponential, gamma,
 *  beta and inv_gamma; `shape` is gamma's, inv_gamma's and beta's first
 *  shape, `shape2` beta's second (beta ignores `scale`). */
struct scalar_prior {
  prior_family fam = prior_family::flat;
  double df = 1;
  double location = 0;
  double scale = 1;
  double shape = 1;
  double shape2 = 1;
};

/** Throws invalid_argument naming `arg` unless the prior's numbers are
 *  valid for its family. */
inline void check_prior(const scalar_prior& p, const std::string& arg) {
  if (p.fam == prior_family::flat) return;
  if (!(p.scale > 0) || !std::isfinite(p.scale))
    throw invalid_argument(arg, "must have a positive, finite scale (or rate)");
  if (!std::isfinite(p.location)) throw invalid_argument(arg, "must have a finite location");
  if (p.fam == prior_family::student_t && (!(p.df > 0) || !std::isfinite(p.df)))
    throw invalid_argument(arg, "must have positive, finite degrees of freedom");
  if ((p.fam == prior_family::gamma || p.fam == prior_family::beta ||
       p.fam == prior_family::inv_gamma) &&
      (!(p.shape > 0) || !std::isfinite(p.shape) || !(p.shape2 > 0) || !std::isfinite(p.shape2)))
    throw invalid_argument(arg, "must have positive, finite shapes");
}

/** Log density of `v` under `p` (v > 0 is the model's business for
 *  exponential) and, in `grad`, its derivative. */
inline double prior_lpdf(const scalar_prior& p, double v, double& grad) {
  constexpr double log_sqrt_two_pi = 0.91893853320467274178;
  constexpr double log_pi = 1.14472988584940017414;
  switch (p.fam) {
    case prior_family::normal: {
      const double z = (v - p.location) / p.scale;
      grad = -z / p.scale;
      return -0.5 * z * z - std::log(p.scale) - log_sqrt_two_pi;
    }
    case prior_family::student_t: {
      const double z = (v - p.location) / p.scale;
      const double q = 1 + z * z / p.df;
      grad = -(p.df + 1) * z / (p.df * p.scale * q);
      return std::lgamma(0.5 * (p.df + 1)) - std::lgamma(0.5 * p.df) -
             0.5 * (std::log(p.df) + log_pi) - std::log(p.scale) - 0.5 * (p.df + 1) * std::log(q);
    }
    case prior_family::laplace: {
      const double z = (v - p.location) / p.scale;
      // the kink at the location: either one-sided derivative is a valid
      // subgradient; 0 there, as Stan's double_exponential_lpdf gives
      grad = z > 0 ? -1 / p.scale : (z < 0 ? 1 / p.scale : 0.0);
      return -std::fabs(z) - std::log(2 * p.scale);
    }
    case prior_family::inv_gamma:
      grad = -(p.shape + 1) / v + p.scale / (v * v);
      return p.shape * std::log(p.scale) - std::lgamma(p.shape) - (p.shape + 1) * std::log(v) -
             p.scale / v;
    case prior_family::exponential:
      grad = -1 / p.scale;
      return -std::log(p.scale) - v / p.scale;
    case prior_family::gamma:
      grad = (p.shape - 1) / v - 1 / p.scale;
      return (p.shape - 1) * std::log(v) - v / p.scale - std::lgamma(p.shape) -
             p.shape * std::log(p.scale);
    case prior_family::beta:
      grad = (p.shape - 1) / v - (p.shape2 - 1) / (1 - v);
      return (p.shape - 1) * std::log(v) + (p.shape2 - 1) * std::log1p(-v) +
             std::lgamma(p.shape + p.shape2) - std::lgamma(p.shape) - std::lgamma(p.shape2);
    default:
      grad = 0;
      return 0;
  }
}

/** Priors of the first size() parameters of a point, in order. */
class prior_set {
 public:
  prior_set() = default;
  /** Each prior is checked; errors name `args[j]` (the R argument that
   *  set parameter j's prior). */
  prior_set(std::vector<scalar_prior> priors, const std::vector<std::string>& args)
      : priors_(std::move(priors)) {
    if (args.size() != priors_.size())
      throw invalid_argument("prior", "must have one entry per parameter");
    for (std::size_t j = 0; j < priors_.size(); ++j) check_prior(priors_[j], args[j]);
  }

  int size() const { return static_cast<int>(priors_.size()); }

  /** Adds each row's log prior to `lp` and, when `grad` is not null, its
   *  gradient to the first size() columns of `*grad`. */
  void add(const Eigen::MatrixXd& points, Eigen::VectorXd& lp, Eigen::MatrixXd* grad) const {
    if (points.cols() < size())
      throw invalid_argument("points", "must have a column per parameter with a prior");
    for (int j = 0; j < size(); ++j) {
      const scalar_prior& p = priors_[j];
      if (p.fam == prior_family::flat) continue;
      for (Eigen::Index r = 0; r < points.rows(); ++r) {
        double g = 0;
        lp[r] += prior_lpdf(p, points(r, j), g);
        if (grad != nullptr) (*grad)(r, j) += g;
      }
    }
  }

 private:
  std::vector<scalar_prior> priors_;
};

}  // namespace models
}  // namespace clbayes

#endif
