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
//                  Cholesky settings at n = 8192, the outer block at the
//                  largest n >= 12288 and the gradient block size,
//                  keeping the best of each)
//          --tune-gemm (the GEMM tile sweep of --tune alone, at n = 4096)
//          --tune-share (sweep outer block x units reserved at each
//                        n >= 4096, from the settings given)
//          --profile (per-phase device times of the Cholesky at each n)
//          --gemm-kernel 1|2 --small-below PCT --mma 0|1 (kernel 2 on the
//          FP64 tensor cores where available) --narrow-cols C
//          --narrow-tm 64|128 (kernel 2's narrow tiles up to C columns)
//          --outer-block NB --outer-block-large NB --chol-block B
//          --leaf-t T --trailing-reserve U --grad-block G --diag-block D
//          --pinned-chunk-kb K --pinned-threads T (pinned staging copies)
// The table counts the kernel launches of one factorisation.
// Every result is verified before it is timed: Cholesky against Eigen's LLT
// (n <= cpu-max) and by the residual max|L L^T - A| / max|A| computed on the
// device (all n); the gradient against the Eigen blocked gradient
// (n <= cpu-max); GEMM on 64 random entries against CPU dot products.

#include "linalg_tune.hpp"

#include <clbayes/opencl/pinned_transfer.hpp>

int main(int argc, char** argv) {
  std::vector<int> sizes;
  int reps = 5, cpu_max = 4096;
  bool tune = false, profile = false, tune_shares = false, tune_gemm_only = false;
  try {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      auto next = [&]() { if (i + 1 >= argc) throw std::runtime_error(a + " needs a value"); return std::atoi(argv[++i]); };
      if (a == "--reps") reps = std::max(1, next());
      else if (a == "--cpu-max") cpu_max = next();
      else if (a == "--tune") tune = true;
      else if (a == "--tune-gemm") tune_gemm_only = true;
      else if (a == "--tune-share") tune_shares = true;
      else if (a == "--profile") profile = true;
      else if (a == "--gemm-kernel") la::gemm_settings().kernel = next();
      else if (a == "--small-below") la::gemm_settings().small_below_pct = std::max(0, next());
      else if (a == "--mma") la::gemm_settings().mma = next();
      else if (a == "--narrow-cols") la::gemm_settings().narrow_cols = std::max(0, next());
      else if (a == "--narrow-tm") set_narrow_tm(next());
      else if (a == "--outer-block") la::cholesky_settings().outer_block = std::max(1, next());
      else if (a == "--outer-block-large") la::cholesky_settings().outer_block_large = std::max(0, next());
      else if (a == "--chol-block") cl_ops::kernels::cholesky_leaf.set_option("CHOLESKY_BLOCK", next());
      else if (a == "--leaf-t") cl_ops::kernels::cholesky_leaf.set_option("LEAF_T", next());
      else if (a == "--trailing-reserve") la::cholesky_settings().trailing_reserve = std::max(0, next());
      else if (a == "--grad-block") la::cholesky_grad_block_size() = std::max(1, next());
      else if (a == "--diag-block") cl_ops::kernels::diag_inv.set_option("DIAG_BLOCK", next());
      else if (a == "--pinned-chunk-kb") cl_ops::pinned_settings().chunk_bytes = std::size_t(std::max(1, next())) << 10;
      else if (a == "--pinned-threads") cl_ops::pinned_settings().threads = next();
      else sizes.push_back(std::atoi(a.c_str()));
    }
    if (sizes.empty()) sizes = {1024, 2048, 4096, 8192, 16384};
    cl_ops::context& ctx = cl_ops::context::instance();
    ctx.require_device();
    const auto& info = ctx.info();
    std::printf("device: %s (%s), %d compute units, %.1f GiB\n", info.name.c_str(),
                info.platform_name.c_str(), info.compute_units, info.global_mem / 1073741824.0);
    auto print_options = [&](const char* when) {
      const auto& g = cl_ops::kernels::gemm_nn;
      const auto& d = cl_ops::kernels::gemm_db_nn;
      const auto& s = la::cholesky_settings();
      std::printf("options %s: reps %d, GEMM kernel %d (small below %d%%, narrow up to %d "
                  "columns, TM %d), outer block %d, outer block large %d from %d, "
                  "CHOLESKY_BLOCK %d, LEAF_T %d, units reserved %d, DIAG_BLOCK %d, grad block %d, "
                  "kernel 1 TM %d TN %d TK %d WPTM %d WPTN %d, kernel 2 TM %d TN %d TK %d WPTM %d "
                  "WPTN %d\n\n", when, reps, la::gemm_settings().kernel,
                  la::gemm_settings().small_below_pct, la::gemm_settings().narrow_cols,
                  cl_ops::kernels::gemm_db_narrow_nn.option("TM"), s.outer_block,
                  s.outer_block_large, s.large_from,
                  cl_ops::kernels::cholesky_leaf.option("CHOLESKY_BLOCK"),
                  cl_ops::kernels::cholesky_leaf.option("LEAF_T"), s.trailing_reserve,
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
      tune_cholesky(std::min(8192, largest), largest >= 12288 ? largest : 0, reps);
      print_options("kept");
    }
    if (tune_gemm_only && !tune) tune_gemm(4096, reps);
    if (tune_shares)
      for (int n : sizes)
        if (n >= 4096) tune_share(n, reps);
    const chol_cfg new_chol = get_chol();
    // The GEMM columns use the kernel the GEMM sweep chose (without --tune:
    // the default), the Cholesky its own.
    const int new_kernel = gemm_kernel_kept;

    if (profile)
      for (int n : sizes) profile_cholesky(upload(toeplitz(n)), "as set");
    std::printf("| n | chol device (ms) | chol GFLOP/s | chol + transfers, packed L (ms) | "
                "chol + transfers, full L (ms) | chol + pinned transfers, full L (ms) | grad device (ms) | "
                "GEMM (ms) | GEMM GFLOP/s | CPU chol (ms) | CPU grad (ms) | chol err vs CPU | "
                "chol residual | grad err vs CPU | GEMM err | chol launches |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
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
      // The same through pinned staging buffers (opencl/pinned_transfer.hpp),
      // checked to give the same L bit for bit.
      auto chol_pinned = [&] {
        matrix_cl x = cl_ops::to_matrix_cl_pinned(a.data(), n, n);
        matrix_cl y = la::cholesky(x);
        cl_ops::from_matrix_cl_pinned(y, packed_host.data());
      };
      chol_pinned();
      const bool pinned_ok =
          Eigen::Map<Eigen::MatrixXd>(packed_host.data(), n, n).cwiseEqual(l_dev).all();
      double t_pinned = time_ms(reps, chol_pinned);
      if (!pinned_ok) t_pinned = NAN;
      const double t_grad = time_ms(reps, [&] { matrix_cl x = la::cholesky_grad(dl, dl_adj); finish(); });
      la::gemm_settings().kernel = new_kernel;
      const double t_gemm = time_ms(reps, [&] { matrix_cl x = la::multiply(da, db); finish(); });
      la::gemm_settings().kernel = new_chol.kernel;
      std::printf("| %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.1e | %.1e | %.1e | %.1e "
                  "| %llu |\n",
                  n, t_chol, nd * nd * nd / 3 / t_chol / 1e6, t_trans, t_trans_full, t_pinned, t_grad, t_gemm,
                  2 * nd * nd * nd / t_gemm / 1e6, cpu_chol, cpu_grad, chol_err, resid, grad_err,
                  gemm_err, launches);
      std::fflush(stdout);
    }
    if (tune) {  // the settings as flags, to run again or to set as defaults
      const auto& s = la::cholesky_settings();
      const auto& g = la::gemm_settings();
      const auto& d = cl_ops::kernels::gemm_db_nn;
      std::printf("\nkept: --gemm-kernel %d --small-below %d --narrow-cols %d --narrow-tm %d "
                  "--outer-block %d --outer-block-large %d --chol-block %d --leaf-t %d "
                  "--trailing-reserve %d --grad-block %d "
                  "(kernel 2 TM %d TN %d TK %d WPTM %d WPTN %d; outer block large from %d)\n",
                  g.kernel, g.small_below_pct, g.narrow_cols,
                  cl_ops::kernels::gemm_db_narrow_nn.option("TM"), s.outer_block,
                  s.outer_block_large, cl_ops::kernels::cholesky_leaf.option("CHOLESKY_BLOCK"),
                  cl_ops::kernels::cholesky_leaf.option("LEAF_T"), s.trailing_reserve,
                  la::cholesky_grad_block_size(), d.option("TM"), d.option("TN"), d.option("TK"),
                  d.option("WPTM"), d.option("WPTN"), s.large_from);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_linalg: %s\n", e.what());
    return 1;
  }
  return 0;
}
