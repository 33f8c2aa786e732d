#ifndef CLBAYES_HMC_DUAL_AVERAGING_HPP
#define CLBAYES_HMC_DUAL_AVERAGING_HPP

// The step size in warmup: Nesterov's dual averaging as Hoffman & Gelman
// (2014, "The No-U-Turn Sampler", Section 3.2.1, Algorithm 5) use it, with
// Stan's constants (Stan Reference Manual, "HMC algorithm parameters":
// gamma = 0.05, t0 = 10, kappa = 0.75, mu = log(10 eps0)). The statistic
// driven to its target is the mean acceptance probability over the chains
// of one iteration, as in ChEES-HMC (Hoffman, Radul & Sountsov 2021,
// Section 4), so every chain shares one step size.

#include <cmath>

namespace clbayes {
namespace hmc {

class dual_averaging {
 public:
  /** Restart from step size `eps0` (after a new metric, as Stan does). */
  void restart(double eps0) {
    mu_ = std::log(10.0 * eps0);
    h_bar_ = 0;
    log_eps_bar_ = 0;
    t_ = 0;
  }

  /** One update with the iteration's mean acceptance probability; returns
   *  the step size for the next iteration. */
  double update(double accept, double target) {
    t_ += 1;
    const double eta = 1.0 / (t_ + t0);
    h_bar_ = (1 - eta) * h_bar_ + eta * (target - accept);
    const double log_eps = mu_ - std::sqrt(t_) / gamma * h_bar_;
    const double w = std::pow(t_, -kappa);
    log_eps_bar_ = w * log_eps + (1 - w) * log_eps_bar_;
    return std::exp(log_eps);
  }

  /** The averaged step size: the one kept after warmup. */
  double final_step_size() const { return std::exp(log_eps_bar_); }
  bool started() const { return t_ > 0; }

 private:
  static constexpr double gamma = 0.05, t0 = 10, kappa = 0.75;
  double mu_ = 0, h_bar_ = 0, log_eps_bar_ = 0, t_ = 0;
};

}  // namespace hmc
}  // namespace clbayes

#endif
