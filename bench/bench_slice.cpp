// Benchmark of the parallel multivariate slice sampler on Example 1 of
// parallel-slice.txt (linear regression with an intercept, known unit
// variance, flat priors, predictor mean 5 and variance 0.5, so that the
// posterior correlation of alpha and beta is about -0.99). Compares the
// hyperrect sampler (valid; vertex step-out in warmup only), the paper's
// literal sampler (stepout = always) and the univariate baseline: ESS per
// parameter, ES/sec (smallest ESS over the whole run's time), densities per
// iteration. Runs without R:
//
//   g++ -std=c++17 -O3 -march=native -DCLBAYES_OPENCL -I inst/include
//     -I .bench-deps bench/bench_slice.cpp -o bench_slice -lOpenCL
//   ./bench_slice [n_iter=20000] [chains=4] [n_obs=100] [reps=3] [K=32]
//
// The model is evaluated on the CPU (the device models come with the GLM and
// GP issues); before timing, the evaluator is checked against the direct
// residual form and the draws against the exact posterior.

#include "bench_mcmc.hpp"

#include <clbayes/models/lm_model.hpp>
#include <clbayes/slice/sampler.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace cs = clbayes::slice;
namespace cm = clbayes::mcmc;

using bench::ess;
using bench::normal;

namespace {

struct result {
  double ess_alpha, ess_beta, seconds, evals_per_iter, mean_err, sd_ratio_alpha;
};

result run_once(clbayes::models::lm_evaluator& model,
                const cm::options& opt, const cs::transition::settings& set, int chains) {
  Eigen::MatrixXd init = model.mean().transpose().replicate(chains, 1);
  auto t0 = std::chrono::steady_clock::now();
  cs::sampler s(init, opt, set, cm::support(static_cast<int>(init.cols())));
  s.start(model);
  s.run(model, opt.warmup + opt.n_iter);
  const double sec =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::vector<double>& d = s.draws();
  const std::size_t per_var = static_cast<std::size_t>(opt.n_iter) * chains;
  const Eigen::MatrixXd cov = model.precision().inverse();
  result r{};
  r.ess_alpha = ess(d.data(), opt.n_iter, chains);
  r.ess_beta = ess(d.data() + per_var, opt.n_iter, chains);
  r.seconds = sec;
  r.evals_per_iter = s.n_evals() / (static_cast<double>(opt.warmup + opt.n_iter) * chains);
  for (int j = 0; j < 2; ++j) {  // mean error in posterior sds
    double m = 0, v = 0;
    for (std::size_t i = 0; i < per_var; ++i) m += d[j * per_var + i];
    m /= per_var;
    for (std::size_t i = 0; i < per_var; ++i)
      v += (d[j * per_var + i] - m) * (d[j * per_var + i] - m);
    v /= per_var;
    r.mean_err = std::max(r.mean_err, std::fabs(m - model.mean()[j]) / std::sqrt(cov(j, j)));
    if (j == 0) r.sd_ratio_alpha = std::sqrt(v / cov(0, 0));
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  const int n_iter = argc > 1 ? std::atoi(argv[1]) : 20000;
  const int chains = argc > 2 ? std::atoi(argv[2]) : 4;
  const int n_obs = argc > 3 ? std::atoi(argv[3]) : 100;
  const int reps = argc > 4 ? std::max(1, std::atoi(argv[4])) : 3;
  const int K = argc > 5 ? std::atoi(argv[5]) : 32;
  try {
    // Example 1 data: x ~ N(5, 0.5), y = 1 + 2 x + N(0, 1).
    clbayes::mcmc::rng g(2009, 0);
    Eigen::MatrixXd X(n_obs, 2);
    Eigen::VectorXd y(n_obs);
    for (int i = 0; i < n_obs; ++i) {
      X(i, 0) = 1;
      X(i, 1) = 5 + std::sqrt(0.5) * normal(g);
      y[i] = 1 + 2 * X(i, 1) + normal(g);
    }
    clbayes::models::lm_evaluator model(X, y);
    const Eigen::MatrixXd cov = model.precision().inverse();
    std::printf("Example 1: n = %d, posterior correlation %.6f, %d chains x %d draws "
                "(+ %d warmup), K = %d\n\n", n_obs,
                cov(0, 1) / std::sqrt(cov(0, 0) * cov(1, 1)), chains, n_iter,
                n_iter / 2, K);

    // Check: the evaluator against -0.5 ||y - X b||^2 (equal up to a constant).
    Eigen::MatrixXd pts(64, 2);
    for (int i = 0; i < 64; ++i)
      for (int j = 0; j < 2; ++j)
        pts(i, j) = model.mean()[j] + 3 * std::sqrt(cov(j, j)) * normal(g);
    Eigen::VectorXd lp;
    model(pts, lp);
    double err = 0, c0 = 0;
    for (int i = 0; i < 64; ++i) {
      const double direct = -0.5 * (y - X * pts.row(i).transpose()).squaredNorm();
      if (i == 0) c0 = direct - lp[0];
      err = std::max(err, std::fabs(direct - lp[i] - c0));
    }
    std::printf("evaluator vs residual form: max abs error %.3g\n\n", err);
    if (err > 1e-6) { std::printf("FAILED\n"); return 1; }

    struct config {
      const char* name; cs::method m; cs::stepout so; cm::metric me; double w0, w1;
    };
    const config configs[] = {
        {"hyperrect, dense metric", cs::method::hyperrect, cs::stepout::warmup, cm::metric::dense, 0.1, 0.02},
        {"hyperrect, diagonal (widths only)", cs::method::hyperrect, cs::stepout::warmup, cm::metric::diagonal, 0.1, 0.02},
        {"hyperrect, stepout never", cs::method::hyperrect, cs::stepout::never, cm::metric::dense, 0.074, 0.015},
        {"hyperrect, stepout always (paper, approx.)", cs::method::hyperrect, cs::stepout::always, cm::metric::dense, 0.074, 0.015},
        {"univariate, dense metric", cs::method::univariate, cs::stepout::warmup, cm::metric::dense, 0.1, 0.02},
        {"univariate, diagonal (widths only)", cs::method::univariate, cs::stepout::warmup, cm::metric::diagonal, 0.1, 0.02}};
    std::printf("| sampler | ESS alpha | ESS beta | ES/sec (min) | densities/iter | "
                "median s | mean err (sd) | sd(alpha) ratio |\n");
    std::printf("|---|---|---|---|---|---|---|---|\n");
    for (const config& c : configs) {
      cm::options opt = bench::chain_options(c.me, n_iter / 2, n_iter, 1, 0);
      opt.warmup_rhat = 1.05;
      cs::transition::settings set;
      set.method = c.m;
      set.stepout = c.so;
      set.n_proposals = c.m == cs::method::univariate ? 1 : K;  // Neal's sequential univariate procedure
      set.max_steps = 100;
      set.width = Eigen::Vector2d(c.w0, c.w1);
      set.width_on_u = false;
      cm::options warm = opt;  // warm-up run (caches, page faults)
      warm.n_iter = std::max(10, n_iter / 20);
      warm.warmup = warm.n_iter / 2;
      run_once(model, warm, set, chains);
      std::vector<result> rs;
      for (int r = 0; r < reps; ++r) {
        opt.seed = 1000 + r;
        rs.push_back(run_once(model, opt, set, chains));
      }
      std::sort(rs.begin(), rs.end(),
                [](const result& a, const result& b) { return a.seconds < b.seconds; });
      const result& med = rs[rs.size() / 2];
      std::printf("| %s | %.0f | %.0f | %.0f | %.1f | %.3f | %.3f | %.3f |\n", c.name,
                  med.ess_alpha, med.ess_beta,
                  std::min(med.ess_alpha, med.ess_beta) / med.seconds,
                  med.evals_per_iter, med.seconds, med.mean_err, med.sd_ratio_alpha);
    }
    std::printf("\nES/sec uses the whole run (warmup included); mean err is the "
                "largest |mean - exact| in posterior sds; sd ratio is sd(alpha) / exact.\n");
    return 0;
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 1;
  }
}
