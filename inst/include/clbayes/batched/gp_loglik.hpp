#ifndef CLBAYES_BATCHED_GP_LOGLIK_HPP
#define CLBAYES_BATCHED_GP_LOGLIK_HPP

// Batched Gaussian-process log-likelihood, the evaluator behind
// gp_loglik_batched() and the samplers' GP model (parallel-slice.txt,
// Algorithm 4): for every row (kappa, psi, phi) of theta, the log density of
// N(0, Sigma) at r = y - X beta with
//   Sigma_ij = kappa exp(-d_ij / phi)             (exponential), or
//   Sigma_ij = kappa exp(-d_ij^2 / (2 phi^2))    (squared exponential),
// plus psi on the diagonal, d_ij the Euclidean distance between locations.
//
// A row outside the support (kappa <= 0, psi < 0, phi <= 0, or infinite)
// gives -Inf, and so does a Sigma that is numerically not positive definite:
// a Cholesky pivot at or below singular_tol(n) * (kappa + psi).
//
// On the device, one fused kernel per launch (one work group per row) for
// n below batched_settings::gp_blocked_min_n; from there on, build + blocked batched
// Cholesky + finish (evaluate_blocked), which spreads each row over many
// work groups.
//
// The data (y, X, coordinates) are copied once; the device copy is made on
// first device use and stays there between calls, so a sampler pays only for
// beta and theta going in and one double per row coming out.
//
// The gradient in (kappa, psi, phi), on the CPU only, is in
// gp_loglik_gradient.hpp, built from the public pieces of evaluate_cpu().

#include "../eigen.hpp"
#include "batch.hpp"
#include "thread_scratch.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#ifdef CLBAYES_OPENCL
#include "../kernels/gp_loglik.hpp"
#include "../kernels/gp_loglik_blocked.hpp"
#include "chol_blocked.hpp"
#include "../opencl/transfer.hpp"
#endif

namespace clbayes {
namespace batched {

enum class covariance { exponential = 0, squared_exponential = 1 };

class gp_loglik {
 public:
  /** y: n values; X: n x p column-major; coords: n x d column-major. */
  gp_loglik(const double* y, const double* X, int n, int p, const double* coords, int d)
      : n_(n), p_(p), d_(d), y_(y, y + n), X_(X, X + static_cast<std::size_t>(n) * p),
        coords_(coords, coords + static_cast<std::size_t>(n) * d) {
    if (n < 1) throw invalid_argument("y", "must have at least one value");
    if (p < 0) throw invalid_argument("X", "must have a non-negative number of columns");
    if (d < 1) throw invalid_argument("coords", "must have at least one column");
    check_batch_size("coords", n, n, 1);
    check_finite("y", y_.data(), y_.size());
    check_finite("X", X_.data(), X_.size());
    check_finite("coords", coords_.data(), coords_.size());
  }

  int n() const { return n_; }
  int p() const { return p_; }
  int d() const { return d_; }

  /** Relative pivot threshold below which Sigma counts as singular. */
  static double singular_tol(int n) {
    return 16.0 * n * std::numeric_limits<double>::epsilon();
  }

  /** Log densities of the `rows` x 3 column-major theta, on the CPU;
   *  `scratch` (one matrix a thread) may be kept between calls. */
  std::vector<double> evaluate_cpu(const double* beta, const double* theta, int rows,
                                   covariance cov, thread_scratch& scratch) const {
    const int n = n_;
    const Eigen::VectorXd r = residual(beta);
    std::vector<double> out(static_cast<std::size_t>(rows));
    scratch.prepare();
    for_each_item(rows, std::pow(static_cast<double>(n), 3) / 3.0, [&](int g) {
      const double kappa = theta[g], psi = theta[rows + g], phi = theta[2 * rows + g];
      out[g] = -std::numeric_limits<double>::infinity();
      if (!in_support(kappa, psi, phi)) return;
      Eigen::MatrixXd& S = scratch.get(0, n, n);
      build_covariance(kappa, psi, phi, cov, S);
      double half_log_det = 0.0;
      if (!factor(S, kappa, psi, half_log_det)) return;
      Eigen::VectorXd z = r;
      S.triangularView<Eigen::Lower>().solveInPlace(z);
      out[g] = log_density(half_log_det, z.squaredNorm());
    });
    return out;
  }

  // The pieces of evaluate_cpu(), shared with the gradient
  // (gp_loglik_gradient.hpp).

  /** Whether (kappa, psi, phi) lies in the likelihood's support. */
  static bool in_support(double kappa, double psi, double phi) {
    return kappa > 0 && psi >= 0 && phi > 0 && std::isfinite(kappa) &&
           std::isfinite(psi) && std::isfinite(phi);
  }

  /** The lower triangle of Sigma(kappa, psi, phi) into the n x n `S`. */
  void build_covariance(double kappa, double psi, double phi, covariance cov,
                        Eigen::MatrixXd& S) const {
    for (int j = 0; j < n_; ++j) {
      S(j, j) = kappa + psi;
      for (int i = j + 1; i < n_; ++i) S(i, j) = entry(i, j, kappa, phi, cov);
    }
  }

  /** Cholesky factor of the lower triangle of S in place, and log |S| / 2;
   *  false where S is numerically not positive definite (a pivot at or
   *  below singular_tol(n) * (kappa + psi)). */
  bool factor(Eigen::MatrixXd& S, double kappa, double psi, double& half_log_det) const {
    Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>, Eigen::Lower> llt(S);
    if (llt.info() != Eigen::Success) return false;
    const double tol = singular_tol(n_) * (kappa + psi);
    half_log_det = 0.0;
    for (int j = 0; j < n_; ++j) {
      if (!(S(j, j) * S(j, j) > tol)) return false;
      half_log_det += std::log(S(j, j));
    }
    return true;
  }

  /** log N(r; 0, Sigma) from log |Sigma| / 2 and r' Sigma^-1 r. */
  double log_density(double half_log_det, double quad) const {
    return -0.5 * (n_ * std::log(2.0 * 3.14159265358979323846) + 2.0 * half_log_det + quad);
  }

  /** Squared Euclidean distance between locations i and j. */
  double squared_distance(int i, int j) const {
    double dd = 0.0;
    for (int k = 0; k < d_; ++k) {
      const double t = coords_[static_cast<std::size_t>(k) * n_ + i] -
                       coords_[static_cast<std::size_t>(k) * n_ + j];
      dd += t * t;
    }
    return dd;
  }

  /** r = y - X beta. */
  Eigen::VectorXd residual(const double* beta) const {
    Eigen::Map<const Eigen::VectorXd> y(y_.data(), n_);
    Eigen::Map<const Eigen::MatrixXd> X(X_.data(), n_, p_);
    Eigen::Map<const Eigen::VectorXd> b(beta, p_);
    return p_ > 0 ? Eigen::VectorXd(y - X * b) : Eigen::VectorXd(y);
  }

#ifdef CLBAYES_OPENCL
  /**
   * Device-resident evaluation: beta (p x 1), theta (rows x 3) and out
   * (rows x 1) are device matrices; out receives the log densities. The
   * settings `t` (by default the selected device's) choose the path.
   */
  void evaluate_device(const opencl::matrix_cl& beta, const opencl::matrix_cl& theta,
                       opencl::matrix_cl& out, covariance cov,
                       const batched_settings& t = tuned_settings()) {
    const int rows = theta.rows();
    if (theta.cols() != 3) throw invalid_argument("theta", "must have 3 columns");
    if (out.size() < rows) throw invalid_argument("out", "must hold one value per row");
    if (beta.size() < p_) throw invalid_argument("beta", "must have length ncol(X)");
    if (rows == 0) return;
    if (n_ >= t.gp_blocked_min_n) {
      evaluate_blocked(beta, theta, out, cov, t);
      return;
    }
    device_data& dd = device();
    const int n = n_;
    const int ls = pow2_size(n, 32, team_size_limit(t));
    const std::size_t work = sizeof(double) * (static_cast<std::size_t>(n) * n + n);
    const std::size_t red = sizeof(double) * ls;
    const bool use_local = work + red <= local_budget(t);
    int per_launch = rows;
    if (!use_local) {
      const std::size_t fit = gp_scratch_budget(t) / work;
      per_launch = static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>(fit, rows)));
      if (dd.scratch.rows() != n * n + n || dd.scratch.cols() < per_launch)
        dd.scratch = opencl::matrix_cl(n * n + n, per_launch);
    }
    const opencl::matrix_cl& beta_arg = p_ > 0 ? beta : dd.dummy;
    for (int row0 = 0; row0 < rows; row0 += per_launch) {
      check_interrupt();
      const int count = std::min(per_launch, rows - row0);
      opencl::kernels::gp_loglik()(
          cl::NDRange(static_cast<std::size_t>(count) * ls), cl::NDRange(ls), out,
          theta, rows, row0, dd.y, dd.X, p_, beta_arg, dd.coords, d_, n,
          static_cast<int>(cov), singular_tol(n), use_local ? dd.dummy : dd.scratch,
          cl::Local(use_local ? work : sizeof(double)), cl::Local(red),
          use_local ? 1 : 0);
    }
  }

  /**
   * The same for large n, in three steps over all rows of a launch (rows
   * are split over launches beyond gp_scratch_budget(t)): build the scaled,
   * augmented covariance of every row (kernels/gp_loglik_blocked.hpp),
   * factor them with the blocked batched Cholesky, read off the densities.
   */
  void evaluate_blocked(const opencl::matrix_cl& beta, const opencl::matrix_cl& theta,
                        opencl::matrix_cl& out, covariance cov, const batched_settings& t) {
    const int rows = theta.rows();
    device_data& dd = device();
    const int n = n_, N = n_ + 1;
    check_batch_size("coords", N, N, 1);
    const std::size_t per_row = sizeof(double) * static_cast<std::size_t>(N) * N;
    const int per_launch = static_cast<int>(std::max<std::size_t>(
        1, std::min<std::size_t>(gp_scratch_budget(t) / per_row,
                                 static_cast<std::size_t>(rows))));
    if (dd.bscratch.rows() != N * N || dd.bscratch.cols() < per_launch) {
      dd.bscratch = opencl::matrix_cl(N * N, per_launch);
      dd.binfo = int_buffer(per_launch);
    }
    const opencl::matrix_cl& beta_arg = p_ > 0 ? beta : dd.dummy;
    const int ls = pow2_size(256, 1, team_size_limit(t));
    const std::size_t build = std::min<std::size_t>(
        opencl::round_up(static_cast<std::size_t>(N) * N, 64), 64 * 1024);
    for (int row0 = 0; row0 < rows; row0 += per_launch) {
      check_interrupt();
      const int count = std::min(per_launch, rows - row0);
      opencl::kernels::gp_blocked_build()(
          cl::NDRange(build, count), cl::NDRange(64, 1), dd.bscratch, dd.binfo, theta,
          rows, row0, dd.y, dd.X, p_, beta_arg, dd.coords, d_, n, static_cast<int>(cov));
      chol_batched_blocked(dd.bscratch, N, count, contiguous(N, N), dd.binfo,
                           singular_tol(n), true, &dd.bdiag, false, t);
      opencl::kernels::gp_blocked_finish()(
          cl::NDRange(static_cast<std::size_t>(count) * ls), cl::NDRange(ls), out,
          dd.bscratch, dd.binfo, theta, rows, row0, n, cl::Local(sizeof(double) * ls));
    }
  }

  /** Device evaluation from host beta and theta. */
  std::vector<double> evaluate_device(const double* beta, const double* theta, int rows,
                                      covariance cov,
                                      const batched_settings& s = tuned_settings()) {
    std::vector<double> out(static_cast<std::size_t>(rows));
    if (rows == 0) return out;
    opencl::matrix_cl b = opencl::to_matrix_cl(beta, p_ > 0 ? p_ : 0, 1);
    opencl::matrix_cl t = opencl::to_matrix_cl(theta, rows, 3);
    opencl::matrix_cl o(rows, 1);
    evaluate_device(b, t, o, cov, s);
    opencl::from_matrix_cl(o, out.data());
    return out;
  }
#endif

  /** The CPU path with scratch for this call only. */
  std::vector<double> evaluate_cpu(const double* beta, const double* theta, int rows,
                                   covariance cov) const {
    thread_scratch scratch(1);
    return evaluate_cpu(beta, theta, rows, cov, scratch);
  }

  /** Either path; `scratch` (CPU path) as in evaluate_cpu(), or null. */
  std::vector<double> evaluate(const double* beta, const double* theta, int rows,
                               covariance cov, bool use_device,
                               thread_scratch* scratch = nullptr) {
    check_arguments(beta, theta, rows);
#ifdef CLBAYES_OPENCL
    if (use_device) return evaluate_device(beta, theta, rows, cov);
#else
    if (use_device) throw no_device("clbayes was built without OpenCL");
#endif
    return scratch != nullptr ? evaluate_cpu(beta, theta, rows, cov, *scratch)
                              : evaluate_cpu(beta, theta, rows, cov);
  }

  /** Throws unless beta (p values) is finite and theta (rows x 3) has no NaN. */
  void check_arguments(const double* beta, const double* theta, int rows) const {
    check_finite("beta", beta, static_cast<std::size_t>(p_));
    for (std::size_t k = 0; k < static_cast<std::size_t>(rows) * 3; ++k)
      if (std::isnan(theta[k]))
        throw invalid_argument("theta", "must not contain NA or NaN values");
  }

 private:
  double entry(int i, int j, double kappa, double phi, covariance cov) const {
    const double dd = squared_distance(i, j);
    return cov == covariance::exponential ? kappa * std::exp(-std::sqrt(dd) / phi)
                                          : kappa * std::exp(-0.5 * dd / (phi * phi));
  }

  int n_, p_, d_;
  std::vector<double> y_, X_, coords_;

#ifdef CLBAYES_OPENCL
  struct device_data {
    opencl::matrix_cl y, X, coords, scratch, dummy;
    opencl::matrix_cl bscratch, binfo, bdiag;  // the blocked path's
  };
  std::unique_ptr<device_data> dev_;

  /** The device copy of the data, (re)made when the device changed. */
  device_data& device() {
    if (!dev_ || !dev_->y.on_current_device()) {
      std::unique_ptr<device_data> d(new device_data);
      d->y = opencl::to_matrix_cl(y_.data(), n_, 1);
      d->X = p_ > 0 ? opencl::to_matrix_cl(X_.data(), n_, p_) : opencl::matrix_cl(1, 1);
      d->coords = opencl::to_matrix_cl(coords_.data(), n_, d_);
      d->dummy = opencl::matrix_cl(1, 1);
      d->scratch = opencl::matrix_cl(1, 1);
      dev_ = std::move(d);
    }
    return *dev_;
  }
#endif
};

}  // namespace batched
}  // namespace clbayes

#endif
