#ifndef CLBAYES_HMC_SAMPLER_HPP
#define CLBAYES_HMC_SAMPLER_HPP

// ChEES-HMC (Hoffman, Radul & Sountsov 2021, "An adaptive MCMC scheme for
// setting trajectory lengths in Hamiltonian Monte Carlo", AISTATS) for many
// chains at once: its transition on the chain engine (mcmc/engine.hpp),
// which holds the chains, draws, warmup windows and metric. All chains
// advance together with one step size and one (jittered) trajectory length,
// so each leapfrog step is ONE batched call of the density and gradient for
// every chain.
//
// Coordinates: the chains move on z with u = center + S z (mcmc/metric.hpp)
// and x = x(u) (mcmc/support.hpp); HMC with identity mass on z is HMC on u
// with inverse mass matrix S S'. In warmup the step size adapts by dual
// averaging to a mean acceptance probability over the chains
// (dual_averaging.hpp) and the trajectory length by the ChEES criterion
// (chees.hpp); after each new metric both start again. Everything is fixed
// after warmup, so the kept draws come from a valid sampler.
//
// One chain: ChEES centres the chains' states on their mean, which one
// chain does not have (its centred state is always 0, so the criterion's
// gradient is 0 and the length would never move). A single chain is centred
// instead on a running estimate of its mean: the mean of its warmup points
// since the last metric (the new metric's centre, the closing window's
// mean, counting for the window's draws), as SNAPER-HMC's reference code
// centres on a given `state_mean` (Sountsov & Hoffman 2022, "Focusing on
// difficult directions for learning HMC trajectory lengths"). chees_adapter
// centres on the mean of the rows it is given, so it is given the chain and
// its reflection through that centre c (states q and 2c - q, proposals q'
// and 2c - q', momenta p' and -p', the same acceptance probability): their
// mean is c, and the reflected row's term of the gradient equals the
// chain's, so the update is the one chain's criterion centred at c.
//
// Divergences: a chain whose energy error exceeds `divergence_threshold`,
// or becomes non-finite, stops moving for the rest of the trajectory (its
// row is still evaluated, unchanged, so the batch keeps its shape) and its
// proposal is rejected; they are counted per chain. A gradient that is NaN
// or infinite at a point is one such case: the evaluator reads the point
// as -Inf (mcmc/evaluator.hpp), so the energy error there is infinite.

#include <clbayes/error.hpp>
#include <clbayes/hmc/chees.hpp>
#include <clbayes/hmc/dual_averaging.hpp>
#include <clbayes/mcmc/engine.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

namespace clbayes {
namespace hmc {

/** Stan's threshold on the energy error of a divergent trajectory. */
constexpr double divergence_threshold = 1000;
/** The acceptance probability that the initial step size search aims to
 *  cross with one leapfrog step (Stan's init_stepsize). */
constexpr double init_step_accept = 0.8;

class transition {
 public:
  /** HMC's own settings (no defaults: see mcmc/options.hpp). */
  struct settings {
    double adapt_delta{};  // target mean acceptance probability
    int max_leapfrog{};    // most leapfrog steps of one trajectory
  };

  /** Bytes of the work space of a trajectory (about a dozen chains x dim
   *  matrices: the points, momenta, gradients, proposals, and the
   *  evaluator's copies). */
  static double work_bytes(double chains, double dim, const settings&) {
    return 8.0 * chains * (dim + 1) * 12;
  }

  static const char* memory_argument(const settings&, double, double) { return "chains"; }

  static void check(const settings& s) {
    if (!(s.adapt_delta > 0 && s.adapt_delta < 1))
      throw invalid_argument("adapt_delta", "must lie strictly between 0 and 1");
    if (s.max_leapfrog < 1) throw invalid_argument("max_leapfrog", "must be at least 1");
  }

  transition(const settings& s, const Eigen::MatrixXd&, mcmc::chain_core& core)
      : set_(s), n_divergent_(static_cast<std::size_t>(core.chains()), 0) {}

  /** Each chain moved by uniform(-r, r) on u (r = opts().init_radius; a
   *  moved point with no finite density goes back to the one given), then
   *  the first step size. */
  void start(mcmc::chain_core& core) {
    if (!core.has_gradient())
      throw invalid_argument("log_density",
                             "has no gradient: give `gradient` with a function, or use "
                             "slice_sample_mv(), which needs none");
    mcmc::chain_state& s = core.state();
    const Eigen::MatrixXd given = s.x;
    const double r = core.opts().init_radius;
    for (int c = 0; c < s.n(); ++c)
      for (int j = 0; j < s.dim(); ++j) s.x(c, j) += r * (2 * s.rngs[c].uniform() - 1);
    core.eval().gradient(s.x, s.logf, grad_);
    bool moved_back = false;
    for (int c = 0; c < s.n(); ++c)
      if (!std::isfinite(s.logf[c])) {
        s.x.row(c) = given.row(c);
        moved_back = true;
      }
    if (moved_back) core.eval().gradient(s.x, s.logf, grad_);
    mcmc::require_finite_start(s.logf, "log density and gradient");
    eps_ = find_step_size(core, 1.0);
    da_.restart(eps_);
    chees_.restart(eps_);
    length_ = eps_;
    fixed_ = core.opts().warmup == 0;
    centre_ = s.x.row(0);
    centre_n_ = 1;
  }

  void step(mcmc::chain_core& core) {
    mcmc::chain_state& s = core.state();
    const bool warm = core.warming();
    const int n = s.n();
    const double jitter = halton(core.iteration());
    const double length = warm ? chees_.length() : length_;
    const int steps = static_cast<int>(std::min<double>(
        set_.max_leapfrog, std::max(1.0, std::ceil(jitter * length / eps_))));
    Eigen::VectorXd accept;
    std::vector<char> diverged;
    trajectory(core, eps_, steps, accept, diverged);
    n_leapfrog_ += steps;
    const Eigen::MatrixXd before = s.x;
    for (int c = 0; c < n; ++c) {
      if (diverged[c]) {
        if (warm) ++n_divergent_warmup_;
        else ++n_divergent_[c];
      }
      if (s.rngs[c].uniform() < accept[c]) {
        s.x.row(c) = q_.row(c);
        s.logf[c] = lf_[c];
        grad_.row(c) = g_.row(c);
      }
    }
    if (!warm) {
      accept_sum_ += accept.mean();
      ++n_kept_;
      return;
    }
    const double used = eps_;  // the step size of this trajectory: T's floor
    eps_ = da_.update(accept.mean(), set_.adapt_delta);
    if (n > 1) {
      chees_.update(before, q_, p_, accept, jitter, used, eps_ * set_.max_leapfrog);
    } else {
      const Eigen::RowVectorXd c2 = 2 * centre_;
      Eigen::MatrixXd q(2, s.dim()), q1(2, s.dim()), p1(2, s.dim());
      q << before, c2 - before.row(0);
      q1 << q_, c2 - q_.row(0);
      p1 << p_, -p_;
      chees_.update(q, q1, p1, Eigen::Vector2d(accept[0], accept[0]), jitter, used,
                    eps_ * set_.max_leapfrog);
      centre_n_ += 1;
      centre_ += (s.x.row(0) - centre_) / centre_n_;
    }
  }

  /** The metric adapts throughout warmup. */
  bool adapts_metric(const mcmc::chain_core&) const { return true; }

  void before_metric(const mcmc::chain_core& core, const Eigen::MatrixXd& window) {
    old_spread_ = largest_variance(core.metric().to_z(window));
  }

  /** The step size and length start again on the new metric: the step
   *  size from Stan's search, the length carried over (ChEES sets it by the
   *  widest direction, about a half period of its oscillation) in units of
   *  that direction's sd. */
  void after_metric(mcmc::chain_core& core, const Eigen::MatrixXd& window) {
    mcmc::chain_state& s = core.state();
    core.eval().gradient(s.x, s.logf, grad_);
    eps_ = find_step_size(core, eps_);
    da_.restart(eps_);
    const double ratio = largest_variance(core.metric().to_z(window)) / old_spread_;
    chees_.restart(chees_.length() * (std::isfinite(ratio) && ratio > 0 ? std::sqrt(ratio) : 1.0));
    // The new metric's centre is z = 0: the window's mean.
    centre_.setZero();
    centre_n_ = static_cast<double>(window.rows());
  }

  void end_warmup(mcmc::chain_core&) {
    eps_ = da_.final_step_size();
    length_ = chees_.final_length();
    fixed_ = true;
    n_leapfrog_warmup_ = n_leapfrog_;
  }

  /** The step size on z (fixed after warmup). */
  double step_size() const { return eps_; }
  /** The trajectory length on z before jitter (fixed after warmup). */
  double trajectory_length() const { return fixed_ ? length_ : chees_.length(); }
  /** Leapfrog steps taken per chain (each one batched gradient call). */
  double n_leapfrog() const { return n_leapfrog_; }
  double n_leapfrog_warmup() const { return n_leapfrog_warmup_; }
  /** Divergent transitions of each chain after warmup. */
  const std::vector<int>& n_divergent() const { return n_divergent_; }
  int n_divergent_warmup() const { return n_divergent_warmup_; }
  /** Mean acceptance probability after warmup. */
  double accept_rate() const { return n_kept_ > 0 ? accept_sum_ / n_kept_ : NAN; }

 private:
  settings set_;
  Eigen::MatrixXd grad_;  // d log f / dz at the chains' points
  dual_averaging da_;
  chees_adapter chees_;
  double eps_ = 1, length_ = 1, old_spread_ = 0;
  bool fixed_ = false;
  Eigen::RowVectorXd centre_;  // one chain: its running mean on z
  double centre_n_ = 0;
  std::vector<int> n_divergent_;
  int n_divergent_warmup_ = 0;
  double n_leapfrog_ = 0, n_leapfrog_warmup_ = 0, accept_sum_ = 0, n_kept_ = 0;
  // Work space of one trajectory (chains x dim, chains).
  Eigen::MatrixXd q_, p_, g_, g_new_;
  Eigen::VectorXd lf_, lf_new_, h0_;

  void draw_momenta(mcmc::chain_state& s) {
    p_.resize(s.n(), s.dim());
    for (int c = 0; c < s.n(); ++c)
      for (int j = 0; j < s.dim(); ++j) p_(c, j) = s.rngs[c].normal();
  }

  double energy(int c) const { return -lf_[c] + 0.5 * p_.row(c).squaredNorm(); }

  /** One leapfrog step of size eps for the chains marked active; the
   *  others keep their rows. One batched gradient call. */
  void leapfrog(mcmc::chain_core& core, double eps, const std::vector<char>& active) {
    const int n = core.chains();
    for (int c = 0; c < n; ++c)
      if (active[c]) {
        p_.row(c) += 0.5 * eps * g_.row(c);
        q_.row(c) += eps * p_.row(c);
      }
    core.eval().gradient(q_, lf_new_, g_new_);
    for (int c = 0; c < n; ++c)
      if (active[c]) {
        g_.row(c) = g_new_.row(c);
        lf_[c] = lf_new_[c];
        p_.row(c) += 0.5 * eps * g_.row(c);
      }
  }

  /** From the chains' points with fresh momenta: the trajectory of
   *  `steps` leapfrog steps, then each chain's acceptance probability
   *  (0 where it diverged) into `accept` and divergences into `diverged`. */
  void trajectory(mcmc::chain_core& core, double eps, int steps, Eigen::VectorXd& accept,
                  std::vector<char>& diverged) {
    mcmc::chain_state& s = core.state();
    const int n = s.n();
    draw_momenta(s);
    q_ = s.x;
    g_ = grad_;
    lf_ = s.logf;
    h0_.resize(n);
    for (int c = 0; c < n; ++c) h0_[c] = energy(c);
    std::vector<char> active(static_cast<std::size_t>(n), 1);
    diverged.assign(static_cast<std::size_t>(n), 0);
    for (int l = 0; l < steps; ++l) {
      leapfrog(core, eps, active);
      for (int c = 0; c < n; ++c) {
        if (!active[c]) continue;
        const double h = energy(c);
        if (!std::isfinite(h) || h - h0_[c] > divergence_threshold) {
          active[c] = 0;
          diverged[c] = 1;
        }
      }
    }
    accept.resize(n);
    for (int c = 0; c < n; ++c) {
      const double a = std::exp(h0_[c] - energy(c));
      accept[c] = diverged[c] || !(a >= 0) ? 0.0 : std::min(1.0, a);
    }
  }

  /** Stan's initial step size search (init_stepsize), with the mean
   *  one-step acceptance probability over the chains: double or halve
   *  from eps until it crosses init_step_accept. */
  double find_step_size(mcmc::chain_core& core, double eps) {
    Eigen::VectorXd a;
    std::vector<char> div;
    trajectory(core, eps, 1, a, div);
    const bool up = a.mean() > init_step_accept;
    for (int k = 0; k < 60; ++k) {
      eps = up ? 2 * eps : 0.5 * eps;
      trajectory(core, eps, 1, a, div);
      if (up != (a.mean() > init_step_accept)) break;
    }
    return eps;
  }

  /** The largest eigenvalue of the covariance of the rows of `all`, by
   *  power iteration (a few window ends per run), through the centred draws
   *  C (n x k) as C' (C v) / (n - 1): n k per step, never the k x k
   *  covariance (k is 2 x 10^4 for a model with 10^4 varying intercepts and
   *  slopes). */
  static double largest_variance(const Eigen::MatrixXd& all) {
    // At most 1024 evenly spaced draws: a ratio of spreads needs no more.
    const Eigen::Index n = std::min<Eigen::Index>(all.rows(), 1024);
    Eigen::MatrixXd draws(n, all.cols());
    for (Eigen::Index i = 0; i < n; ++i) draws.row(i) = all.row(i * all.rows() / n);
    const Eigen::MatrixXd centred = draws.rowwise() - draws.colwise().mean();
    const double n1 = static_cast<double>(std::max<Eigen::Index>(1, n - 1));
    Eigen::VectorXd v = (centred.colwise().squaredNorm().transpose() / n1).cwiseSqrt();
    double lambda = v.squaredNorm() > 0 ? 1.0 : 0.0;
    for (int it = 0; it < 100 && lambda > 0; ++it) {
      const Eigen::VectorXd w = centred.transpose() * (centred * v) / n1;
      const double norm = w.norm();
      if (!(norm > 0)) return 0;
      const double previous = lambda;
      lambda = norm / v.norm();
      v = w / norm;
      if (it > 0 && std::fabs(lambda - previous) <= 1e-4 * lambda) break;
    }
    return lambda;
  }
};

/** ChEES-HMC: the chain engine with the HMC transition. */
using sampler = mcmc::sampler<transition>;

}  // namespace hmc
}  // namespace clbayes

#endif
