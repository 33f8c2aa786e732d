#ifndef CLBAYES_GLM_ROW_MATH_HPP
#define CLBAYES_GLM_ROW_MATH_HPP

// The log density of a row and its derivatives, for the CPU paths: the C++
// twin of the OpenCL C row math in kernels/glm_row_math.hpp (test-glm.R
// compares the two on a grid of values); keep the two in step. Every
// formula is in the stable form: no exp() of a linear predictor that could
// overflow before a log() takes it back.
//
// Each formula of a family with one linear predictor is written once, for
// "lanes" L: one row (L = double) or W rows at once (L = lanes<W>, an
// Eigen array, whose every operation, exp() included, Eigen runs over the
// W rows with SIMD instructions). The operations the formulas use are
// defined below for both. Some differ in form from the OpenCL text, with
// the same values: log1p(e) for e in [0, 1] is a series (Eigen has no SIMD
// log1p for doubles), and the choices by the sign of eta are min()s and
// divisions instead of branches (and fewer exp()s).

#include "../eigen.hpp"
#include "family.hpp"

#include <array>
#include <cmath>

namespace clbayes {
namespace glm {
namespace math {

constexpr double half_log_two_pi = 0.91893853320467274178;

/** W rows of one column (one point) at once. */
template <int W>
using lanes = Eigen::Array<double, W, 1>;

// ---- the operations of the formulas, on one row or on W lanes ----

inline double exp_of(double v) { return std::exp(v); }
template <typename D>
typename D::PlainObject exp_of(const Eigen::ArrayBase<D>& v) {
  return v.exp();
}

inline double abs_of(double v) { return std::fabs(v); }
template <typename D>
typename D::PlainObject abs_of(const Eigen::ArrayBase<D>& v) {
  return v.abs();
}

inline double max_of(double v, double c) { return v > c ? v : c; }
template <typename D>
typename D::PlainObject max_of(const Eigen::ArrayBase<D>& v, double c) {
  return v.max(c);
}

inline double min_of(double v, double c) { return v < c ? v : c; }
template <typename D>
typename D::PlainObject min_of(const Eigen::ArrayBase<D>& v, double c) {
  return v.min(c);
}
template <typename D, typename E>
typename D::PlainObject min_of(const Eigen::ArrayBase<D>& v, const Eigen::ArrayBase<E>& c) {
  return v.min(c);
}

/** L filled with v. */
template <typename L>
L constant_lanes(double v) {
  return L::Constant(v);
}
template <>
inline double constant_lanes<double>(double v) {
  return v;
}

/** log(1 + e) for 0 <= e <= 1 with SIMD operations only (Eigen has no SIMD
 *  log for doubles): 2 atanh(s), s = e / (2 + e) in [0, 1/3], by its odd
 *  series to s^33 (the rest is below 2e-18 relative; Horner in s^2). */
template <typename L>
L log1p_unit(const L& e) {
  const L s = e / (e + 2.0);
  const L s2 = s * s;
  L p = constant_lanes<L>(1.0 / 33);
  for (int j = 31; j >= 1; j -= 2) p = p * s2 + 1.0 / j;
  return 2.0 * s * p;
}

// ---- scalar helpers (one value, not lanes) ----

/** log(1 + exp(u)) without overflow. */
inline double softplus(double u) { return max_of(u, 0.0) + log1p_unit(std::exp(-std::fabs(u))); }

/** 1 / (1 + exp(-u)). */
inline double inv_logit(double u) {
  if (u >= 0) return 1 / (1 + std::exp(-u));
  const double e = std::exp(u);
  return e / (1 + e);
}

/** The digamma function for x > 0: upward recurrence to x >= 10, then the
 *  asymptotic series (error below 1e-15 relative there). */
inline double digamma(double x) {
  double r = 0;
  while (x < 10) {
    r -= 1 / x;
    x += 1;
  }
  const double f = 1 / (x * x);
  const double series =
      f * (-1.0 / 12 + f * (1.0 / 120 + f * (-1.0 / 252 + f * (1.0 / 240 +
      f * (-1.0 / 132 + f * (691.0 / 32760 + f * (-1.0 / 12)))))));
  return r + std::log(x) - 0.5 / x + series;
}

/** lgamma(y + 1), the term of y alone of the count families (0 when
 *  propto). Count data repeat small values, so a whole y in 0..1023 reads
 *  a table of the same lgamma values, made once (bench_glm_cpu, dev, one
 *  thread, 2e4 x 20, 64 single-point calls: poisson_log 31.0 -> 17.4 ms,
 *  neg_binomial_2_log 46.3 -> 37.1 ms). */
inline double log_factorial(double y, bool propto) {
  if (propto) return 0.0;
  constexpr int table_size = 1024;
  static const std::array<double, table_size> table = [] {
    std::array<double, table_size> t{};
    for (int i = 0; i < table_size; ++i) t[i] = std::lgamma(i + 1.0);
    return t;
  }();
  return y >= 0 && y < table_size && y == std::floor(y) ? table[static_cast<std::size_t>(y)]
                                                        : std::lgamma(y + 1);
}

// ---- the families with one linear predictor ----

/** Log density and derivatives of rows of a family with one linear
 *  predictor: d_eta = d lp / d eta, d_extra = d lp / d sigma or phi. */
template <typename L>
struct row_lanes {
  L lp;
  L d_eta;
  L d_extra;
};
using row_value = row_lanes<double>;

/** What the formulas need of sigma or phi, computed once per value: a
 *  point of a batch has one for all its rows. */
struct extra_terms {
  double value = 1;
  double inv = 1;      // 1 / value
  double log = 0;      // log(value)
  double lgamma = 0;   // lgamma(phi), negative binomial only
  double digamma = 0;  // digamma(phi), negative binomial only
};

inline extra_terms normal_terms(double sigma) { return {sigma, 1 / sigma, std::log(sigma), 0, 0}; }

inline extra_terms neg_binomial_terms(double phi) {
  return {phi, 1 / phi, std::log(phi), std::lgamma(phi), digamma(phi)};
}

template <typename L>
row_lanes<L> normal_id(const L& y, const L& eta, const extra_terms& s, bool propto) {
  const L z = (y - eta) * s.inv;
  const L lp = -0.5 * z * z - (s.log + (propto ? 0.0 : half_log_two_pi));
  return {lp, z * s.inv, (z * z - 1.0) * s.inv};
}

/** y in {0, 1}. softplus(-s eta) (s = 2y - 1) and inv_logit(eta) from one
 *  exp(): with x = exp(-eta), inv_logit(eta) = 1 / (1 + x) and exp(-|eta|)
 *  = min(x, 1 / x), each to a few ulps (x = inf below eta = -709 gives 0,
 *  the limit). */
template <typename L>
row_lanes<L> bernoulli_logit(const L& y, const L& eta) {
  const L x = exp_of(-eta);
  const L e = min_of(x, 1.0 / x);     // exp(-|eta|)
  const L u = eta * (1.0 - 2.0 * y);  // -eta when y = 1, eta when y = 0
  return {-(max_of(u, 0.0) + log1p_unit(e)), y - 1.0 / (1.0 + x), constant_lanes<L>(0.0)};
}

/** log_y_fact: log_factorial(y, propto). */
template <typename L>
row_lanes<L> poisson_log(const L& y, const L& eta, const L& log_y_fact) {
  const L mu = exp_of(eta);
  return {y * eta - mu - log_y_fact, y - mu, constant_lanes<L>(0.0)};
}

/** Mean mu = exp(eta), precision phi: log(mu + phi) is a log-sum-exp of
 *  eta and log(phi). From x = phi / mu and 1 / x, each an exp(): the
 *  shares mu / (mu + phi) = 1 / (1 + x) and phi / (mu + phi) = 1 / (1 +
 *  1 / x), and exp(-|eta - log(phi)|) = min(x, 1 / x) (an infinite x or 1 /
 *  x gives the limits). lgamma_y_phi = lgamma(y + phi) - lgamma(phi),
 *  digamma_y_phi = digamma(y + phi) - digamma(phi) (count_terms_table makes
 *  them). */
template <typename L>
row_lanes<L> neg_binomial_2_log(const L& y, const L& eta, const extra_terms& phi,
                                const L& lgamma_y_phi, const L& digamma_y_phi,
                                const L& log_y_fact) {
  const L t = eta - phi.log;
  const L x = exp_of(-t), x_inv = exp_of(t);
  const L log_mu_phi = max_of(eta, phi.log) + log1p_unit(min_of(x, x_inv));
  const L y_phi = y + phi.value;
  const L lp = lgamma_y_phi + phi.value * (phi.log - log_mu_phi) + y * (eta - log_mu_phi) -
               log_y_fact;
  // (y + phi) / (mu + phi) = (y + phi) / phi * phi share
  const L d_phi = 1.0 - y_phi * phi.inv / (1.0 + x_inv) + (phi.log - log_mu_phi) +
                  digamma_y_phi;
  return {lp, y - y_phi / (1.0 + x), d_phi};
}

// One row with its own sigma | phi (the scalar forms of the above).

inline row_value normal_id(double y, double eta, double sigma, bool propto) {
  return normal_id(y, eta, normal_terms(sigma), propto);
}

inline row_value poisson_log(double y, double eta, bool propto) {
  return poisson_log(y, eta, log_factorial(y, propto));
}

inline row_value neg_binomial_2_log(double y, double eta, const extra_terms& phi,
                                    double log_y_fact) {
  return neg_binomial_2_log(y, eta, phi, std::lgamma(y + phi.value) - phi.lgamma,
                            digamma(y + phi.value) - phi.digamma, log_y_fact);
}

inline row_value neg_binomial_2_log(double y, double eta, double phi, bool propto) {
  return neg_binomial_2_log(y, eta, neg_binomial_terms(phi), log_factorial(y, propto));
}

// ---- linked rows: any family through its mean mu = g^{-1}(eta) ----
//
// The families at a link other than their canonical one, and the gamma and
// inverse Gaussian families: the log density of y given the mean mu, and
// d lp / d eta = d lp / d mu * d mu / d eta. Bernoulli rows take log p and
// log(1 - p) from eta directly, each in its stable form per link, as the
// tails of probit and cloglog underflow p itself. A mean outside the
// family's support (mu <= 0 for counts and positive data) gives lp = -inf
// and zero derivatives, which the samplers reject as any other -inf.

constexpr double pi = 3.14159265358979323846;

/** mu = g^{-1}(eta) and d mu / d eta, for the links of mean families. */
struct mean_value {
  double mu;
  double d_mu;
};

inline mean_value inverse_link(link l, double eta) {
  switch (l) {
    case link::log: {
      const double m = std::exp(eta);
      return {m, m};
    }
    case link::sqrt: return {eta * eta, 2 * eta};
    case link::inverse: return {1 / eta, -1 / (eta * eta)};
    case link::inverse_square: {  // eta = 1 / mu^2
      const double m = 1 / std::sqrt(eta);
      return {m, -0.5 * m / eta};
    }
    default: return {eta, 1.0};  // identity
  }
}

/** log Phi(x), the standard normal's log cdf: from erfc down to x = -37
 *  (erfc(26.2) ~ 1e-299 is still a normal double), below by the asymptotic
 *  series of the Mills ratio (its next term is below 5e-13 there). */
inline double log_normal_cdf(double x) {
  if (x > -37) return std::log(0.5 * std::erfc(-x * 0.70710678118654752440));
  const double r = 1 / (x * x);
  const double series = 1 - r * (1 - r * (3 - r * (15 - r * 105)));
  return -0.5 * x * x - std::log(-x) - half_log_two_pi + std::log(series);
}

/** phi(x) / Phi(x), d log Phi(x) / dx. */
inline double normal_mills(double x) {
  if (x > -37) return std::exp(-0.5 * x * x - half_log_two_pi - log_normal_cdf(x));
  const double r = 1 / (x * x);
  return -x / (1 - r * (1 - r * (3 - r * (15 - r * 105))));
}

/** log p, log(1 - p) and their derivatives by eta, p = g^{-1}(eta). */
struct bernoulli_logs {
  double log_p, log_q;
  double d_log_p, d_log_q;
};

inline bernoulli_logs bernoulli_log_probs(link l, double eta) {
  switch (l) {
    case link::probit:
      return {log_normal_cdf(eta), log_normal_cdf(-eta), normal_mills(eta), -normal_mills(-eta)};
    case link::cloglog: {  // p = 1 - exp(-t), t = exp(eta)
      const double t = std::exp(eta);
      // t / expm1(t) -> 0 as t grows (t e^-t below 1e-300 from t = 700)
      const double d_log_p = t > 0 ? (t < 700 ? t / std::expm1(t) : 0.0) : 1.0;
      return {std::log(-std::expm1(-t)), -t, d_log_p, -t};
    }
    case link::cauchit: {  // p = 1/2 + atan(eta) / pi = atan2(1, -eta) / pi
      const double dens = 1 / (pi * (1 + eta * eta));
      const double p = std::atan2(1.0, -eta) / pi, q = std::atan2(1.0, eta) / pi;
      return {std::log(p), std::log(q), dens / p, -dens / q};
    }
    case link::log: {  // p = exp(eta), eta < 0
      if (!(eta < 0)) return {eta > 0 ? -INFINITY : 0.0, -INFINITY, 1.0, 0.0};
      return {eta, std::log(-std::expm1(eta)), 1.0, std::exp(eta) / std::expm1(eta)};
    }
    default:  // logit
      return {-softplus(-eta), -softplus(eta), inv_logit(-eta), -inv_logit(eta)};
  }
}

/** The terms of sigma, phi, shape or lambda each row formula needs, made
 *  once per value. */
inline extra_terms extra_terms_of(family f, double v) {
  return f == family::neg_binomial_2_log || f == family::gamma ? neg_binomial_terms(v)
                                                               : normal_terms(v);
}

/** One row of family f at link l (any link, the canonical one included):
 *  lp, d lp / d eta and d lp / d extra. `ex`: extra_terms_of(f, extra). */
inline row_value linked_row(family f, link l, double y, double eta, const extra_terms& ex,
                            bool propto) {
  constexpr double minus_inf = -INFINITY;
  if (f == family::bernoulli_logit) {
    const bernoulli_logs b = bernoulli_log_probs(l, eta);
    return y > 0.5 ? row_value{b.log_p, b.d_log_p, 0.0} : row_value{b.log_q, b.d_log_q, 0.0};
  }
  const mean_value m = inverse_link(l, eta);
  const double mu = m.mu;
  if (f == family::normal_id) {
    const double z = (y - mu) * ex.inv;
    return {-0.5 * z * z - (ex.log + (propto ? 0.0 : half_log_two_pi)), z * ex.inv * m.d_mu,
            (z * z - 1.0) * ex.inv};
  }
  if (!(mu > 0) || !std::isfinite(mu)) return {minus_inf, 0.0, 0.0};
  const double log_mu = std::log(mu);
  // d mu / d eta over mu (1 at the log link): with it no product of a
  // huge 1 / mu and a tiny d mu overflows when mu is near zero.
  const double d_rel = m.d_mu / mu;
  switch (f) {
    case family::poisson_log:
      return {(y > 0 ? y * log_mu : 0.0) - mu - log_factorial(y, propto),
              (y - mu) * d_rel, 0.0};
    case family::neg_binomial_2_log: {
      const double phi = ex.value, log_mp = std::log(mu + phi);
      const double share = (y + phi) / (mu + phi);
      return {std::lgamma(y + phi) - ex.lgamma + phi * (ex.log - log_mp) +
                  (y > 0 ? y * (log_mu - log_mp) : 0.0) - log_factorial(y, propto),
              (y - mu * share) * d_rel,
              1 - share + ex.log - log_mp + digamma(y + phi) - ex.digamma};
    }
    case family::gamma: {  // shape a, rate a / mu
      const double a = ex.value, log_y = std::log(y);
      return {a * (ex.log - log_mu) - ex.lgamma + a * log_y - (propto ? 0.0 : log_y) -
                  a * y / mu,
              a * (y - mu) / mu * d_rel,
              ex.log + 1 - log_mu - ex.digamma + log_y - y / mu};
    }
    default: {  // inverse Gaussian, shape lambda
      const double lambda = ex.value, r = (y - mu) / mu;
      const double q = r * r / y;  // (y - mu)^2 / (mu^2 y)
      return {0.5 * ex.log - 0.5 * lambda * q -
                  (propto ? 0.0 : half_log_two_pi + 1.5 * std::log(y)),
              lambda * r / mu * d_rel, 0.5 * ex.inv - 0.5 * q};
    }
  }
}

// ---- ordered logistic (one row at a time) ----

/** Ordered logistic: y in 1..K, cuts c[0] < ... < c[K-2]. The derivatives
 *  with respect to the cut below (c[y-2]) and above (c[y-1]) the category. */
struct ordered_value {
  double lp;
  double d_eta;
  double d_cut_lower;
  double d_cut_upper;
};

inline ordered_value ordered_logistic(int y, int n_cuts, double eta, const double* cuts) {
  if (y == 1) {  // log(1 - inv_logit(eta - c1))
    const double b = eta - cuts[0];
    const double s = inv_logit(b);
    return {-softplus(b), -s, 0.0, s};
  }
  if (y == n_cuts + 1) {  // log(inv_logit(eta - c_{K-1}))
    const double a = eta - cuts[n_cuts - 1];
    const double s = inv_logit(-a);
    return {-softplus(-a), s, -s, 0.0};
  }
  // log(inv_logit(a) - inv_logit(b)) with a = eta - c[y-2] > b = eta - c[y-1]
  // = a + log(1 - exp(b - a)) - softplus(a) - softplus(b).
  const double a = eta - cuts[y - 2];
  const double b = eta - cuts[y - 1];
  const double gap = a - b;
  const double log1m = gap > 0.693147180559945 ? std::log1p(-std::exp(-gap))
                                               : std::log(-std::expm1(-gap));
  const double lp = a + log1m - softplus(a) - softplus(b);
  const double inv_em1 = 1 / std::expm1(gap);
  const double d_a = 1 - inv_logit(a) + inv_em1;
  const double d_b = -inv_em1 - inv_logit(b);
  return {lp, d_a + d_b, -d_a, -d_b};
}

}  // namespace math
}  // namespace glm
}  // namespace clbayes

#endif
