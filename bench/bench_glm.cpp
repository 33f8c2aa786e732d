// Benchmark of glm_lp (value + gradient) on the device and the CPU path.
//
// Build (from bench; .bench-deps holds Eigen/ and CL/opencl.hpp):
//   g++ -std=c++17 -O3 -march=native -DCLBAYES_OPENCL -I../inst/include -I ../.bench-deps bench_glm.cpp -lOpenCL -o bench_glm
// Run:
//   ./bench_glm                       the sizes (needs ~4 GB on host and device)
//   ./bench_glm --reps 5 20000x50     small sizes for PoCL; any number of NxK
//   ./bench_glm --family poisson_log 100000x100
// Two device kernels are timed side by side: "tiled" (kernels/glm_lp_tiled.hpp,
// the default) and "rowblock" (kernels/glm_lp.hpp, the previous one).
// Knobs of the tiled kernel (glm::glm_tiled_launch): --tile-group G
// --tile-rows R --tile-gpc U --tile-max-lpi L --tile-max-regs M (NVIDIA's
// register cap, 0: none). Of the row-block kernel
// (glm::glm_launch): --rows R --chunk C --max-group G --groups-per-cu U
// --max-chunk M; of both: --reduce-group W.
//   ./bench_glm --points 1,8,64,256,1024 [--n N] [--k K] [--variants V,...]
//                                    P points per call (glm_lp_batch, the
//                                    sampler's batch): bernoulli_logit (or
//                                    --family) at N x K (default 10^6 x 100),
//                                    each variant checked against the CPU path
//                                    on the first min(N, 20000) rows, then
//                                    timed; see points_variants() for variants
//   ./bench_glm --tune               first sweeps the tiled knobs on
//                                    bernoulli_logit 10^6 x 100 (or the first
//                                    NxK given), then runs the cases with the
//                                    fastest setting
//
// For each case: the device and CPU results are compared first (max relative
// error over value and gradient), then each is timed: one warm-up, then the
// median of --reps runs. "resident" is one call with x and y already on the
// device (parameters up, partial sums down, as in an MCMC step); "+ upload"
// adds copying x and y to the device. GB/s counts the bytes of x read once.

#include "cli.hpp"

#include <clbayes/glm/glm_batch.hpp>
#include <clbayes/glm/glm_lp.hpp>
#include <clbayes/opencl.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

using clbayes::glm::family;
namespace glm = clbayes::glm;

namespace {

struct problem {
  family fam;
  int n, k;
  std::vector<double> x, y, alpha, beta, extra;
  int n_eta = 1;
  glm::glm_params params() const {
    glm::glm_params p;
    p.fam = fam;
    p.alpha = alpha.data();
    p.n_alpha = static_cast<int>(alpha.size());
    p.beta = beta.data();
    p.n_eta = n_eta;
    p.extra = extra.data();
    p.n_extra = static_cast<int>(extra.size());
    return p;
  }
};

// Data simulated from the model, x standard normal (stan-opencl.txt 4.1).
problem make_problem(family fam, int n, int k, unsigned seed) {
  problem pr;
  pr.fam = fam;
  pr.n = n;
  pr.k = k;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> norm;
  std::uniform_real_distribution<double> unif;
  pr.x.resize(static_cast<std::size_t>(n) * k);
  for (double& v : pr.x) v = norm(rng);
  const double scale = 0.5 / std::sqrt(static_cast<double>(std::max(k, 1)));
  pr.n_eta = fam == family::categorical_logit ? 3 : 1;
  pr.beta.resize(static_cast<std::size_t>(k) * pr.n_eta);
  for (double& v : pr.beta) v = scale * norm(rng);
  if (fam == family::categorical_logit) pr.alpha = {0.2, -0.1, 0.3};
  else if (fam != family::ordered_logistic) pr.alpha = {0.3};
  if (fam == family::normal_id) pr.extra = {1.3};
  if (fam == family::neg_binomial_2_log) pr.extra = {2.5};
  if (fam == family::ordered_logistic) pr.extra = {-1.2, -0.1, 0.6, 1.8};
  pr.y.resize(n);
  std::vector<double> eta(pr.n_eta);
  for (int i = 0; i < n; ++i) {
    for (int e = 0; e < pr.n_eta; ++e) {
      double s = pr.alpha.empty() ? 0.0 : pr.alpha[std::min<std::size_t>(e, pr.alpha.size() - 1)];
      for (int j = 0; j < k; ++j)
        s += pr.x[static_cast<std::size_t>(j) * n + i] * pr.beta[static_cast<std::size_t>(e) * k + j];
      eta[e] = s;
    }
    switch (fam) {
      case family::normal_id: pr.y[i] = eta[0] + 1.3 * norm(rng); break;
      case family::bernoulli_logit: pr.y[i] = unif(rng) < 1 / (1 + std::exp(-eta[0])); break;
      case family::poisson_log:
        pr.y[i] = std::poisson_distribution<int>(std::exp(eta[0]))(rng);
        break;
      case family::neg_binomial_2_log: {
        std::gamma_distribution<double> g(2.5, std::exp(eta[0]) / 2.5);
        pr.y[i] = std::poisson_distribution<int>(g(rng))(rng);
        break;
      }
      case family::categorical_logit: {
        double m = *std::max_element(eta.begin(), eta.end()), s = 0;
        for (double& v : eta) s += (v = std::exp(v - m));
        double u = unif(rng) * s;
        int c = 0;
        while (c < pr.n_eta - 1 && (u -= eta[c]) > 0) ++c;
        pr.y[i] = c + 1;
        break;
      }
      case family::ordered_logistic: {
        int c = 1;
        for (double cut : pr.extra) c += unif(rng) > 1 / (1 + std::exp(-(cut - eta[0])));
        pr.y[i] = c;
        break;
      }
    }
  }
  return pr;
}

double median_ms(int reps, const std::function<void()>& f) {
  f();  // warm-up (and kernel build)
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    auto t1 = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

double max_rel_error(const glm::glm_result& a, const glm::glm_result& b) {
  auto rel = [](double u, double v) { return std::fabs(u - v) / std::max(1.0, std::fabs(v)); };
  double e = rel(a.value, b.value);
  auto vec = [&](const std::vector<double>& u, const std::vector<double>& v) {
    double scale = 1;
    for (double w : v) scale = std::max(scale, std::fabs(w));
    for (std::size_t i = 0; i < u.size(); ++i) e = std::max(e, std::fabs(u[i] - v[i]) / scale);
  };
  vec(a.d_alpha, b.d_alpha);
  vec(a.d_beta, b.d_beta);
  vec(a.d_extra, b.d_extra);
  return e;
}

const char* family_name(family f) {
  static const char* names[] = {"normal_id", "bernoulli_logit", "poisson_log",
                                "neg_binomial_2_log", "categorical_logit", "ordered_logistic"};
  return names[static_cast<int>(f)];
}

// One tiled setting of the sweep: its knobs, the tile it got, its timing.
struct sweep_point {
  glm::glm_tiled_launch t;
  int rows = 0, lpi = 0;
  double err = 0, ms = 0;
};

// Time the tiled kernel over a grid of knobs on one problem (data resident,
// value + gradient); every point is checked against the CPU result first.
// Returns the fastest setting.
glm::glm_launch sweep_tiled(const problem& pr, const glm::glm_result& cpu,
                            glm::glm_launch base, int reps) {
  const glm::glm_params p = pr.params();
  glm::glm_data_cl data = glm::to_glm_data_cl(pr.x.data(), pr.y.data(), pr.n, pr.k);
  const auto& info = clbayes::opencl::context::instance().info();
  const int n_cuts = pr.fam == family::ordered_logistic ? static_cast<int>(pr.extra.size()) : 0;
  const double gb = 8.0 * pr.n * pr.k / 1e9;
  std::printf("## Tiled kernel sweep: %s, n = %d, k = %d (lp + gradient, data resident)\n\n",
              family_name(pr.fam), pr.n, pr.k);
  std::printf("| group | rows (max) | rows (used) | LPI | groups/CU | max rel err | ms | GB/s |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  std::vector<sweep_point> pts;
  for (int g : {64, 128, 256})
    for (int rows : {8, 16, 32, 64})
      for (int gpc : {4, 8, 16}) {
        if (rows > g) continue;
        sweep_point sp;
        sp.t = base.tiled;
        sp.t.group = g;
        sp.t.rows = rows;
        sp.t.groups_per_cu = gpc;
        auto sh = glm::internal::tiled_shape_for(g, rows, pr.k, pr.n_eta, n_cuts, info.local_mem,
                                                 sp.t.max_lpi);
        if (sh.rows != rows) continue;  // the same as a smaller rows setting
        sp.rows = sh.rows;
        sp.lpi = sh.lpi;
        glm::glm_launch tune = base;
        tune.kernel = glm::glm_kernel::tiled;
        tune.tiled = sp.t;
        try {
          sp.err = max_rel_error(glm::glm_lp_opencl(data, p, true, false, tune), cpu);
          sp.ms = median_ms(reps, [&] { glm::glm_lp_opencl(data, p, true, false, tune); });
        } catch (const std::exception& e) {
          std::printf("| %d | %d | - | - | %d | failed: %s | | |\n", g, rows, gpc, e.what());
          continue;
        }
        std::printf("| %d | %d | %d | %d | %d | %.1e | %.3f | %.1f |\n", g, rows, sp.rows,
                    sp.lpi, gpc, sp.err, sp.ms, gb / (sp.ms / 1e3));
        std::fflush(stdout);
        if (sp.err <= 1e-10) pts.push_back(sp);
      }
  if (pts.empty()) {
    std::printf("\nno tiled setting agreed with the CPU path; keeping the defaults\n\n");
    return base;
  }
  auto best = *std::min_element(pts.begin(), pts.end(), [](const sweep_point& a,
                                                           const sweep_point& b) {
    return a.ms < b.ms;
  });
  std::printf("\nfastest: --tile-group %d --tile-rows %d --tile-gpc %d (%.3f ms, %.1f GB/s)\n\n",
              best.t.group, best.t.rows, best.t.groups_per_cu, best.ms, gb / (best.ms / 1e3));
  base.tiled = best.t;
  return base;
}


// ---- P points per call (glm_lp_batch) ----

struct points_problem {
  problem base;  // x, y and the first point
  int P = 0;
  std::vector<double> alpha, beta, extra;  // P, k x P, P (or none)
  glm::glm_batch_params params() const {
    glm::glm_batch_params p;
    p.fam = base.fam;
    p.n_points = P;
    p.alpha = alpha.data();
    p.beta = beta.data();
    p.extra = extra.empty() ? nullptr : extra.data();
    return p;
  }
};

// The data of make_problem; the P points scattered around its parameters,
// as chains around a posterior mode.
points_problem make_points(family fam, int n, int k, int P, unsigned seed) {
  points_problem pp;
  pp.base = make_problem(fam, n, k, seed);
  pp.P = P;
  std::mt19937_64 rng(seed + 1);
  std::normal_distribution<double> norm;
  const double s = 0.05 / std::sqrt(static_cast<double>(std::max(k, 1)));
  for (int j = 0; j < P; ++j) {
    pp.alpha.push_back(pp.base.alpha[0] + 0.05 * norm(rng));
    for (int i = 0; i < k; ++i) pp.beta.push_back(pp.base.beta[i] + s * norm(rng));
    if (!pp.base.extra.empty()) pp.extra.push_back(pp.base.extra[0] * std::exp(0.05 * norm(rng)));
  }
  return pp;
}

double max_rel_error(const glm::glm_batch_result& a, const glm::glm_batch_result& b) {
  auto worst = [](const Eigen::MatrixXd& u, const Eigen::MatrixXd& v) {
    if (v.size() == 0) return 0.0;
    return (u - v).cwiseAbs().maxCoeff() / std::max(1.0, v.cwiseAbs().maxCoeff());
  };
  double e = worst(a.value, b.value);
  e = std::max(e, worst(a.d_alpha, b.d_alpha));
  e = std::max(e, worst(a.d_beta, b.d_beta));
  return std::max(e, worst(a.d_extra, b.d_extra));
}

// One way to evaluate P points on the device: the batched path with
// settings that force one of its paths.
struct points_variant {
  std::string name;
  glm::glm_batch_settings settings;
};

// Variants by name: "batch" (the default settings: the path they choose
// for P), "single" (one single-point kernel call per point), "fused"
// (glm_batch_fused, tiles of 32 rows x 8 points and of 16 x 16), "mma"
// (glm_batch_mma: on a device without FP64 tensor cores its emulation, for
// checking only; with 1, 2, 4 and 8 warps per group, as P fills them), "gemm"
// (the GEMMs and the row kernel in one pass), "all".
std::vector<points_variant> points_variants(const std::vector<std::string>& names, int P,
                                            const glm::glm_batch_settings& base) {
  std::vector<points_variant> v;
  auto want = [&](const char* n) {
    for (const std::string& s : names)
      if (s == n || s == "all") return true;
    return false;
  };
  if (want("batch")) v.push_back({"batch", base});
  if (P == 1) return v;  // one point always takes the single-point kernel
  if (want("single")) {
    points_variant g{"single-point calls", base};
    g.settings.single_calls_max = P;
    g.settings.mma_max_k = 0;
    v.push_back(g);
  }
  if (want("fused"))
    for (glm::glm_fused_tile t : {glm::glm_fused_tile{32, 8}, glm::glm_fused_tile{16, 16}}) {
      points_variant g{"fused, tiles " + std::to_string(t.rows) + " rows x " +
                           std::to_string(t.points) + " points",
                       base};
      g.settings.single_calls_max = 0;
      g.settings.fused_max = P;
      g.settings.mma_max_k = 0;
      g.settings.fused_small = g.settings.fused_large = t;
      v.push_back(g);
    }
  if (want("mma"))
    for (int warps : {1, 2, 4, 8}) {
      if (warps > 1 && 8 * (warps / 2) >= P) break;  // more warps than points
      points_variant g{"mma, " + std::to_string(warps) + " warps" +
                           (base.tensor_cores ? "" : " (emulated)"),
                       base};
      g.settings.mma_from = 2;
      g.settings.mma_max_k = std::max(g.settings.mma_max_k, 128);
      g.settings.mma_neg_binomial = true;
      g.settings.mma_warps = warps;
      v.push_back(g);
    }
  if (want("gemm")) {
    points_variant g{"gemm", base};
    g.settings.single_calls_max = 0;
    g.settings.fused_max = 0;
    g.settings.mma_max_k = 0;
    v.push_back(g);
  }
  return v;
}

glm::glm_batch_result run_variant(const points_variant& v, const glm::glm_data_cl& data,
                                  const points_problem& pp, bool gradient) {
  return glm::glm_lp_batch_opencl(data, pp.params(), gradient, false, v.settings);
}

// The sweep over P: every variant checked on the first rows, then timed
// at full size (data resident, value + gradient and value alone).
// Knobs of the batched path given on the command line (0: the device's).
struct batch_knobs {
  int group = 0, groups_per_cu = 0, mma_warps_per_cu = 0;
};

int points_main(const std::vector<int>& points, family fam, int n, int k, int reps,
                const std::vector<std::string>& variants, const batch_knobs& knobs) {
  auto& ctx = clbayes::opencl::context::instance();
  if (!ctx.selected()) {
    std::fprintf(stderr, "--points needs an OpenCL device\n");
    return 1;
  }
  glm::glm_batch_settings base = glm::tuned_batch_settings();
  if (knobs.group > 0) base.group = knobs.group;
  if (knobs.groups_per_cu > 0) base.groups_per_cu = knobs.groups_per_cu;
  if (knobs.mma_warps_per_cu > 0) base.mma_warps_per_cu = knobs.mma_warps_per_cu;
  const int n_check = std::min(n, 20000);
  std::printf("device: %s\n", ctx.info().name.c_str());
  std::printf("%s, n = %d, k = %d, data resident; median of %d runs; check on the first %d "
              "rows against the CPU path; GB/s counts one read of x, TFLOP/s 4 n k P "
              "(X B and X' D)\n\n",
              family_name(fam), n, k, reps, n_check);
  std::printf("| P | variant | max rel err | lp+grad ms | GB/s | TFLOP/s | lp ms | "
              "ms per point |\n|---:|---|---:|---:|---:|---:|---:|---:|\n");
  for (int P : points) {
    const points_problem small = make_points(fam, n_check, k, P, 42);
    const glm::glm_batch_result cpu =
        glm::glm_lp_batch_cpu(small.base.x.data(), small.base.y.data(), n_check, k,
                              small.params(), true, false);
    glm::glm_data_cl small_data =
        glm::to_glm_data_cl(small.base.x.data(), small.base.y.data(), n_check, k);
    const points_problem big = n == n_check ? points_problem() : make_points(fam, n, k, P, 42);
    const points_problem& pp = n == n_check ? small : big;
    glm::glm_data_cl data = glm::to_glm_data_cl(pp.base.x.data(), pp.base.y.data(), n, k);
    for (const points_variant& v : points_variants(variants, P, base)) {
      double err = NAN, t = NAN, tv = NAN;
      try {
        err = max_rel_error(run_variant(v, small_data, small, true), cpu);
        t = median_ms(reps, [&] { run_variant(v, data, pp, true); });
        tv = median_ms(reps, [&] { run_variant(v, data, pp, false); });
      } catch (const std::exception& e) {
        std::printf("| %d | %s | failed: %s | | | | | |\n", P, v.name.c_str(), e.what());
        continue;
      }
      const double gb = 8.0 * n * k / 1e9, tf = 4.0 * n * k * P / 1e12;
      std::printf("| %d | %s | %.1e | %.3f | %.1f | %.3g | %.3f | %.4f |\n", P, v.name.c_str(),
                  err, t, gb / (t / 1e3), tf / (t / 1e3), tv, t / P);
      std::fflush(stdout);
      if (!(err <= 1e-10)) std::printf("WARNING: device and CPU differ by %.2e\n", err);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 9;
  bool tune_run = false;
  std::string only;
  glm::glm_launch tune = glm::tuned_launch(clbayes::opencl::context::instance().info());
  std::vector<std::pair<int, int>> sizes;
  std::vector<int> points;
  std::vector<std::string> variants = {"batch"};
  batch_knobs batch_tune;
  int points_n = 1000000, points_k = 100;
  auto split_list = [](const std::string& s) {
    std::vector<std::string> out;
    std::size_t at = 0;
    while (at <= s.size()) {
      const std::size_t comma = std::min(s.find(',', at), s.size());
      out.push_back(s.substr(at, comma - at));
      at = comma + 1;
    }
    return out;
  };
  for (int a = 1; a < argc; ++a) {
    std::string s = argv[a];
    auto next = [&] { return option_value(a, argc, argv); };
    if (s == "--reps") reps = std::atoi(next());
    else if (s == "--tune") tune_run = true;
    else if (s == "--points") {
      for (const std::string& v : split_list(next())) points.push_back(std::atoi(v.c_str()));
    }
    else if (s == "--variants") variants = split_list(next());
    else if (s == "--n") points_n = std::atoi(next());
    else if (s == "--k") points_k = std::atoi(next());
    else if (s == "--batch-group") batch_tune.group = std::atoi(next());
    else if (s == "--batch-gpc") batch_tune.groups_per_cu = std::atoi(next());
    else if (s == "--mma-wpc") batch_tune.mma_warps_per_cu = std::atoi(next());
    else if (s == "--family") only = next();
    else if (s == "--rows") tune.rows = std::atoi(next());
    else if (s == "--chunk") tune.chunk = std::atoi(next());
    else if (s == "--max-group") tune.max_group = std::atoi(next());
    else if (s == "--groups-per-cu") tune.groups_per_cu = std::atoi(next());
    else if (s == "--reduce-group") tune.reduce_group = std::atoi(next());
    else if (s == "--max-chunk") tune.max_chunk = std::atoi(next());
    else if (s == "--tile-group") tune.tiled.group = std::atoi(next());
    else if (s == "--tile-rows") tune.tiled.rows = std::atoi(next());
    else if (s == "--tile-gpc") tune.tiled.groups_per_cu = std::atoi(next());
    else if (s == "--tile-max-lpi") tune.tiled.max_lpi = std::atoi(next());
    else if (s == "--tile-max-regs") tune.tiled.max_registers = std::atoi(next());
    else {
      int n = 0, k = 0;
      if (std::sscanf(s.c_str(), "%dx%d", &n, &k) != 2 || n < 1 || k < 1) {
        std::fprintf(stderr, "usage: %s [--points P,... [--n N] [--k K] [--variants "
                             "batch,single,fused,mma,gemm|all] [--batch-group G] [--batch-gpc U] [--mma-wpc W]]\n", argv[0]);
        std::fprintf(stderr, "usage: %s [--tune] [--reps R] [--family F] [--tile-group G] "
                             "[--tile-rows R] [--tile-gpc U] [--tile-max-lpi L] [--tile-max-regs M] [--rows R] "
                             "[--chunk C] [--max-group G] [--groups-per-cu U] [--reduce-group W] "
                             "[--max-chunk M] [NxK ...]\n", argv[0]);
        return 2;
      }
      sizes.push_back({n, k});
    }
  }
  if (reps < 1) reps = 1;
  if (!points.empty()) {
    try {
      for (int P : points)
        if (P < 1 || points_n < 1 || points_k < 1) {
          std::fprintf(stderr, "--points, --n and --k must be positive\n");
          return 2;
        }
      return points_main(points, only.empty() ? family::bernoulli_logit : glm::parse_family(only),
                         points_n, points_k, reps, variants, batch_tune);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: %s\n", e.what());
      return 1;
    }
  }
  std::vector<std::pair<family, std::pair<int, int>>> cases;
  const family all[] = {family::normal_id, family::bernoulli_logit, family::poisson_log,
                        family::neg_binomial_2_log, family::categorical_logit,
                        family::ordered_logistic};
  if (sizes.empty()) {
    for (auto nk : {std::make_pair(100000, 100), std::make_pair(1000000, 100),
                    std::make_pair(4000000, 50)})
      cases.push_back({family::bernoulli_logit, nk});
    for (family f : all)
      if (f != family::bernoulli_logit) cases.push_back({f, {1000000, 100}});
  } else {
    for (auto nk : sizes)
      for (family f : all) cases.push_back({f, nk});
  }
  if (!only.empty()) {
    family f = glm::parse_family(only);
    cases.erase(std::remove_if(cases.begin(), cases.end(),
                               [&](const auto& c) { return c.first != f; }),
                cases.end());
  }

  try {
    auto& ctx = clbayes::opencl::context::instance();
    const bool dev = ctx.selected();
    std::printf("device: %s\n", dev ? ctx.info().name.c_str() : "(none: CPU path only)");
    if (dev && tune_run) {
      const auto nk = sizes.empty() ? std::make_pair(1000000, 100) : sizes.front();
      const family f = only.empty() ? family::bernoulli_logit : glm::parse_family(only);
      problem pr = make_problem(f, nk.first, nk.second, 42);
      glm::glm_params p = pr.params();
      glm::glm_result cpu = glm::glm_lp_cpu(pr.x.data(), pr.y.data(), pr.n, pr.k, p, true, false);
      tune = sweep_tiled(pr, cpu, tune, reps);
    }
    glm::glm_launch old = tune;
    old.kernel = glm::glm_kernel::rowblock;
    std::printf("tiled knobs: group %d, rows %d, groups-per-cu %d, max-lpi %d, max-regs %d; "
                "rowblock knobs: rows %d, chunk %d, max-group %d, groups-per-cu %d; "
                "reduce-group %d; median of %d runs\n\n",
                tune.tiled.group, tune.tiled.rows, tune.tiled.groups_per_cu, tune.tiled.max_lpi,
                tune.tiled.max_registers,
                tune.rows, tune.chunk, tune.max_group, tune.groups_per_cu, tune.reduce_group,
                reps);
    std::printf("| family | n | k | err tiled | err rowblock | tiled lp+grad ms | GB/s | "
                "rowblock lp+grad ms | GB/s | rowblock / tiled | tiled lp ms | rowblock lp ms | "
                "+ upload ms | CPU lp+grad ms | CPU / tiled |\n");
    std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (const auto& c : cases) {
      const int n = c.second.first, k = c.second.second;
      problem pr = make_problem(c.first, n, k, 42);
      glm::glm_params p = pr.params();
      const double gb = 8.0 * n * k / 1e9;
      glm::glm_result cpu = glm::glm_lp_cpu(pr.x.data(), pr.y.data(), n, k, p, true, false);
      double t_cpu = median_ms(std::max(1, reps / 3), [&] {
        glm::glm_lp_cpu(pr.x.data(), pr.y.data(), n, k, p, true, false);
      });
      if (!dev) {
        std::printf("| %s | %d | %d | - | - | - | - | - | - | - | - | - | - | %.3f | - |\n",
                    family_name(c.first), n, k, t_cpu);
        std::fflush(stdout);
        continue;
      }
      glm::glm_data_cl data = glm::to_glm_data_cl(pr.x.data(), pr.y.data(), n, k);
      // Both kernels, checked against the CPU path before they are timed; a
      // tiled failure (a build log, say) is printed and the row-block kernel
      // still timed.
      double err = NAN, err_v = NAN, t_dev = NAN, t_val = NAN, t_up = NAN;
      try {
        err = max_rel_error(glm::glm_lp_opencl(data, p, true, false, tune), cpu);
        // the value-only call must agree with the value of the full call
        const double v_only = glm::glm_lp_opencl(data, p, false, false, tune).value;
        err_v = std::fabs(v_only - cpu.value) / std::max(1.0, std::fabs(cpu.value));
        t_dev = median_ms(reps, [&] { glm::glm_lp_opencl(data, p, true, false, tune); });
        t_val = median_ms(reps, [&] { glm::glm_lp_opencl(data, p, false, false, tune); });
        t_up = median_ms(std::max(1, reps / 3), [&] {
          glm::glm_data_cl d2 = glm::to_glm_data_cl(pr.x.data(), pr.y.data(), n, k);
          glm::glm_lp_opencl(d2, p, true, false, tune);
        });
      } catch (const std::exception& e) {
        std::printf("tiled kernel failed: %s\n", e.what());
      }
      const double err_old = max_rel_error(glm::glm_lp_opencl(data, p, true, false, old), cpu);
      double t_old = median_ms(reps, [&] { glm::glm_lp_opencl(data, p, true, false, old); });
      double t_val_old = median_ms(reps, [&] { glm::glm_lp_opencl(data, p, false, false, old); });
      std::printf("| %s | %d | %d | %.1e | %.1e | %.3f | %.1f | %.3f | %.1f | %.2f | %.3f | "
                  "%.3f | %.3f | %.3f | %.1f |\n",
                  family_name(c.first), n, k, std::max(err, err_v), err_old, t_dev,
                  gb / (t_dev / 1e3), t_old, gb / (t_old / 1e3), t_old / t_dev, t_val,
                  t_val_old, t_up, t_cpu, t_cpu / t_dev);
      std::fflush(stdout);
      if (!(std::max(err, err_v) <= 1e-10) || !(err_old <= 1e-10))
        std::printf("WARNING: device and CPU differ by %.2e (tiled) / %.2e (rowblock)\n",
                    std::max(err, err_v), err_old);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
