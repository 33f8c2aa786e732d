#ifndef CLBAYES_HMC_SAMPLER_HPP
#define CLBAYES_HMC_SAMPLER_HPP

// ChEES-HMC (Hoffman, Radul & Sountsov 2021, "An adaptive MCMC scheme for
// setting trajectory lengths in Hamiltonian Monte Carlo", AISTATS) for many
// chains at once, as a resumable object like slice::sampler: construct it,
// start() it, run() it in pieces until done(). All chains advance together
// with one step size and one (jittered) trajectory length, so each leapfrog
// step is ONE batched call of the density and gradient for every chain.
//
// Coordinates: the chains move on z with u = center + S z (mcmc/metric.hpp)
// and x = x(u) (mcmc/support.hpp); HMC with identity mass on z is HMC on u
// with inverse mass matrix S S'. Warmup follows mcmc::warmup_schedule
// (Stan's windows): the step size adapts by dual averaging to a mean
// acceptance probability over the chains (dual_averaging.hpp), the
// trajectory length by the ChEES criterion (chees.hpp), and at the end of
// each slow window S becomes the Cholesky factor of the window's draws'
// covariance (diagonal by default), pooled over the chains. Everything is
// fixed after warmup, so the kept draws come from a valid sampler.
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
#include <clbayes/mcmc/chains.hpp>
#include <clbayes/mcmc/coordinates.hpp>
#include <clbayes/mcmc/evaluator.hpp>
#include <clbayes/mcmc/run_loop.hpp>
#include <clbayes/mcmc/warmup_schedule.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace clbayes {
namespace hmc {

enum class metric { diagonal, dense };

inline metric parse_metric(const std::string& s) {
  if (s == "diagonal") return metric::diagonal;
  if (s == "dense") return metric::dense;
  throw invalid_argument("metric", "must be \"diagonal\" or \"dense\"");
}

/** Stan's threshold on the energy error of a divergent trajectory. */
constexpr double divergence_threshold = 1000;
/** The acceptance probability that the initial step size search aims to
 *  cross with one leapfrog step (Stan's init_stepsize). */
constexpr double init_step_accept = 0.8;

struct options {
  hmc::metric metric = hmc::metric::diagonal;
  int warmup = 1000;
  int n_iter = 1000;
  double adapt_delta = 0.75;   // target mean acceptance probability
  int max_leapfrog = 1000;     // most leapfrog steps of one trajectory
  double init_radius = 0;      // initial points moved by uniform(-r, r) on u
  std::uint64_t seed = 1;
  int first_stream = 0;        // chain c uses stream first_stream + c
};

/** Bytes a run holds at most: its draws (warmup, a slow window's points
 *  kept for the metric, at most as many again, and kept draws) and the
 *  work space of a trajectory (about a dozen chains x dim matrices: the
 *  points, momenta, gradients, proposals, and the evaluator's copies). */
inline double memory_needed(double chains, double dim, const options& o) {
  const double iters = 2.0 * o.warmup + o.n_iter;
  return 8.0 * chains * dim * iters + 8.0 * chains * (dim + 1) * 12;
}

class sampler {
 public:
  /** @param init chains x dim starting points (on the variables' scale). */
  sampler(const Eigen::MatrixXd& init, const options& opt, const mcmc::support& bounds)
      : opt_(opt), state_(init, opt.seed, opt.first_stream), bounds_(bounds),
        metric_(static_cast<int>(init.cols())), coord_(metric_, bounds_), on_z_(coord_),
        schedule_(opt.warmup) {
    const int n = static_cast<int>(init.rows()), k = static_cast<int>(init.cols());
    if (n < 2)
      throw invalid_argument("chains", "must be at least 2 (the adaptation averages "
                                       "over the chains)");
    if (k < 1) throw invalid_argument("init", "must have at least one dimension");
    if (!init.allFinite()) throw invalid_argument("init", "must be finite");
    if (bounds.dim() != k)
      throw invalid_argument("lower", "must have one value per dimension of `init`");
    for (int c = 0; c < n; ++c)
      for (int j = 0; j < k; ++j)
        if (!bounds.inside(j, init(c, j)))
          throw invalid_argument("init", "must lie strictly inside `lower` and `upper`");
    if (opt.n_iter < 1) throw invalid_argument("n_iter", "must be at least 1");
    if (opt.warmup < 0) throw invalid_argument("warmup", "must be at least 0");
    if (!(opt.adapt_delta > 0 && opt.adapt_delta < 1))
      throw invalid_argument("adapt_delta", "must lie strictly between 0 and 1");
    if (opt.max_leapfrog < 1) throw invalid_argument("max_leapfrog", "must be at least 1");
    if (!(opt.init_radius >= 0) || !std::isfinite(opt.init_radius))
      throw invalid_argument("init_radius", "must be finite and not negative");
    const double cells = (static_cast<double>(opt.n_iter) + opt.warmup) * n * k;
    if (cells > 2e9)
      throw invalid_argument("n_iter", "with `warmup`, `chains` and the dimension, would "
                                       "store more than 2e9 draws");
    given_u_ = coord_.x_to_u(init);
    state_.x = given_u_;
    for (int c = 0; c < n; ++c)
      for (int j = 0; j < k; ++j)
        state_.x(c, j) += opt.init_radius * (2 * state_.rngs[c].uniform() - 1);
    draws_.assign(static_cast<std::size_t>(opt.n_iter) * n * k, 0.0);
    warmup_draws_.assign(static_cast<std::size_t>(opt.warmup) * n * k, 0.0);
    n_divergent_.assign(static_cast<std::size_t>(n), 0);
  }

  sampler(const sampler&) = delete;
  sampler& operator=(const sampler&) = delete;

  /** Evaluate the initial points (a moved point with no finite density goes
   *  back to the one given) and find the first step size. */
  void start(mcmc::batch_evaluator& f) {
    bind(f);
    if (!on_z_.has_gradient())
      throw invalid_argument("log_density",
                             "has no gradient: give `gradient` with a function, or use "
                             "slice_sample_mv(), which needs none");
    eval_.gradient(state_.x, state_.logf, grad_);
    bool moved_back = false;
    for (int c = 0; c < state_.n(); ++c)
      if (!std::isfinite(state_.logf[c])) {
        state_.x.row(c) = given_u_.row(c);
        moved_back = true;
      }
    if (moved_back) eval_.gradient(state_.x, state_.logf, grad_);
    mcmc::require_finite_start(state_.logf, "log density and gradient");
    eps_ = find_step_size(1.0);
    da_.restart(eps_);
    chees_.restart(eps_);
    length_ = eps_;
    started_ = true;
  }

  /** Run at most `iterations` iterations; returns how many were run. */
  int run(mcmc::batch_evaluator& f, int iterations) {
    if (!started_) throw std::logic_error("hmc sampler: start() before run()");
    bind(f);
    return mcmc::run_piece(iterations, [this] { return done(); }, [this] {
      iterate();
      ++iter_;
    });
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
  /** u = center + S z, the map from the sampler's coordinates. */
  const mcmc::affine_metric& metric() const { return metric_; }
  const mcmc::support& bounds() const { return bounds_; }
  /** The chains' current points (chains x dim). */
  Eigen::MatrixXd current() const {
    Eigen::MatrixXd x;
    coord_.to_x(state_.x, x);
    return x;
  }

  /** The step size on z (fixed after warmup). */
  double step_size() const { return eps_; }
  /** The trajectory length on z before jitter (fixed after warmup). */
  double trajectory_length() const { return iter_ >= opt_.warmup ? length_ : chees_.length(); }
  /** Leapfrog steps taken per chain (each one batched gradient call). */
  double n_leapfrog() const { return n_leapfrog_; }
  double n_leapfrog_warmup() const { return n_leapfrog_warmup_; }
  /** Divergent transitions of each chain after warmup. */
  const std::vector<int>& n_divergent() const { return n_divergent_; }
  int n_divergent_warmup() const { return n_divergent_warmup_; }
  /** Mean acceptance probability after warmup. */
  double accept_rate() const {
    return iter_ > opt_.warmup ? accept_sum_ / (iter_ - opt_.warmup) : NAN;
  }
  double n_evals() const { return eval_.n_evals; }
  double n_calls() const { return eval_.n_calls; }
  double n_nan() const { return eval_.n_nan; }
  double n_gradients() const { return eval_.n_gradients; }
  /** Points where the gradient was NaN or infinite at a finite log density
   *  (each ended its trajectory as a divergence). */
  double n_bad_gradient() const { return eval_.n_bad_gradient; }
  double n_evals_warmup() const { return n_evals_warmup_; }

 private:
  options opt_;
  mcmc::chain_state state_;  // on z
  Eigen::MatrixXd grad_;     // d log f / dz at the chains' points
  Eigen::MatrixXd given_u_;  // the initial points as given, on u
  mcmc::support bounds_;
  mcmc::affine_metric metric_;
  mcmc::coordinates coord_;
  mcmc::coordinate_evaluator on_z_;
  mcmc::counted_evaluator eval_;
  mcmc::warmup_schedule schedule_;
  dual_averaging da_;
  chees_adapter chees_;
  double eps_ = 1, length_ = 1;
  bool started_ = false;
  int iter_ = 0;
  std::vector<double> draws_, warmup_draws_;
  std::vector<Eigen::MatrixXd> window_u_;  // u of the current slow window
  std::vector<int> n_divergent_;
  int n_divergent_warmup_ = 0;
  double n_leapfrog_ = 0, n_leapfrog_warmup_ = 0, accept_sum_ = 0, n_evals_warmup_ = 0;
  // Work space of one trajectory (chains x dim, chains).
  Eigen::MatrixXd q_, p_, g_, g_new_;
  Eigen::VectorXd lf_, lf_new_, h0_;

  void bind(mcmc::batch_evaluator& f) {
    on_z_.bind(f);
    eval_.bind(on_z_);
  }

  void draw_momenta() {
    p_.resize(state_.n(), state_.dim());
    for (int c = 0; c < state_.n(); ++c)
      for (int j = 0; j < state_.dim(); ++j) p_(c, j) = state_.rngs[c].normal();
  }

  double energy(int c) const { return -lf_[c] + 0.5 * p_.row(c).squaredNorm(); }

  /** One leapfrog step of size eps for the chains marked active; the
   *  others keep their rows. One batched gradient call. */
  void leapfrog(double eps, const std::vector<char>& active) {
    for (int c = 0; c < state_.n(); ++c)
      if (active[c]) {
        p_.row(c) += 0.5 * eps * g_.row(c);
        q_.row(c) += eps * p_.row(c);
      }
    eval_.gradient(q_, lf_new_, g_new_);
    for (int c = 0; c < state_.n(); ++c)
      if (active[c]) {
        g_.row(c) = g_new_.row(c);
        lf_[c] = lf_new_[c];
        p_.row(c) += 0.5 * eps * g_.row(c);
      }
  }

  /** From the chains' points with fresh momenta: the trajectory of
   *  `steps` leapfrog steps, then each chain's acceptance probability
   *  (0 where it diverged) into `accept` and divergences into `diverged`. */
  void trajectory(double eps, int steps, Eigen::VectorXd& accept,
                  std::vector<char>& diverged) {
    const int n = state_.n();
    draw_momenta();
    q_ = state_.x;
    g_ = grad_;
    lf_ = state_.logf;
    h0_.resize(n);
    for (int c = 0; c < n; ++c) h0_[c] = energy(c);
    std::vector<char> active(static_cast<std::size_t>(n), 1);
    diverged.assign(static_cast<std::size_t>(n), 0);
    for (int l = 0; l < steps; ++l) {
      leapfrog(eps, active);
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
  double find_step_size(double eps) {
    Eigen::VectorXd a;
    std::vector<char> div;
    trajectory(eps, 1, a, div);
    const bool up = a.mean() > init_step_accept;
    for (int k = 0; k < 60; ++k) {
      eps = up ? 2 * eps : 0.5 * eps;
      trajectory(eps, 1, a, div);
      if (up != (a.mean() > init_step_accept)) break;
    }
    return eps;
  }

  void iterate() {
    const bool warm = iter_ < opt_.warmup;
    const int n = state_.n();
    const double jitter = halton(iter_);
    const double length = warm ? chees_.length() : length_;
    const int steps = static_cast<int>(std::min<double>(
        opt_.max_leapfrog, std::max(1.0, std::ceil(jitter * length / eps_))));
    Eigen::VectorXd accept;
    std::vector<char> diverged;
    trajectory(eps_, steps, accept, diverged);
    n_leapfrog_ += steps;
    const Eigen::MatrixXd before = state_.x;
    for (int c = 0; c < n; ++c) {
      if (diverged[c]) {
        if (warm) ++n_divergent_warmup_;
        else ++n_divergent_[c];
      }
      if (state_.rngs[c].uniform() < accept[c]) {
        state_.x.row(c) = q_.row(c);
        state_.logf[c] = lf_[c];
        grad_.row(c) = g_.row(c);
      }
    }
    if (warm) {
      adapt(before, accept, jitter);
    } else {
      accept_sum_ += accept.mean();
    }
    store();
  }

  /** Step size, trajectory length and metric after warmup iteration iter_. */
  void adapt(const Eigen::MatrixXd& before, const Eigen::VectorXd& accept, double jitter) {
    const double used = eps_;
    eps_ = da_.update(accept.mean(), opt_.adapt_delta);
    chees_.update(before, q_, p_, accept, jitter, used, eps_ * opt_.max_leapfrog);
    if (schedule_.in_slow_window(iter_)) {
      Eigen::MatrixXd u;
      coord_.to_u(state_.x, u);
      window_u_.push_back(u);
    }
    int from = 0;
    if (schedule_.window_closes(iter_, from)) update_metric();
    if (iter_ + 1 == opt_.warmup) {
      eps_ = da_.final_step_size();
      length_ = chees_.final_length();
      n_evals_warmup_ = eval_.n_evals;
      n_leapfrog_warmup_ = n_leapfrog_;
    }
  }

  /** The metric from the closing window's draws, pooled over chains; the
   *  chains move onto it, and the step size and length start again. */
  void update_metric() {
    const int k = state_.dim(), n = state_.n();
    Eigen::MatrixXd pooled(static_cast<Eigen::Index>(window_u_.size()) * n, k);
    for (std::size_t i = 0; i < window_u_.size(); ++i)
      pooled.middleRows(static_cast<Eigen::Index>(i) * n, n) = window_u_[i];
    window_u_.clear();
    Eigen::MatrixXd u;
    coord_.to_u(state_.x, u);
    const double old_spread = largest_variance(metric_.to_z(pooled));
    if (!metric_.estimate(pooled, opt_.metric == hmc::metric::dense)) return;
    state_.x = metric_.to_z(u);
    eval_.gradient(state_.x, state_.logf, grad_);
    eps_ = find_step_size(eps_);
    da_.restart(eps_);
    // ChEES sets T by the widest direction (about a half period of its
    // oscillation), so T carries over in units of that direction's sd.
    const double ratio = largest_variance(metric_.to_z(pooled)) / old_spread;
    chees_.restart(chees_.length() * (std::isfinite(ratio) && ratio > 0 ? std::sqrt(ratio) : 1.0));
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

}  // namespace hmc
}  // namespace clbayes

#endif
