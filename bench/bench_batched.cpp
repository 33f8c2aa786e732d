// Benchmark of the batched routines over the R-free core: batched Cholesky
// (factorisations per second) and the fused GP log-likelihood (evaluations
// per second). Every case is first checked against the CPU path and its max
// error printed; then timed after a warm-up as the median of --reps runs,
// device-resident (data already on the device, kernel + finish; for the
// Cholesky with R's contiguous layout and with the interleaved one) and with
// transfers (host in, host out).
//
// Build (from the package root):
//   g++ -std=c++17 -O3 -march=native -DCLBAYES_OPENCL -I inst/include
//       -I .bench-deps bench/bench_batched.cpp -o bench_batched -lOpenCL
// Run:
//   ./bench_batched --reps 3                         # the sizes (a GPU)
//   ./bench_batched --chol 1000x8,100x32 --gp 100x30 --reps 3   # small (PoCL)
// --chol takes BxM pairs, --gp NxROWS pairs; either may be "none".
// Tuning knobs to try on a new device: --team N (largest work group of the
// team kernels, default 256), --panel P (Cholesky panel width CHOL_PANEL,
// default 16), --serial-max M (largest m factored one matrix per work item,
// default 8), --blocked-min M / --gp-blocked-min N (switch points to the
// blocked multi-work-group Cholesky), --nb NB (its block width).
//
// Paths tables: every case is also run with the one-work-group-per-item
// path (team Cholesky / fused GP kernel) and with each blocked variant of
// --variants NB:ROWS:TILE:WPT,... (block width, rows per panel work group,
// trailing-update tile and register block), each checked against the CPU,
// so one GPU run picks the switch points and the defaults. --paths-chol and
// --paths-gp give their sizes ("none" skips).

#include <clbayes/batched/apply_op.hpp>
#include <clbayes/batched/chol_batched.hpp>
#include <clbayes/batched/gp_loglik.hpp>
#include <clbayes/opencl.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

using namespace clbayes;
using clock_type = std::chrono::steady_clock;

namespace {

std::vector<std::pair<int, int>> parse_pairs(const std::string& s) {
  std::vector<std::pair<int, int>> out;
  if (s == "none") return out;
  std::size_t start = 0;
  while (start < s.size()) {
    std::size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    const std::string item = s.substr(start, end - start);
    const std::size_t x = item.find('x');
    if (x == std::string::npos) throw std::runtime_error("bad size '" + item + "'");
    out.emplace_back(std::stoi(item.substr(0, x)), std::stoi(item.substr(x + 1)));
    start = end + 1;
  }
  return out;
}

template <typename F>
double median_ms(int reps, F run) {
  run();  // warm-up (also builds the kernels)
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) t.push_back(run());
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

// B SPD matrices, O(m^2) each: the KMS matrix rho^|i-j| (rho random in
// (0.1, 0.9)) plus a small random diagonal.
std::vector<double> spd_batch(int m, int B, std::mt19937& gen) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> a(static_cast<std::size_t>(m) * m * B);
  for (int b = 0; b < B; ++b) {
    const double rho = 0.1 + 0.8 * u(gen);
    double* x = a.data() + static_cast<std::size_t>(b) * m * m;
    for (int j = 0; j < m; ++j)
      for (int i = 0; i < m; ++i) x[i + j * m] = std::pow(rho, std::abs(i - j));
    for (int i = 0; i < m; ++i) x[i + i * m] += 0.1 * u(gen);
  }
  return a;
}

void bench_chol(int B, int m, int reps, const batched::batched_settings& s,
                std::mt19937& gen) {
  using namespace clbayes::batched;
  std::vector<double> a = spd_batch(m, B, gen);
  std::vector<double> dev(a), cpu(a);
  std::vector<int> info_d = chol_batched_device(dev.data(), m, B, s);
  const auto tc = clock_type::now();
  std::vector<int> info_c = chol_batched_cpu(cpu.data(), m, B);
  const double cpu_ms = ms_since(tc);
  double err = 0.0;
  for (std::size_t k = 0; k < a.size(); ++k) err = std::fmax(err, std::fabs(dev[k] - cpu[k]));
  int fails = 0;
  for (int b = 0; b < B; ++b) fails += (info_d[b] != 0) != (info_c[b] != 0);
  if (fails) err = NAN;

  opencl::matrix_cl pristine = opencl::to_matrix_cl(a.data(), m, m * B);
  opencl::matrix_cl work(m, m * B);
  opencl::matrix_cl info = int_buffer(B);
  cl::CommandQueue& q = opencl::context::instance().queue();
  const double resident = median_ms(reps, [&] {
    pristine.wait();
    work.wait();
    q.enqueueCopyBuffer(pristine.buffer(), work.buffer(), 0, 0, sizeof(double) * a.size());
    q.finish();
    const auto t0 = clock_type::now();
    chol_batched(work, m, B, contiguous(m, m), info, 0.0, s);
    q.finish();
    return ms_since(t0);
  });
  const double transfers = median_ms(reps, [&] {
    std::memcpy(dev.data(), a.data(), sizeof(double) * a.size());
    const auto t0 = clock_type::now();
    chol_batched_device(dev.data(), m, B, s);
    return ms_since(t0);
  });
  // The same batch in the interleaved layout (item index fastest).
  const long long mm = static_cast<long long>(m) * m;
  std::vector<double> il = internal::reorder(a.data(), mm, B, true);
  opencl::matrix_cl pristine_il = opencl::to_matrix_cl(il.data(), m, m * B);
  const batch_layout lay = interleaved(m, m, B);
  q.enqueueCopyBuffer(pristine_il.buffer(), work.buffer(), 0, 0, sizeof(double) * a.size());
  q.finish();
  chol_batched(work, m, B, lay, info, 0.0, s);
  opencl::from_matrix_cl(work, il.data());
  std::vector<double> back = internal::reorder(il.data(), mm, B, false);
  for (std::size_t k = 0; k < a.size(); ++k) err = std::fmax(err, std::fabs(back[k] - cpu[k]));
  const double resident_il = median_ms(reps, [&] {
    work.wait();
    q.enqueueCopyBuffer(pristine_il.buffer(), work.buffer(), 0, 0, sizeof(double) * a.size());
    q.finish();
    const auto t0 = clock_type::now();
    chol_batched(work, m, B, lay, info, 0.0, s);
    q.finish();
    return ms_since(t0);
  });
  std::printf("| %d | %d | %.3g | %.4g | %.3g | %.3g | %.4g | %.3g | %.2e |\n", B, m,
              resident, B / (resident * 1e-3), resident_il, transfers,
              B / (transfers * 1e-3), cpu_ms, err);
}

void bench_gp(int n, int rows, int reps, const batched::batched_settings& s,
              std::mt19937& gen) {
  using namespace clbayes::batched;
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> z(0.0, 1.0);
  const int p = 2, d = 2;
  std::vector<double> coords(static_cast<std::size_t>(n) * d), X(static_cast<std::size_t>(n) * p),
      y(n), beta = {1.0, -0.5}, theta(static_cast<std::size_t>(rows) * 3);
  for (double& c : coords) c = u(gen);
  for (int i = 0; i < n; ++i) {
    X[i] = 1.0;
    X[n + i] = z(gen);
    y[i] = beta[0] + beta[1] * X[n + i] + z(gen);
  }
  for (int r = 0; r < rows; ++r) {
    theta[r] = 0.5 + 1.5 * u(gen);
    theta[rows + r] = 0.1 + 0.9 * u(gen);
    theta[2 * rows + r] = 0.05 + 0.45 * u(gen);
  }
  gp_loglik model(y.data(), X.data(), n, p, coords.data(), d);
  std::vector<double> dev = model.evaluate_device(beta.data(), theta.data(), rows,
                                                  covariance::exponential, s);
  // The CPU check and timing use the first few rows only (n^3 per row).
  const int check_rows = std::min(rows, 4);
  std::vector<double> sub(static_cast<std::size_t>(check_rows) * 3);
  for (int c = 0; c < 3; ++c)
    for (int r = 0; r < check_rows; ++r) sub[c * check_rows + r] = theta[c * rows + r];
  const auto tc = clock_type::now();
  std::vector<double> cpu = model.evaluate_cpu(beta.data(), sub.data(), check_rows,
                                               covariance::exponential);
  const double cpu_ms_per_row = ms_since(tc) / check_rows;
  double err = 0.0;
  for (int r = 0; r < check_rows; ++r)
    err = std::fmax(err, std::fabs(dev[r] - cpu[r]) / std::fmax(1.0, std::fabs(cpu[r])));

  opencl::matrix_cl bd = opencl::to_matrix_cl(beta.data(), p, 1);
  opencl::matrix_cl td = opencl::to_matrix_cl(theta.data(), rows, 3);
  opencl::matrix_cl od(rows, 1);
  cl::CommandQueue& q = opencl::context::instance().queue();
  const double resident = median_ms(reps, [&] {
    q.finish();
    const auto t0 = clock_type::now();
    model.evaluate_device(bd, td, od, covariance::exponential, s);
    q.finish();
    return ms_since(t0);
  });
  const double transfers = median_ms(reps, [&] {
    const auto t0 = clock_type::now();
    model.evaluate_device(beta.data(), theta.data(), rows, covariance::exponential, s);
    return ms_since(t0);
  });
  std::printf("| %d | %d | %.3g | %.4g | %.3g | %.4g | %.3g | %.2e |\n", n, rows, resident,
              rows / (resident * 1e-3), transfers, rows / (transfers * 1e-3),
              cpu_ms_per_row * rows, err);
}

// A blocked-path variant: block width, panel rows, syrk tile and register block.
struct variant {
  int nb, rows, tile, wpt;
  std::string name() const {
    return std::to_string(nb) + ":" + std::to_string(rows) + ":" + std::to_string(tile) +
           ":" + std::to_string(wpt);
  }
};

std::vector<variant> parse_variants(const std::string& s) {
  std::vector<variant> out;
  std::size_t start = 0;
  while (start < s.size()) {
    std::size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    variant v{};
    if (std::sscanf(s.substr(start, end - start).c_str(), "%d:%d:%d:%d", &v.nb, &v.rows,
                    &v.tile, &v.wpt) != 4)
      throw std::runtime_error("bad variant '" + s.substr(start, end - start) + "'");
    out.push_back(v);
    start = end + 1;
  }
  return out;
}

// The settings t set to one path: variant index -1 is the
// one-work-group-per-item path, else the blocked variant.
batched::batched_settings path_settings(batched::batched_settings t,
                                        const std::vector<variant>& vs, int k) {
  if (k < 0) {
    t.blocked_min_m = t.gp_blocked_min_n = std::numeric_limits<int>::max();
  } else {
    t.blocked_min_m = t.gp_blocked_min_n = 1;
    t.blocked_nb = vs[k].nb;
    t.blocked_rows = vs[k].rows;
    t.blocked_tile = vs[k].tile;
    t.blocked_wpt = vs[k].wpt;
  }
  return t;
}

void print_paths_header(const char* first, const char* size, const std::vector<variant>& vs,
                        const char* rate) {
  std::printf("| %s | %s | %s |", first, size,
              std::strcmp(rate, "fact/s") == 0 ? "team" : "fused");
  for (const variant& v : vs) std::printf(" blocked %s |", v.name().c_str());
  std::printf(" best | %s (best) | max err |\n|---|---|---|", rate);
  for (std::size_t k = 0; k < vs.size(); ++k) std::printf("---|");
  std::printf("---|---|---|\n");
}

// Columns a, b, each path's time, the best, its rate (per items / ms).
void print_paths_row(int a, int b, int items, const std::vector<double>& ms, double err,
                     const std::vector<variant>& vs, const char* first) {
  std::printf("| %d | %d |", a, b);
  std::size_t best = 0;
  for (std::size_t k = 0; k < ms.size(); ++k) {
    std::printf(" %.3g |", ms[k]);
    if (ms[k] < ms[best]) best = k;
  }
  std::printf(" %s | %.4g | %.2e |\n", best == 0 ? first : vs[best - 1].name().c_str(),
              items / (ms[best] * 1e-3), err);
}

// Batched Cholesky (B, m), device-resident, contiguous: each path's time and
// the largest difference from the CPU factors over all paths.
void paths_chol(int B, int m, int reps, const batched::batched_settings& base,
                const std::vector<variant>& vs, std::mt19937& gen) {
  using namespace clbayes::batched;
  std::vector<double> a = spd_batch(m, B, gen), cpu(a), dev(a.size());
  chol_batched_cpu(cpu.data(), m, B);
  opencl::matrix_cl pristine = opencl::to_matrix_cl(a.data(), m, m * B);
  opencl::matrix_cl work(m, m * B);
  opencl::matrix_cl info = int_buffer(B);
  cl::CommandQueue& q = opencl::context::instance().queue();
  auto reset = [&] {
    pristine.wait();
    work.wait();
    q.enqueueCopyBuffer(pristine.buffer(), work.buffer(), 0, 0, sizeof(double) * a.size());
    q.finish();
  };
  std::vector<double> ms;
  double err = 0.0;
  for (int k = -1; k < static_cast<int>(vs.size()); ++k) {
    const batched_settings s = path_settings(base, vs, k);
    reset();
    chol_batched(work, m, B, contiguous(m, m), info, 0.0, s);
    opencl::from_matrix_cl(work, dev.data());
    for (std::size_t e = 0; e < a.size(); ++e) err = std::fmax(err, std::fabs(dev[e] - cpu[e]));
    for (int st : read_ints(info, B))
      if (st != 0) err = NAN;
    ms.push_back(median_ms(reps, [&] {
      reset();
      const auto t0 = clock_type::now();
      chol_batched(work, m, B, contiguous(m, m), info, 0.0, s);
      q.finish();
      return ms_since(t0);
    }));
  }
  print_paths_row(B, m, B, ms, err, vs, "team");
}

// GP log-likelihood (n locations, rows per launch): each path's time and
// the largest relative difference from the CPU on the first 2 rows.
void paths_gp(int n, int rows, int reps, const batched::batched_settings& base,
              const std::vector<variant>& vs, std::mt19937& gen) {
  using namespace clbayes::batched;
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> z(0.0, 1.0);
  const int p = 2, d = 2;
  std::vector<double> coords(static_cast<std::size_t>(n) * d), X(static_cast<std::size_t>(n) * p),
      y(n), beta = {1.0, -0.5}, theta(static_cast<std::size_t>(rows) * 3);
  for (double& c : coords) c = u(gen);
  for (int i = 0; i < n; ++i) {
    X[i] = 1.0;
    X[n + i] = z(gen);
    y[i] = beta[0] + beta[1] * X[n + i] + z(gen);
  }
  for (int r = 0; r < rows; ++r) {
    theta[r] = 0.5 + 1.5 * u(gen);
    theta[rows + r] = 0.1 + 0.9 * u(gen);
    theta[2 * rows + r] = 0.05 + 0.45 * u(gen);
  }
  gp_loglik model(y.data(), X.data(), n, p, coords.data(), d);
  const int check_rows = std::min(rows, 2);
  std::vector<double> sub(static_cast<std::size_t>(check_rows) * 3);
  for (int c = 0; c < 3; ++c)
    for (int r = 0; r < check_rows; ++r) sub[c * check_rows + r] = theta[c * rows + r];
  std::vector<double> cpu = model.evaluate_cpu(beta.data(), sub.data(), check_rows,
                                               covariance::exponential);
  opencl::matrix_cl bd = opencl::to_matrix_cl(beta.data(), p, 1);
  opencl::matrix_cl td = opencl::to_matrix_cl(theta.data(), rows, 3);
  opencl::matrix_cl od(rows, 1);
  cl::CommandQueue& q = opencl::context::instance().queue();
  std::vector<double> ms, dev(static_cast<std::size_t>(rows));
  double err = 0.0;
  for (int k = -1; k < static_cast<int>(vs.size()); ++k) {
    const batched_settings s = path_settings(base, vs, k);
    model.evaluate_device(bd, td, od, covariance::exponential, s);
    opencl::from_matrix_cl(od, dev.data());
    for (int r = 0; r < check_rows; ++r)
      err = std::fmax(err, std::fabs(dev[r] - cpu[r]) / std::fmax(1.0, std::fabs(cpu[r])));
    for (double v : dev)
      if (!std::isfinite(v)) err = NAN;
    ms.push_back(median_ms(reps, [&] {
      q.finish();
      const auto t0 = clock_type::now();
      model.evaluate_device(bd, td, od, covariance::exponential, s);
      q.finish();
      return ms_since(t0);
    }));
  }
  print_paths_row(n, rows, rows, ms, err, vs, "fused");
}

}  // namespace

int main(int argc, char** argv) {
  std::string chol = "100000x8,20000x32,5000x64,1000x128,200x256,60x500";
  std::string gp = "100x30,100x240,500x30,500x240,1000x240,2000x240";
  std::string paths_chol_sizes = "20000x32,5000x64,2000x100,1000x128,200x256,60x500";
  std::string paths_gp_sizes =
      "100x30,100x240,200x30,200x240,500x30,500x240,500x2048,1000x30,1000x240,1000x2048,"
      "2000x30,2000x240,2000x2048";
  std::string variants = "32:64:64:4,64:64:64:4,48:64:64:4,64:128:32:2,64:64:64:8";
  int reps = 5;
  // Settings given on the command line, put in place of the device's once
  // it is selected (-1: not given).
  int gp_blocked_min = -1, team = -1, blocked_min = -1, nb = -1, serial_max = -1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--chol") chol = argv[i + 1];
    else if (k == "--gp") gp = argv[i + 1];
    else if (k == "--paths-chol") paths_chol_sizes = argv[i + 1];
    else if (k == "--paths-gp") paths_gp_sizes = argv[i + 1];
    else if (k == "--variants") variants = argv[i + 1];
    else if (k == "--gp-blocked-min") gp_blocked_min = std::atoi(argv[i + 1]);
    else if (k == "--reps") reps = std::max(1, std::atoi(argv[i + 1]));
    else if (k == "--team") team = std::atoi(argv[i + 1]);
    else if (k == "--blocked-min") blocked_min = std::atoi(argv[i + 1]);
    else if (k == "--nb") nb = std::atoi(argv[i + 1]);
    else if (k == "--serial-max") serial_max = std::atoi(argv[i + 1]);
    else if (k == "--panel") {
      opencl::kernels::chol_batched_team().set_option("CHOL_PANEL", std::atoi(argv[i + 1]));
      opencl::kernels::gp_loglik().set_option("CHOL_PANEL", std::atoi(argv[i + 1]));
    }
    else {
      std::printf("unknown option %s\n", k.c_str());
      return 2;
    }
  }
  try {
    if (!opencl::context::instance().selected()) {
      std::printf("no OpenCL device with double precision\n");
      return 1;
    }
    batched::batched_settings s = batched::tuned_settings();
    if (gp_blocked_min >= 0) s.gp_blocked_min_n = gp_blocked_min;
    if (team >= 0) s.team_size_max = team;
    if (blocked_min >= 0) s.blocked_min_m = blocked_min;
    if (nb >= 0) s.blocked_nb = nb;
    if (serial_max >= 0) s.serial_max_m = serial_max;
    std::printf("device: %s (team size <= %d, CHOL_PANEL %d, serial m <= %d)\n\n",
                opencl::context::instance().info().name.c_str(),
                batched::team_size_limit(s),
                opencl::kernels::chol_batched_team().option("CHOL_PANEL"),
                s.serial_max_m);
    std::mt19937 gen(42);
    std::printf("Batched Cholesky (float64), median of %d, times in ms\n\n", reps);
    std::printf("| B | m | device | fact/s | device, interleaved | with transfers | fact/s "
                "| CPU (1 thread) | max abs err |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|\n");
    for (auto& p : parse_pairs(chol)) bench_chol(p.first, p.second, reps, s, gen);
    std::printf("\nGP log-likelihood (exponential), median of %d, times in ms; CPU time\n"
                "extrapolated from 4 rows; error relative, on those rows\n\n", reps);
    std::printf("| n | rows | device | evals/s | with transfers | evals/s | CPU (1 thread) | max rel err |\n");
    std::printf("|---|---|---|---|---|---|---|---|\n");
    for (auto& p : parse_pairs(gp)) bench_gp(p.first, p.second, reps, s, gen);
    const std::vector<variant> vs = parse_variants(variants);
    std::printf("\nBatched Cholesky by path (float64), device-resident, median of %d, ms;\n"
                "blocked NB:ROWS:TILE:WPT; max abs err over all paths vs the CPU\n\n",
                reps);
    print_paths_header("B", "m", vs, "fact/s");
    for (auto& p : parse_pairs(paths_chol_sizes))
      paths_chol(p.first, p.second, reps, s, vs, gen);
    std::printf("\nGP log-likelihood by path (exponential), device-resident, median of %d,\n"
                "ms; max rel err over all paths vs the CPU on 2 rows\n\n", reps);
    print_paths_header("n", "rows", vs, "evals/s");
    for (auto& p : parse_pairs(paths_gp_sizes))
      paths_gp(p.first, p.second, reps, s, vs, gen);
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 1;
  }
  return 0;
}
