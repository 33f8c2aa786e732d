#ifndef CLBAYES_GLM_ROW_MATH_HPP
#define CLBAYES_GLM_ROW_MATH_HPP

// The log density of one row and its derivatives, for the CPU path: the C++
// twin of the OpenCL C row math in kernels/glm_row_math.hpp (test-glm.R
// compares the two on a grid of values); keep the two in step. Every formula is in the stable form: no exp() of a
// linear predictor that could overflow before a log() takes it back.

#include <cmath>

namespace clbayes {
namespace glm {
namespace math {

constexpr double half_log_two_pi = 0.91893853320467274178;

/** log(1 + exp(u)) without overflow. */
inline double softplus(double u) {
  return (u > 0 ? u : 0.0) + std::log1p(std::exp(-std::fabs(u)));
}

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

/** Log density and derivatives of one row of a family with one linear
 *  predictor: d_eta = d lp / d eta, d_extra = d lp / d sigma or phi. */
struct row_value {
  double lp;
  double d_eta;
  double d_extra;
};

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

/** lgamma(y + 1), the term of y alone of the count families (0 when propto). */
inline double log_factorial(double y, bool propto) { return propto ? 0.0 : std::lgamma(y + 1); }

inline row_value normal_id(double y, double eta, const extra_terms& s, bool propto) {
  const double z = (y - eta) * s.inv;
  double lp = -0.5 * z * z - s.log;
  if (!propto) lp -= half_log_two_pi;
  return {lp, z * s.inv, (z * z - 1) * s.inv};
}

inline row_value normal_id(double y, double eta, double sigma, bool propto) {
  return normal_id(y, eta, normal_terms(sigma), propto);
}

/** softplus(-s eta) and inv_logit(eta) share e = exp(-|eta|). */
inline row_value bernoulli_logit(double y, double eta) {
  const double e = std::exp(-std::fabs(eta));
  const double u = y > 0.5 ? -eta : eta;
  const double p = (eta >= 0 ? 1.0 : e) / (1 + e);  // inv_logit(eta)
  return {-((u > 0 ? u : 0.0) + std::log1p(e)), y - p, 0.0};
}

/** log_y_fact: log_factorial(y, propto). */
inline row_value poisson_log(double y, double eta, double log_y_fact) {
  const double mu = std::exp(eta);
  return {y * eta - mu - log_y_fact, y - mu, 0.0};
}

inline row_value poisson_log(double y, double eta, bool propto) {
  return poisson_log(y, eta, log_factorial(y, propto));
}

/** Mean exp(eta), precision phi: log(mu + phi) is a log-sum-exp. */
inline row_value neg_binomial_2_log(double y, double eta, const extra_terms& phi,
                                    double log_y_fact) {
  const double hi = eta > phi.log ? eta : phi.log;
  const double lo = eta > phi.log ? phi.log : eta;
  const double log_mu_phi = hi + std::log1p(std::exp(lo - hi));
  const double y_phi = y + phi.value;
  const double lp = std::lgamma(y_phi) - phi.lgamma + phi.value * (phi.log - log_mu_phi) +
                    y * (eta - log_mu_phi) - log_y_fact;
  const double mu_share = std::exp(eta - log_mu_phi);  // mu / (mu + phi)
  const double d_eta = y - y_phi * mu_share;
  const double d_phi = 1 - y_phi / std::exp(log_mu_phi) + phi.log - log_mu_phi +
                       digamma(y_phi) - phi.digamma;
  return {lp, d_eta, d_phi};
}

inline row_value neg_binomial_2_log(double y, double eta, double phi, bool propto) {
  return neg_binomial_2_log(y, eta, neg_binomial_terms(phi), log_factorial(y, propto));
}

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
