#ifndef CLBAYES_MODELS_GROUP_EFFECTS_HPP
#define CLBAYES_MODELS_GROUP_EFFECTS_HPP

// The group-level effects of a multilevel model from the parameters the
// samplers draw: for each term, b = T z level by level (T from
// group_covariance.hpp, z ~ N(0, I)), and back, the chain rule that turns
// the likelihood's gradient in b into gradients in z, in T's parameters and
// in the residual sd. A point's block of parameters is laid out as z (q
// values, in the order of b: term after term, level after level) followed
// by each term's covariance parameters.

#include <clbayes/error.hpp>
#include <clbayes/glm/group_terms.hpp>
#include <clbayes/models/group_covariance.hpp>

#include <string>
#include <vector>

namespace clbayes {
namespace models {

class group_effects {
 public:
  group_effects() = default;
  /** `terms` and `cov` name the same terms in the same order. */
  group_effects(glm::group_terms terms, std::vector<term_covariance> cov)
      : terms_(std::move(terms)), cov_(std::move(cov)) {
    if (cov_.size() != terms_.terms.size())
      throw invalid_argument("prior_covariance", "must describe every group-level term");
    int at = terms_.size;
    for (std::size_t t = 0; t < cov_.size(); ++t) {
      if (cov_[t].p != terms_.terms[t].n_coef)
        throw invalid_argument("prior_covariance", "must have one row and column per "
                                                   "coefficient of its term");
      cov_at_.push_back(at);
      at += cov_[t].n_params();
    }
    dim_ = at;
  }

  bool empty() const { return terms_.terms.empty(); }
  /** Parameters in a point's block. */
  int dim() const { return dim_; }
  /** Entries of b. */
  int size() const { return terms_.size; }
  const glm::group_terms& terms() const { return terms_; }

  bool in_support(const double* theta) const {
    for (int i = 0; i < terms_.size; ++i)
      if (!std::isfinite(theta[i])) return false;
    for (std::size_t t = 0; t < cov_.size(); ++t)
      if (!cov_[t].in_support(theta + cov_at_[t])) return false;
    return true;
  }

  /** b (size() values) at the block `theta` with residual sd `sigma`. */
  void effects(const double* theta, double sigma, double* b) const {
    std::vector<double> T;
    for (std::size_t t = 0; t < cov_.size(); ++t) {
      const glm::group_term& g = terms_.terms[t];
      const int p = g.n_coef;
      T.resize(p * p);
      cov_[t].factor(theta + cov_at_[t], sigma, T.data());
      for (int l = 0; l < g.n_levels; ++l) {
        const double* z = theta + g.offset + p * l;
        double* bl = b + g.offset + p * l;
        for (int r = 0; r < p; ++r) {
          double s = 0;
          for (int c = 0; c <= r; ++c) s += T[r + c * p] * z[c];
          bl[r] = s;
        }
      }
    }
  }

  /** Adds to `d_theta` (the block's dim() gradients) and `*d_sigma` (when
   *  not null) the chain rule of `d_b`, the gradient in b. */
  void chain_rule(const double* theta, double sigma, const double* d_b, double* d_theta,
                  double* d_sigma) const {
    std::vector<double> T, dT;
    std::vector<dual> td, Td;
    for (std::size_t t = 0; t < cov_.size(); ++t) {
      const glm::group_term& g = terms_.terms[t];
      const term_covariance& cov = cov_[t];
      const int p = g.n_coef;
      const double* th = theta + cov_at_[t];
      T.resize(p * p);
      cov.factor(th, sigma, T.data());
      dT.assign(p * p, 0.0);  // d lp / d T
      for (int l = 0; l < g.n_levels; ++l) {
        const double* z = theta + g.offset + p * l;
        const double* gb = d_b + g.offset + p * l;
        double* gz = d_theta + g.offset + p * l;
        for (int c = 0; c < p; ++c)
          for (int r = c; r < p; ++r) {
            gz[c] += T[r + c * p] * gb[r];
            dT[r + c * p] += gb[r] * z[c];
          }
      }
      // d lp / d (each parameter of T, then sigma), one forward pass each
      const int n = cov.n_params();
      const bool with_sigma = d_sigma != nullptr && cov.dispersion;
      td.resize(n);
      Td.resize(p * p);
      for (int m = 0; m < n + (with_sigma ? 1 : 0); ++m) {
        for (int i = 0; i < n; ++i) td[i] = dual(th[i], i == m ? 1.0 : 0.0);
        cov.factor(td.data(), dual(sigma, m == n ? 1.0 : 0.0), Td.data());
        double s = 0;
        for (int i = 0; i < p * p; ++i) s += dT[i] * Td[i].d;
        if (m < n) d_theta[cov_at_[t] + m] += s;
        else *d_sigma += s;
      }
    }
  }

  /** Entries of the lower triangles (column-major) of every term's Sigma. */
  int n_covariances() const {
    int n = 0;
    for (const auto& c : cov_) n += c.p * (c.p + 1) / 2;
    return n;
  }

  /** Each term's Sigma = T T' (lower triangles, column-major) into `out`. */
  void covariances(const double* theta, double sigma, double* out) const {
    std::vector<double> T;
    for (std::size_t t = 0; t < cov_.size(); ++t) {
      const int p = cov_[t].p;
      T.resize(p * p);
      cov_[t].factor(theta + cov_at_[t], sigma, T.data());
      for (int c = 0; c < p; ++c)
        for (int r = c; r < p; ++r) {
          double s = 0;
          for (int i = 0; i <= c; ++i) s += T[r + i * p] * T[c + i * p];
          *out++ = s;
        }
    }
  }

 private:
  glm::group_terms terms_;
  std::vector<term_covariance> cov_;
  std::vector<int> cov_at_;  // each term's first covariance parameter in the block
  int dim_ = 0;
};

}  // namespace models
}  // namespace clbayes

#endif
