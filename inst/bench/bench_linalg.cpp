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
//          --tune (sweep GEMM tiles, then the Cholesky leaf size and partition
//                  and the gradient block size, keeping the best of each)
//          --chol-block B --partition P --grad-block G --diag-block D
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

void set_gemm(const char* key, int v) {
  for (auto* k : {&cl_ops::kernels::gemm_nn, &cl_ops::kernels::gemm_tn,
                  &cl_ops::kernels::gemm_nt, &cl_ops::kernels::gemm_tt})
    k->set_option(key, v);
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

void tune_gemm(int n, int reps) {
  struct cfg { int tm, tn, tk, wm, wn; };
  const std::vector<cfg> cfgs = {{64, 64, 16, 4, 4},  {128, 64, 16, 8, 4}, {64, 128, 16, 4, 8},
                                 {128, 128, 16, 8, 8}, {128, 128, 8, 8, 8}, {64, 64, 32, 4, 4},
                                 {32, 32, 16, 4, 4}, {64, 64, 8, 4, 4}};
  std::mt19937 rng(1);
  std::normal_distribution<double> nd;
  Eigen::MatrixXd a(n, n), b(n, n);
  for (int i = 0; i < a.size(); ++i) { a.data()[i] = nd(rng); b.data()[i] = nd(rng); }
  matrix_cl da = upload(a), db = upload(b);
  const std::size_t max_wg = cl_ops::context::instance().info().max_work_group_size;
  std::printf("GEMM tile sweep, n = %d\n\n| TM | TN | TK | WPTM | WPTN | ms | GFLOP/s | max rel err |\n|---|---|---|---|---|---|---|---|\n", n);
  double best = 1e300;
  cfg best_cfg = cfgs[0];
  for (const cfg& c : cfgs) {
    if (std::size_t(c.tm / c.wm) * (c.tn / c.wn) > max_wg) continue;
    set_gemm("TM", c.tm); set_gemm("TN", c.tn); set_gemm("TK", c.tk);
    set_gemm("WPTM", c.wm); set_gemm("WPTN", c.wn);
    try {
      matrix_cl dc = la::multiply(da, db);
      const double err = gemm_sample_error(a, b, dc);
      const double ms = time_ms(reps, [&] { matrix_cl x = la::multiply(da, db); finish(); });
      std::printf("| %d | %d | %d | %d | %d | %.2f | %.2f | %.1e |\n", c.tm, c.tn, c.tk, c.wm, c.wn,
                  ms, 2.0 * n * double(n) * n / ms / 1e6, err);
      if (err < 1e-10 && ms < best) { best = ms; best_cfg = c; }
    } catch (const std::exception& e) {
      std::printf("| %d | %d | %d | %d | %d | failed: %s | | |\n", c.tm, c.tn, c.tk, c.wm, c.wn, e.what());
    }
  }
  set_gemm("TM", best_cfg.tm); set_gemm("TN", best_cfg.tn); set_gemm("TK", best_cfg.tk);
  set_gemm("WPTM", best_cfg.wm); set_gemm("WPTN", best_cfg.wn);
  std::printf("\nkept TM=%d TN=%d TK=%d WPTM=%d WPTN=%d\n\n", best_cfg.tm, best_cfg.tn,
              best_cfg.tk, best_cfg.wm, best_cfg.wn);
}

// Sweep the Cholesky recursion (leaf size, partition) and the gradient's
// block size at order n; keep the fastest of each.
void tune_cholesky(int n, int reps) {
  Eigen::MatrixXd a = toeplitz(n);
  matrix_cl da = upload(a);
  std::printf("Cholesky sweep, n = %d\n\n| CHOLESKY_BLOCK | partition | ms |\n|---|---|---|\n", n);
  double best = 1e300;
  int best_b = 64, best_p = 4;
  for (int b : {32, 64}) {
    for (int p : {2, 4, 8}) {
      cl_ops::kernels::cholesky_block.set_option("CHOLESKY_BLOCK", b);
      la::cholesky_settings().partition = p;
      const double ms = time_ms(reps, [&] { matrix_cl x = la::cholesky(da); finish(); });
      std::printf("| %d | %d | %.2f |\n", b, p, ms);
      if (ms < best) { best = ms; best_b = b; best_p = p; }
    }
  }
  cl_ops::kernels::cholesky_block.set_option("CHOLESKY_BLOCK", best_b);
  la::cholesky_settings().partition = best_p;
  matrix_cl dl = la::cholesky(da);
  matrix_cl dadj = la::multiply(dl, dl);  // any lower-triangular adjoint
  std::printf("\nkept CHOLESKY_BLOCK=%d partition=%d\n\n| grad block | ms |\n|---|---|\n", best_b, best_p);
  best = 1e300;
  int best_g = 128;
  for (int g : {64, 128, 256, 512}) {
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
      else if (a == "--chol-block") cl_ops::kernels::cholesky_block.set_option("CHOLESKY_BLOCK", next());
      else if (a == "--partition") la::cholesky_settings().partition = std::max(2, next());
      else if (a == "--grad-block") la::cholesky_grad_block_size() = std::max(1, next());
      else if (a == "--diag-block") cl_ops::kernels::diag_inv.set_option("DIAG_BLOCK", next());
      else sizes.push_back(std::atoi(a.c_str()));
    }
    if (sizes.empty()) sizes = {1024, 2048, 4096, 8192, 16384};
    cl_ops::context& ctx = cl_ops::context::instance();
    ctx.require_device();
    const auto& info = ctx.info();
    std::printf("device: %s (%s), %d compute units, %.1f GiB\n", info.name.c_str(),
                info.platform_name.c_str(), info.compute_units, info.global_mem / 1073741824.0);
    std::printf("options: reps %d, CHOLESKY_BLOCK %d, partition %d, DIAG_BLOCK %d, grad block %d, "
                "GEMM TM %d TN %d TK %d WPTM %d WPTN %d\n\n", reps,
                cl_ops::kernels::cholesky_block.option("CHOLESKY_BLOCK"), la::cholesky_settings().partition,
                cl_ops::kernels::diag_inv.option("DIAG_BLOCK"), la::cholesky_grad_block_size(),
                cl_ops::kernels::gemm_nn.option("TM"), cl_ops::kernels::gemm_nn.option("TN"),
                cl_ops::kernels::gemm_nn.option("TK"), cl_ops::kernels::gemm_nn.option("WPTM"),
                cl_ops::kernels::gemm_nn.option("WPTN"));
    if (tune) {
      const int largest = *std::max_element(sizes.begin(), sizes.end());
      tune_gemm(std::min(4096, largest), reps);
      tune_cholesky(std::min(8192, largest), reps);
    }

    std::printf("| n | chol device (ms) | chol GFLOP/s | chol + transfers, packed L (ms) | "
                "chol + transfers, full L (ms) | grad device (ms) | "
                "GEMM (ms) | GEMM GFLOP/s | CPU chol (ms) | CPU grad (ms) | chol err vs CPU | "
                "chol residual | grad err vs CPU | GEMM err |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int n : sizes) {
      clbayes::check_interrupt();
      const double nd = n;
      Eigen::MatrixXd a = toeplitz(n);
      matrix_cl da = upload(a);
      // Verify first.
      matrix_cl dl = la::cholesky(da);
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
      const double gemm_err = gemm_sample_error(a, b, la::multiply(da, db));
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
      const double t_gemm = time_ms(reps, [&] { matrix_cl x = la::multiply(da, db); finish(); });
      std::printf("| %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.1e | %.1e | %.1e | %.1e |\n",
                  n, t_chol, nd * nd * nd / 3 / t_chol / 1e6, t_trans, t_trans_full, t_grad, t_gemm,
                  2 * nd * nd * nd / t_gemm / 1e6, cpu_chol, cpu_grad, chol_err, resid, grad_err,
                  gemm_err);
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_linalg: %s\n", e.what());
    return 1;
  }
  return 0;
}
