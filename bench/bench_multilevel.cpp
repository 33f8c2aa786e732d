// ChEES-HMC (hmc/sampler.hpp) on a multilevel logistic regression through
// the batched likelihood with group-level terms (glm/group_terms.hpp on the
// CPU, glm_batch_rows + glm_group_gradient on the device), as glm_model()
// builds it for y ~ x1 + ... + xk + (x1 | g) with rstanarm's default
// priors: the centred intercept normal(0, 2.5), coefficients normal(0, 2.5 /
// sd(x_j)), decov() on the 2 x 2 covariance (tau ~ gamma(1, 1), zeta ~
// gamma(1, 1), rho ~ beta(1, 1)), b = T z with z ~ N(0, 1).
//
// Data simulated with known truth: x standard normal (centred), groups
// uniform, intercept 0.5, coefficients N(0, 0.2), group sds 0.7
// (intercept) and 0.3 (slope) with correlation 0.3. Runs without R:
//
//   make -C bench bench_multilevel
//   ./bench_multilevel [--cpu | --device] [--n 1000000] [--k 20] [--groups 10000]
//                      [--chains 16] [--iter 1000] [--warmup 1000] [--seed 1]
//                      [--write-data DIR]
//
// --write-data writes the data (x.bin: n x k doubles column-major, y.bin: n
// doubles, g.bin: n int32 levels from 0) for anchors_numpyro_multilevel.py,
// which fits the same posterior with numpyro's NUTS. Prints the minimum bulk
// ESS (split chains, no rank normalisation) over the fixed effects, the
// group-level effects b and the covariance Sigma, wall times, min ES/s with
// warmup included, time per leapfrog step, and how far the fixed effects'
// posterior means lie from the truth.

#include "bench_mcmc.hpp"
#include "cli.hpp"

#include <clbayes/glm/glm_batch.hpp>
#include <clbayes/hmc/sampler.hpp>
#include <clbayes/models/glm_model.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace cg = clbayes::glm;
namespace ch = clbayes::hmc;
namespace cm = clbayes::mcmc;
namespace cmod = clbayes::models;

namespace {

struct args {
  bool device = false;
  int n = 1000000, k = 20, groups = 10000, chains = 16, iter = 1000, warmup = 1000;
  unsigned long seed = 1;
  std::string write_data;
};

args parse(int argc, char** argv) {
  args a;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    auto next = [&] { return option_value(i, argc, argv); };
    if (s == "--device") a.device = true;
    else if (s == "--cpu") a.device = false;
    else if (s == "--n") a.n = static_cast<int>(std::atof(next()));
    else if (s == "--k") a.k = std::atoi(next());
    else if (s == "--groups") a.groups = static_cast<int>(std::atof(next()));
    else if (s == "--chains") a.chains = std::atoi(next());
    else if (s == "--iter") a.iter = std::atoi(next());
    else if (s == "--warmup") a.warmup = std::atoi(next());
    else if (s == "--seed") a.seed = std::strtoul(next(), nullptr, 10);
    else if (s == "--write-data") a.write_data = next();
    else { std::fprintf(stderr, "unknown argument %s\n", s.c_str()); std::exit(2); }
  }
  return a;
}

struct data_set {
  std::vector<double> x, y, z;  // z: the term's columns (1, x1), n x 2
  std::vector<int> level;
  std::vector<double> truth;     // alpha, beta
};

data_set simulate(const args& a) {
  data_set d;
  cm::rng gen(4500 + a.seed, 0);
  const long long n = a.n;
  d.x.resize(n * a.k);
  for (double& v : d.x) v = bench::normal(gen);
  for (int j = 0; j < a.k; ++j) {  // centred, as glm_model() centres the predictors
    double m = 0;
    for (long long i = 0; i < n; ++i) m += d.x[j * n + i];
    m /= n;
    for (long long i = 0; i < n; ++i) d.x[j * n + i] -= m;
  }
  d.truth.push_back(0.5);
  for (int j = 0; j < a.k; ++j) d.truth.push_back(0.2 * bench::normal(gen));
  std::vector<double> u0(a.groups), u1(a.groups);
  for (int g = 0; g < a.groups; ++g) {
    const double e0 = bench::normal(gen), e1 = bench::normal(gen);
    u0[g] = 0.7 * e0;
    u1[g] = 0.3 * (0.3 * e0 + std::sqrt(1 - 0.09) * e1);
  }
  d.level.resize(n);
  d.y.resize(n);
  d.z.resize(2 * n);
  for (long long i = 0; i < n; ++i) {
    const int g = static_cast<int>(gen.uniform() * a.groups) % a.groups;
    d.level[i] = g;
    double eta = d.truth[0] + u0[g] + u1[g] * d.x[i];
    for (int j = 0; j < a.k; ++j) eta += d.truth[1 + j] * d.x[j * n + i];
    d.y[i] = gen.uniform() < 1 / (1 + std::exp(-eta)) ? 1.0 : 0.0;
    d.z[i] = 1.0;
    d.z[n + i] = d.x[i];
  }
  return d;
}

void write_data(const data_set& d, const args& a) {
  auto put = [&](const char* name, const void* p, std::size_t bytes) {
    const std::string path = a.write_data + "/" + name;
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr || std::fwrite(p, 1, bytes, f) != bytes) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      std::exit(1);
    }
    std::fclose(f);
  };
  put("x.bin", d.x.data(), sizeof(double) * d.x.size());
  put("y.bin", d.y.data(), sizeof(double) * d.y.size());
  put("g.bin", d.level.data(), sizeof(int) * d.level.size());
}

// The smallest ESS over the columns [from, to) of draws (rows: iteration
// fastest, then chain).
double min_ess(const Eigen::MatrixXd& draws, int from, int to, int iter, int chains) {
  double worst = std::numeric_limits<double>::infinity();
#ifdef _OPENMP
#pragma omp parallel for reduction(min : worst) schedule(dynamic, 64)
#endif
  for (int j = from; j < to; ++j) worst = std::min(worst, bench::ess(draws.col(j).data(), iter, chains));
  return worst;
}

void run(const args& a) {
  const auto s0 = std::chrono::steady_clock::now();
  const data_set d = simulate(a);
  if (!a.write_data.empty()) write_data(d, a);
  std::printf("simulated in %.1f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count());
  const int k = a.k, G = a.groups, q = 2 * G;
  const cg::glm_data data = cg::make_glm_data(d.x.data(), d.y.data(), a.n, k, a.device);
  cg::group_terms terms;
  terms.add(2, G, d.level.data(), d.z.data(), a.n, "formula");
  cmod::term_covariance cov;
  cov.p = 2;
  cmod::group_effects effects(terms, {cov});
  // priors in the order of a point: alpha, beta, z, tau, zeta (2), rho
  std::vector<cmod::scalar_prior> pr;
  std::vector<std::string> args;
  auto add = [&](cmod::prior_family f, double location, double scale, double shape,
                 double shape2, int times) {
    for (int i = 0; i < times; ++i) {
      cmod::scalar_prior p;
      p.fam = f;
      p.location = location;
      p.scale = scale;
      p.shape = shape;
      p.shape2 = shape2;
      pr.push_back(p);
      args.push_back("prior");
    }
  };
  add(cmod::prior_family::normal, 0, 2.5, 1, 1, 1);
  for (int j = 0; j < k; ++j) {
    double s2 = 0;
    for (int i = 0; i < a.n; ++i) s2 += d.x[static_cast<long long>(j) * a.n + i] *
                                        d.x[static_cast<long long>(j) * a.n + i];
    add(cmod::prior_family::normal, 0, 2.5 / std::sqrt(s2 / (a.n - 1)), 1, 1, 1);
  }
  add(cmod::prior_family::normal, 0, 1, 1, 1, q);
  add(cmod::prior_family::gamma, 0, 1, 1, 1, 1);
  add(cmod::prior_family::gamma, 0, 1, 1, 1, 2);
  add(cmod::prior_family::beta, 0, 1, 1, 1, 1);
  cmod::glm_evaluator f(data, cg::family::bernoulli_logit, 1, true,
                        cmod::prior_set(pr, args), a.device, effects);
  const int dim = f.dim();
  const double inf = std::numeric_limits<double>::infinity();
  Eigen::VectorXd lower = Eigen::VectorXd::Constant(dim, -inf), upper =
      Eigen::VectorXd::Constant(dim, inf);
  const int cov_at = 1 + k + q;
  lower.segment(cov_at, 4).setZero();
  upper[cov_at + 3] = 1;
  Eigen::MatrixXd init = Eigen::MatrixXd::Zero(a.chains, dim);
  for (int c = 0; c < a.chains; ++c) init.row(c).segment(cov_at, 4) << 0.5, 1, 1, 0.5;

  // The gradient against central differences in a few coordinates.
  {
    cm::rng gen(77, 0);
    Eigen::MatrixXd pt = init.topRows(1);
    for (int j = 0; j < cov_at; ++j) pt(0, j) = 0.1 * bench::normal(gen);
    pt.row(0).segment(cov_at, 4) << 0.8, 1.3, 0.7, 0.35;
    Eigen::VectorXd v, vp, vm;
    Eigen::MatrixXd g;
    f.gradient(pt, v, g);
    double worst = 0;
    for (int j : {0, 1, k, 1 + k, 2 + k, cov_at - 1, cov_at, cov_at + 1, cov_at + 2, cov_at + 3}) {
      const double h = 1e-5 * std::max(1.0, std::fabs(pt(0, j)));
      Eigen::MatrixXd p1 = pt, p2 = pt;
      p1(0, j) += h;
      p2(0, j) -= h;
      f(p1, vp);
      f(p2, vm);
      const double fd = (vp[0] - vm[0]) / (2 * h);
      worst = std::max(worst, std::fabs(g(0, j) - fd) / (1 + std::fabs(fd)));
    }
    std::printf("gradient check (10 coordinates): max relative error %.2e\n", worst);
  }

  {  // the cost of one batched value-and-gradient call for every chain
    Eigen::VectorXd v;
    Eigen::MatrixXd g;
    f.gradient(init, v, g);
    const auto c0 = std::chrono::steady_clock::now();
    for (int r = 0; r < 5; ++r) f.gradient(init, v, g);
    const double per = std::chrono::duration<double>(std::chrono::steady_clock::now() - c0)
                           .count() / 5;
    std::printf("one value-and-gradient call for %d chains: %.3f ms\n", a.chains, 1e3 * per);
  }

  const cm::options opt =
      bench::chain_options(cm::metric::diagonal, a.warmup, a.iter, a.seed, 0.1);
  ch::transition::settings set;
  set.adapt_delta = 0.75;
  set.max_leapfrog = 1000;
  const auto t0 = std::chrono::steady_clock::now();
  ch::sampler s(init, opt, set, cm::support(lower, upper));
  s.start(f);
  s.run(f, a.warmup);
  const auto t1 = std::chrono::steady_clock::now();
  s.run(f, a.iter);
  const auto t2 = std::chrono::steady_clock::now();
  const double warm = std::chrono::duration<double>(t1 - t0).count();
  const double total = std::chrono::duration<double>(t2 - t0).count();

  // The reported variables: alpha, beta, b and Sigma per draw.
  const long long n_draws = static_cast<long long>(a.iter) * a.chains;
  const std::vector<double>& raw = s.draws();  // iteration x chain x variable
  Eigen::MatrixXd pts(n_draws, dim);
  for (int j = 0; j < dim; ++j)
    for (long long r = 0; r < n_draws; ++r) pts(r, j) = raw[j * n_draws + r];
  const Eigen::MatrixXd gq = f.group_quantities(pts);  // b (q), Sigma (3)
  const double ess_fixed = min_ess(pts, 0, 1 + k, a.iter, a.chains);
  const double ess_b = min_ess(gq, 0, q, a.iter, a.chains);
  const double ess_sigma = min_ess(gq, q, q + 3, a.iter, a.chains);
  const double ess_all = std::min({ess_fixed, ess_b, ess_sigma});
  double max_z = 0;
  for (int j = 0; j <= k; ++j) {
    const double m = pts.col(j).mean();
    const double sd = std::sqrt((pts.col(j).array() - m).square().sum() / (n_draws - 1));
    max_z = std::max(max_z, std::fabs(m - d.truth[j]) / sd);
  }
  int div = 0;
  const ch::transition& t = s.transition();
  for (int c : t.n_divergent()) div += c;
  std::printf("| chains | min ESS (fixed / b / Sigma) | warmup s | total s | min ES/s (total) "
              "| ms per leapfrog | leapfrogs | step | accept | divergent | Sigma means "
              "| max |fixed mean - truth| / sd |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::printf("| %d | %.0f / %.0f / %.0f | %.1f | %.1f | %.1f | %.3f | %d | %.3f | %.3f | %d (+%d) "
              "| %.3f %.3f %.3f | %.2f |\n",
              a.chains, ess_fixed, ess_b, ess_sigma, warm, total, ess_all / total,
              1e3 * total / t.n_leapfrog(), static_cast<int>(t.n_leapfrog()), t.step_size(),
              t.accept_rate(), div, t.n_divergent_warmup(), gq.col(q).mean(),
              gq.col(q + 1).mean(), gq.col(q + 2).mean(), max_z);
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // lines as they come, also into a pipe
  const args a = parse(argc, argv);
  std::printf("# multilevel logistic: %d rows, %d fixed effects, (x1 | g) over %d groups, on the "
              "%s, %d chains, %d + %d iterations\n", a.n, a.k, a.groups,
              a.device ? "device" : "CPU", a.chains, a.warmup, a.iter);
  try {
    run(a);
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 1;
  }
  return 0;
}
