#ifndef CLBAYES_GLM_FAMILY_HPP
#define CLBAYES_GLM_FAMILY_HPP

// The six GLM likelihoods of stan-opencl.txt section 3.4, what each one takes
// and what it returns. Both the CPU and the device path read their
// arguments from glm_params and fill a glm_result; check_glm_params() is the
// one place that says which shapes are legal (Stan's *_glm_lpmf signatures).

#include "../error.hpp"
#include "link.hpp"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace clbayes {
namespace glm {

/** The families; the numbers are the FAMILY build option of the kernel.
 *  The first four are named as Stan's GLM functions, by their canonical
 *  link, which has its own stable row math; every other link of theirs,
 *  and the gamma and inverse Gaussian families, go through the mean
 *  mu = g^{-1}(eta) (glm/row_math.hpp, "linked rows"). */
enum class family : int {
  normal_id = 0,
  bernoulli_logit = 1,
  poisson_log = 2,
  neg_binomial_2_log = 3,
  categorical_logit = 4,
  ordered_logistic = 5,
  gamma = 6,
  inverse_gaussian = 7
};

/** The one table of families: the core's name, R's family name, the extra
 *  parameter ("sigma", "phi", "shape", "lambda", "cuts" or ""), whether
 *  the family has one linear predictor (and so a batched form,
 *  glm/glm_batch.hpp), its canonical link (the one of its name) and the
 *  links it takes (as R's family functions and rstanarm's
 *  neg_binomial_2). Indexed by the enum's number; exported to R as a data
 *  frame (glm_family_table() in R/families.R). */
struct family_info {
  family fam;
  const char* name;
  const char* r_name;
  const char* extra;
  bool scalar;
  link canonical;
  link_set links;
};
inline constexpr family_info family_table[] = {
    {family::normal_id, "normal_id", "gaussian", "sigma", true, link::identity,
     bit(link::identity) | bit(link::log) | bit(link::inverse)},
    {family::bernoulli_logit, "bernoulli_logit", "binomial", "", true, link::logit,
     bit(link::logit) | bit(link::probit) | bit(link::cloglog) | bit(link::cauchit) |
         bit(link::log)},
    {family::poisson_log, "poisson_log", "poisson", "", true, link::log,
     bit(link::log) | bit(link::identity) | bit(link::sqrt)},
    {family::neg_binomial_2_log, "neg_binomial_2_log", "neg_binomial_2", "phi", true,
     link::log, bit(link::log) | bit(link::identity) | bit(link::sqrt)},
    {family::categorical_logit, "categorical_logit", "categorical", "", false, link::logit,
     bit(link::logit)},
    {family::ordered_logistic, "ordered_logistic", "ordinal", "cuts", false, link::logit,
     bit(link::logit)},
    {family::gamma, "gamma", "Gamma", "shape", true, link::inverse,
     bit(link::inverse) | bit(link::identity) | bit(link::log)},
    {family::inverse_gaussian, "inverse_gaussian", "inverse.gaussian", "lambda", true,
     link::inverse_square,
     bit(link::inverse_square) | bit(link::inverse) | bit(link::identity) | bit(link::log)}};
inline constexpr int n_families = sizeof(family_table) / sizeof(family_table[0]);

inline const family_info& info_of(family f) { return family_table[static_cast<int>(f)]; }

inline family parse_family(const std::string& name) {
  std::string all;
  for (const family_info& fi : family_table) {
    if (name == fi.name) return fi.fam;
    all += std::string(all.empty() ? "" : ", ") + "\"" + fi.name + "\"";
  }
  throw invalid_argument("family", "must be one of " + all + ", not \"" + name + "\"");
}

/** The link named `name` ("" for the family's canonical link); an error
 *  naming the family, the link and the links the family takes. */
inline link parse_link(family f, const std::string& name) {
  const family_info& fi = info_of(f);
  if (name.empty()) return fi.canonical;
  for (int i = 0; i < n_links; ++i)
    if (name == link_names[i] && (fi.links & (1u << i))) return static_cast<link>(i);
  throw invalid_argument("link", std::string("\"") + name + "\" is not a link of the " +
                                     fi.r_name + " family, which takes " +
                                     link_list(fi.links));
}

/** Whether the rows of family f with link l have the family's own row math
 *  (Stan's *_glm forms, with their SIMD lanes): its canonical link, for the
 *  first four families. */
inline bool has_own_form(family f, link l) {
  return static_cast<int>(f) <= 3 && l == info_of(f).canonical;
}

/** The LINK build option of the kernels: -1 for the family's own row math,
 *  else the link's number (a linked row). */
inline int link_option(family f, link l) { return has_own_form(f, l) ? -1 : static_cast<int>(l); }

/** Name of the family's extra parameter: "sigma", "phi", "shape",
 *  "lambda", "cuts" or "". */
inline const char* extra_name(family f) { return info_of(f).extra; }

/** Whether the family has one positive extra parameter per row or point
 *  (sigma, phi, shape, lambda). */
inline bool has_scale_extra(family f) {
  return info_of(f).scalar && info_of(f).extra[0] != '\0';
}

/** A number as R prints it (7 significant digits, %g): 4 is "4", not
 *  "4.000000". */
inline std::string format_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.7g", v);
  return buf;
}

/** The parameters of one evaluation. Pointers are borrowed, column-major.
 *  - alpha: n_alpha values; 1 or n (per row), C for categorical_logit,
 *    0 for ordered_logistic (which has no intercept);
 *  - beta: k x n_eta, n_eta = C for categorical_logit, else 1;
 *  - extra: sigma or phi (1 or n values), cuts (K - 1 values), else none. */
struct glm_params {
  family fam = family::normal_id;
  link lk = link::identity;  // one of info_of(fam).links (parse_link)
  const double* alpha = nullptr;
  int n_alpha = 0;
  const double* beta = nullptr;
  int n_eta = 1;
  const double* extra = nullptr;
  int n_extra = 0;
};

/** Log density and, when asked for, its gradient; each gradient has the
 *  shape of its parameter (d_beta is k x n_eta, column-major). */
struct glm_result {
  double value = 0;
  std::vector<double> d_alpha;
  std::vector<double> d_beta;
  std::vector<double> d_extra;
};

/** Shapes of the parameters for n rows and k columns; throws
 *  clbayes::invalid_argument naming the offending argument. Values (sigma
 *  positive, cuts increasing, y in its support) are checked by the caller
 *  that owns them: the R layer, or check_glm_values() below. */
inline void check_glm_shapes(const glm_params& p, int n, int k) {
  if (n < 0) throw invalid_argument("y", "must have a non-negative length");
  if (k < 0) throw invalid_argument("x", "must have a non-negative number of columns");
  const bool cat = p.fam == family::categorical_logit;
  const bool ord = p.fam == family::ordered_logistic;
  if (cat ? p.n_eta < 1 : p.n_eta != 1)
    throw invalid_argument("beta", cat ? "must have at least one column"
                                       : "must be a vector of length ncol(x)");
  if (cat && p.n_alpha != p.n_eta)
    throw invalid_argument("alpha", "must have one value per category (ncol(beta))");
  if (ord && p.n_alpha != 0)
    throw invalid_argument("alpha", "is not used by ordered_logistic");
  if (!cat && !ord && p.n_alpha != 1 && p.n_alpha != n)
    throw invalid_argument("alpha", "must be a single number or a vector of length nrow(x)");
  const std::string extra = extra_name(p.fam);
  if (has_scale_extra(p.fam)) {
    if (p.n_extra != 1 && p.n_extra != n)
      throw invalid_argument(extra, "must be a single number or a vector of length nrow(x)");
  } else if (extra == "cuts") {
    if (p.n_extra < 1) throw invalid_argument("cuts", "must have at least one value");
  } else if (p.n_extra != 0) {
    throw invalid_argument("family", "takes no sigma, phi, shape, lambda or cuts");
  }
}

/** An offset shifts the linear predictor; categorical_logit has one per
 *  category, which one offset would shift alike, leaving the likelihood
 *  unchanged: an error there, so that an offset is never silently ignored. */
inline void check_glm_offset(family f, bool has_offset) {
  if (has_offset && f == family::categorical_logit)
    throw invalid_argument("offset", "is not supported by categorical_logit (an offset "
                                     "shared by every category cancels in the softmax)");
}

/** Values of the parameters: finite, sigma, phi, shape, lambda positive, cuts strictly
 *  increasing. */
inline void check_glm_values(const glm_params& p, int k) {
  auto finite = [](const double* v, long long m, const char* arg) {
    for (long long i = 0; i < m; ++i)
      if (!(v[i] - v[i] == 0)) throw invalid_argument(arg, "must be finite");
  };
  finite(p.alpha, p.n_alpha, "alpha");
  finite(p.beta, static_cast<long long>(k) * p.n_eta, "beta");
  const std::string extra = extra_name(p.fam);
  if (extra.empty()) return;
  finite(p.extra, p.n_extra, extra.c_str());
  if (extra == "cuts") {
    for (int c = 1; c < p.n_extra; ++c)
      if (!(p.extra[c] > p.extra[c - 1]))
        throw invalid_argument("cuts", "must be strictly increasing");
  } else {
    for (int i = 0; i < p.n_extra; ++i)
      if (!(p.extra[i] > 0)) throw invalid_argument(extra, "must be positive");
  }
}

/** What the support checks need to know of y: kept with data on the device
 *  so that a resident y is checked without reading it back. */
struct y_summary {
  double min = 0;
  double max = 0;
  bool finite = true;
  bool whole = true;  // every value a whole number
};

inline y_summary summarise_y(const double* y, int n) {
  y_summary s;
  for (int i = 0; i < n; ++i) {
    const double v = y[i];
    if (!(v - v == 0)) {
      s.finite = false;
      s.whole = false;
      continue;
    }
    if (i == 0 || v < s.min) s.min = v;
    if (i == 0 || v > s.max) s.max = v;
    if (v != std::floor(v)) s.whole = false;
  }
  return s;
}

/** Support of y for the family: an error naming `y`. */
inline void check_glm_y(const glm_params& p, const y_summary& s, int n) {
  if (!s.finite) throw invalid_argument("y", "must be finite (no NA, NaN or Inf)");
  if (n == 0) return;
  auto range = [&](double lo, double hi, const char* what) {
    if (!s.whole || s.min < lo || s.max > hi)
      throw invalid_argument("y", std::string("must be ") + what + " (it has values in [" +
                                      format_number(s.min) + ", " +
                                      format_number(s.max) + "]" +
                                      (s.whole ? "" : ", not all whole numbers") + ")");
  };
  switch (p.fam) {
    case family::normal_id: break;
    case family::bernoulli_logit: range(0, 1, "0 or 1 for bernoulli_logit"); break;
    case family::poisson_log:
    case family::neg_binomial_2_log:
      // Beyond 2^53 (about 9e15) doubles skip whole numbers: no count there.
      if (s.whole && s.min >= 0 && s.max > 9e15)
        throw invalid_argument("y", "has a count of " + format_number(s.max) +
                                        ", larger than this family takes (at most 9e+15, "
                                        "where double precision still holds every whole "
                                        "number)");
      range(0, 9e15, "non-negative whole numbers for this family");
      break;
    case family::gamma:
    case family::inverse_gaussian:
      if (!(s.min > 0))
        throw invalid_argument("y", std::string("must be positive for the ") +
                                        info_of(p.fam).r_name + " family (its smallest value is " +
                                        format_number(s.min) + ")");
      break;
    case family::categorical_logit:
      range(1, p.n_eta, "whole numbers in 1..ncol(beta) for categorical_logit");
      break;
    case family::ordered_logistic:
      range(1, p.n_extra + 1,
            "whole numbers in 1..(length(cuts) + 1) for ordered_logistic");
      break;
  }
}

}  // namespace glm
}  // namespace clbayes

#endif
