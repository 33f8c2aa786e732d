#ifndef CLBAYES_GLM_GROUP_TERMS_HPP
#define CLBAYES_GLM_GROUP_TERMS_HPP

// The group-level part Z b of a multilevel linear predictor, stored as lme4
// builds Z but without its n x q matrix: for each term (one bar of the
// formula, e.g. (1 + x | g)) the level of every row and the term's p columns
// (1, x). Row i adds sum_c z_c[i] b[offset + p level[i] + c] to its linear
// predictor, and the gradient in b is the per-level sum of z_c[i] d lp_i /
// d eta_i. Both are applied to a block of rows while it is in cache, inside
// the batched likelihood's pass over the data (glm_batch_cpu.hpp).

#include "../eigen.hpp"
#include "../error.hpp"

#include <string>
#include <vector>

namespace clbayes {
namespace glm {

/** One term: p columns over the levels of one grouping factor. Pointers
 *  are borrowed (n rows each). */
struct group_term {
  int n_coef = 1;                  // p
  int n_levels = 0;                // levels of the grouping factor
  int offset = 0;                  // first entry of this term in b
  const int* level = nullptr;      // n levels, 0-based
  const double* z = nullptr;       // n x p column-major
};

/** All terms of a model; b has `size` entries per point, term after term,
 *  each term level after level with its p coefficients together (lme4's
 *  order of the columns of Z). */
struct group_terms {
  std::vector<group_term> terms;
  int size = 0;  // q

  /** Appends a term, checking its levels against n_levels. */
  void add(int n_coef, int n_levels, const int* level, const double* z, int n,
           const std::string& name) {
    if (n_coef < 1 || n_levels < 1)
      throw invalid_argument(name, "must have at least one column and one level");
    for (int i = 0; i < n; ++i)
      if (level[i] < 0 || level[i] >= n_levels)
        throw invalid_argument(name, "has a row whose level is out of range");
    for (long long i = 0; i < static_cast<long long>(n) * n_coef; ++i)
      if (!(z[i] - z[i] == 0))
        throw invalid_argument(name, "has a column with NA, NaN or infinite values");
    group_term t;
    t.n_coef = n_coef;
    t.n_levels = n_levels;
    t.offset = size;
    t.level = level;
    t.z = z;
    terms.push_back(t);
    size += n_coef * n_levels;
  }
};

/** eta(r, j) += (Z b_j)[i0 + r] for the m rows of a block and every point j
 *  (b: q x P, column-major). */
inline void add_group_eta(const group_terms& g, const Eigen::Ref<const Eigen::MatrixXd>& b,
                          int i0, int m, int n, Eigen::Ref<Eigen::MatrixXd> eta) {
  for (const group_term& t : g.terms) {
    const int p = t.n_coef;
    for (Eigen::Index j = 0; j < eta.cols(); ++j) {
      const double* bj = b.data() + j * b.rows() + t.offset;
      for (int r = 0; r < m; ++r) {
        const int i = i0 + r;
        const double* bl = bj + static_cast<long long>(p) * t.level[i];
        double s = 0;
        for (int c = 0; c < p; ++c) s += t.z[static_cast<long long>(c) * n + i] * bl[c];
        eta(r, j) += s;
      }
    }
  }
}

/** d_b(:, j) += Z' d(:, j) over the m rows of a block (d: the derivatives
 *  d lp / d eta, m x P). */
inline void add_group_gradient(const group_terms& g, const Eigen::Ref<const Eigen::MatrixXd>& d,
                               int i0, int m, int n, Eigen::Ref<Eigen::MatrixXd> d_b) {
  for (const group_term& t : g.terms) {
    const int p = t.n_coef;
    for (Eigen::Index j = 0; j < d.cols(); ++j) {
      double* gj = d_b.data() + j * d_b.rows() + t.offset;
      for (int r = 0; r < m; ++r) {
        const int i = i0 + r;
        double* gl = gj + static_cast<long long>(p) * t.level[i];
        const double dr = d(r, j);
        for (int c = 0; c < p; ++c) gl[c] += t.z[static_cast<long long>(c) * n + i] * dr;
      }
    }
  }
}

}  // namespace glm
}  // namespace clbayes

#endif
