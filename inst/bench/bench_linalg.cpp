// Benchmark of the dense linear algebra core (linalg/): Cholesky with the
// matrix on the device and with transfers from and to host memory, its
// gradient, GEMM, and the CPU (Eigen) path, on the paper's Toeplitz family
// A[i, j] = n - |i - j|, A[i, i] = n^2 (stan-opencl.txt, section 3.3.3).
//
// Build (from the package root, .bench-deps holding Eigen/ and CL/):
//   g++ -std=c++17 -O3 -march=native -DCLBAYES_OPENCL -I inst/include
//       -I .bench-deps inst/bench/bench_linalg.cpp -o bench_linalg -lOpenCL
// Run:
//   ./bench_linalg [options] [n ...]      (default n: 1024 2048 4096 8192 16384)
// Options: --reps R (timed runs, median reported; default 5)
//          --cpu-max N (largest n for the CPU path and CPU comparisons; 4096)
//          --tune (sweep the tiles of both GEMM kernels at n = 4096, then the
//                  Cholesky paths at n = 8192 and the gradient block size,
//                  keeping the best of each)
//          --chol-block B --partition P --grad-block G --diag-block D
//          --gemm-kernel 1|2 --outer-block NB (0: first Cholesky path)
//          --panel 0|1 --inner-partition P --small-below PCT
// The table puts the first Cholesky path (kernel 1, recursion over the
// whole matrix, as measured in RESULTS.md) and kernel 1's GEMM beside the
// kept settings, and counts the kernel launches of one factorisation.
// Every result is verified before it is timed: Cholesky against Eigen's LLT
// (n <= cpu-max) and by the residual max|L L^T - A| / max|A| computed on the
// device (all n); the gradient against the Eigen blocked gradient
// (n <= cpu-max); GEMM on 64 random entries against CPU dot products.

#include <clbayes/linalg/cholesky.hpp>
#include <clbayes/linalg/cholesky_grad.hpp>
#include <clbayes/linalg/gemm.hpp>
#include <clbayes/opencl.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

using clbayes::opencl::matrix_cl;
namespace cl_ops = clbayes::opencl;
namespace la = clbayes::linalg;

namespace {

double now_ms() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double, std::milli>(clock::now().time_since_epoch()).count();
}

// Median wall time of `reps` runs after one warm-up; `f` must leave the
// device idle (it waits for its own results).
double time_ms(int reps, const std::function<void()>& f) {
  f();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const double t0 = now_ms();
    f();
    t.push_back(now_ms() - t0);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void finish() { cl_ops::context::instance().queue().finish(); }

Eigen::MatrixXd toeplitz(int n) {
  Eigen::MatrixXd a(n, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) a(i, j) = i == j ? double(n) * n : double(n - std::abs(i - j));
  return a;
}

double max_abs(const Eigen::MatrixXd& m) { return m.cwiseAbs().maxCoeff(); }

Eigen::MatrixXd download(const matrix_cl& m) {
  Eigen::MatrixXd out(m.rows(), m.cols());
  cl_ops::from_matrix_cl(m, out.data());
  return out;
}

matrix_cl upload(const Eigen::MatrixXd& m) { return cl_ops::to_matrix_cl(m.data(), m.rows(), m.cols()); }

// The GEMM objects of kernel 1 (kernels/gemm.hpp) or of kernel 2's
// large-tile variant (kernels/gemm_db.hpp).
void set_gemm(int kernel, const char* key, int v) {
  namespace k = cl_ops::kernels;
  if (kernel == 1)
    for (auto* x : {&k::gemm_nn, &k::gemm_tn, &k::gemm_nt, &k::gemm_tt}) x->set_option(key, v);
  else
    for (auto* x : {&k::gemm_db_nn, &k::gemm_db_tn, &k::gemm_db_nt, &k::gemm_db_tt})
      x->set_option(key, v);
}

struct gemm_cfg { int kernel, tm, tn, tk, wm, wn; };

void set_gemm(const gemm_cfg& c) {
  set_gemm(c.kernel, "TM", c.tm); set_gemm(c.kernel, "TN", c.tn); set_gemm(c.kernel, "TK", c.tk);
  set_gemm(c.kernel, "WPTM", c.wm); set_gemm(c.kernel, "WPTN", c.wn);
}

// One Cholesky configuration: GEMM kernel, outer block (0: the first
// path, the recursion over the whole matrix), partition of the recursion
// (of the whole matrix when outer = 0, of a diagonal block otherwise), leaf
// CHOLESKY_BLOCK, small-tile GEMMs below this percentage of the compute
// units in large tiles (gemm_tuning::small_below_pct), panels by the fused
// leaf (1) or by the recursion (0) (cholesky_tuning::panel).
struct chol_cfg { int kernel, outer, partition, leaf, small, panel; };

void set_chol(const chol_cfg& c) {
  la::gemm_settings().kernel = c.kernel;
  la::gemm_settings().small_below_pct = c.small;
  la::cholesky_settings().outer_block = c.outer;
  if (c.outer == 0) la::cholesky_settings().partition = c.partition;
  else la::cholesky_settings().inner_partition = c.partition;
  cl_ops::kernels::cholesky_block.set_option("CHOLESKY_BLOCK", c.leaf);
  cl_ops::kernels::cholesky_block_inv.set_option("CHOLESKY_BLOCK", c.leaf);
  la::cholesky_settings().panel = c.panel;
}

chol_cfg get_chol() {
  const auto& s = la::cholesky_settings();
  return {la::gemm_settings().kernel, s.outer_block,
          s.outer_block == 0 ? s.partition : s.inner_partition,
          cl_ops::kernels::cholesky_block.option("CHOLESKY_BLOCK"),
          la::gemm_settings().small_below_pct, s.panel};
}

// The first device path as measured on the H200 (RESULTS.md): kernel 1
// with its best tiles, recursion with partition 8 and leaf 64.
chol_cfg old_chol = {1, 0, 8, 64, 0, 0};

unsigned long long launches_of(const std::function<void()>& f) {
  const unsigned long long before = cl_ops::launch_count();
  f();
  return cl_ops::launch_count() - before;
}

// Max relative error of 64 random entries of C = A B against CPU dot products.
double gemm_sample_error(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b, const matrix_cl& c_dev) {
  Eigen::MatrixXd c = download(c_dev);
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> ri(0, int(a.rows()) - 1), rj(0, int(b.cols()) - 1);
  double err = 0.0;
  for (int s = 0; s < 64; ++s) {
    const int i = ri(rng), j = rj(rng);
    const double ref = a.row(i).dot(b.col(j));
    err = std::max(err, std::fabs(c(i, j) - ref) / std::max(1.0, std::fabs(ref)));
  }
  return err;
}

// Sweep tiles of both GEMM kernels at order n; keep the best of each and
// make the faster kernel the one every product uses.
void tune_gemm(int n, int reps) {
  const std::vector<gemm_cfg> cfgs = {
      {1, 128, 128, 16, 8, 8}, {1, 128, 128, 8, 8, 8}, {1, 64, 64, 16, 4, 4},
      {2, 128, 128, 8, 8, 8},  {2, 128, 128, 4, 8, 8}, {2, 128, 64, 8, 8, 4},
      {2, 64, 128, 8, 4, 8},   {2, 128, 128, 8, 8, 4}, {2, 128, 128, 8, 4, 8},
      {2, 64, 64, 16, 4, 4},   {2, 64, 64, 8, 4, 4},   {2, 64, 64, 16, 4, 2}};
  std::mt19937 rng(1);
  std::normal_distribution<double> nd;
  Eigen::MatrixXd a(n, n), b(n, n);
  for (int i = 0; i < a.size(); ++i) { a.data()[i] = nd(rng); b.data()[i] = nd(rng); }
  matrix_cl da = upload(a), db = upload(b);
  const std::size_t max_wg = cl_ops::context::instance().info().max_work_group_size;
  std::printf("GEMM tile sweep, n = %d (kernel 1: kernels/gemm.hpp, 2: kernels/gemm_db.hpp)\n\n"
              "| kernel | TM | TN | TK | WPTM | WPTN | ms | GFLOP/s | max rel err |\n"
              "|---|---|---|---|---|---|---|---|---|\n", n);
  double best[3] = {1e300, 1e300, 1e300};
  gemm_cfg best_cfg[3] = {cfgs[0], cfgs[0], cfgs[3]};
  for (const gemm_cfg& c : cfgs) {
    if (std::size_t(c.tm / c.wm) * (c.tn / c.wn) > max_wg) continue;
    set_gemm(c);
    la::gemm_settings().kernel = c.kernel;
    try {
      matrix_cl dc = la::multiply(da, db);
      const double err = gemm_sample_error(a, b, dc);
      const double ms = time_ms(reps, [&] { matrix_cl x = la::multiply(da, db); finish(); });
      std::printf("| %d | %d | %d | %d | %d | %d | %.2f | %.2f | %.1e |\n", c.kernel, c.tm, c.tn,
                  c.tk, c.wm, c.wn, ms, 2.0 * n * double(n) * n / ms / 1e6, err);
      if (err < 1e-10 && ms < best[c.kernel]) { best[c.kernel] = ms; best_cfg[c.kernel] = c; }
    } catch (const std::exception& e) {
      std::printf("| %d | %d | %d | %d | %d | %d | failed: %s | | |\n", c.kernel, c.tm, c.tn, c.tk,
                  c.wm, c.wn, e.what());
    }
  }
  for (int k = 1; k <= 2; ++k) {
    set_gemm(best_cfg[k]);
    std::printf("%skernel %d: kept TM=%d TN=%d TK=%d WPTM=%d WPTN=%d (%.2f ms)\n", k == 1 ? "\n" : "",
                k, best_cfg[k].tm, best_cfg[k].tn, best_cfg[k].tk, best_cfg[k].wm, best_cfg[k].wn,
                best[k]);
  }
  la::gemm_settings().kernel = best[2] <= best[1] ? 2 : 1;
  std::printf("products use kernel %d\n\n", la::gemm_settings().kernel);
}

// Sweep the Cholesky paths at order n (first path and the blocked loop
// with outer blocks, inner partitions, leaf sizes, small-tile thresholds),
// each verified by its residual; keep the fastest. Then the gradient's
// block size.
void tune_cholesky(int n, int reps) {
  Eigen::MatrixXd a = toeplitz(n);
  matrix_cl da = upload(a);
  const double amax = max_abs(a);
  const int kb = la::gemm_settings().kernel;
  std::vector<chol_cfg> cfgs = {{1, 0, 4, 64, 0, 0}, {1, 0, 8, 64, 0, 0}, {kb, 0, 8, 64, 100, 0}};
  for (int outer : {256, 512, 1024})  // diagonal blocks by the recursion
    cfgs.push_back({kb, outer, 2, 64, 100, 0});
  for (int outer : {64, 128, 192, 256, 384, 512, 768})  // fused-leaf panels
    for (int small : {0, 100, 300}) cfgs.push_back({kb, outer, 2, 64, small, 1});
  for (int outer : {256, 512}) cfgs.push_back({kb, outer, 2, 32, 100, 1});
  if (kb == 2) cfgs.push_back({1, 256, 2, 64, 0, 1});  // fused panels on kernel 1
  std::printf("Cholesky sweep, n = %d (outer block 0: the first path)\n\n"
              "| GEMM kernel | outer block | panel | partition | CHOLESKY_BLOCK | small below %% | ms | "
              "GFLOP/s | launches | residual |\n|---|---|---|---|---|---|---|---|---|---|\n", n);
  double best = 1e300, best_old = 1e300;
  chol_cfg best_cfg = old_chol;  // if every new configuration failed
  for (const chol_cfg& c : cfgs) {
    set_chol(c);
    try {
      matrix_cl dl;
      const unsigned long long launches = launches_of([&] { dl = la::cholesky(da); });
      matrix_cl llt = la::multiply_transpose(dl);
      const double resid = max_abs(download(cl_ops::subtract(llt, da))) / amax;
      const double ms = time_ms(reps, [&] { matrix_cl x = la::cholesky(da); finish(); });
      std::printf("| %d | %d | %d | %d | %d | %d | %.2f | %.1f | %llu | %.1e |\n", c.kernel, c.outer,
                  c.panel, c.partition, c.leaf, c.small, ms, double(n) * n * n / 3 / ms / 1e6, launches, resid);
      if (resid < 1e-12 && ms < best) { best = ms; best_cfg = c; }
      if (resid < 1e-12 && c.kernel == 1 && c.outer == 0 && ms < best_old) { best_old = ms; old_chol = c; }
    } catch (const std::exception& e) {
      std::printf("| %d | %d | %d | %d | %d | %d | failed: %s | | | |\n", c.kernel, c.outer, c.panel, c.partition,
                  c.leaf, c.small, e.what());
    }
  }
  set_chol(best_cfg);
  std::printf("\nkept GEMM kernel %d, outer block %d, panel %d, partition %d, CHOLESKY_BLOCK %d, "
              "small below %d%% (first path: %.2f ms, kept: %.2f ms)\n\n", best_cfg.kernel,
              best_cfg.outer, best_cfg.panel, best_cfg.partition, best_cfg.leaf, best_cfg.small, best_old, best);
  matrix_cl dl = la::cholesky(da);
  matrix_cl dadj = la::multiply(dl, dl);  // any lower-triangular adjoint
  std::printf("| grad block | ms |\n|---|---|\n");
  best = 1e300;
  int best_g = 128;
  for (int g : {128, 256, 512, 1024}) {
    la::cholesky_grad_block_size() = g;
    const double ms = time_ms(reps, [&] { matrix_cl x = la::cholesky_grad(dl, dadj); finish(); });
    std::printf("| %d | %.2f |\n", g, ms);
    if (ms < best) { best = ms; best_g = g; }
  }
  la::cholesky_grad_block_size() = best_g;
  std::printf("\nkept grad block %d\n\n", best_g);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  int reps = 5, cpu_max = 4096;
  bool tune = false;
  try {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      auto next = [&]() { if (i + 1 >= argc) throw std::runtime_error(a + " needs a value"); return std::atoi(argv[++i]); };
      if (a == "--reps") reps = std::max(1, next());
      else if (a == "--cpu-max") cpu_max = next();
      else if (a == "--tune") tune = true;
      else if (a == "--chol-block") {
        const int b = next();
        cl_ops::kernels::cholesky_block.set_option("CHOLESKY_BLOCK", b);
        cl_ops::kernels::cholesky_block_inv.set_option("CHOLESKY_BLOCK", b);
      }
      else if (a == "--panel") la::cholesky_settings().panel = next();
      else if (a == "--partition") la::cholesky_settings().partition = std::max(2, next());
      else if (a == "--grad-block") la::cholesky_grad_block_size() = std::max(1, next());
      else if (a == "--diag-block") cl_ops::kernels::diag_inv.set_option("DIAG_BLOCK", next());
      else if (a == "--gemm-kernel") la::gemm_settings().kernel = next();
      else if (a == "--outer-block") la::cholesky_settings().outer_block = std::max(0, next());
      else if (a == "--inner-partition") la::cholesky_settings().inner_partition = std::max(2, next());
      else if (a == "--small-below") la::gemm_settings().small_below_pct = std::max(0, next());
      else sizes.push_back(std::atoi(a.c_str()));
    }
    if (sizes.empty()) sizes = {1024, 2048, 4096, 8192, 16384};
    // Kernel 1's tiles as tuned on the H200 (RESULTS.md), so that the
    // first-path columns show that path at its best.
    set_gemm({1, 128, 128, 16, 8, 8});
    cl_ops::context& ctx = cl_ops::context::instance();
    ctx.require_device();
    const auto& info = ctx.info();
    std::printf("device: %s (%s), %d compute units, %.1f GiB\n", info.name.c_str(),
                info.platform_name.c_str(), info.compute_units, info.global_mem / 1073741824.0);
    auto print_options = [&](const char* when) {
      const auto& g = cl_ops::kernels::gemm_nn;
      const auto& d = cl_ops::kernels::gemm_db_nn;
      std::printf("options %s: reps %d, GEMM kernel %d (small below %d%%), outer block %d, "
                  "panel %d, inner partition %d, partition %d, CHOLESKY_BLOCK %d, DIAG_BLOCK %d, grad block %d, "
                  "kernel 1 TM %d TN %d TK %d WPTM %d WPTN %d, kernel 2 TM %d TN %d TK %d WPTM %d "
                  "WPTN %d\n\n", when, reps, la::gemm_settings().kernel,
                  la::gemm_settings().small_below_pct, la::cholesky_settings().outer_block,
                  la::cholesky_settings().panel, la::cholesky_settings().inner_partition,
                  la::cholesky_settings().partition,
                  cl_ops::kernels::cholesky_block.option("CHOLESKY_BLOCK"),
                  cl_ops::kernels::diag_inv.option("DIAG_BLOCK"), la::cholesky_grad_block_size(),
                  g.option("TM"), g.option("TN"), g.option("TK"), g.option("WPTM"), g.option("WPTN"),
                  d.option("TM"), d.option("TN"), d.option("TK"), d.option("WPTM"), d.option("WPTN"));
    };
    print_options("at start");
    int gemm_kernel_kept = la::gemm_settings().kernel;
    if (tune) {
      const int largest = *std::max_element(sizes.begin(), sizes.end());
      tune_gemm(std::min(4096, largest), reps);
      gemm_kernel_kept = la::gemm_settings().kernel;
      tune_cholesky(std::min(8192, largest), reps);
      print_options("kept");
    }
    const chol_cfg new_chol = get_chol();
    // The GEMM columns use the kernel the GEMM sweep chose (without --tune:
    // the default), the Cholesky its own.
    const int new_kernel = gemm_kernel_kept;

    std::printf("| n | chol device (ms) | chol GFLOP/s | chol + transfers, packed L (ms) | "
                "chol + transfers, full L (ms) | grad device (ms) | "
                "GEMM (ms) | GEMM GFLOP/s | CPU chol (ms) | CPU grad (ms) | chol err vs CPU | "
                "chol residual | grad err vs CPU | GEMM err | chol launches | "
                "first path: chol device (ms) | launches | GEMM kernel 1 (ms) |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int n : sizes) {
      clbayes::check_interrupt();
      const double nd = n;
      Eigen::MatrixXd a = toeplitz(n);
      matrix_cl da = upload(a);
      // Verify first.
      matrix_cl dl;
      const unsigned long long launches = launches_of([&] { dl = la::cholesky(da); });
      Eigen::MatrixXd l_dev = download(dl);
      matrix_cl llt = la::multiply_transpose(dl);
      const double resid = max_abs(download(cl_ops::subtract(llt, da))) / max_abs(a);
      const bool cpu = n <= cpu_max;
      double chol_err = NAN, grad_err = NAN, cpu_chol = NAN, cpu_grad = NAN;
      std::mt19937 rng(n);
      std::normal_distribution<double> norm;
      Eigen::MatrixXd l_adj(n, n);
      for (int i = 0; i < l_adj.size(); ++i) l_adj.data()[i] = norm(rng);
      l_adj = l_adj.triangularView<Eigen::Lower>();
      matrix_cl dl_adj = upload(l_adj);
      matrix_cl dg = la::cholesky_grad(dl, dl_adj);
      if (cpu) {
        Eigen::MatrixXd l_cpu = la::cholesky(a);
        chol_err = max_abs(l_dev - l_cpu) / max_abs(l_cpu);
        Eigen::MatrixXd g_cpu = la::cholesky_grad(l_cpu, l_adj);
        grad_err = max_abs(download(dg) - g_cpu) / max_abs(g_cpu);
        cpu_chol = time_ms(reps, [&] {
          Eigen::MatrixXd w = a;
          Eigen::Map<Eigen::MatrixXd> m(w.data(), n, n);
          la::cholesky_in_place(m);
        });
        cpu_grad = time_ms(std::min(reps, 3), [&] { Eigen::MatrixXd g = la::cholesky_grad(l_cpu, l_adj); });
      }
      Eigen::MatrixXd b(n, n);
      for (int i = 0; i < b.size(); ++i) b.data()[i] = norm(rng);
      matrix_cl db = upload(b);
      la::gemm_settings().kernel = new_kernel;
      const double gemm_err = gemm_sample_error(a, b, la::multiply(da, db));
      la::gemm_settings().kernel = new_chol.kernel;
      // Then time.
      const double t_chol = time_ms(reps, [&] { matrix_cl x = la::cholesky(da); finish(); });
      std::vector<double> packed_host(a.size());
      const double t_trans = time_ms(reps, [&] {
        matrix_cl x = cl_ops::to_matrix_cl(a.data(), n, n);
        matrix_cl y = la::cholesky(x);
        cl_ops::from_matrix_cl(y, packed_host.data());  // packed lower triangle
      });
      // The same with the whole L read back (no packing): which is faster
      // depends on the bus and on host memory bandwidth.
      const double t_trans_full = time_ms(reps, [&] {
        matrix_cl x = cl_ops::to_matrix_cl(a.data(), n, n);
        matrix_cl y = la::cholesky(x);
        y.set_view(clbayes::matrix_view::entire);
        cl_ops::from_matrix_cl(y, packed_host.data());
      });
      const double t_grad = time_ms(reps, [&] { matrix_cl x = la::cholesky_grad(dl, dl_adj); finish(); });
      la::gemm_settings().kernel = new_kernel;
      const double t_gemm = time_ms(reps, [&] { matrix_cl x = la::multiply(da, db); finish(); });
      // The first path, side by side (verified by its residual, else nan).
      set_chol(old_chol);
      matrix_cl dl_old;
      const unsigned long long launches_old = launches_of([&] { dl_old = la::cholesky(da); });
      const double resid_old =
          max_abs(download(cl_ops::subtract(la::multiply_transpose(dl_old), da))) / max_abs(a);
      double t_chol_old = time_ms(reps, [&] { matrix_cl x = la::cholesky(da); finish(); });
      if (!(resid_old < 1e-12)) t_chol_old = NAN;
      const double gemm_err_old = gemm_sample_error(a, b, la::multiply(da, db));
      double t_gemm_old = time_ms(reps, [&] { matrix_cl x = la::multiply(da, db); finish(); });
      if (!(gemm_err_old < 1e-10)) t_gemm_old = NAN;
      set_chol(new_chol);
      std::printf("| %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.1e | %.1e | %.1e | %.1e "
                  "| %llu | %.2f | %llu | %.2f |\n",
                  n, t_chol, nd * nd * nd / 3 / t_chol / 1e6, t_trans, t_trans_full, t_grad, t_gemm,
                  2 * nd * nd * nd / t_gemm / 1e6, cpu_chol, cpu_grad, chol_err, resid, grad_err,
                  gemm_err, launches, t_chol_old, launches_old, t_gemm_old);
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_linalg: %s\n", e.what());
    return 1;
  }
  return 0;
}
