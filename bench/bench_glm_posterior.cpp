// The slice sampler (slice/sampler.hpp, slice_sample_mv()'s defaults) on
// the logistic-regression posterior of logistic_posterior.hpp: every
// sampler step hands all chains' points to the model in one batch, which
// the batched GLM likelihood evaluates in one pass over x (--per-point: one
// glm_lp call, one pass over x, per point, as glm_model did before the
// batched path, for the before/after ratio in one run). Runs without R:
//
//   make -C bench bench_glm_posterior
//   ./bench_glm_posterior [--cpu | --device] [--n 100000] [--k 20]
//                         [--chains C] [--iter 500] [--warmup 300]
//                         [--per-point] [--seed 1] [--beta-sd 0.2]
//
// Defaults as slice_sample_mv(): univariate updates with 2 proposals, 64
// chains up to 32 dimensions (then about 2048 / dim), widths 2 on the
// unconstrained scale adapted in warmup (Stan's windows, extended by up to
// `warmup` while split R-hat > 1.05). The chains start at zero dispersed by
// uniform(-0.1, 0.1) (slice_sample_mv starts from glm()'s fit, dispersed
// by 2). Prints min bulk ESS, wall time, min ES/s, time per iteration,
// density calls per iteration and points per call.

#include "cli.hpp"
#include "logistic_posterior.hpp"

#include <clbayes/slice/sampler.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

namespace cs = clbayes::slice;

namespace {

struct args {
  bool device = false, per_point = false;
  int n = 100000, k = 20, chains = 0, iter = 500, warmup = 300;
  double beta_sd = 0.2;
  unsigned long seed = 1;
};

args parse(int argc, char** argv) {
  args a;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    auto next = [&] { return option_value(i, argc, argv); };
    if (s == "--device") a.device = true;
    else if (s == "--cpu") a.device = false;
    else if (s == "--per-point") a.per_point = true;
    else if (s == "--n") a.n = std::atoi(next());
    else if (s == "--k") a.k = std::atoi(next());
    else if (s == "--chains") a.chains = std::atoi(next());
    else if (s == "--iter") a.iter = std::atoi(next());
    else if (s == "--warmup") a.warmup = std::atoi(next());
    else if (s == "--beta-sd") a.beta_sd = std::atof(next());
    else if (s == "--seed") a.seed = std::strtoul(next(), nullptr, 10);
    else { std::fprintf(stderr, "unknown argument %s\n", s.c_str()); std::exit(2); }
  }
  return a;
}

// slice_sample_mv()'s default number of chains for `dim` variables.
int default_chains(int dim) {
  if (dim <= 32) return 64;
  return std::max(8, static_cast<int>(std::pow(2.0, std::round(std::log2(2048.0 / dim)))));
}

}  // namespace

int main(int argc, char** argv) {
  args a = parse(argc, argv);
  const int dim = a.k + 1;
  if (a.chains <= 0) a.chains = default_chains(dim);
  const bench::logistic_data sim = bench::simulate_logistic(a.n, a.k, a.beta_sd);
  try {
    const clbayes::glm::glm_data data =
        clbayes::glm::make_glm_data(sim.x.data(), sim.y.data(), a.n, a.k, a.device);
    bench::logistic_posterior f(data, a.device, a.per_point);
    std::printf("# logistic posterior %d x %d on the %s, slice sampler, %d chains, %d + %d "
                "iterations, %s\n", a.n, a.k, a.device ? "device" : "CPU", a.chains, a.warmup,
                a.iter, a.per_point ? "one glm_lp call per point" : "one batched call per step");
    clbayes::mcmc::options opt;
    opt.metric = clbayes::mcmc::metric::dense;
    opt.warmup = a.warmup;
    opt.n_iter = a.iter;
    opt.seed = a.seed;
    opt.first_stream = 0;
    opt.init_radius = 0.1;
    opt.warmup_extend = a.warmup;
    opt.warmup_rhat = 1.05;
    opt.memory_limit = std::numeric_limits<double>::infinity();
    cs::transition::settings set;
    set.method = cs::method::univariate;
    set.stepout = cs::stepout::warmup;
    set.n_proposals = 2;
    set.max_steps = 100;
    set.width = Eigen::VectorXd::Constant(dim, 2.0);
    set.width_on_u = true;
    const auto t0 = std::chrono::steady_clock::now();
    cs::sampler s(Eigen::MatrixXd::Zero(a.chains, dim), opt, set, clbayes::mcmc::support(dim));
    s.start(f);
    while (!s.done()) s.run(f, 10);
    const double total =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double min_ess = 0, max_z = 0;
    // the intercept's truth is not centred by the prior: not checked
    bench::summarise_draws(s.draws(), a.iter, a.chains, bench::logistic_truth(sim), 1,
                           &min_ess, &max_z);
    const double iters = s.warmup() + a.iter;
    std::printf("| chains | min ESS | warmup its | total s | min ES/s | ms per iteration "
                "| calls per iteration | points per call | density share | max |post mean - "
                "truth| / post sd |\n|---|---|---|---|---|---|---|---|---|---|\n");
    std::printf("| %d | %.0f | %d | %.2f | %.2f | %.2f | %.1f | %.1f | %.2f | %.2f |\n", a.chains,
                min_ess, s.warmup(), total, min_ess / total, 1e3 * total / iters,
                s.n_calls() / iters, s.n_evals() / static_cast<double>(s.n_calls()),
                s.density_seconds() / total, max_z);
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 1;
  }
  return 0;
}
