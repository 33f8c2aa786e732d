// The batched GLM likelihood's CPU path (glm/glm_batch_cpu.hpp) against P
// separate single-point calls (glm_lp, as gpu_glm_lp with one column of
// beta runs it): issue 15's dev target is P = 64 at 2e4 x 20, the batch at
// least 4x faster than the 64 calls. Built as the package builds its C++
// (-O2, OpenMP, no -march=native: see the Makefile), so the row math runs
// with the SIMD width R's build gives it.
//
//   ./bench_glm_cpu [--n N] [--k K] [--points P] [--reps R] [--threads T,...]
//                   [--family F] [--profile]
//
// Value + gradient (the gradient samplers' call; --value-only for the slice
// sampler's), each family with one linear predictor. Every batch is first
// checked against the separate calls (max relative difference over values
// and gradients), then the two are timed interleaved, fastest of --reps:
// on a shared machine the minimum is the least disturbed estimate. Wall
// time, and the process's CPU time: on one thread the CPU time is the work
// itself, hardly moved by other processes taking turns on the core.
// --profile adds where one batch's time goes on one thread: the products
// X_b B and X_b' D alone (Eigen, the batch's blocks of rows), and the row
// math alone (the batch with no predictors, k = 0).

#include "cli.hpp"

#include <clbayes/glm/glm_batch.hpp>
#include <clbayes/glm/glm_lp.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <random>
#include <string>
#include <vector>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace glm = clbayes::glm;
using glm::family;

namespace {

double now_ms() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double, std::milli>(clock::now().time_since_epoch()).count();
}

double cpu_ms() { return 1e3 * static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

// Data and P points as bench_glm.R makes them: x ~ N(0, 1), the points'
// beta ~ N(0, 0.5 / sqrt(k)), alpha ~ N(0.3, 0.05), sigma = phi = 1.3; y
// drawn from the first point.
struct problem {
  family fam;
  int n, k, P;
  std::vector<double> x, y, alpha, beta, extra;
};

problem make_problem(family fam, int n, int k, int P, unsigned seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> z(0, 1);
  problem pr{fam, n, k, P, {}, {}, {}, {}, {}};
  pr.x.resize(static_cast<std::size_t>(n) * k);
  for (double& v : pr.x) v = z(g);
  pr.beta.resize(static_cast<std::size_t>(k) * P);
  for (double& v : pr.beta) v = z(g) * 0.5 / std::sqrt(static_cast<double>(k));
  pr.alpha.resize(P);
  for (double& v : pr.alpha) v = 0.3 + 0.05 * z(g);
  const bool has_extra = fam == family::normal_id || fam == family::neg_binomial_2_log;
  if (has_extra) pr.extra.assign(P, 1.3);
  pr.y.resize(n);
  for (int i = 0; i < n; ++i) {
    double eta = pr.alpha[0];
    for (int j = 0; j < k; ++j) eta += pr.x[static_cast<std::size_t>(j) * n + i] * pr.beta[j];
    const double mu = std::exp(eta);
    switch (fam) {
      case family::normal_id: pr.y[i] = eta + 1.3 * z(g); break;
      case family::bernoulli_logit:
        pr.y[i] = std::uniform_real_distribution<double>(0, 1)(g) < 1 / (1 + std::exp(-eta));
        break;
      case family::poisson_log: pr.y[i] = std::poisson_distribution<int>(mu)(g); break;
      default: {  // gamma-Poisson mixture: mean mu, precision 1.3
        std::gamma_distribution<double> ga(1.3, mu / 1.3);
        pr.y[i] = std::poisson_distribution<int>(ga(g))(g);
      }
    }
  }
  return pr;
}

glm::glm_batch_params batch_params(const problem& pr) {
  glm::glm_batch_params p;
  p.fam = pr.fam;
  p.n_points = pr.P;
  p.alpha = pr.alpha.data();
  p.beta = pr.beta.data();
  p.extra = pr.extra.empty() ? nullptr : pr.extra.data();
  return p;
}

// The P points one glm_lp call each; the results as a batch result.
glm::glm_batch_result separate_calls(const glm::glm_data& d, const problem& pr, bool gradient) {
  glm::glm_batch_result res = glm::zero_batch_result(batch_params(pr), pr.k, gradient);
  for (int j = 0; j < pr.P; ++j) {
    glm::glm_params p;
    p.fam = pr.fam;
    p.alpha = &pr.alpha[j];
    p.n_alpha = 1;
    p.beta = &pr.beta[static_cast<std::size_t>(j) * pr.k];
    p.extra = pr.extra.empty() ? nullptr : &pr.extra[j];
    p.n_extra = pr.extra.empty() ? 0 : 1;
    const glm::glm_result r = glm::glm_lp(d, p, gradient, false, false);
    res.value[j] = r.value;
    if (!gradient) continue;
    res.d_alpha[j] = r.d_alpha[0];
    for (int i = 0; i < pr.k; ++i) res.d_beta(i, j) = r.d_beta[i];
    if (!pr.extra.empty()) res.d_extra[j] = r.d_extra[0];
  }
  return res;
}

double max_rel_diff(const glm::glm_batch_result& a, const glm::glm_batch_result& b) {
  double worst = 0;
  auto cmp = [&](const double* u, const double* v, Eigen::Index m) {
    for (Eigen::Index i = 0; i < m; ++i)
      worst = std::max(worst, std::fabs(u[i] - v[i]) / std::max(std::fabs(v[i]), 1e-300));
  };
  cmp(a.value.data(), b.value.data(), a.value.size());
  cmp(a.d_alpha.data(), b.d_alpha.data(), a.d_alpha.size());
  cmp(a.d_beta.data(), b.d_beta.data(), a.d_beta.size());
  cmp(a.d_extra.data(), b.d_extra.data(), a.d_extra.size());
  return worst;
}

// Fastest of `reps` runs of each function, interleaved: wall times, then
// CPU times.
std::vector<double> fastest(const std::vector<std::function<void()>>& fs, int reps) {
  const std::size_t m = fs.size();
  std::vector<double> best(2 * m, 1e300);
  for (const auto& f : fs) f();  // warm-up
  for (int r = 0; r < reps; ++r)
    for (std::size_t i = 0; i < m; ++i) {
      const double t0 = now_ms(), c0 = cpu_ms();
      fs[i]();
      best[m + i] = std::min(best[m + i], cpu_ms() - c0);
      best[i] = std::min(best[i], now_ms() - t0);
    }
  return best;
}

// One batch's time split: the two products alone over the batch's blocks
// of rows, and the row math alone (the batch of the same points without
// predictors).
void profile(const problem& pr, bool gradient, int reps) {
  const int n = pr.n, k = pr.k, P = pr.P;
  Eigen::Map<const Eigen::MatrixXd> X(pr.x.data(), n, k);
  Eigen::Map<const Eigen::MatrixXd> B(pr.beta.data(), k, P);
  const int rows = glm::cpu_batch_rows(k, P);
  Eigen::MatrixXd eta(rows, P), D = Eigen::MatrixXd::Constant(rows, P, 0.1);
  Eigen::MatrixXd dB = Eigen::MatrixXd::Zero(k, P);
  auto xb = [&] {
    for (int i0 = 0; i0 < n; i0 += rows) {
      const int m = std::min(rows, n - i0);
      eta.topRows(m).noalias() = X.middleRows(i0, m) * B;
    }
  };
  auto xtd = [&] {
    for (int i0 = 0; i0 < n; i0 += rows) {
      const int m = std::min(rows, n - i0);
      dB.noalias() += X.middleRows(i0, m).transpose() * D.topRows(m);
    }
  };
  const glm::glm_data none = glm::make_glm_data(pr.x.data(), pr.y.data(), n, 0, false);
  glm::glm_batch_params p0 = batch_params(pr);
  const std::vector<double> no_beta(1, 0.0);
  p0.beta = no_beta.data();
  auto row_math = [&] { glm::glm_lp_batch(none, p0, gradient, false, false); };
  const std::vector<double> t = fastest({xb, xtd, row_math}, reps);  // CPU times: t[3 ..]
  std::printf("| %s | %d | %.2f | %.2f | %.2f |\n", glm::info_of(pr.fam).name, rows, t[3],
              gradient ? t[4] : 0.0, t[5]);
}

std::vector<int> split_ints(const std::string& s) {
  std::vector<int> out;
  std::size_t a = 0;
  while (a <= s.size()) {
    const std::size_t b = std::min(s.find(',', a), s.size());
    out.push_back(std::atoi(s.substr(a, b - a).c_str()));
    a = b + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int n = 20000, k = 20, P = 64, reps = 7;
  bool gradient = true, do_profile = false;
  std::string only;
#ifdef _OPENMP
  std::vector<int> threads = {1, omp_get_max_threads()};
  if (threads[1] == 1) threads.pop_back();
#else
  std::vector<int> threads = {1};
#endif
  for (int a = 1; a < argc; ++a) {
    const std::string s = argv[a];
    auto next = [&] { return option_value(a, argc, argv); };
    if (s == "--n") n = std::atoi(next());
    else if (s == "--k") k = std::atoi(next());
    else if (s == "--points") P = std::atoi(next());
    else if (s == "--reps") reps = std::atoi(next());
    else if (s == "--threads") threads = split_ints(next());
    else if (s == "--family") only = next();
    else if (s == "--value-only") gradient = false;
    else if (s == "--profile") do_profile = true;
    else {
      std::fprintf(stderr, "usage: %s [--n N] [--k K] [--points P] [--reps R] [--threads T,...] "
                           "[--family F] [--value-only] [--profile]\n", argv[0]);
      return 2;
    }
  }
  if (n < 1 || k < 1 || P < 1 || reps < 1) {
    std::fprintf(stderr, "--n, --k, --points and --reps must be positive\n");
    return 2;
  }
  std::vector<family> fams;
  for (const glm::family_info& fi : glm::family_table)
    if (fi.scalar && (only.empty() || only == fi.name)) fams.push_back(fi.fam);
  if (fams.empty()) {
    std::fprintf(stderr, "--family must name a family with one linear predictor\n");
    return 2;
  }
  std::vector<problem> problems;
  for (family f : fams) problems.push_back(make_problem(f, n, k, P, 7));

  std::printf("P = %d points per call against %d glm_lp calls, n = %d, k = %d, %s; fastest of "
              "%d interleaved runs\n\n", P, P, n, k, gradient ? "value + gradient" : "value",
              reps);
  std::printf("| family | threads | batch ms | %d calls ms | calls / batch | batch CPU ms | "
              "calls CPU ms | calls / batch (CPU) | max rel diff |\n", P);
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int t : threads) {
#ifdef _OPENMP
    omp_set_num_threads(std::max(t, 1));
#endif
    for (const problem& pr : problems) {
      const glm::glm_data d = glm::make_glm_data(pr.x.data(), pr.y.data(), n, k, false);
      const glm::glm_batch_params p = batch_params(pr);
      const double diff = max_rel_diff(glm::glm_lp_batch(d, p, gradient, false, false),
                                       separate_calls(d, pr, gradient));
      const std::vector<double> tm =
          fastest({[&] { glm::glm_lp_batch(d, p, gradient, false, false); },
                   [&] { separate_calls(d, pr, gradient); }},
                  reps);
      std::printf("| %s | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.1e |\n",
                  glm::info_of(pr.fam).name, t, tm[0], tm[1], tm[1] / tm[0], tm[2], tm[3],
                  tm[3] / tm[2], diff);
    }
  }
  if (do_profile) {
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
    std::printf("\nOne thread: the batch's parts alone (CPU ms)\n\n");
    std::printf("| family | rows per block | X_b B | X_b' D | row math (k = 0) |\n");
    std::printf("|---|---:|---:|---:|---:|\n");
    for (const problem& pr : problems) profile(pr, gradient, reps);
  }
  return 0;
}
