#ifndef CLBAYES_GLM_GLM_BATCH_CPU_HPP
#define CLBAYES_GLM_GLM_BATCH_CPU_HPP

// The CPU path of the batched GLM likelihood: blocks of rows small enough
// for the cache; per block one Eigen product for the linear predictors of
// every point (X_b B), the row math over the block (row_block.hpp: SIMD
// lanes down each point's column), and one product for the gradient
// (X_b' D) while X_b is still in cache; a multilevel model's group terms
// are added to the block's linear predictors and their gradient summed per
// level in the same visit (group_terms.hpp). Terms of y alone are computed once
// per row, terms of sigma | phi once per point, and the negative binomial's
// terms of y and phi once per point and value of y (a table). Blocks run in
// parallel (OpenMP), each thread summing into its own result; the threads'
// results are added in thread order, so a run is reproducible for a thread
// count.

#include "../cpu_parallel.hpp"
#include "../interrupt.hpp"
#include "batch_params.hpp"
#include "row_block.hpp"

#include <algorithm>
#include <atomic>
#include <vector>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace clbayes {
namespace glm {

/** Rows per block: X_b and the m x P block (eta, then D) in about 256 KiB,
 *  a multiple of the row math's lane width. */
inline int cpu_batch_rows(int k, int n_points) {
  const int rows = std::max(64, std::min(4096, 32768 / std::max(k + n_points, 1)));
  return rows / lane_width * lane_width;
}

namespace internal {

/** A thread's buffers for one block: eta, overwritten by D (rows x P), and
 *  log y!. */
struct batch_buffers {
  Eigen::MatrixXd eta_d;
  std::vector<double> log_y_fact;
  batch_buffers(int rows, int P) : eta_d(rows, P), log_y_fact(rows, 0.0) {}
};

/** The P points' sums over rows i0 .. i0 + m - 1 added to acc: X_b B (plus
 *  the offset), the row math of each point's column (eta overwritten by
 *  D), and X_b' D. False (nothing added) when X_b is not finite. */
inline bool add_batch_block(const Eigen::Map<const Eigen::MatrixXd>& X,
                            const Eigen::Map<const Eigen::MatrixXd>& B, const double* y,
                            const double* offset, const double* weights, int i0, int m, const glm_batch_params& p,
                            const std::vector<math::extra_terms>& terms,
                            const std::vector<count_terms_table>& tables, bool gradient,
                            bool propto, batch_buffers& buf, glm_batch_result& acc) {
  auto Xb = X.middleRows(i0, m);
  // Checked here, while the block is in cache, instead of in a pass of its own.
  if (!all_finite(Xb)) return false;
  auto eta_d = buf.eta_d.topRows(m);
  eta_d.noalias() = Xb * B;
  if (offset != nullptr) eta_d.colwise() += Eigen::Map<const Eigen::VectorXd>(offset + i0, m);
  const Eigen::Index n = X.rows();
  if (p.groups != nullptr)
    add_group_eta(*p.groups, Eigen::Map<const Eigen::MatrixXd>(p.b, p.groups->size, p.n_points),
                  i0, m, static_cast<int>(n), eta_d);
  if (p.fam == family::poisson_log || p.fam == family::neg_binomial_2_log)
    for (int r = 0; r < m; ++r) buf.log_y_fact[r] = math::log_factorial(y[i0 + r], propto);
  for (int j = 0; j < p.n_points; ++j) {
    column_totals sum;
    double* col = &buf.eta_d(0, j);
    row_math_column(p.fam, p.lk, y + i0, weights == nullptr ? nullptr : weights + i0,
                    buf.log_y_fact.data(), col, col, m, p.alpha[j], terms[j],
                    tables.empty() ? nullptr : &tables[j], propto, sum);
    acc.value[j] += sum.lp;
    if (p.extra != nullptr) acc.d_extra[j] += sum.d_extra;
    if (gradient) acc.d_alpha[j] += sum.d_eta;
  }
  if (gradient) acc.d_beta.noalias() += Xb.transpose() * eta_d;
  if (gradient && p.groups != nullptr)
    add_group_gradient(*p.groups, eta_d, i0, m, static_cast<int>(n), acc.d_b);
  return true;
}

}  // namespace internal

/**
 * Log densities (and gradients when `gradient`) of the P points of `p` for
 * the n x k column-major x and y; `offset` (n values, or null) is added to
 * every point's linear predictor of each row; `weights` (n values, or null)
 * multiply each row's log density. Parameters, y, the offset and the weights
 * are the caller's to check (check_glm_batch, check_glm_y, make_glm_data);
 * x is checked block by block.
 */
inline glm_batch_result glm_lp_batch_cpu(const double* x, const double* y, int n, int k,
                                         const glm_batch_params& p, bool gradient,
                                         bool propto, const double* offset = nullptr,
                                         const double* weights = nullptr) {
  const int P = p.n_points;
  Eigen::Map<const Eigen::MatrixXd> X(x, n, k);
  Eigen::Map<const Eigen::MatrixXd> B(p.beta, k, P);
  const bool has_extra = p.extra != nullptr;
  const int rows = cpu_batch_rows(k, P);
  const int n_blocks = (n + rows - 1) / rows;
  int threads = 1;
#ifdef _OPENMP
  const double work = static_cast<double>(n) * P * (k + 16);
  if (work >= cpu_parallel_min_work)
    threads = std::max(1, std::min(omp_get_max_threads(), n_blocks));
#endif
  std::vector<glm_batch_result> part(threads, zero_batch_result(p, k, gradient));
  for (glm_batch_result& r : part)
    if (has_extra && !gradient) r.d_extra = Eigen::VectorXd::Zero(P);  // summed regardless
  // Each point's sigma | phi terms, and the negative binomial's tables.
  std::vector<math::extra_terms> terms(P);
  const bool nb_table = p.fam == family::neg_binomial_2_log && has_own_form(p.fam, p.lk);
  std::vector<count_terms_table> tables(nb_table ? P : 0);
  const double y_max = tables.empty() || n == 0 ? 0 : *std::max_element(y, y + n);
  const int table_y = count_table_max_y(y_max, n);
  // (threads for tables of over 10^4 entries, about a millisecond of work)
  const bool big_tables = static_cast<double>(tables.size()) * (table_y + 1) > 1e4;
  (void)big_tables;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(static) if (big_tables)
#endif
  for (int j = 0; j < P; ++j) {
    if (!has_extra) continue;
    terms[j] = math::extra_terms_of(p.fam, p.extra[j]);
    if (!tables.empty()) tables[j] = count_terms_table(terms[j], table_y);
  }
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
      internal::batch_buffers buf(rows, P);
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
      for (int b = b0; b < b1; ++b)
        if (!internal::add_batch_block(X, B, y, offset, weights, b * rows,
                                       std::min(rows, n - b * rows), p, terms, tables,
                                       gradient, propto, buf, part[t]))
          bad_x = true;
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
    if (p.groups != nullptr) res.d_b += part[t].d_b;
  }
  if (!gradient) res.d_extra.resize(0);
  return res;
}

}  // namespace glm
}  // namespace clbayes

#endif
