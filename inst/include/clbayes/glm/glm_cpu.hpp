#ifndef CLBAYES_GLM_GLM_CPU_HPP
#define CLBAYES_GLM_GLM_CPU_HPP

// The CPU path of glm_lp: Eigen, one pass over x in blocks of rows. A block
// small enough to stay in cache gives the linear predictors (x_b * beta),
// then the per-row log densities and derivatives d, then its share of the
// beta gradient (x_b' * d) while it is still in cache: x is read from memory
// once, as on the device (stan-opencl.txt section 3.4, fused).

#include "../eigen.hpp"
#include "../interrupt.hpp"
#include "family.hpp"
#include "row_block.hpp"
#include "row_math.hpp"

#include <algorithm>
#include <vector>

namespace clbayes {
namespace glm {

/** Rows per block: about 256 KiB of x, a multiple of the row math's lane
 *  width. */
inline int cpu_block_rows(int k) {
  return std::max(64, std::min(4096, 32768 / std::max(k, 1))) / lane_width * lane_width;
}

/**
 * Log density of the GLM `p.fam` for the n x k column-major x and y, with
 * the gradient when `gradient`; `propto` drops the terms that depend on y
 * and x alone. `offset` (n values, or null) is added to the linear
 * predictor of each row (not to categorical_logit's: see check_glm_offset);
 * `weights` (n values, or null; families with one linear predictor)
 * multiply each row's log density.
 * Shapes and the finiteness of x are checked here; values (support of y,
 * positive sigma, a finite offset, ...) are the caller's to check, with
 * check_glm_values and check_glm_y.
 */
inline glm_result glm_lp_cpu(const double* x, const double* y, int n, int k,
                             const glm_params& p, bool gradient, bool propto,
                             const double* offset = nullptr,
                             const double* weights = nullptr) {
  check_glm_shapes(p, n, k);
  if (weights != nullptr && !info_of(p.fam).scalar)
    throw invalid_argument("weights", std::string("are not supported by ") +
                                          info_of(p.fam).name);
  const int ne = p.n_eta;
  Eigen::Map<const Eigen::MatrixXd> X(x, n, k);
  Eigen::Map<const Eigen::MatrixXd> B(p.beta, k, ne);
  glm_result res;
  if (gradient) {
    res.d_alpha.assign(p.n_alpha, 0.0);
    res.d_beta.assign(static_cast<std::size_t>(k) * ne, 0.0);
    res.d_extra.assign(p.n_extra, 0.0);
  }
  Eigen::Map<Eigen::MatrixXd> dB(gradient ? res.d_beta.data() : nullptr, k,
                                 gradient ? ne : 0);
  const int rows = cpu_block_rows(k);
  Eigen::MatrixXd eta(rows, ne), d(rows, ne);
  double lp = 0;
  const bool alpha_per_row = p.fam != family::categorical_logit && p.n_alpha > 1;
  const bool extra_per_row = p.n_extra > 1 && p.fam != family::ordered_logistic;
  // sigma | phi | shape | lambda terms: once for a scalar, per row for one
  // value per row
  auto terms_of = [&](double v) { return math::extra_terms_of(p.fam, v); };
  const bool scalar_extra = has_scale_extra(p.fam);
  const math::extra_terms shared_terms =
      scalar_extra && p.n_extra == 1 ? terms_of(p.extra[0]) : math::extra_terms();
  math::extra_terms row_terms;
  // One alpha and one sigma | phi for every row: the row math of a column
  // (row_block.hpp), as the batched path runs it; else row by row.
  const bool scalar_family = info_of(p.fam).scalar;
  const bool column_math = scalar_family && !alpha_per_row && !extra_per_row;
  const bool own_form = has_own_form(p.fam, p.lk);
  const bool counts = p.fam == family::poisson_log || p.fam == family::neg_binomial_2_log;
  std::vector<double> log_y_fact(column_math && counts ? rows : 0);
  count_terms_table table;
  if (column_math && own_form && p.fam == family::neg_binomial_2_log && n > 0)
    table = count_terms_table(shared_terms, count_table_max_y(*std::max_element(y, y + n), n));

  for (int i0 = 0; i0 < n; i0 += rows) {
    if ((i0 / rows) % 64 == 63) check_interrupt();
    const int m = std::min(rows, n - i0);
    auto Xb = X.middleRows(i0, m);
    // Checked here, while the block is in cache, instead of in a pass of its own.
    if (!all_finite(Xb)) throw invalid_argument("x", "contains NA, NaN or infinite values");
    // One predictor: matrix-vector products (GEMV); several: GEMM.
    if (ne == 1) eta.col(0).head(m).noalias() = Xb * B.col(0);
    else eta.topRows(m).noalias() = Xb * B;
    if (offset != nullptr && ne == 1)
      eta.col(0).head(m) += Eigen::Map<const Eigen::VectorXd>(offset + i0, m);
    double block_lp = 0;
    if (column_math) {
      if (counts)
        for (int r = 0; r < m; ++r) log_y_fact[r] = math::log_factorial(y[i0 + r], propto);
      column_totals sum;
      row_math_column(p.fam, p.lk, y + i0, weights == nullptr ? nullptr : weights + i0,
                      log_y_fact.data(), &eta(0, 0), &d(0, 0), m, p.alpha[0], shared_terms,
                      &table, propto, sum);
      block_lp = sum.lp;
      if (gradient && p.n_extra > 0) res.d_extra[0] += sum.d_extra;
    } else {
      for (int r = 0; r < m; ++r) {
        const int i = i0 + r;
        switch (p.fam) {
          case family::categorical_logit: {
            double mx = -INFINITY;
            for (int e = 0; e < ne; ++e) {
              eta(r, e) += p.alpha[e];
              mx = std::max(mx, eta(r, e));
            }
            double s = 0;
            for (int e = 0; e < ne; ++e) s += std::exp(eta(r, e) - mx);
            const double lse = mx + std::log(s);
            const int yi = static_cast<int>(y[i]) - 1;
            block_lp += eta(r, yi) - lse;
            for (int e = 0; e < ne; ++e)
              d(r, e) = (e == yi ? 1.0 : 0.0) - std::exp(eta(r, e) - lse);
            break;
          }
          case family::ordered_logistic: {
            const int yi = static_cast<int>(y[i]);
            math::ordered_value v = math::ordered_logistic(yi, p.n_extra, eta(r, 0), p.extra);
            block_lp += v.lp;
            d(r, 0) = v.d_eta;
            if (gradient) {
              if (yi > 1) res.d_extra[yi - 2] += v.d_cut_lower;
              if (yi <= p.n_extra) res.d_extra[yi - 1] += v.d_cut_upper;
            }
            break;
          }
          default: {
            const double e = eta(r, 0) + p.alpha[alpha_per_row ? i : 0];
            const math::extra_terms& ex =
                extra_per_row ? (row_terms = terms_of(p.extra[i])) : shared_terms;
            math::row_value v;
            if (!own_form) {
              v = math::linked_row(p.fam, p.lk, y[i], e, ex, propto);
            } else {
              switch (p.fam) {
                case family::normal_id: v = math::normal_id(y[i], e, ex, propto); break;
                case family::bernoulli_logit: v = math::bernoulli_logit(y[i], e); break;
                case family::poisson_log: v = math::poisson_log(y[i], e, propto); break;
                default:
                  v = math::neg_binomial_2_log(y[i], e, ex, math::log_factorial(y[i], propto));
              }
            }
            if (weights != nullptr) {
              v.lp *= weights[i];
              v.d_eta *= weights[i];
              v.d_extra *= weights[i];
            }
            block_lp += v.lp;
            d(r, 0) = v.d_eta;
            if (gradient && p.n_extra > 0) res.d_extra[extra_per_row ? i : 0] += v.d_extra;
          }
        }
      }
    }
    lp += block_lp;
    if (!gradient) continue;
    if (p.fam == family::categorical_logit) {
      for (int e = 0; e < ne; ++e) res.d_alpha[e] += d.col(e).head(m).sum();
    } else if (alpha_per_row) {
      for (int r = 0; r < m; ++r) res.d_alpha[i0 + r] = d(r, 0);
    } else if (p.n_alpha == 1) {
      res.d_alpha[0] += d.col(0).head(m).sum();
    }
    if (ne == 1) dB.col(0).noalias() += Xb.transpose() * d.col(0).head(m);
    else dB.noalias() += Xb.transpose() * d.topRows(m);
  }
  res.value = lp;
  return res;
}

}  // namespace glm
}  // namespace clbayes

#endif
