#ifndef CLBAYES_KERNELS_GLM_ROW_MATH_HPP
#define CLBAYES_KERNELS_GLM_ROW_MATH_HPP

// The one OpenCL C definition of each GLM family's row math (Stan's
// *_glm_lpmf, stan-opencl.txt section 3.4): the log density of one row and
// its derivatives with respect to the linear predictor and to sigma / phi /
// the cuts. Every GLM kernel (glm_lp.hpp, glm_lp_tiled.hpp, glm_batch.hpp)
// is this text followed by its own body (glm_program()); the CPU path has
// its one C++ twin in glm/row_math.hpp, and test-glm.R compares the two on a
// grid of values (kernel glm_row_grid below). Every formula is in the stable
// form: no exp() of a linear predictor that could overflow before a log()
// takes it back.

#include "../opencl/kernel_cl.hpp"

#include <string>

namespace clbayes {
namespace opencl {
namespace kernels {

inline const char* glm_row_math_source = R"(
#define HALF_LOG_TWO_PI 0.91893853320467274178
#define CLB_PI 3.14159265358979323846

/* exp(u) without the builtin: on the H200 the builtin exp and log1p made
   the row math of glm_batch_mma at P = 256 take 3.9 ms of its 7.6; with
   this exp, the series log1p below and one division, 2.3 ms (bench_glm,
   RESULTS.md, "GLM likelihood on a device"). u = k ln 2 + r
   with |r| <= ln 2 / 2 (Cody-Waite, fdlibm's split of ln 2), e^r by its
   Taylor polynomial of degree 13 (the rest is below 5e-18 relative), 2^k
   from the exponent bits; 0 below -745.2, infinity above 709.78. */
double exp_fast(double u) {
  const double kf = rint(u * 1.4426950408889634074);
  double r = fma(kf, -6.93147180369123816490e-01, u);
  r = fma(kf, -1.90821492927058770002e-10, r);
  double p = 1.6059043836821613e-10;
  p = fma(p, r, 2.08767569878681e-09);
  p = fma(p, r, 2.505210838544172e-08);
  p = fma(p, r, 2.755731922398589e-07);
  p = fma(p, r, 2.7557319223985893e-06);
  p = fma(p, r, 2.48015873015873e-05);
  p = fma(p, r, 1.984126984126984e-04);
  p = fma(p, r, 1.388888888888889e-03);
  p = fma(p, r, 8.333333333333333e-03);
  p = fma(p, r, 4.1666666666666664e-02);
  p = fma(p, r, 1.6666666666666666e-01);
  p = fma(p, r, 0.5);
  p = fma(p, r, 1.0);
  p = fma(p, r, 1.0);
  const int k = (int)kf, k1 = k >> 1;  /* 2^k in two factors: k may be 1024 or -1075 */
  const double v = p * as_double((long)(k1 + 1023) << 52) * as_double((long)(k - k1 + 1023) << 52);
  return u < -745.2 ? 0.0 : (u > 709.78 ? INFINITY : (isnan(u) ? u : v));
}

/* log(1 + e) for 0 <= e <= 1 given s = e / (2 + e): 2 atanh(s), s in
   [0, 1/3], by its odd series to s^33 (as glm/row_math.hpp's
   log1p_unit). */
double log1p_unit_s(double s) {
  const double s2 = s * s;
  double p = 1.0 / 33;
  for (int j = 31; j >= 1; j -= 2) p = fma(p, s2, 1.0 / j);
  return 2.0 * s * p;
}

double log1p_unit(double e) { return log1p_unit_s(e / (2.0 + e)); }

double softplus(double u) { return fmax(u, 0.0) + log1p_unit(exp_fast(-fabs(u))); }

double inv_logit(double u) {
  const double e = exp_fast(-fabs(u));
  return (u >= 0 ? 1.0 : e) / (1.0 + e);
}

/* digamma(x) for x > 0: recurrence to x >= 10, then the asymptotic series. */
double digamma_pos(double x) {
  double r = 0.0;
  while (x < 10.0) { r -= 1.0 / x; x += 1.0; }
  const double f = 1.0 / (x * x);
  const double t = f * (-1.0 / 12 + f * (1.0 / 120 + f * (-1.0 / 252 + f * (1.0 / 240 +
                   f * (-1.0 / 132 + f * (691.0 / 32760 + f * (-1.0 / 12)))))));
  return r + log(x) - 0.5 / x + t;
}

/* The families with one linear predictor eta (alpha included): the log
   density of a row; *d_eta = d lp / d eta, *d_ex = d lp / d sigma|phi. */
double normal_id_row(double y, double eta, double sigma, int propto, double* d_eta,
                     double* d_ex) {
  const double inv_s = 1.0 / sigma;
  const double z = (y - eta) * inv_s;
  *d_eta = z * inv_s;
  *d_ex = (z * z - 1.0) * inv_s;
  return -0.5 * z * z - log(sigma) - (propto ? 0.0 : HALF_LOG_TWO_PI);
}

/* softplus(-s eta) and inv_logit(eta) share e = exp(-|eta|), and one
   division serves 1 / (1 + e) and the series' e / (2 + e). */
double bernoulli_logit_row(double y, double eta, double* d_eta, double* d_ex) {
  const double e = exp_fast(-fabs(eta));
  const double u = y > 0.5 ? -eta : eta;
  const double inv = 1.0 / ((1.0 + e) * (2.0 + e));
  *d_eta = y - (eta >= 0 ? 1.0 : e) * ((2.0 + e) * inv);
  *d_ex = 0.0;
  return -(fmax(u, 0.0) + log1p_unit_s(e * (1.0 + e) * inv));
}

double poisson_log_row(double y, double eta, int propto, double* d_eta, double* d_ex) {
  const double mu = exp_fast(eta);
  *d_eta = y - mu;
  *d_ex = 0.0;
  return y * eta - mu - (propto ? 0.0 : lgamma(y + 1.0));
}

/* Mean exp(eta), precision phi: log(mu + phi) is a log-sum-exp. */
double neg_binomial_2_log_row(double y, double eta, double phi, int propto, double* d_eta,
                              double* d_ex) {
  const double lphi = log(phi);
  const double hi = fmax(eta, lphi), lo = fmin(eta, lphi);
  const double lmp = hi + log1p(exp(lo - hi));
  *d_eta = y - (y + phi) * exp(eta - lmp);
  *d_ex = 1.0 - (y + phi) / exp(lmp) + lphi - lmp + digamma_pos(y + phi) - digamma_pos(phi);
  return lgamma(y + phi) - lgamma(phi) + phi * (lphi - lmp) + y * (eta - lmp) -
         (propto ? 0.0 : lgamma(y + 1.0));
}

/* Linked rows (glm/row_math.hpp's linked_row, the same formulas): a
   family at a link other than its own, and the gamma and inverse Gaussian
   families, through the mean mu = g^{-1}(eta); LINK is the number of
   glm::link. Bernoulli rows take log p and log(1 - p) from eta directly. */
double log_normal_cdf(double x) {
  if (x > -37.0) return log(0.5 * erfc(-x * 0.70710678118654752440));
  const double r = 1.0 / (x * x);
  return -0.5 * x * x - log(-x) - HALF_LOG_TWO_PI +
         log(1.0 - r * (1.0 - r * (3.0 - r * (15.0 - r * 105.0))));
}

double normal_mills(double x) {
  if (x > -37.0) return exp(-0.5 * x * x - HALF_LOG_TWO_PI - log_normal_cdf(x));
  const double r = 1.0 / (x * x);
  return -x / (1.0 - r * (1.0 - r * (3.0 - r * (15.0 - r * 105.0))));
}

/* log p (y = 1) or log(1 - p) (y = 0) at link lk, and its derivative. */
double bernoulli_linked_row(double y, double eta, int lk, double* d_eta) {
  const int one = y > 0.5;
  if (lk == 3) {  /* probit */
    const double s = one ? eta : -eta;
    *d_eta = one ? normal_mills(s) : -normal_mills(s);
    return log_normal_cdf(s);
  }
  if (lk == 4) {  /* cloglog: p = 1 - exp(-t), t = exp(eta) */
    const double t = exp(eta);
    *d_eta = one ? (t > 0.0 ? (t < 700.0 ? t / expm1(t) : 0.0) : 1.0) : -t;
    return one ? log(-expm1(-t)) : -t;
  }
  if (lk == 5) {  /* cauchit: p = atan2(1, -eta) / pi */
    const double dens = 1.0 / (CLB_PI * (1.0 + eta * eta));
    const double pr = atan2(1.0, one ? -eta : eta) / CLB_PI;
    *d_eta = one ? dens / pr : -dens / pr;
    return log(pr);
  }
  if (lk == 1) {  /* log: p = exp(eta), eta < 0 */
    if (!(eta < 0.0)) { *d_eta = one ? 1.0 : 0.0; return one && eta == 0.0 ? 0.0 : -INFINITY; }
    *d_eta = one ? 1.0 : exp(eta) / expm1(eta);
    return one ? eta : log(-expm1(eta));
  }
  /* logit */
  *d_eta = one ? inv_logit(-eta) : -inv_logit(eta);
  return -softplus(one ? -eta : eta);
}

/* mu = g^{-1}(eta) and d mu / d eta at link lk (a mean family's links). */
double inverse_link(double eta, int lk, double* d_mu) {
  if (lk == 1) { const double m = exp(eta); *d_mu = m; return m; }
  if (lk == 6) { *d_mu = 2.0 * eta; return eta * eta; }
  if (lk == 7) { *d_mu = -1.0 / (eta * eta); return 1.0 / eta; }
  if (lk == 8) { const double m = 1.0 / sqrt(eta); *d_mu = -0.5 * m / eta; return m; }
  *d_mu = 1.0;
  return eta;
}

/* The row of family fam at link lk; ex its sigma, phi, shape or lambda. */
double linked_row(int fam, int lk, double y, double eta, double ex, int propto,
                  double* d_eta, double* d_ex) {
  *d_ex = 0.0;
  if (fam == 1) return bernoulli_linked_row(y, eta, lk, d_eta);
  double dm;
  const double mu = inverse_link(eta, lk, &dm);
  if (fam == 0) {
    const double z = (y - mu) / ex;
    *d_eta = z / ex * dm;
    *d_ex = (z * z - 1.0) / ex;
    return -0.5 * z * z - log(ex) - (propto ? 0.0 : HALF_LOG_TWO_PI);
  }
  if (!(mu > 0.0) || isinf(mu)) { *d_eta = 0.0; return -INFINITY; }
  const double log_mu = log(mu), d_rel = dm / mu;  /* no overflow near mu = 0 */
  if (fam == 2) {
    *d_eta = (y - mu) * d_rel;
    return (y > 0.0 ? y * log_mu : 0.0) - mu - (propto ? 0.0 : lgamma(y + 1.0));
  }
  if (fam == 3) {
    const double lphi = log(ex), lmp = log(mu + ex), share = (y + ex) / (mu + ex);
    *d_eta = (y - mu * share) * d_rel;
    *d_ex = 1.0 - share + lphi - lmp + digamma_pos(y + ex) - digamma_pos(ex);
    return lgamma(y + ex) - lgamma(ex) + ex * (lphi - lmp) + (y > 0.0 ? y * (log_mu - lmp) : 0.0) -
           (propto ? 0.0 : lgamma(y + 1.0));
  }
  if (fam == 6) {  /* gamma: shape ex, rate ex / mu */
    const double la = log(ex), ly = log(y);
    *d_eta = ex * (y - mu) / mu * d_rel;
    *d_ex = la + 1.0 - log_mu - digamma_pos(ex) + ly - y / mu;
    return ex * (la - log_mu) - lgamma(ex) + ex * ly - (propto ? 0.0 : ly) - ex * y / mu;
  }
  /* inverse Gaussian, shape ex */
  const double r = (y - mu) / mu, q = r * r / y;
  *d_eta = ex * r / mu * d_rel;
  *d_ex = 0.5 / ex - 0.5 * q;
  return 0.5 * log(ex) - 0.5 * ex * q - (propto ? 0.0 : HALF_LOG_TWO_PI + 1.5 * log(y));
}

/* Categorical logit: y in 1..ne, eta (alpha included) the ne predictors;
   d[e] = d lp / d eta[e]. */
double categorical_logit_row(const double* eta, int ne, int y, double* d) {
  double mx = -INFINITY;
  for (int e = 0; e < ne; ++e) mx = fmax(mx, eta[e]);
  double se = 0.0;
  for (int e = 0; e < ne; ++e) se += exp(eta[e] - mx);
  const double lse = mx + log(se);
  double lp = 0.0;
  for (int e = 0; e < ne; ++e) {
    if (e == y - 1) lp = eta[e] - lse;
    d[e] = (e == y - 1 ? 1.0 : 0.0) - exp(eta[e] - lse);
  }
  return lp;
}

/* Ordered logistic: y in 1..n_cuts + 1; c_lo the cut below the category
   (cuts[y - 2], unused when y == 1), c_hi the cut above (cuts[y - 1], unused
   when y == n_cuts + 1). *d_lo, *d_hi: d lp / d c_lo, d c_hi. */
double ordered_logistic_row(int y, int n_cuts, double eta, double c_lo, double c_hi,
                            double* d_eta, double* d_lo, double* d_hi) {
  *d_lo = 0.0;
  *d_hi = 0.0;
  if (y == 1) {  /* log(1 - inv_logit(eta - c_hi)) */
    const double b = eta - c_hi;
    *d_hi = inv_logit(b);
    *d_eta = -*d_hi;
    return -softplus(b);
  }
  if (y == n_cuts + 1) {  /* log(inv_logit(eta - c_lo)) */
    const double a = eta - c_lo;
    *d_eta = inv_logit(-a);
    *d_lo = -*d_eta;
    return -softplus(-a);
  }
  /* log(inv_logit(a) - inv_logit(b)), a > b,
     = a + log(1 - exp(b - a)) - softplus(a) - softplus(b) */
  const double a = eta - c_lo;
  const double b = eta - c_hi;
  const double gap = a - b;
  const double log1m = gap > 0.693147180559945 ? log1p(-exp(-gap)) : log(-expm1(-gap));
  const double inv_em1 = 1.0 / expm1(gap);
  const double da = 1.0 - inv_logit(a) + inv_em1;
  const double db = -inv_em1 - inv_logit(b);
  *d_eta = da + db;
  *d_lo = -da;
  *d_hi = -db;
  return a + log1m - softplus(a) - softplus(b);
}

/* OFFSET 1: the data have an offset, added to each row's linear predictor
   (not categorical_logit's). OFFSET 0 (the default) compiles the read out,
   so data without an offset cost nothing. */
#ifndef OFFSET
#define OFFSET 0
#endif
#define ROW_OFFSET(offset, i) (OFFSET ? (offset)[i] : 0.0)

/* LINK: -1 (the default) for the family's own row math (its canonical
   link), else the glm::link of a linked row. */
#ifndef LINK
#define LINK -1
#endif

#ifdef FAMILY
/* Whether the family FAMILY has sigma, phi, shape or lambda. */
#if FAMILY == 0 || FAMILY == 3 || FAMILY == 6 || FAMILY == 7
#define FAMILY_EXTRA 1
#else
#define FAMILY_EXTRA 0
#endif

/* The row of the scalar family FAMILY (the numbers of glm::family) at
   LINK. */
double scalar_row(double y, double eta, double ex, int propto, double* d_eta,
                  double* d_ex) {
#if LINK >= 0
  return linked_row(FAMILY, LINK, y, eta, ex, propto, d_eta, d_ex);
#elif FAMILY == 0
  return normal_id_row(y, eta, ex, propto, d_eta, d_ex);
#elif FAMILY == 1
  return bernoulli_logit_row(y, eta, d_eta, d_ex);
#elif FAMILY == 2
  return poisson_log_row(y, eta, propto, d_eta, d_ex);
#elif FAMILY == 3
  return neg_binomial_2_log_row(y, eta, ex, propto, d_eta, d_ex);
#else
  *d_eta = 0.0;
  *d_ex = 0.0;
  return 0.0;
#endif
}

#if FAMILY == 5 && defined(NETA)
/* cut_acc[c] += the derivatives of R rows by cut c, c = first + m stride (rowv:
   d_lo, d_up, y in blocks NETA..NETA + 2; cut c: upper of category c + 1, lower of c + 2) */
void add_cut_sums(__local const double* rowv, int R, int n_cuts, int first, int stride,
                  __local double* cut_acc) {
  for (int c = first; c < n_cuts; c += stride) {
    double s = 0.0;
    for (int q = 0; q < R; ++q) {
      const int yq = (int)rowv[(NETA + 2) * R + q];
      s += yq == c + 1 ? rowv[(NETA + 1) * R + q] : yq == c + 2 ? rowv[NETA * R + q] : 0.0;
    }
    cut_acc[c] += s;
  }
}
#endif
#endif
)";

/** A GLM kernel's program: the row math followed by the body *Body, made
 *  once and held for the session (kernel_cl caches programs by the
 *  source's address). */
template <const char* const* Body>
inline const char* glm_program() {
  static const std::string text = std::string(glm_row_math_source) + *Body;
  return text.c_str();
}

#ifdef CLBAYES_OPENCL

inline const char* glm_row_grid_source = R"(
/* out[i], out[m + i], out[2m + i] = lp, d lp / d eta, d lp / d sigma|phi of
   the scalar family FAMILY at (y[i], eta[i], ex[i]): the device side of the
   test of the row math against its C++ twin. */
__kernel void glm_row_grid(__global double* out, __global const double* y,
                           __global const double* eta, __global const double* ex,
                           int m, int propto) {
  const int i = get_global_id(0);
  if (i >= m) return;
  double d = 0.0, dx = 0.0;
  out[i] = scalar_row(y[i], eta[i], ex[i], propto, &d, &dx);
  out[m + i] = d;
  out[2 * m + i] = dx;
}
)";

/** Options: FAMILY (glm::family, scalar families), LINK (link_option()). */
inline kernel_cl<out_buffer, in_buffer, in_buffer, in_buffer, int, int> glm_row_grid(
    "glm_row_grid", glm_program<&glm_row_grid_source>(), {{"FAMILY", 0}, {"LINK", -1}});

#endif  // CLBAYES_OPENCL

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif
