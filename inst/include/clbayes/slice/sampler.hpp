#ifndef CLBAYES_SLICE_SAMPLER_HPP
#define CLBAYES_SLICE_SAMPLER_HPP

// The parallel multivariate slice sampler (parallel-slice.txt) as a
// resumable object: construct it, start() it at the initial points, then
// run() it in pieces (so a caller can report progress) until done(). All
// chains advance together, so every batch of densities of one step of the
// algorithm is requested across all chains in one evaluator call.
//
// Widths in warmup (stepout = warmup): each update first steps out from a
// box (or interval) of a quarter of the current widths, and at the end of
// every adaptation window the widths become the mean extent U - L of the
// stepped-out boxes over the window and the chains (for the hyperrectangle,
// twice that: see hyperrect_width_factor), from widths too small or too
// large alike.
// Widths are fixed after warmup, so the kept draws come from a valid sampler.
//
// Metric in warmup (metric = dense): the updates run on coordinates z with
// x = center + S z (metric.hpp). At 40% and 75% of warmup S becomes the
// Cholesky factor of the covariance of the draws since the previous change
// (from 15% of warmup on), pooled over chains; the widths are carried over
// in units of each axis's marginal scale and then adapted again as above.

#include <clbayes/error.hpp>
#include <clbayes/interrupt.hpp>
#include <clbayes/mcmc/chains.hpp>
#include <clbayes/mcmc/evaluator.hpp>
#include <clbayes/mcmc/coordinates.hpp>
#include <clbayes/slice/hyperrect.hpp>
#include <clbayes/slice/univariate.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace clbayes {
namespace slice {

enum class method { hyperrect, univariate };
enum class stepout { never, warmup, always };
enum class metric { diagonal, dense };

/** Vertex step-out evaluates 2^k points per chain; above this dimension
 *  "warmup" keeps the widths fixed and "always" is refused. */
constexpr int max_vertex_dim = 12;
/** Step-out in warmup starts from this fraction of the widths. */
constexpr double adapt_start_fraction = 0.25;
/** The hyperrectangle's widths are this multiple of the mean stepped-out
 *  extent. Vertex step-out stops once every vertex is outside the slice,
 *  which for a round slice happens while the box is still narrower than the
 *  slice along the axes (about 2r / sqrt(k) for a ball of radius r), and a
 *  batch of K proposals tolerates a low acceptance rate; on Example 1 and
 *  the GP posterior a factor of 2 gave 1.7-2.5 times the ESS per density of
 *  the plain extent, 3 and 4 no more. */
constexpr double hyperrect_width_factor = 2.0;

struct options {
  slice::method method = slice::method::hyperrect;
  slice::stepout stepout = slice::stepout::warmup;
  slice::metric metric = slice::metric::dense;
  int n_proposals = 32;
  int warmup = 0;
  int n_iter = 1000;
  int max_steps = 100;
  std::uint64_t seed = 1;
};

inline method parse_method(const std::string& s) {
  if (s == "hyperrect") return method::hyperrect;
  if (s == "univariate") return method::univariate;
  throw invalid_argument("method", "must be \"hyperrect\" or \"univariate\"");
}

inline stepout parse_stepout(const std::string& s) {
  if (s == "never") return stepout::never;
  if (s == "warmup") return stepout::warmup;
  if (s == "always") return stepout::always;
  throw invalid_argument("stepout", "must be \"warmup\", \"never\" or \"always\"");
}

inline metric parse_metric(const std::string& s) {
  if (s == "dense") return metric::dense;
  if (s == "diagonal") return metric::diagonal;
  throw invalid_argument("metric", "must be \"dense\" or \"diagonal\"");
}

/** Fractions of warmup at which the dense metric is re-estimated, and the
 *  fraction before which draws are not used (the chains' burn-in). */
constexpr double metric_burn_in = 0.15;
constexpr double metric_at[2] = {0.40, 0.75};

class sampler {
 public:
  /** @param init chains x dim starting points; @param width dim widths
   *  (on the scale of the variables); @param bounds their support. */
  sampler(const Eigen::MatrixXd& init, const Eigen::VectorXd& width,
          const options& opt)
      : sampler(init, width, opt, mcmc::support(static_cast<int>(init.cols()))) {}

  sampler(const Eigen::MatrixXd& init, const Eigen::VectorXd& width,
          const options& opt, const mcmc::support& bounds)
      : opt_(opt), state_(init, opt.seed), width_(width),
        bounds_(bounds), metric_(static_cast<int>(init.cols())),
        coord_(metric_, bounds_), on_z_(coord_) {
    const int k = static_cast<int>(init.cols());
    if (init.rows() < 1 || k < 1)
      throw invalid_argument("init", "must have at least one chain and one dimension");
    if (!init.allFinite()) throw invalid_argument("init", "must be finite");
    if (width.size() != k)
      throw invalid_argument("width", "must have one value per dimension of `init`");
    for (Eigen::Index j = 0; j < width.size(); ++j)
      if (!(width[j] > 0) || !std::isfinite(width[j]))
        throw invalid_argument("width", "must be positive and finite");
    if (bounds.dim() != k)
      throw invalid_argument("lower", "must have one value per dimension of `init`");
    for (int c = 0; c < init.rows(); ++c)
      for (int j = 0; j < k; ++j)
        if (!bounds.inside(j, init(c, j)))
          throw invalid_argument("init", "must lie strictly inside `lower` and `upper`");
    // The chains run on u (= z until the metric changes); widths given on x
    // become widths on u at the initial points.
    state_.x = coord_.x_to_u(init);
    for (int j = 0; j < k; ++j) {
      double slope = 0;
      for (int c = 0; c < init.rows(); ++c) slope += bounds.dx_du(j, init(c, j));
      width_[j] /= slope / static_cast<double>(init.rows());
    }
    if (opt.n_proposals < 1) throw invalid_argument("n_proposals", "must be at least 1");
    if (opt.n_iter < 1) throw invalid_argument("n_iter", "must be at least 1");
    if (opt.warmup < 0) throw invalid_argument("warmup", "must be at least 0");
    if (opt.max_steps < 1) throw invalid_argument("max_steps", "must be at least 1");
    if (opt.method == method::hyperrect && opt.stepout == stepout::always &&
        k > max_vertex_dim)
      throw invalid_argument("stepout", "= \"always\" needs at most " +
                                            std::to_string(max_vertex_dim) +
                                            " dimensions (2^k vertices)");
    draws_.assign(static_cast<std::size_t>(opt.n_iter) * init.rows() * k, 0.0);
    warmup_draws_.assign(static_cast<std::size_t>(opt.warmup) * init.rows() * k, 0.0);
    window_ = std::max(1, std::min(50, opt.warmup / 5));
    extent_sum_ = Eigen::VectorXd::Zero(k);
    for (int m = 0; m < 2; ++m)
      metric_iter_[m] = static_cast<int>(std::floor(metric_at[m] * opt.warmup));
    metric_from_ = static_cast<int>(std::floor(metric_burn_in * opt.warmup));
  }

  sampler(const sampler&) = delete;
  sampler& operator=(const sampler&) = delete;

  /** Evaluate the initial points; each must have a finite log density. */
  void start(mcmc::batch_evaluator& f) {
    bind(f);
    eval_(state_.x, state_.logf);
    for (int c = 0; c < state_.n(); ++c)
      if (!std::isfinite(state_.logf[c]))
        throw invalid_argument(
            "init", "must have a finite log density (chain " +
                        std::to_string(c + 1) + " has " +
                        (state_.logf[c] > 0 ? "+Inf" : "-Inf or NaN") + ")");
    started_ = true;
  }

  /** Run at most `iterations` iterations; returns how many were run. */
  int run(mcmc::batch_evaluator& f, int iterations) {
    if (!started_) throw std::logic_error("slice sampler: start() before run()");
    bind(f);
    int done_now = 0;
    for (; done_now < iterations && !done(); ++done_now) {
      check_interrupt();
      iterate();
      ++iter_;
    }
    return done_now;
  }

  bool done() const { return iter_ == opt_.warmup + opt_.n_iter; }
  int iteration() const { return iter_; }
  int total_iterations() const { return opt_.warmup + opt_.n_iter; }
  int chains() const { return state_.n(); }
  int dim() const { return state_.dim(); }
  const options& opts() const { return opt_; }

  /** Kept draws, iteration x chain x variable, first index fastest. */
  const std::vector<double>& draws() const { return draws_; }
  const std::vector<double>& warmup_draws() const { return warmup_draws_; }
  /** Widths on the sampler's coordinates z (see metric()). */
  const Eigen::VectorXd& widths() const { return width_; }
  /** u = center + S z, the map from the sampler's coordinates. */
  const mcmc::affine_metric& metric() const { return metric_; }
  const mcmc::support& bounds() const { return bounds_; }
  /** The chains' current points (chains x dim). */
  Eigen::MatrixXd current() const {
    Eigen::MatrixXd x;
    coord_.to_x(state_.x, x);
    return x;
  }
  double n_evals() const { return eval_.n_evals; }
  double n_calls() const { return eval_.n_calls; }
  double n_nan() const { return eval_.n_nan; }
  double n_evals_warmup() const { return n_evals_warmup_; }
  double n_stuck() const { return state_.n_stuck; }

 private:
  options opt_;
  mcmc::chain_state state_;  // on the sampler's coordinates z
  Eigen::VectorXd width_;
  mcmc::support bounds_;
  mcmc::affine_metric metric_;
  mcmc::coordinates coord_;
  mcmc::coordinate_evaluator on_z_;  // the target seen on z
  mcmc::counted_evaluator eval_;
  bool started_ = false;
  int iter_ = 0;
  std::vector<double> draws_, warmup_draws_;
  int window_ = 1, in_window_ = 0;
  Eigen::VectorXd extent_sum_;
  double n_evals_warmup_ = 0;
  int metric_iter_[2] = {0, 0}, metric_from_ = 0;

  void bind(mcmc::batch_evaluator& f) {
    on_z_.bind(f);
    eval_.bind(on_z_);
  }

  bool adapting_metric() const {
    if (opt_.metric != slice::metric::dense || iter_ >= opt_.warmup) return false;
    if (opt_.stepout == stepout::never) return false;
    return !(opt_.method == method::hyperrect && opt_.stepout == stepout::always);
  }

  /** At the scheduled warmup iterations: the dense metric from the warmup
   *  draws kept since metric_from_, and the state and widths moved onto it. */
  void update_metric() {
    const int done = iter_ + 1;
    if (done != metric_iter_[0] && done != metric_iter_[1]) return;
    const int n = state_.n(), k = state_.dim(), rows = opt_.warmup;
    const int from = metric_from_, count = done - from;
    metric_from_ = done;
    if (count < 1) return;
    Eigen::MatrixXd pooled(static_cast<Eigen::Index>(count) * n, k);
    for (int j = 0; j < k; ++j)
      for (int c = 0; c < n; ++c)
        for (int i = 0; i < count; ++i)
          pooled(static_cast<Eigen::Index>(c) * count + i, j) =
              warmup_draws_[draw_index(from + i, c, j, rows)];
    Eigen::MatrixXd u;
    metric_.to_x(state_.x, u);
    const Eigen::VectorXd old_scale = metric_.scale().rowwise().norm();
    if (!metric_.estimate(coord_.x_to_u(pooled))) return;
    state_.x = metric_.to_z(u);
    width_ = width_.cwiseProduct(old_scale).cwiseQuotient(
        metric_.scale().rowwise().norm());
    extent_sum_.setZero();
    in_window_ = 0;
  }

  bool adapting() const {
    if (iter_ >= opt_.warmup || opt_.stepout == stepout::never) return false;
    if (opt_.method == method::univariate) return true;
    return opt_.stepout == stepout::warmup && state_.dim() <= max_vertex_dim;
  }

  void iterate() {
    const bool adapt = adapting();
    Eigen::MatrixXd extent;
    Eigen::MatrixXd* ext = adapt ? &extent : nullptr;
    const Eigen::VectorXd w = adapt ? Eigen::VectorXd(width_ * adapt_start_fraction) : width_;
    if (opt_.method == method::hyperrect) {
      const bool vertex = adapt || opt_.stepout == stepout::always;
      hyperrect_update(state_, eval_, w, vertex, opt_.n_proposals,
                       opt_.max_steps, ext);
    } else {
      univariate_update(state_, eval_, w, opt_.max_steps, ext, opt_.n_proposals);
    }
    if (adapt) {
      extent_sum_ += extent.colwise().sum().transpose();
      ++in_window_;
      if (in_window_ == window_ || iter_ + 1 == opt_.warmup) {
        width_ = extent_sum_ / (static_cast<double>(in_window_) * state_.n());
        if (opt_.method == method::hyperrect) width_ *= hyperrect_width_factor;
        extent_sum_.setZero();
        in_window_ = 0;
      }
    }
    store();
    if (adapting_metric()) update_metric();
    if (iter_ + 1 == opt_.warmup) n_evals_warmup_ = eval_.n_evals;
  }

  /** Where draw i of chain c, variable j lies in a store of `rows`
   *  iterations (iteration x chain x variable, first index fastest). */
  std::size_t draw_index(int i, int c, int j, int rows) const {
    return static_cast<std::size_t>(i) +
           static_cast<std::size_t>(rows) *
               (static_cast<std::size_t>(c) + static_cast<std::size_t>(state_.n()) * j);
  }

  void store() {
    const int n = state_.n(), k = state_.dim();
    const bool warm = iter_ < opt_.warmup;
    const int rows = warm ? opt_.warmup : opt_.n_iter;
    const int i = warm ? iter_ : iter_ - opt_.warmup;
    std::vector<double>& out = warm ? warmup_draws_ : draws_;
    const Eigen::MatrixXd x = current();
    for (int j = 0; j < k; ++j)
      for (int c = 0; c < n; ++c) out[draw_index(i, c, j, rows)] = x(c, j);
  }
};

}  // namespace slice
}  // namespace clbayes

#endif
