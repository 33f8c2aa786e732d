#ifndef CLBAYES_HMC_CHEES_HPP
#define CLBAYES_HMC_CHEES_HPP

// The trajectory length T in warmup, by the ChEES criterion of Hoffman,
// Radul & Sountsov (2021, "An adaptive MCMC scheme for setting trajectory
// lengths in Hamiltonian Monte Carlo", AISTATS, Sections 3-4):
//   ChEES = 1/4 E[(|q' - E q|^2 - |q - E q|^2)^2],
// the change in the centred squared norm from a chain's state q to its
// proposal q', with E q the mean over the chains. Its derivative in the
// trajectory's length at the proposal (with momentum p', identity mass) is
//   (|q' - m'|^2 - |q - m|^2) <q' - m', p'>,
// times the jitter h for the jittered length h T. The chains' derivatives
// are averaged with their acceptance probabilities as weights, and log T
// follows them by RMSProp (Adam without momentum) with learning rate 0.025,
// each step clipped to +-0.35, and an iterate average with weights t^-1/2
// gives the T kept after warmup: the constants of the paper's reference
// implementation (TensorFlow Probability's
// GradientBasedTrajectoryLengthAdaptation).
// Centring: m and m' are the plain means of q and q' over the same chains
// (those whose proposal enters the average). The reference implementation
// centres q' on the acceptance-weighted mean instead; then a chain with an
// above-average weight has |q' - m'|^2 smaller than |q - m|^2 by about
// 2 d v (w_c / sum w - 1/n) in dimension d with variance v per coordinate,
// with no change in the dynamics, and the weighted average of that
// difference is -d v (sum w^2 / (sum w)^2 - 1/n) < 0 whenever the acceptance
// varies across the chains. The signal grows only as eps^2 d, so in
// dimension 2 x 10^4 this term decided the sign of the gradient and T
// shrank to one leapfrog step (RESULTS.md, "Warmup on high-dimensional
// hierarchical models").
// T never goes below the step size: a trajectory is at least one leapfrog
// step, and T below it changes nothing but the time T needs to grow back
// (blackjax's ChEES adaptation clips at the step size too).
// Jitter: the trajectory length of iteration i is h_i T with h_i the base-2
// Halton (van der Corput) sequence in (0, 1), the same for every chain, so
// all chains take the same number of leapfrog steps (one batched gradient
// call per step); the jitter avoids the periodicities of a fixed length.

#include <clbayes/eigen.hpp>

#include <algorithm>
#include <cmath>

namespace clbayes {
namespace hmc {

/** The base-2 Halton number of iteration i (0, 1, ...): 1/2, 1/4, 3/4, ... */
inline double halton(int i) {
  double h = 0, f = 0.5;
  for (unsigned n = static_cast<unsigned>(i) + 1; n > 0; n >>= 1, f *= 0.5)
    if (n & 1u) h += f;
  return h;
}

class chees_adapter {
 public:
  /** Restart the averages at trajectory length `length`. */
  void restart(double length) {
    log_t_ = std::log(length);
    sq_grad_ = 0;
    log_t_bar_ = log_t_;
    t_ = 0;
  }

  double length() const { return std::exp(log_t_); }
  /** The iterate average: the length kept after warmup. */
  double final_length() const { return std::exp(log_t_bar_); }

  /**
   * One update from an iteration: `q` the chains' states before it, `q1`
   * their proposals, `p1` the momenta at the proposals, `accept` the
   * acceptance probabilities, `jitter` the iteration's h. The length is
   * then kept within [`min_length`, `max_length`].
   */
  void update(const Eigen::MatrixXd& q, const Eigen::MatrixXd& q1,
              const Eigen::MatrixXd& p1, const Eigen::VectorXd& accept, double jitter,
              double min_length, double max_length) {
    const Eigen::Index n = q.rows();
    // The chains that enter the average (a proposal with acceptance
    // probability below 1e-4 is a divergence or far out, as in the
    // reference implementation), and the means of q and q' over them.
    Eigen::RowVectorXd m = Eigen::RowVectorXd::Zero(q.cols()), m1 = m;
    double w_sum = 0;
    int used = 0;
    for (Eigen::Index c = 0; c < n; ++c)
      if (accept[c] > 1e-4) {
        m += q.row(c);
        m1 += q1.row(c);
        w_sum += accept[c];
        ++used;
      }
    if (used < 2) return;  // no spread to measure
    m /= used;
    m1 /= used;
    double g = 0, w = 0;
    for (Eigen::Index c = 0; c < n; ++c) {
      if (!(accept[c] > 1e-4)) continue;
      const Eigen::RowVectorXd d1 = q1.row(c) - m1;
      const double gc = (d1.squaredNorm() - (q.row(c) - m).squaredNorm()) *
                        d1.dot(p1.row(c)) * jitter;
      if (!std::isfinite(gc)) continue;
      g += accept[c] * gc;
      w += accept[c];
    }
    g = w > 0 ? g / w_sum : 0.0;
    t_ += 1;
    sq_grad_ = (1 - beta) * sq_grad_ + beta * g * g;
    const double scale = sq_grad_ / (1 - std::pow(1 - beta, t_));
    const double step = std::clamp(rate * g / std::sqrt(scale + 1e-20), -max_step, max_step);
    log_t_ = std::clamp(log_t_ + step, std::log(min_length),
                        std::max(std::log(min_length), std::log(max_length)));
    const double a = 1 / std::sqrt(t_);
    log_t_bar_ = a * log_t_ + (1 - a) * log_t_bar_;
  }

 private:
  static constexpr double rate = 0.025, beta = 0.05, max_step = 0.35;
  double log_t_ = 0, sq_grad_ = 0, log_t_bar_ = 0, t_ = 0;
};

}  // namespace hmc
}  // namespace clbayes

#endif
