// What a GP gradient costs against a GP density (models/gp_model.hpp on the
// CPU path), per point of a batch, with the evaluator kept between calls as
// a sampler keeps it; and the inverse of Sigma from its Cholesky factor
// that the gradient needs, by linalg::cholesky_inverse_in_place (recursive
// dtrtri + dlauum) against Eigen's two triangular solves on the identity.
// Data: bench::simulate_gp (Example 2), points scattered around the truth.
// Before timing, the gradient is checked against central differences of
// the values and the inverse against Eigen's.
//
//   make -C bench bench_gp_gradient
//   ./bench_gp_gradient [--points 16] [--seconds 1] [n ...]   (default n: 60 200 500)
//
// Threads: OpenMP's (OMP_NUM_THREADS), as in the package.

#include "bench_mcmc.hpp"

#include <clbayes/linalg/cholesky_inverse_cpu.hpp>
#include <clbayes/models/gp_model.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace cb = clbayes::batched;
namespace cm = clbayes::mcmc;

namespace {

using clock_type = std::chrono::steady_clock;

// Seconds per call of f, repeated for about `budget` seconds (at least 3).
template <typename F>
double seconds_per_call(F f, double budget) {
  f();  // warm: scratch mapped, caches filled
  int reps = 0;
  const auto t0 = clock_type::now();
  double elapsed = 0;
  while (reps < 3 || elapsed < budget) {
    f();
    ++reps;
    elapsed = std::chrono::duration<double>(clock_type::now() - t0).count();
  }
  return elapsed / reps;
}

}  // namespace

int main(int argc, char** argv) {
  int points = 16;
  double budget = 1.0;
  std::vector<int> sizes;
  for (int a = 1; a < argc; ++a) {
    const std::string s = argv[a];
    if (s == "--points" && a + 1 < argc) points = std::atoi(argv[++a]);
    else if (s == "--seconds" && a + 1 < argc) budget = std::atof(argv[++a]);
    else sizes.push_back(std::atoi(s.c_str()));
  }
  if (sizes.empty()) sizes = {60, 200, 500};
  try {
    std::printf("# GP density and gradient on the CPU, %d points a call\n\n", points);
    std::printf("| n | ms per density | ms per gradient | gradient / density | gradient check "
                "| Sigma^-1: recursive ms | Sigma^-1: Eigen solve ms | inverse check |\n");
    std::printf("|---|---|---|---|---|---|---|---|\n");
    for (int n : sizes) {
      const bench::gp_data d = bench::simulate_gp(n, 2010 + n);
      cb::gp_loglik lik(d.y.data(), d.X.data(), n, 2, d.coords.data(), 2);
      clbayes::models::gp_evaluator f(lik, {1.0, -0.5}, cb::covariance::exponential,
                                      clbayes::models::gp_prior(), false);
      cm::rng g(7, 0);
      Eigen::MatrixXd pts(points, 3);
      for (int r = 0; r < points; ++r)
        pts.row(r) << 1.0 + 0.2 * g.uniform(), 1.0 + 0.2 * g.uniform(), 0.2 + 0.05 * g.uniform();
      const double check = bench::gradient_error(f, pts.topRows(std::min(points, 4)));
      Eigen::VectorXd v;
      Eigen::MatrixXd gr;
      const double t_value = seconds_per_call([&] { f(pts, v); }, budget) / points;
      const double t_grad = seconds_per_call([&] { f.gradient(pts, v, gr); }, budget) / points;

      // One Sigma at the truth, factored once; each timing copies the factor.
      Eigen::MatrixXd S = Eigen::MatrixXd::Zero(n, n);
      lik.build_covariance(1.0, 1.0, 0.2, cb::covariance::exponential, S);
      double half_log_det = 0;
      lik.factor(S, 1.0, 1.0, half_log_det);
      Eigen::MatrixXd work(n, n);
      const double t_rec = seconds_per_call([&] {
        work = S;
        clbayes::linalg::cholesky_inverse_in_place(work);
      }, budget);
      Eigen::MatrixXd ref(n, n);
      const double t_eigen = seconds_per_call([&] {
        ref.setIdentity();
        S.triangularView<Eigen::Lower>().solveInPlace(ref);
        S.triangularView<Eigen::Lower>().transpose().solveInPlace(ref);
      }, budget);
      const Eigen::MatrixXd diff = (work - ref).triangularView<Eigen::Lower>();
      const double inv_err = diff.cwiseAbs().maxCoeff() / ref.cwiseAbs().maxCoeff();
      std::printf("| %d | %.3f | %.3f | %.2f | %.1e | %.2f | %.2f | %.1e |\n", n,
                  1e3 * t_value, 1e3 * t_grad, t_grad / t_value, check, 1e3 * t_rec,
                  1e3 * t_eigen, inv_err);
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 1;
  }
  return 0;
}
