#ifndef CLBAYES_SLICE_SAMPLER_HPP
#define CLBAYES_SLICE_SAMPLER_HPP

// The parallel multivariate slice sampler (parallel-slice.txt) as a
// resumable object: construct it, start() it at the initial points, then
// run() it in pieces (so a caller can report progress) until done(). All
// chains advance together, so every batch of densities of one step of the
// algorithm is requested across all chains in one evaluator call.
//
// Warmup (stepout = warmup) follows Stan's windowed adaptation
// (mcmc/warmup_schedule.hpp). Widths adapt throughout: each update first
// steps out from a box (or interval) of a quarter of the current widths,
// and every width_window iterations the widths become the mean extent of
// the stepped-out boxes over those iterations and the chains (for the
// hyperrectangle, twice that: see hyperrect_width_factor). With
// metric = dense, each slow window closes with a new metric estimated from
// that window's draws only (pooled over chains), so draws from before the
// chains reached the typical set are discarded; the widths are carried over
// in units of each axis's scale and adapt again. At the end of warmup the
// split R-hat (of ranks) of the second half of warmup tells whether the
// chains agree; if not, up to warmup_extend further iterations (blocks of a
// slow window and a terminal buffer) are run until they do. Widths and metric are fixed
// after warmup, so the kept draws come from a valid sampler.
//
// The hyperrectangle above max_vertex_dim dimensions cannot step out by its
// vertices; its warmup then runs univariate updates, whose stepped-out
// intervals set the widths in every dimension.

#include <clbayes/error.hpp>
#include <clbayes/mcmc/chains.hpp>
#include <clbayes/mcmc/convergence.hpp>
#include <clbayes/mcmc/coordinates.hpp>
#include <clbayes/mcmc/evaluator.hpp>
#include <clbayes/mcmc/run_loop.hpp>
#include <clbayes/mcmc/warmup_schedule.hpp>
#include <clbayes/slice/hyperrect.hpp>
#include <clbayes/slice/univariate.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace clbayes {
namespace slice {

enum class method { hyperrect, univariate };
enum class stepout { never, warmup, always };
enum class metric { diagonal, dense };

/** Vertex step-out evaluates 2^k points per chain; above this dimension
 *  "warmup" adapts the widths by univariate updates and "always" is
 *  refused. */
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
/** Iterations over which stepped-out extents are averaged into widths. */
constexpr int width_window = 10;
/** Tries at a dispersed initial point with a finite density per chain
 *  before the chain starts at the given point itself (Stan tries 100). */
constexpr int max_init_tries = 100;

struct options {
  slice::method method = slice::method::univariate;
  slice::stepout stepout = slice::stepout::warmup;
  slice::metric metric = slice::metric::dense;
  int n_proposals = 1;
  int warmup = 0;
  int n_iter = 1000;
  int max_steps = 100;
  std::uint64_t seed = 1;
  /** Chain c uses random stream first_stream + c of the seed: a group of
   *  chains run on its own draws what it would draw in one run. */
  int first_stream = 0;
  /** > 0: each chain starts at init + uniform(-r, r) offsets on the
   *  unconstrained scale (Stan's init_r), retried while the density is not
   *  finite. */
  double init_radius = 0;
  /** Widths given on the unconstrained scale u (else on the variables x,
   *  converted at the initial points). */
  bool width_on_u = false;
  /** The most iterations added to warmup while the chains disagree. */
  int warmup_extend = 0;
  /** Split R-hat at or below which the chains agree at the end of warmup. */
  double warmup_rhat = 1.05;
  /** Bytes the run may hold (draws and the largest batch of points). */
  double memory_limit = 64.0 * 1024 * 1024 * 1024;
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

/** Bytes a run holds at most: its draws (warmup, its largest extension
 *  and kept) and its largest batch of points with their densities. */
inline double memory_needed(double chains, double dim, const options& o,
                            double* batch_bytes = nullptr) {
  const double iters = static_cast<double>(o.warmup) + o.warmup_extend + o.n_iter;
  double per_chain = o.n_proposals;
  if (o.method == method::hyperrect && dim <= max_vertex_dim)
    per_chain = std::max(per_chain, std::ldexp(1.0, static_cast<int>(dim)));
  if (o.method == method::univariate) per_chain *= 2;  // both ends when stepping out
  const double batch = 8.0 * chains * per_chain * (dim + 1);
  if (batch_bytes != nullptr) *batch_bytes = batch;
  return 8.0 * chains * dim * iters + batch;
}

class sampler {
 public:
  /** @param init chains x dim starting points; @param width dim widths
   *  (on the scale of the variables unless opt.width_on_u); @param bounds
   *  their support. */
  sampler(const Eigen::MatrixXd& init, const Eigen::VectorXd& width,
          const options& opt)
      : sampler(init, width, opt, mcmc::support(static_cast<int>(init.cols()))) {}

  sampler(const Eigen::MatrixXd& init, const Eigen::VectorXd& width,
          const options& opt, const mcmc::support& bounds)
      : opt_(checked(opt, init)), state_(init, opt.seed, opt.first_stream), width_(width),
        bounds_(bounds), metric_(static_cast<int>(init.cols())),
        coord_(metric_, bounds_), on_z_(coord_), warmup_(opt.warmup) {
    const int k = static_cast<int>(init.cols());
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
    if (!opt.width_on_u)
      for (int j = 0; j < k; ++j) {
        double slope = 0;
        for (int c = 0; c < init.rows(); ++c) slope += bounds.dx_du(j, init(c, j));
        width_[j] /= slope / static_cast<double>(init.rows());
      }
    if (opt.method == method::hyperrect && opt.stepout == stepout::always &&
        k > max_vertex_dim)
      throw invalid_argument("stepout", "= \"always\" needs at most " +
                                            std::to_string(max_vertex_dim) +
                                            " dimensions (2^k vertices)");
    const mcmc::warmup_schedule schedule(opt.warmup);
    window_ends_ = schedule.window_ends();
    window_start_ = schedule.init_buffer();
    extent_sum_ = Eigen::VectorXd::Zero(k);
    warmup_draws_.reserve(static_cast<std::size_t>(opt.warmup) * init.rows() * k);
  }

  sampler(const sampler&) = delete;
  sampler& operator=(const sampler&) = delete;

  /** Evaluate the initial points (dispersed first when opt.init_radius > 0);
   *  each must have a finite log density. */
  void start(mcmc::batch_evaluator& f) {
    bind(f);
    if (opt_.init_radius > 0) disperse();
    eval_(state_.x, state_.logf);
    mcmc::require_finite_start(state_.logf, "log density");
    started_ = true;
  }

  /** Run at most `iterations` iterations; returns how many were run. */
  int run(mcmc::batch_evaluator& f, int iterations) {
    if (!started_) throw std::logic_error("slice sampler: start() before run()");
    bind(f);
    return mcmc::run_piece(iterations, [this] { return done(); }, [this] {
      iterate();
      ++iter_;
    });
  }

  bool done() const { return iter_ == warmup_ + opt_.n_iter; }
  int iteration() const { return iter_; }
  /** Iterations of the whole run as known now (warmup may be extended). */
  int total_iterations() const { return warmup_ + opt_.n_iter; }
  /** Warmup iterations, extensions included. */
  int warmup() const { return warmup_; }
  int chains() const { return state_.n(); }
  int dim() const { return state_.dim(); }
  const options& opts() const { return opt_; }

  /** Kept draws, iteration x chain x variable, first index fastest. */
  const std::vector<double>& draws() const { return draws_; }
  /** Warmup draws in the same layout. */
  std::vector<double> warmup_draws() const {
    const int n = state_.n(), k = state_.dim();
    std::vector<double> out(warmup_draws_.size());
    const int rows = static_cast<int>(warmup_draws_.size() / (static_cast<std::size_t>(n) * k));
    for (int i = 0; i < rows; ++i)
      for (int c = 0; c < n; ++c)
        for (int j = 0; j < k; ++j) out[draw_index(i, c, j, rows)] = warm(i, c, j);
    return out;
  }
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
  /** Seconds spent inside the target's evaluator. */
  double density_seconds() const { return eval_.seconds; }
  /** The largest split R-hat of ranks over the variables in the second
   *  half of warmup, at its end (NaN before, or when it cannot be
   *  computed). */
  double warmup_rhat() const { return warmup_rhat_; }
  /** Whether warmup ended with the chains agreeing (R-hat <= warmup_rhat). */
  bool warmup_converged() const { return warmup_rhat_ <= opt_.warmup_rhat; }

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
  int warmup_;  // grows when warmup is extended
  std::vector<double> draws_;
  std::vector<double> warmup_draws_;  // iteration-major, then chain, then variable
  std::vector<int> window_ends_;      // 1-based ends of the slow windows
  int window_start_ = 0;              // first iteration of the open slow window
  int in_window_ = 0;
  Eigen::VectorXd extent_sum_;
  double n_evals_warmup_ = 0;
  double warmup_rhat_ = std::numeric_limits<double>::quiet_NaN();
  int extended_ = 0;

  /** The options checked, and the memory the run needs checked against
   *  opt.memory_limit, before anything is allocated. */
  static const options& checked(const options& opt, const Eigen::MatrixXd& init) {
    if (init.rows() < 1 || init.cols() < 1)
      throw invalid_argument("init", "must have at least one chain and one dimension");
    if (opt.n_proposals < 1) throw invalid_argument("n_proposals", "must be at least 1");
    if (opt.n_iter < 1) throw invalid_argument("n_iter", "must be at least 1");
    if (opt.warmup < 0) throw invalid_argument("warmup", "must be at least 0");
    if (opt.warmup_extend < 0) throw invalid_argument("warmup_extend", "must be at least 0");
    if (opt.max_steps < 1) throw invalid_argument("max_steps", "must be at least 1");
    if (!(opt.init_radius >= 0) || !std::isfinite(opt.init_radius))
      throw invalid_argument("init_radius", "must be finite and at least 0");
    double batch = 0;
    const double need = memory_needed(static_cast<double>(init.rows()),
                                      static_cast<double>(init.cols()), opt, &batch);
    if (need > opt.memory_limit) {
      const bool proposals = batch > need / 2 && opt.n_proposals > 1;
      throw invalid_argument(
          proposals ? "n_proposals" : "chains",
          "needs " + format_bytes(need) + ", more than the limit of " +
              format_bytes(opt.memory_limit));
    }
    return opt;
  }

  void bind(mcmc::batch_evaluator& f) {
    on_z_.bind(f);
    eval_.bind(on_z_);
  }

  double warm(int i, int c, int j) const {
    const std::size_t n = static_cast<std::size_t>(state_.n());
    const std::size_t k = static_cast<std::size_t>(state_.dim());
    return warmup_draws_[(static_cast<std::size_t>(i) * n + static_cast<std::size_t>(c)) * k +
                         static_cast<std::size_t>(j)];
  }

  /** Each chain at init + uniform(-r, r) on u, all chains' tries in one
   *  call per round; a chain whose tries all fail keeps the given point. */
  void disperse() {
    const int n = state_.n(), k = state_.dim();
    const Eigen::MatrixXd origin = state_.x;
    std::vector<int> todo(static_cast<std::size_t>(n));
    for (int c = 0; c < n; ++c) todo[static_cast<std::size_t>(c)] = c;
    Eigen::MatrixXd points;
    Eigen::VectorXd lp;
    for (int t = 0; t < max_init_tries && !todo.empty(); ++t) {
      const int m = static_cast<int>(todo.size());
      points.resize(m, k);
      for (int a = 0; a < m; ++a) {
        const int c = todo[static_cast<std::size_t>(a)];
        mcmc::rng& g = state_.rngs[static_cast<std::size_t>(c)];
        for (int j = 0; j < k; ++j)
          points(a, j) = origin(c, j) + opt_.init_radius * (2 * g.uniform() - 1);
      }
      eval_(points, lp);
      std::vector<int> still;
      for (int a = 0; a < m; ++a) {
        const int c = todo[static_cast<std::size_t>(a)];
        if (std::isfinite(lp[a])) state_.x.row(c) = points.row(a);
        else still.push_back(c);
      }
      todo.swap(still);
    }
  }

  bool warming() const { return iter_ < warmup_; }

  bool adapting_widths() const {
    return warming() && opt_.stepout != stepout::never &&
           !(opt_.method == method::hyperrect && opt_.stepout == stepout::always);
  }

  bool adapting_metric() const {
    return opt_.metric == slice::metric::dense && adapting_widths();
  }

  /** When a slow window closes: the dense metric from that window's draws,
   *  and the state and widths moved onto it. */
  void update_metric() {
    const int done = iter_ + 1;
    if (std::find(window_ends_.begin(), window_ends_.end(), done) == window_ends_.end())
      return;
    const int n = state_.n(), k = state_.dim();
    const int from = window_start_, count = done - from;
    window_start_ = done;
    if (count < 1) return;
    Eigen::MatrixXd pooled(static_cast<Eigen::Index>(count) * n, k);
    for (int j = 0; j < k; ++j)
      for (int c = 0; c < n; ++c)
        for (int i = 0; i < count; ++i)
          pooled(static_cast<Eigen::Index>(c) * count + i, j) = warm(from + i, c, j);
    Eigen::MatrixXd u;
    metric_.to_x(state_.x, u);
    const Eigen::VectorXd old_scale = metric_.row_norms();
    if (!metric_.estimate(coord_.x_to_u(pooled))) return;
    state_.x = metric_.to_z(u);
    width_ = width_.cwiseProduct(old_scale).cwiseQuotient(metric_.row_norms());
    extent_sum_.setZero();
    in_window_ = 0;
  }

  /** At the end of warmup: whether the chains agree, and if not (and the
   *  bound allows) one more block of a slow window and a terminal buffer. */
  void check_warmup() {
    const int n = state_.n(), k = state_.dim();
    const int from = warmup_ / 2, len = warmup_ - from;
    warmup_rhat_ = -std::numeric_limits<double>::infinity();
    for (int j = 0; j < k; ++j) {
      const double r = mcmc::split_rhat_ranked(
          len, n, [&](int i, int c) { return warm(from + i, c, j); });
      // Chains that did not move at all in a variable disagree.
      warmup_rhat_ = std::isnan(r) ? std::numeric_limits<double>::infinity()
                                   : std::max(warmup_rhat_, r);
    }
    if (len < 4) warmup_rhat_ = std::numeric_limits<double>::quiet_NaN();
    if (!(warmup_rhat_ > opt_.warmup_rhat) || extended_ >= opt_.warmup_extend) return;
    const int block = std::min(opt_.warmup_extend - extended_,
                               std::max(100, opt_.warmup / 2));
    const int term = block / 4;
    extended_ += block;
    window_start_ = warmup_;
    if (block - term > 0) window_ends_.push_back(warmup_ + block - term);
    warmup_ += block;
  }

  void iterate() {
    const double before_evals = eval_.n_evals;
    const double before_nan = eval_.n_nan;
    const bool adapt = adapting_widths();
    const bool vertex_ok = state_.dim() <= max_vertex_dim;
    Eigen::MatrixXd extent;
    Eigen::MatrixXd* ext = adapt ? &extent : nullptr;
    const Eigen::VectorXd w = adapt ? Eigen::VectorXd(width_ * adapt_start_fraction) : width_;
    const bool univariate =
        opt_.method == method::univariate || (adapt && !vertex_ok);
    if (univariate) {
      univariate_update(state_, eval_, w, opt_.max_steps, ext, opt_.n_proposals);
    } else {
      const bool vertex = adapt || opt_.stepout == stepout::always;
      hyperrect_update(state_, eval_, w, vertex, opt_.n_proposals, opt_.max_steps, ext);
    }
    const double evals = eval_.n_evals - before_evals;
    if (iter_ > 0 && evals > 0 && eval_.n_nan - before_nan == evals)
      throw invalid_argument(
          "log_density", "returned NaN at every one of the " +
                             std::to_string(static_cast<long long>(evals)) +
                             " points of iteration " + std::to_string(iter_ + 1) +
                             ": the density cannot be evaluated where the chains are");
    if (adapt) {
      extent_sum_ += extent.colwise().sum().transpose();
      ++in_window_;
      if (in_window_ == std::min(width_window, warmup_) || iter_ + 1 == warmup_) {
        width_ = extent_sum_ / (static_cast<double>(in_window_) * state_.n());
        if (!univariate) width_ *= hyperrect_width_factor;
        extent_sum_.setZero();
        in_window_ = 0;
      }
    }
    store();
    if (adapting_metric()) update_metric();
    if (iter_ + 1 == warmup_) {
      check_warmup();
      if (iter_ + 1 == warmup_) n_evals_warmup_ = eval_.n_evals;
    }
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
    const Eigen::MatrixXd x = current();
    if (warming()) {
      for (int c = 0; c < n; ++c)
        for (int j = 0; j < k; ++j) warmup_draws_.push_back(x(c, j));
      return;
    }
    if (draws_.empty())
      draws_.assign(static_cast<std::size_t>(opt_.n_iter) * n * k, 0.0);
    const int i = iter_ - warmup_;
    for (int j = 0; j < k; ++j)
      for (int c = 0; c < n; ++c) draws_[draw_index(i, c, j, opt_.n_iter)] = x(c, j);
  }
};

}  // namespace slice
}  // namespace clbayes

#endif
