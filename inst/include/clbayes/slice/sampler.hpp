#ifndef CLBAYES_SLICE_SAMPLER_HPP
#define CLBAYES_SLICE_SAMPLER_HPP

// The parallel multivariate slice sampler (parallel-slice.txt): its
// transition on the chain engine (mcmc/engine.hpp), which holds the chains,
// draws, warmup windows, metric and the end-of-warmup R-hat check.
//
// Widths adapt throughout warmup (stepout = warmup): each update first
// steps out from a box (or interval) of a quarter of the current widths,
// and every width_window iterations the widths become the mean extent of
// the stepped-out boxes over those iterations and the chains (for the
// hyperrectangle, twice that: see hyperrect_width_factor). With
// metric = dense, each slow window closes with a new metric estimated from
// that window's draws (mcmc/engine.hpp); the widths are carried over in
// units of each axis's scale and adapt again. With metric = diagonal the
// metric stays the identity: the widths are the per-axis scales. Widths are
// fixed after warmup, so the kept draws come from a valid sampler.
//
// The hyperrectangle above max_vertex_dim dimensions cannot step out by its
// vertices; its warmup then runs univariate updates, whose stepped-out
// intervals set the widths in every dimension.

#include <clbayes/error.hpp>
#include <clbayes/mcmc/engine.hpp>
#include <clbayes/slice/hyperrect.hpp>
#include <clbayes/slice/univariate.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace clbayes {
namespace slice {

enum class method { hyperrect, univariate };
enum class stepout { never, warmup, always };

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

class transition {
 public:
  /** The slice sampler's own settings (no defaults: see mcmc/options.hpp). */
  struct settings {
    slice::method method{};
    slice::stepout stepout{};
    int n_proposals{};
    int max_steps{};
    /** dim initial widths, on the unconstrained scale u if width_on_u, else
     *  on the variables x (converted at the initial points). */
    Eigen::VectorXd width;
    bool width_on_u{};
  };

  /** Bytes of the largest batch of points with their densities. */
  static double work_bytes(double chains, double dim, const settings& s) {
    double per_chain = s.n_proposals;
    if (s.method == method::hyperrect && dim <= max_vertex_dim)
      per_chain = std::max(per_chain, std::ldexp(1.0, static_cast<int>(dim)));
    if (s.method == method::univariate) per_chain *= 2;  // both ends when stepping out
    return 8.0 * chains * per_chain * (dim + 1);
  }

  static const char* memory_argument(const settings& s, double work, double need) {
    return work > need / 2 && s.n_proposals > 1 ? "n_proposals" : "chains";
  }

  static void check(const settings& s) {
    if (s.n_proposals < 1) throw invalid_argument("n_proposals", "must be at least 1");
    if (s.max_steps < 1) throw invalid_argument("max_steps", "must be at least 1");
  }

  transition(const settings& s, const Eigen::MatrixXd& init, mcmc::chain_core& core)
      : set_(s), width_(s.width) {
    const int k = core.dim();
    if (width_.size() != k)
      throw invalid_argument("width", "must have one value per dimension of `init`");
    for (Eigen::Index j = 0; j < width_.size(); ++j)
      if (!(width_[j] > 0) || !std::isfinite(width_[j]))
        throw invalid_argument("width", "must be positive and finite");
    if (s.method == method::hyperrect && s.stepout == stepout::always && k > max_vertex_dim)
      throw invalid_argument("stepout", "= \"always\" needs at most " +
                                            std::to_string(max_vertex_dim) +
                                            " dimensions (2^k vertices)");
    // Widths given on x become widths on u at the initial points.
    if (!s.width_on_u) {
      for (int j = 0; j < k; ++j) {
        double slope = 0;
        for (int c = 0; c < init.rows(); ++c) slope += core.bounds().dx_du(j, init(c, j));
        width_[j] /= slope / static_cast<double>(init.rows());
      }
    }
    extent_sum_ = Eigen::VectorXd::Zero(k);
  }

  /** Each chain moved by opts().init_radius when it is > 0 (retried while
   *  the density is not finite), then every chain's density, which must be
   *  finite. */
  void start(mcmc::chain_core& core) {
    if (core.opts().init_radius > 0) disperse(core);
    mcmc::chain_state& s = core.state();
    core.eval()(s.x, s.logf);
    mcmc::require_finite_start(s.logf, "log density");
  }

  void step(mcmc::chain_core& core) {
    mcmc::chain_state& s = core.state();
    mcmc::counted_evaluator& eval = core.eval();
    const double before_evals = eval.n_evals;
    const double before_nan = eval.n_nan;
    const bool adapt = adapting_widths(core);
    const bool vertex_ok = s.dim() <= max_vertex_dim;
    Eigen::MatrixXd extent;
    Eigen::MatrixXd* ext = adapt ? &extent : nullptr;
    const Eigen::VectorXd w = adapt ? Eigen::VectorXd(width_ * adapt_start_fraction) : width_;
    const bool univariate = set_.method == method::univariate || (adapt && !vertex_ok);
    if (univariate) {
      univariate_update(s, eval, w, set_.max_steps, ext, set_.n_proposals);
    } else {
      const bool vertex = adapt || set_.stepout == stepout::always;
      hyperrect_update(s, eval, w, vertex, set_.n_proposals, set_.max_steps, ext);
    }
    const double evals = eval.n_evals - before_evals;
    const int iter = core.iteration();
    if (iter > 0 && evals > 0 && eval.n_nan - before_nan == evals)
      throw invalid_argument(
          "log_density", "returned NaN at every one of the " +
                             std::to_string(static_cast<long long>(evals)) +
                             " points of iteration " + std::to_string(iter + 1) +
                             ": the density cannot be evaluated where the chains are");
    if (!adapt) return;
    extent_sum_ += extent.colwise().sum().transpose();
    ++in_window_;
    if (in_window_ == std::min(width_window, core.warmup()) || iter + 1 == core.warmup()) {
      width_ = extent_sum_ / (static_cast<double>(in_window_) * s.n());
      if (!univariate) width_ *= hyperrect_width_factor;
      extent_sum_.setZero();
      in_window_ = 0;
    }
  }

  /** A metric (dense only: a diagonal metric is what the widths are) while
   *  the widths adapt. */
  bool adapts_metric(const mcmc::chain_core& core) const {
    return core.opts().metric == mcmc::metric::dense && adapting_widths(core);
  }

  void before_metric(const mcmc::chain_core& core, const Eigen::MatrixXd&) {
    old_scale_ = core.metric().row_norms();
  }

  /** The widths carried over in units of each axis's scale. */
  void after_metric(mcmc::chain_core& core, const Eigen::MatrixXd&) {
    width_ = width_.cwiseProduct(old_scale_).cwiseQuotient(core.metric().row_norms());
    extent_sum_.setZero();
    in_window_ = 0;
  }

  void end_warmup(mcmc::chain_core&) {}

  /** Widths on the sampler's coordinates z (see chain_core::metric()). */
  const Eigen::VectorXd& widths() const { return width_; }

 private:
  settings set_;
  Eigen::VectorXd width_;
  Eigen::VectorXd extent_sum_, old_scale_;
  int in_window_ = 0;

  bool adapting_widths(const mcmc::chain_core& core) const {
    return core.warming() && set_.stepout != stepout::never &&
           !(set_.method == method::hyperrect && set_.stepout == stepout::always);
  }

  /** Each chain at init + uniform(-r, r) on u, all chains' tries in one
   *  call per round; a chain whose tries all fail keeps the given point. */
  static void disperse(mcmc::chain_core& core) {
    mcmc::chain_state& s = core.state();
    const int n = s.n(), k = s.dim();
    const double r = core.opts().init_radius;
    const Eigen::MatrixXd origin = s.x;
    std::vector<int> todo(static_cast<std::size_t>(n));
    for (int c = 0; c < n; ++c) todo[static_cast<std::size_t>(c)] = c;
    Eigen::MatrixXd points;
    Eigen::VectorXd lp;
    for (int t = 0; t < max_init_tries && !todo.empty(); ++t) {
      const int m = static_cast<int>(todo.size());
      points.resize(m, k);
      for (int a = 0; a < m; ++a) {
        const int c = todo[static_cast<std::size_t>(a)];
        mcmc::rng& g = s.rngs[static_cast<std::size_t>(c)];
        for (int j = 0; j < k; ++j) points(a, j) = origin(c, j) + r * (2 * g.uniform() - 1);
      }
      core.eval()(points, lp);
      std::vector<int> still;
      for (int a = 0; a < m; ++a) {
        const int c = todo[static_cast<std::size_t>(a)];
        if (std::isfinite(lp[a])) s.x.row(c) = points.row(a);
        else still.push_back(c);
      }
      todo.swap(still);
    }
  }
};

/** The slice sampler: the chain engine with the slice transition. */
using sampler = mcmc::sampler<transition>;

}  // namespace slice
}  // namespace clbayes

#endif
