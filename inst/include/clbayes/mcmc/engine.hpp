#ifndef CLBAYES_MCMC_ENGINE_HPP
#define CLBAYES_MCMC_ENGINE_HPP

// The chain engine both samplers run on. It holds what every many-chain
// sampler has: the chains' state and random streams, the coordinates they
// move on (the metric and the bounds' transform), the counted evaluator,
// the draws (draws.hpp), and warmup: Stan's windows (warmup_schedule.hpp),
// a metric estimated at the end of each slow window from that window's
// draws pooled over the chains, and at the end of warmup the split R-hat of
// its second half, with warmup extended while the chains disagree. A
// sampler is this engine with a transition: slice::transition or
// hmc::transition supplies one iteration's update and its own adaptation,
// and nothing else.
//
// The sampler is resumable: construct it, start() it at the initial
// points, then run() it in pieces (so that R can report progress and see
// interrupts) until done(). All chains advance together, so every batch of
// densities one step of an algorithm needs is one evaluator call.
//
// A transition T provides:
//   T::settings                          its own settings
//   static void check(const settings&)   refuses bad settings
//   T(const settings&, const Eigen::MatrixXd& init, chain_core&)
//                                        checks what needs the chains (widths)
//   static double work_bytes(chains, dim, settings)
//                                        the most bytes of its work space
//   static const char* memory_argument(settings, work, need)
//                                        the argument named when too large
//   void start(chain_core&)              evaluates the initial points
//   void step(chain_core&)               one iteration of every chain, and
//                                        its own adaptation in warmup
//   bool adapts_metric(const chain_core&) whether a closing window sets a metric
//   void before_metric(const chain_core&, const Eigen::MatrixXd& window)
//   void after_metric(chain_core&, const Eigen::MatrixXd& window)
//                                        around a new metric (the chains have
//                                        moved onto it in between)
//   void end_warmup(chain_core&)         fixes its tuning for the kept draws

#include <clbayes/error.hpp>
#include <clbayes/interrupt.hpp>
#include <clbayes/mcmc/chains.hpp>
#include <clbayes/mcmc/convergence.hpp>
#include <clbayes/mcmc/coordinates.hpp>
#include <clbayes/mcmc/draws.hpp>
#include <clbayes/mcmc/evaluator.hpp>
#include <clbayes/mcmc/options.hpp>
#include <clbayes/mcmc/warmup_schedule.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace clbayes {
namespace mcmc {

/** Throws invalid_argument naming `init` and the first chain whose log
 *  density is not finite. `what`: what had to be finite, e.g. "log density". */
inline void require_finite_start(const Eigen::VectorXd& logf, const std::string& what) {
  for (Eigen::Index c = 0; c < logf.size(); ++c)
    if (!std::isfinite(logf[c]))
      throw invalid_argument("init", "must have a finite " + what + " (chain " +
                                         std::to_string(c + 1) + " has log density " +
                                         (logf[c] > 0 ? "+Inf" : "-Inf or NaN") + ")");
}

/** Bytes a run holds at most: its draws (warmup, its largest extension and
 *  kept), one slow window copied for the metric (at most as many as
 *  warmup), and the transition's work space (`work`, also returned). */
template <class T>
double memory_needed(double chains, double dim, const options& o,
                     const typename T::settings& s, double* work = nullptr) {
  const double warm = static_cast<double>(o.warmup) + o.warmup_extend;
  const double w = T::work_bytes(chains, dim, s);
  if (work != nullptr) *work = w;
  return 8.0 * chains * dim * (2 * warm + o.n_iter) + w;
}

/** The engine's state and services, as a transition sees them. */
class chain_core {
 public:
  chain_core(const Eigen::MatrixXd& init, const options& opt, const support& bounds)
      : opt_(opt), state_(init, opt.seed, opt.first_stream), bounds_(bounds),
        metric_(static_cast<int>(init.cols())), coord_(metric_, bounds_), on_z_(coord_),
        draws_(static_cast<int>(init.rows()), static_cast<int>(init.cols()), opt.n_iter,
               opt.warmup),
        warmup_(opt.warmup) {
    const int n = static_cast<int>(init.rows()), k = static_cast<int>(init.cols());
    if (!init.allFinite()) throw invalid_argument("init", "must be finite");
    if (bounds.dim() != k)
      throw invalid_argument("lower", "must have one value per dimension of `init`");
    for (int c = 0; c < n; ++c)
      for (int j = 0; j < k; ++j)
        if (!bounds.inside(j, init(c, j)))
          throw invalid_argument("init", "must lie strictly inside `lower` and `upper`");
    // The chains run on z (= u until the metric changes).
    state_.x = coord_.x_to_u(init);
    const warmup_schedule schedule(opt.warmup);
    window_ends_ = schedule.window_ends();
    window_start_ = schedule.init_buffer();
  }

  chain_core(const chain_core&) = delete;
  chain_core& operator=(const chain_core&) = delete;

  const options& opts() const { return opt_; }
  int chains() const { return state_.n(); }
  int dim() const { return state_.dim(); }
  /** Iterations run so far (0-based index of the next one). */
  int iteration() const { return iter_; }
  /** Warmup iterations, extensions included. */
  int warmup() const { return warmup_; }
  int total_iterations() const { return warmup_ + opt_.n_iter; }
  bool done() const { return iter_ == total_iterations(); }
  bool warming() const { return iter_ < warmup_; }

  /** The chains on the sampler's coordinates z, their log densities there
   *  and random streams. */
  chain_state& state() { return state_; }
  const chain_state& state() const { return state_; }
  /** The target on z, counted. */
  counted_evaluator& eval() { return eval_; }
  const counted_evaluator& eval() const { return eval_; }
  const coordinates& coord() const { return coord_; }
  /** u = center + S z, the map from the sampler's coordinates. */
  const affine_metric& metric() const { return metric_; }
  const support& bounds() const { return bounds_; }
  /** Whether the target has a gradient (bound by start() and run()). */
  bool has_gradient() const { return on_z_.has_gradient(); }

  /** The chains' current points on x (chains x dim). */
  Eigen::MatrixXd current() const {
    Eigen::MatrixXd x;
    coord_.to_x(state_.x, x);
    return x;
  }

  /** Kept draws, iteration x chain x variable, first index fastest. */
  const std::vector<double>& draws() const { return draws_.kept(); }
  /** Warmup draws in the same layout. */
  std::vector<double> warmup_draws() const { return draws_.warmup_on_x(coord_); }

  double n_evals() const { return eval_.n_evals; }
  double n_calls() const { return eval_.n_calls; }
  double n_nan() const { return eval_.n_nan; }
  double n_gradients() const { return eval_.n_gradients; }
  /** Points where the gradient was NaN or infinite at a finite log density. */
  double n_bad_gradient() const { return eval_.n_bad_gradient; }
  /** Seconds spent inside the target's evaluator. */
  double density_seconds() const { return eval_.seconds; }
  double n_evals_warmup() const { return n_evals_warmup_; }
  /** The largest split R-hat of ranks over the variables in the second
   *  half of warmup, at its end (NaN before, when it cannot be computed, or
   *  when opts().warmup_rhat is 0). */
  double warmup_rhat() const { return warmup_rhat_; }

 protected:
  void bind(batch_evaluator& f) {
    on_z_.bind(f);
    eval_.bind(on_z_);
  }

  /** The chains' points after iteration iter_, in the draws. */
  void store() {
    if (warming()) {
      Eigen::MatrixXd u;
      coord_.to_u(state_.x, u);
      draws_.add_warmup(u);
    } else {
      draws_.keep(iter_ - warmup_, current());
    }
  }

  /** Whether a slow window closes after iteration iter_; if so its first
   *  iteration in `from`, and the next window starts. */
  bool window_closes(int& from) {
    const int done = iter_ + 1;
    if (std::find(window_ends_.begin(), window_ends_.end(), done) == window_ends_.end())
      return false;
    from = window_start_;
    window_start_ = done;
    return done > from;
  }

  /** A metric from the rows u of the closing window (all chains pooled);
   *  false, and nothing changed, when it cannot be estimated. The chains
   *  move onto it: the same points u, new z. */
  template <class Before>
  bool update_metric(const Eigen::MatrixXd& window, Before before) {
    Eigen::MatrixXd u;
    coord_.to_u(state_.x, u);
    before();
    if (!metric_.estimate(window, opt_.metric == metric::dense)) return false;
    state_.x = metric_.to_z(u);
    return true;
  }

  /** At the end of warmup: whether the chains agree, and if not (and the
   *  bound allows) one more block of a slow window and a terminal buffer. */
  void check_warmup() {
    if (!(opt_.warmup_rhat > 0)) return;
    const int n = state_.n(), k = state_.dim();
    const int from = warmup_ / 2, len = warmup_ - from;
    const bool bounded = !coord_.unbounded();
    warmup_rhat_ = -std::numeric_limits<double>::infinity();
    for (int j = 0; j < k; ++j) {
      const double r = split_rhat_ranked(len, n, [&](int i, int c) {
        const double u = draws_.warm_u(from + i, c, j);
        return bounded ? bounds_.to_x(j, u) : u;
      });
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

  const draws_store& stored() const { return draws_; }

  options opt_;
  chain_state state_;  // on z
  support bounds_;
  affine_metric metric_;
  coordinates coord_;
  coordinate_evaluator on_z_;  // the target seen on z
  counted_evaluator eval_;
  draws_store draws_;
  int iter_ = 0;
  int warmup_;                   // grows when warmup is extended
  std::vector<int> window_ends_;  // 1-based ends of the slow windows
  int window_start_ = 0;          // first iteration of the open slow window
  int extended_ = 0;
  double n_evals_warmup_ = 0;
  double warmup_rhat_ = std::numeric_limits<double>::quiet_NaN();
};

/** A many-chain sampler: the engine with transition T. */
template <class T>
class sampler : public chain_core {
 public:
  /** @param init chains x dim starting points on the variables' scale. */
  sampler(const Eigen::MatrixXd& init, const options& opt, const typename T::settings& s,
          const support& bounds)
      : chain_core(init, checked(init, opt, s), bounds), t_(s, init, *this) {}

  /** Evaluate the initial points; each must have a finite log density. */
  void start(batch_evaluator& f) {
    bind(f);
    t_.start(*this);
    started_ = true;
  }

  /** Run at most `iterations` iterations; returns how many were run. */
  int run(batch_evaluator& f, int iterations) {
    if (!started_) throw std::logic_error("sampler: start() before run()");
    bind(f);
    int ran = 0;
    for (; ran < iterations && !done(); ++ran) {
      check_interrupt();
      iterate();
      ++iter_;
    }
    return ran;
  }

  const T& transition() const { return t_; }

 private:
  T t_;
  bool started_ = false;

  /** The options checked, and the memory the run needs checked against
   *  opt.memory_limit, before anything is allocated. */
  static const options& checked(const Eigen::MatrixXd& init, const options& opt,
                                const typename T::settings& s) {
    if (init.rows() < 1 || init.cols() < 1)
      throw invalid_argument("init", "must have at least one chain and one dimension");
    if (opt.n_iter < 1) throw invalid_argument("n_iter", "must be at least 1");
    if (opt.warmup < 0) throw invalid_argument("warmup", "must be at least 0");
    if (opt.warmup_extend < 0) throw invalid_argument("warmup_extend", "must be at least 0");
    if (!(opt.warmup_rhat >= 0)) throw invalid_argument("warmup_rhat", "must be at least 0");
    if (!(opt.init_radius >= 0) || !std::isfinite(opt.init_radius))
      throw invalid_argument("init_radius", "must be finite and at least 0");
    T::check(s);
    double work = 0;
    const double need = memory_needed<T>(static_cast<double>(init.rows()),
                                         static_cast<double>(init.cols()), opt, s, &work);
    if (need > opt.memory_limit)
      throw invalid_argument(T::memory_argument(s, work, need),
                             "needs " + format_bytes(need) + ", more than the limit of " +
                                 format_bytes(opt.memory_limit));
    return opt;
  }

  void iterate() {
    t_.step(*this);
    store();
    if (!warming()) return;
    int from = 0;
    if (window_closes(from) && t_.adapts_metric(*this)) {
      const Eigen::MatrixXd window = stored().warmup_block(from, iter_ + 1);
      if (update_metric(window, [&] { t_.before_metric(*this, window); }))
        t_.after_metric(*this, window);
    }
    if (iter_ + 1 == warmup_) {
      check_warmup();
      if (iter_ + 1 == warmup_) {
        n_evals_warmup_ = eval_.n_evals;
        t_.end_warmup(*this);
      }
    }
  }
};

}  // namespace mcmc
}  // namespace clbayes

#endif
