// ChEES-HMC (hmc/sampler.hpp) on one of two posteriors, every leapfrog
// step one batched value-and-gradient call for all chains:
// * logistic (default): a logistic regression through the batched GLM
//   likelihood glm::glm_lp_batch (one pass over x, value and gradient
//   fused). Priors normal(0, 2.5) on the coefficients and normal(0, 10) on
//   the intercept (logistic_posterior.hpp). Data simulated with known truth: x
//   standard normal, true coefficients normal(0, beta_sd = 0.2), intercept
//   0.5.
// * gp: the Gaussian-process posterior of parallel-slice.txt's Example 2
//   through gp_model's evaluator (models/gp_model.hpp), data as
//   bench_gp_slice simulates them (bench::simulate_gp, the same seed for the
//   same --locations, beta fixed at the truth), kappa, psi and phi sampled
//   on the unconstrained scale of gp_model's support, chains started at the
//   truth. The gradient (batched/gp_loglik_gradient.hpp) runs on the CPU,
//   in parallel over the chains (OpenMP), with or without --device.
// Runs without R:
//
//   make -C bench bench_hmc
//   ./bench_hmc [--cpu | --device] [--model logistic|gp] [--n 10000] [--k 100]
//               [--locations 500] [--cov exponential|squared_exponential]
//               [--chains 16] [--iter 1000] [--warmup 1000]
//               [--metric diagonal|dense] [--delta 0.75] [--seed 1]
//               [--beta-sd 0.2]
//
// --device sends the likelihood to the selected OpenCL device (the batched
// device path of glm_batch.hpp; for gp, the values only); --cpu (default)
// runs its CPU path. Before timing, the evaluator's gradient is checked
// against central differences of its values. Prints min bulk ESS (split
// chains, no rank normalisation), wall time, min ES/s, time per leapfrog
// step (one batched value+gradient call), gradients per effective sample,
// after warmup and overall, and how far the posterior means lie from the
// truth.

#include "bench_mcmc.hpp"
#include "cli.hpp"
#include "logistic_posterior.hpp"

#include <clbayes/glm/glm_batch.hpp>
#include <clbayes/hmc/sampler.hpp>
#include <clbayes/models/gp_model.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace cb = clbayes::batched;
namespace cg = clbayes::glm;
namespace ch = clbayes::hmc;
namespace cm = clbayes::mcmc;

namespace {

struct args {
  bool device = false;
  std::string model = "logistic", cov = "exponential";
  int n = 10000, k = 100, locations = 500, chains = 16, iter = 1000, warmup = 1000;
  std::string metric = "diagonal";
  double delta = 0.75, beta_sd = 0.2;
  unsigned long seed = 1;
};

args parse(int argc, char** argv) {
  args a;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    auto next = [&] { return option_value(i, argc, argv); };
    if (s == "--device") a.device = true;
    else if (s == "--cpu") a.device = false;
    else if (s == "--model") a.model = next();
    else if (s == "--locations") a.locations = std::atoi(next());
    else if (s == "--cov") a.cov = next();
    else if (s == "--n") a.n = std::atoi(next());
    else if (s == "--k") a.k = std::atoi(next());
    else if (s == "--chains") a.chains = std::atoi(next());
    else if (s == "--iter") a.iter = std::atoi(next());
    else if (s == "--warmup") a.warmup = std::atoi(next());
    else if (s == "--metric") a.metric = next();
    else if (s == "--delta") a.delta = std::atof(next());
    else if (s == "--beta-sd") a.beta_sd = std::atof(next());
    else if (s == "--seed") a.seed = std::strtoul(next(), nullptr, 10);
    else { std::fprintf(stderr, "unknown argument %s\n", s.c_str()); std::exit(2); }
  }
  if (a.model != "logistic" && a.model != "gp") {
    std::fprintf(stderr, "--model must be logistic or gp\n");
    std::exit(2);
  }
  if (a.cov != "exponential" && a.cov != "squared_exponential") {
    std::fprintf(stderr, "--cov must be exponential or squared_exponential\n");
    std::exit(2);
  }
  return a;
}

int max_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

// Runs the sampler from `init` and prints the table; truth[j] is compared
// with the posterior mean of variable j from `first_checked` on.
void run_and_report(cm::batch_evaluator& f, const Eigen::MatrixXd& init,
                    const cm::support& bounds, const args& a,
                    const std::vector<double>& truth, int first_checked) {
  const cm::options opt =
      bench::chain_options(cm::parse_metric(a.metric), a.warmup, a.iter, a.seed, 0.1);
  ch::transition::settings set;
  set.adapt_delta = a.delta;
  set.max_leapfrog = 1000;
  const auto t0 = std::chrono::steady_clock::now();
  ch::sampler s(init, opt, set, bounds);
  s.start(f);
  s.run(f, a.warmup);
  const auto t1 = std::chrono::steady_clock::now();
  s.run(f, a.iter);
  const auto t2 = std::chrono::steady_clock::now();
  const double warm = std::chrono::duration<double>(t1 - t0).count();
  const double total = std::chrono::duration<double>(t2 - t0).count();

  double min_ess = 0, max_z = 0;
  bench::summarise_draws(s.draws(), a.iter, a.chains, truth, first_checked, &min_ess, &max_z);
  int div = 0;
  const ch::transition& t = s.transition();
  for (int c : t.n_divergent()) div += c;
  const double lf_sample = t.n_leapfrog() - t.n_leapfrog_warmup();
  std::printf("| chains | min ESS | warmup s | total s | min ES/s (total) | min ES/s (sampling) "
              "| ms per leapfrog | grads/ES (sampling) | grads/ES (all) | step | length "
              "| accept | divergent | max |post mean - truth| / post sd |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::printf("| %d | %.0f | %.2f | %.2f | %.2f | %.2f | %.3f | %.1f | %.1f | %.3f | %.2f "
              "| %.3f | %d (+%d in warmup) | %.2f |\n",
              a.chains, min_ess, warm, total, min_ess / total, min_ess / (total - warm),
              1e3 * total / t.n_leapfrog(), lf_sample * a.chains / min_ess,
              s.n_gradients() / min_ess, t.step_size(), t.trajectory_length(),
              t.accept_rate(), div, t.n_divergent_warmup(), max_z);
}

void run_logistic(const args& a) {
  const bench::logistic_data sim = bench::simulate_logistic(a.n, a.k, a.beta_sd);
  const std::vector<double> truth = bench::logistic_truth(sim);
  const cg::glm_data data = cg::make_glm_data(sim.x.data(), sim.y.data(), a.n, a.k, a.device);
  bench::logistic_posterior f(data, a.device);
  cm::rng gen(1002, 0);
  const int dim = a.k + 1;
  Eigen::MatrixXd probe(2, dim);
  for (int j = 0; j < dim; ++j) { probe(0, j) = 0.1 * bench::normal(gen); probe(1, j) = 0; }
  std::printf("# logistic posterior %d x %d on the %s, %d chains, %d + %d iterations, "
              "metric %s, adapt_delta %.2f\n", a.n, a.k, a.device ? "device" : "CPU",
              a.chains, a.warmup, a.iter, a.metric.c_str(), a.delta);
  std::printf("gradient check: max relative error %.2e\n", bench::gradient_error(f, probe));
  // the intercept's truth is not centred by the prior: not checked
  run_and_report(f, Eigen::MatrixXd::Zero(a.chains, dim), cm::support(dim), a, truth, 1);
}

void run_gp(const args& a) {
  const int n = a.locations;
  const bench::gp_data d = bench::simulate_gp(n, 2010 + n);
  cb::gp_loglik lik(d.y.data(), d.X.data(), n, 2, d.coords.data(), 2);
  const cb::covariance cov = a.cov == "exponential" ? cb::covariance::exponential
                                                    : cb::covariance::squared_exponential;
  const clbayes::models::gp_prior prior;
  clbayes::models::gp_evaluator f(lik, {1.0, -0.5}, cov, prior, a.device);
  const double inf = std::numeric_limits<double>::infinity();
  Eigen::VectorXd lower(3), upper(3);
  lower << 0, 0, prior.phi_lower;
  upper << inf, inf, prior.phi_upper;
  const std::vector<double> truth = {1.0, 1.0, 0.2};
  Eigen::MatrixXd probe(2, 3);
  probe << 1.0, 1.0, 0.2, 0.7, 1.4, 0.35;
  std::printf("# GP posterior (Example 2), %d locations, %s covariance, values on the %s, "
              "gradients on the CPU (%d threads), %d chains, %d + %d iterations, metric %s, "
              "adapt_delta %.2f\n", n, a.cov.c_str(), a.device ? "device" : "CPU",
              max_threads(), a.chains, a.warmup, a.iter, a.metric.c_str(), a.delta);
  std::printf("gradient check: max relative error %.2e\n", bench::gradient_error(f, probe));
  Eigen::MatrixXd init(a.chains, 3);
  for (int c = 0; c < a.chains; ++c) init.row(c) << 1.0, 1.0, 0.2;
  run_and_report(f, init, cm::support(lower, upper), a, truth, 0);
}

}  // namespace

int main(int argc, char** argv) {
  const args a = parse(argc, argv);
  try {
    if (a.model == "gp")
      run_gp(a);
    else
      run_logistic(a);
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 1;
  }
  return 0;
}
