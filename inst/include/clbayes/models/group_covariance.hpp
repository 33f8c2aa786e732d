#ifndef CLBAYES_MODELS_GROUP_COVARIANCE_HPP
#define CLBAYES_MODELS_GROUP_COVARIANCE_HPP

// The factor T of one group-level term's covariance, Sigma = T T', from the
// parameters the samplers draw, so that the term's effects at a level are
// b = T z with z ~ N(0, I) (the non-centred parameterisation).
//
// decov (rstanarm's default for stan_glmer): tau > 0, and for p > 1 the
// simplex pi = zeta / sum(zeta) (zeta > 0), rho in (0, 1)^(p-1) and z_T
// (p (p - 1) / 2 - 1 values). The trace of Sigma is p (tau scale sigma)^2, with
// sigma the residual sd of a gaussian model (1 otherwise); its diagonal is
// pi times the trace; the correlations come from the onion method. This is
// rstanarm's make_theta_L step for step, including its use of the previous
// row's standard deviation in the onion's off-diagonal scale, so that one
// prior gives one posterior in both packages. The priors of tau ~
// gamma(shape, 1), zeta ~ gamma(concentration, 1), rho ~ beta and z_T ~
// N(0, 1) are rows of the model's prior table (priors.hpp).
//
// lkj: standard deviations sd > 0 (p), with rho and z_T giving the
// Cholesky factor of an LKJ correlation matrix by the onion method; T =
// diag(sd) L.
//
// The derivatives of T in its parameters come from forward-mode dual
// numbers, one pass per parameter: p is small, and this keeps one
// definition of the construction for values and gradients.

#include <clbayes/eigen.hpp>

#include <cmath>
#include <vector>

namespace clbayes {
namespace models {

/** A number with one directional derivative. */
struct dual {
  double v = 0;
  double d = 0;
  dual() = default;
  dual(double value, double deriv = 0) : v(value), d(deriv) {}
};
inline dual operator+(dual a, dual b) { return {a.v + b.v, a.d + b.d}; }
inline dual operator-(dual a, dual b) { return {a.v - b.v, a.d - b.d}; }
inline dual operator*(dual a, dual b) { return {a.v * b.v, a.d * b.v + a.v * b.d}; }
inline dual operator/(dual a, dual b) { return {a.v / b.v, (a.d * b.v - a.v * b.d) / (b.v * b.v)}; }
inline dual sqrt(dual a) {
  const double s = std::sqrt(a.v);
  return {s, a.d / (2 * s)};
}
// (the double overload keeps one name for both scalar types in templates)
inline double sqrt(double a) { return std::sqrt(a); }

enum class covariance_prior { decov, lkj };

/** The covariance of one term with p coefficients. */
struct term_covariance {
  covariance_prior prior = covariance_prior::decov;
  int p = 1;
  double scale = 1;         // decov's scale; unused by lkj
  bool dispersion = false;  // decov of a gaussian model: T scales with sigma

  /** Parameters drawn for this term. */
  int n_params() const {
    // rho (p - 1) and z_T (row r of the onion takes r values, r = 2 .. p - 1)
    const int corr = p > 1 ? (p - 1) + p * (p - 1) / 2 - 1 : 0;
    if (prior == covariance_prior::lkj) return p + corr;
    return 1 + (p > 1 ? p : 0) + corr;
  }

  /** Whether the parameters lie inside their support. */
  bool in_support(const double* theta) const {
    const int n_positive = prior == covariance_prior::lkj ? p : 1 + (p > 1 ? p : 0);
    for (int i = 0; i < n_positive; ++i)
      if (!(theta[i] > 0) || !std::isfinite(theta[i])) return false;
    for (int i = 0; i < p - 1; ++i) {
      const double r = theta[n_positive + i];
      if (!(r > 0 && r < 1)) return false;
    }
    for (int i = n_positive + p - 1; i < n_params(); ++i)
      if (!std::isfinite(theta[i])) return false;
    return true;
  }

  /** T (p x p, column-major, lower triangle; the upper is set to zero)
   *  from `theta` (n_params() values) and the residual sd `sigma`. */
  template <typename S>
  void factor(const S* theta, S sigma, S* T) const {
    for (int i = 0; i < p * p; ++i) T[i] = S(0);
    std::vector<S> sd(p);
    const S* rho;
    if (prior == covariance_prior::lkj) {
      for (int c = 0; c < p; ++c) sd[c] = theta[c];
      rho = theta + p;
    } else {
      const S base = theta[0] * S(scale) * (dispersion ? sigma : S(1));
      if (p == 1) {
        T[0] = base;
        return;
      }
      const S trace = base * base * S(p);
      S total(0);
      for (int c = 0; c < p; ++c) total = total + theta[1 + c];
      for (int c = 0; c < p; ++c) sd[c] = sqrt(theta[1 + c] / total * trace);
      rho = theta + 1 + p;
    }
    onion(sd, rho, T);
  }

 private:
  // The onion method's rows of T: row 1 from the correlation 2 rho_1 - 1,
  // row r > 1 from the direction z_T (r values) with squared length rho_r.
  template <typename S>
  void onion(const std::vector<S>& sd, const S* rho, S* T) const {
    T[0] = sd[0];
    if (p == 1) return;
    const S r21 = S(2) * rho[0] - S(1);
    T[1] = sd[1] * r21;
    T[1 + p] = sd[1] * sqrt(S(1) - r21 * r21);
    const S* z_T = rho + (p - 1);
    int mark = 0;
    for (int r = 2; r < p; ++r) {
      S length2(0);
      for (int c = 0; c < r; ++c) length2 = length2 + z_T[mark + c] * z_T[mark + c];
      // rstanarm scales the direction by the previous row's sd (decov)
      const S& sd_row = prior == covariance_prior::decov ? sd[r - 1] : sd[r];
      const S f = sqrt(rho[r - 1] / length2) * sd_row;
      for (int c = 0; c < r; ++c) T[r + c * p] = z_T[mark + c] * f;
      T[r + r * p] = sqrt(S(1) - rho[r - 1]) * sd[r];
      mark += r;
    }
  }
};

}  // namespace models
}  // namespace clbayes

#endif
