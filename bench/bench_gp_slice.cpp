// Example 2 of parallel-slice.txt: the linear Gaussian-process model with
// an exponential covariance, sampled by slice_sample_mv's core with the
// fused batched likelihood (gp_model's evaluator). Data as in the paper:
// n locations uniform on the unit square, kappa = psi = 1, phi = 0.2, an
// intercept and one covariate (beta = (1, -0.5), fixed at the truth here);
// priors kappa, psi ~ IG(2, 1), phi ~ U(0.01, 5). Chains start at the true
// values, as in the paper. For each n and sampler: ESS of kappa, psi, phi
// and ES/sec (the smallest ESS over the whole run's time, warmup included).
//
//   make -C bench bench_gp_slice
//   ./bench_gp_slice [--cpu] [--iter N] [--chains C] [--K K] [--Ku KU]
//                    [--method hyperrect|univariate|both]
//                    [--metric dense|diagonal|both] [--natural] [--warmup W]
//                    [n ...]
//
// By default the sampler runs on the unconstrained scale of gp_model's
// support (log kappa, log psi, logit of phi on (0.01, 5)) with the dense
// metric, as slice_sample_mv() does for a gp_model; --natural samples
// kappa, psi, phi themselves.
//
// The device evaluates every point of a batch in one launch, so it pays to
// run many chains (a batch is chains x K proposals, or chains points for the
// univariate sampler).
//
// Before timing, the device evaluator is checked against the CPU one.

#include "bench_mcmc.hpp"

#include <clbayes/models/gp_model.hpp>
#include <clbayes/slice/sampler.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

namespace cs = clbayes::slice;
namespace cm = clbayes::mcmc;
namespace cb = clbayes::batched;

int main(int argc, char** argv) {
  bool device = true;
  std::string which = "both", metrics = "dense";
  bool natural = false;
  int n_iter = 1000, chains = 8, K = 32, Ku = 1, warmup = -1;
  std::vector<int> sizes;
  for (int a = 1; a < argc; ++a) {
    const std::string s = argv[a];
    if (s == "--cpu") device = false;
    else if (s == "--iter" && a + 1 < argc) n_iter = std::atoi(argv[++a]);
    else if (s == "--chains" && a + 1 < argc) chains = std::atoi(argv[++a]);
    else if (s == "--K" && a + 1 < argc) K = std::atoi(argv[++a]);
    else if (s == "--Ku" && a + 1 < argc) Ku = std::atoi(argv[++a]);
    else if (s == "--method" && a + 1 < argc) which = argv[++a];
    else if (s == "--metric" && a + 1 < argc) metrics = argv[++a];
    else if (s == "--natural") natural = true;
    else if (s == "--warmup" && a + 1 < argc) warmup = std::atoi(argv[++a]);
    else sizes.push_back(std::atoi(s.c_str()));
  }
  if (sizes.empty()) sizes = {100, 200, 300, 400, 500};
  if (warmup < 0) warmup = n_iter / 2;
  try {
#ifdef CLBAYES_OPENCL
    if (device && !clbayes::opencl::context::instance().selected()) device = false;
    if (device) std::printf("device: %s\n", clbayes::opencl::context::instance().info().name.c_str());
#else
    device = false;
#endif
    std::printf("evaluator: %s; %d chains x %d draws (+ %d warmup); K = %d (hyperrect), "
                "%d (univariate)\n\n", device ? "OpenCL device" : "CPU", chains, n_iter,
                warmup, K, Ku);
    std::printf("scale: %s\n\n", natural ? "natural (kappa, psi, phi)"
                                        : "unconstrained (log kappa, log psi, logit phi)");
    std::printf("| n | sampler | metric | ESS kappa | ESS psi | ESS phi | ES/sec (min) | "
                "densities/iter | calls/iter | s | dev vs CPU |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
    const std::vector<double> beta = {1.0, -0.5};
    for (int n : sizes) {
      const bench::gp_data d = bench::simulate_gp(n, 2010 + n);
      cb::gp_loglik lik(d.y.data(), d.X.data(), n, 2, d.coords.data(), 2);
      clbayes::models::gp_prior prior;
      double check = 0;
      if (device) {  // device against CPU on a few points
        clbayes::models::gp_evaluator fd(lik, beta, cb::covariance::exponential, prior, true);
        clbayes::models::gp_evaluator fc(lik, beta, cb::covariance::exponential, prior, false);
        Eigen::MatrixXd pts(4, 3);
        pts << 1, 1, 0.2, 0.5, 1.5, 0.1, 2, 0.3, 1, 1, 1, 4;
        Eigen::VectorXd a, b;
        fd(pts, a);
        fc(pts, b);
        for (int i = 0; i < 4; ++i) check = std::max(check, std::fabs(a[i] - b[i]) / std::fabs(b[i]));
      }
      clbayes::models::gp_evaluator f(lik, beta, cb::covariance::exponential, prior, device);
      Eigen::VectorXd lower(3), upper(3);
      const double inf = std::numeric_limits<double>::infinity();
      lower << 0, 0, prior.phi_lower;
      upper << inf, inf, prior.phi_upper;
      const clbayes::mcmc::support bounds = natural ? clbayes::mcmc::support(3) : clbayes::mcmc::support(lower, upper);
      for (cs::method m : {cs::method::hyperrect, cs::method::univariate})
      for (cm::metric me : {cm::metric::dense, cm::metric::diagonal}) {
        if (which != "both" && cs::parse_method(which) != m) continue;
        if (metrics != "both" && cm::parse_metric(metrics) != me) continue;
        cm::options opt = bench::chain_options(me, warmup, n_iter, 7, 0);
        opt.warmup_rhat = 1.05;
        cs::transition::settings set;
        set.method = m;
        set.stepout = cs::stepout::warmup;
        set.n_proposals = m == cs::method::hyperrect ? K : Ku;
        set.max_steps = 100;
        set.width = Eigen::Vector3d(1.0, 1.0, 0.2);
        set.width_on_u = false;
        Eigen::MatrixXd init(chains, 3);
        for (int c = 0; c < chains; ++c) init.row(c) << 1.0, 1.0, 0.2;
        const auto t0 = std::chrono::steady_clock::now();
        cs::sampler s(init, opt, set, bounds);
        s.start(f);
        s.run(f, opt.warmup + opt.n_iter);
        const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const std::vector<double>& dr = s.draws();
        const std::size_t per_var = static_cast<std::size_t>(n_iter) * chains;
        double e[3];
        for (int j = 0; j < 3; ++j) e[j] = bench::ess(dr.data() + j * per_var, n_iter, chains);
        const double emin = std::min(e[0], std::min(e[1], e[2]));
        const double iters = static_cast<double>(n_iter + warmup);
        std::printf("| %d | %s | %s | %.0f | %.0f | %.0f | %.2f | %.1f | %.1f | %.2f | %.1e |\n", n,
                    m == cs::method::hyperrect ? "hyperrect" : "univariate",
                    me == cm::metric::dense ? "dense" : "diagonal", e[0], e[1], e[2],
                    emin / sec, s.n_evals() / (iters * chains), s.n_calls() / iters, sec, check);
        std::fflush(stdout);
      }
    }
    return 0;
  } catch (const std::exception& ex) {
    std::printf("error: %s\n", ex.what());
    return 1;
  }
}
