#ifndef CLBAYES_GLM_GLM_BATCH_CPU_HPP
#define CLBAYES_GLM_GLM_BATCH_CPU_HPP

// The CPU path of the batched GLM likelihood: blocks of rows small enough
// for the cache; per block one Eigen product for the linear predictors of
// every point (X_b B), the row math over the block, and one product for the
// gradient (X_b' D) while X_b is still in cache. Terms of y alone are
// computed once per row and terms of sigma | phi once per point. Blocks run in parallel
// (OpenMP), each thread summing into its own result; the threads' results
// are added in thread order, so a run is reproducible for a thread count.

#include "../cpu_parallel.hpp"
#include "../interrupt.hpp"
#include "batch_params.hpp"
#include "row_math.hpp"

#include <algorithm>
#include <atomic>
#include <vector>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace clbayes {
namespace glm {

namespace internal {

/** The row math of point j over rows 0..m-1 of the block: eta(r, j) + a
 *  in, d lp / d eta into d(r, j); adds to lp and d_ex. One loop per family
 *  so that the family is not a branch in the loop. */
template <typename Row>
inline void batch_column(const Row& row, const double* eta, double* d, int m, double a,
                         double& lp, double& d_ex) {
  double s = 0, sx = 0;
  for (int r = 0; r < m; ++r) {
    const math::row_value v = row(r, eta[r] + a);
    s += v.lp;
    d[r] = v.d_eta;
    sx += v.d_extra;
  }
  lp += s;
  d_ex += sx;
}

/** The terms of y alone (log_y_fact) and of sigma | phi (their extra_terms)
 *  are computed once per row and once per point, not per row and point. */
inline void batch_column(family fam, const double* y, const double* log_y_fact,
                         const double* eta, double* d, int m, double a, double ex,
                         bool propto, double& lp, double& d_ex) {
  switch (fam) {
    case family::normal_id: {
      const math::extra_terms s = math::normal_terms(ex);
      return batch_column([&](int r, double e) { return math::normal_id(y[r], e, s, propto); },
                          eta, d, m, a, lp, d_ex);
    }
    case family::bernoulli_logit:
      return batch_column([&](int r, double e) { return math::bernoulli_logit(y[r], e); }, eta,
                          d, m, a, lp, d_ex);
    case family::poisson_log:
      return batch_column(
          [&](int r, double e) { return math::poisson_log(y[r], e, log_y_fact[r]); }, eta, d,
          m, a, lp, d_ex);
    default: {
      const math::extra_terms phi = math::neg_binomial_terms(ex);
      return batch_column(
          [&](int r, double e) { return math::neg_binomial_2_log(y[r], e, phi, log_y_fact[r]); },
          eta, d, m, a, lp, d_ex);
    }
  }
}

}  // namespace internal

/** Rows per block: X_b and the two m x P blocks in about 256 KiB. */
inline int cpu_batch_rows(int k, int n_points) {
  return std::max(64, std::min(4096, 32768 / std::max(k + 2 * n_points, 1)));
}

/**
 * Log densities (and gradients when `gradient`) of the P points of `p` for
 * the n x k column-major x and y. Parameters and y are the caller's to
 * check (check_glm_batch, check_glm_y); x is checked block by block.
 */
inline glm_batch_result glm_lp_batch_cpu(const double* x, const double* y, int n, int k,
                                         const glm_batch_params& p, bool gradient,
                                         bool propto) {
  const int P = p.n_points;
  Eigen::Map<const Eigen::MatrixXd> X(x, n, k);
  Eigen::Map<const Eigen::MatrixXd> B(p.beta, k, P);
  const bool has_extra = p.extra != nullptr;
  const int rows = cpu_batch_rows(k, P);
  const int n_blocks = (n + rows - 1) / rows;
  int threads = 1;
#ifdef _OPENMP
  const double work = static_cast<double>(n) * P * (k + 16);  // rows x points x (columns + row math)
  if (work >= cpu_parallel_min_work)
    threads = std::max(1, std::min(omp_get_max_threads(), n_blocks));
#endif
  std::vector<glm_batch_result> part(threads, zero_batch_result(p, k, gradient));
  for (glm_batch_result& r : part)
    if (has_extra && !gradient) r.d_extra = Eigen::VectorXd::Zero(P);  // summed regardless
  std::atomic<bool> bad_x(false);
  // Chunks of blocks between interrupt checks (R cannot be asked from a thread).
  const int chunk = std::max(threads, static_cast<int>(2e7 / (static_cast<double>(rows) * P *
                                                              std::max(k, 1))) + 1);
  for (int b0 = 0; b0 < n_blocks; b0 += chunk) {
    check_interrupt();
    const int b1 = std::min(n_blocks, b0 + chunk);
#ifdef _OPENMP
#pragma omp parallel num_threads(threads)
#endif
    {
      int t = 0;
#ifdef _OPENMP
      t = omp_get_thread_num();
#endif
      glm_batch_result& acc = part[t];
      Eigen::MatrixXd eta(rows, P), d(rows, P);
      std::vector<double> log_y_fact(rows, 0.0);
      const bool counts = p.fam == family::poisson_log || p.fam == family::neg_binomial_2_log;
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
      for (int b = b0; b < b1; ++b) {
        const int i0 = b * rows, m = std::min(rows, n - i0);
        auto Xb = X.middleRows(i0, m);
        if (!Xb.allFinite()) {
          bad_x = true;
          continue;
        }
        eta.topRows(m).noalias() = Xb * B;
        if (counts)
          for (int r = 0; r < m; ++r) log_y_fact[r] = math::log_factorial(y[i0 + r], propto);
        for (int j = 0; j < P; ++j) {
          double de = 0;
          internal::batch_column(p.fam, y + i0, log_y_fact.data(), &eta(0, j), &d(0, j), m,
                                 p.alpha[j], has_extra ? p.extra[j] : 0.0, propto, acc.value[j],
                                 de);
          if (has_extra) acc.d_extra[j] += de;
        }
        if (!gradient) continue;
        acc.d_alpha += d.topRows(m).colwise().sum().transpose();
        acc.d_beta.noalias() += Xb.transpose() * d.topRows(m);
      }
    }
    if (bad_x) throw invalid_argument("x", "contains NA, NaN or infinite values");
  }
  glm_batch_result res = std::move(part[0]);
  for (int t = 1; t < threads; ++t) {
    res.value += part[t].value;
    if (!gradient) continue;
    res.d_alpha += part[t].d_alpha;
    res.d_beta += part[t].d_beta;
    if (has_extra) res.d_extra += part[t].d_extra;
  }
  if (!gradient) res.d_extra.resize(0);
  return res;
}

}  // namespace glm
}  // namespace clbayes

#endif
