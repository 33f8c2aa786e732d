#ifndef CLBAYES_MCMC_EVALUATOR_HPP
#define CLBAYES_MCMC_EVALUATOR_HPP

// The samplers see the target only through a batch evaluator: a matrix of
// points in (one point per row, one row per chain or proposal), their log
// densities out, and for the gradient samplers their gradients too. Every
// density one step of an algorithm needs (all 2^k vertices of every chain's
// box, a batch of K proposals for every chain, or one leapfrog step of every
// chain) is asked for in one call, so an evaluator can compute them in
// parallel (parallel-slice.txt, Section 4.1): a model reads its data once
// per call, whatever the number of points.

#include <clbayes/eigen.hpp>
#include <clbayes/error.hpp>
#include <clbayes/interrupt.hpp>

#include <chrono>
#include <cmath>
#include <limits>
#include <string>

namespace clbayes {
namespace mcmc {

/** A log density evaluated in batches. */
class batch_evaluator {
 public:
  virtual ~batch_evaluator() = default;
  /** Fill `out` (resized to points.rows()) with log f of each row of
   *  `points`, up to one additive constant. -Inf outside the support. */
  virtual void operator()(const Eigen::MatrixXd& points,
                          Eigen::VectorXd& out) = 0;

  /** Whether gradient() is implemented. */
  virtual bool has_gradient() const { return false; }

  /** log f of each row into `out`, as operator(), and d log f / d x of each
   *  row into `grad` (resized to points.rows() x points.cols()). Rows
   *  outside the support have out = -Inf and any gradient. */
  virtual void gradient(const Eigen::MatrixXd& points, Eigen::VectorXd& out,
                        Eigen::MatrixXd& grad) {
    (void)points;
    (void)out;
    (void)grad;
    throw invalid_argument("log_density",
                           "has no gradient: give one, or use slice_sample_mv()");
  }
};

/** An evaluator whose values and gradients come from one routine,
 *  evaluate(points, out, grad) with grad null when only values are asked
 *  for (the models: the gradient shares the value's pass over the data). */
class fused_gradient_evaluator : public batch_evaluator {
 public:
  void operator()(const Eigen::MatrixXd& points, Eigen::VectorXd& out) override {
    evaluate(points, out, nullptr);
  }
  bool has_gradient() const override { return true; }
  void gradient(const Eigen::MatrixXd& points, Eigen::VectorXd& out,
                Eigen::MatrixXd& grad) override {
    evaluate(points, out, &grad);
  }

 protected:
  virtual void evaluate(const Eigen::MatrixXd& points, Eigen::VectorXd& out,
                        Eigen::MatrixXd* grad) = 0;
};

/** Calls an evaluator, checks its answer and keeps the counts the fit
 *  reports: NaN is read as -Inf (outside the support) and counted. */
class counted_evaluator {
 public:
  /** The evaluator the next calls go to (the counts carry on). */
  void bind(batch_evaluator& f) { f_ = &f; }

  void operator()(const Eigen::MatrixXd& points, Eigen::VectorXd& out) {
    check_interrupt();
    const auto t0 = std::chrono::steady_clock::now();
    (*f_)(points, out);
    seconds += elapsed_since(t0);
    check_values(points, out);
  }

  /** Values and gradients; a row whose value or gradient is not finite
   *  (NaN, or an infinite gradient at a finite value) is read as -Inf, so
   *  that HMC treats the step that reached it as divergent. A NaN value
   *  counts in n_nan, a gradient that is not finite at a finite value in
   *  n_bad_gradient, so that the warning can name what went wrong. */
  void gradient(const Eigen::MatrixXd& points, Eigen::VectorXd& out,
                Eigen::MatrixXd& grad) {
    check_interrupt();
    const auto t0 = std::chrono::steady_clock::now();
    f_->gradient(points, out, grad);
    seconds += elapsed_since(t0);
    if (grad.rows() != points.rows() || grad.cols() != points.cols())
      throw invalid_argument(
          "gradient", "must return one row per point and one column per variable: got " +
                          std::to_string(grad.rows()) + " x " + std::to_string(grad.cols()) +
                          " for " + std::to_string(points.rows()) + " x " +
                          std::to_string(points.cols()));
    check_values(points, out);
    for (Eigen::Index i = 0; i < out.size(); ++i)
      if (std::isfinite(out[i]) && !grad.row(i).allFinite()) {
        out[i] = -std::numeric_limits<double>::infinity();
        ++n_bad_gradient;
      }
    n_gradients += static_cast<double>(points.rows());
  }

  double n_evals = 0;      // points evaluated (with or without a gradient)
  double n_calls = 0;      // evaluator calls (batches)
  double n_nan = 0;        // NaN log densities read as -Inf
  double n_bad_gradient = 0;  // gradients not finite at a finite value, read as -Inf
  double n_gradients = 0;  // points evaluated with their gradient
  double seconds = 0;      // time spent inside the target (the rest is the sampler's)

 private:
  batch_evaluator* f_ = nullptr;

  static double elapsed_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  void check_values(const Eigen::MatrixXd& points, Eigen::VectorXd& out) {
    if (out.size() != points.rows())
      throw invalid_argument(
          "log_density", "must return one value per point: got " +
                             std::to_string(out.size()) + " for " +
                             std::to_string(points.rows()) + " points");
    for (Eigen::Index i = 0; i < out.size(); ++i)
      if (std::isnan(out[i])) {
        out[i] = -std::numeric_limits<double>::infinity();
        ++n_nan;
      }
    n_evals += static_cast<double>(points.rows());
    n_calls += 1;
  }
};

}  // namespace mcmc
}  // namespace clbayes

#endif
