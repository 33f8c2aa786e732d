#ifndef CLBAYES_SLICE_EVALUATOR_HPP
#define CLBAYES_SLICE_EVALUATOR_HPP

// The sampler sees the target only through a batch evaluator: a matrix of
// points in (one point per row), their log densities out. Every density one
// step of the algorithm needs (all 2^k vertices of every chain's box, or a
// batch of K proposals for every chain) is asked for in one call, so an
// evaluator can compute them in parallel (parallel-slice.txt, Section 4.1).

#include <clbayes/eigen.hpp>
#include <clbayes/error.hpp>
#include <clbayes/interrupt.hpp>

#include <cmath>
#include <limits>
#include <string>

namespace clbayes {
namespace slice {

/** A log density evaluated in batches. */
class batch_evaluator {
 public:
  virtual ~batch_evaluator() = default;
  /** Fill `out` (resized to points.rows()) with log f of each row of
   *  `points`, up to one additive constant. -Inf outside the support. */
  virtual void operator()(const Eigen::MatrixXd& points,
                          Eigen::VectorXd& out) = 0;
};

/** Calls an evaluator, checks its answer and keeps the counts the fit
 *  reports: NaN is read as -Inf (outside the slice) and counted. */
class counted_evaluator {
 public:
  /** The evaluator the next calls go to (the counts carry on). */
  void bind(batch_evaluator& f) { f_ = &f; }

  void operator()(const Eigen::MatrixXd& points, Eigen::VectorXd& out) {
    check_interrupt();
    (*f_)(points, out);
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

  double n_evals = 0;  // points evaluated
  double n_calls = 0;  // evaluator calls (batches)
  double n_nan = 0;    // NaN log densities read as -Inf

 private:
  batch_evaluator* f_ = nullptr;
};

}  // namespace slice
}  // namespace clbayes

#endif
