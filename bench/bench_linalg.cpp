// Benchmark of the dense linear algebra core (linalg/): Cholesky with the
// matrix on the device and with transfers from and to host memory, its
// gradient, GEMM, and the CPU (Eigen) path, on the paper's Toeplitz family
// A[i, j] = n - |i - j|, A[i, i] = n^2 (stan-opencl.txt, section 3.3.3).
//
// Build (from the package root, .bench-deps holding Eigen/ and CL/):
//   g++ -std=c++17 -O3 -march=native -DCLBAYES_OPENCL -DCLBAYES_PROFILE -I inst/include
//       -I .bench-deps bench/bench_linalg.cpp -o bench_linalg -lOpenCL
// Run:
//   ./bench_linalg [options] [n ...]      (default n: 1024 2048 4096 8192 16384)
// Options: --reps R (timed runs, median reported; default 5)
//          --cpu-max N (largest n for the CPU path and CPU comparisons; 4096)
//          --tune (sweep the GEMM kernel's tiles at n = 4096, then the
//                  Cholesky settings at n = 8192, the outer block at the
//                  largest n >= 12288 and the gradient block size,
//                  keeping the best of each)
//          --tune-gemm (the GEMM tile sweep of --tune alone, at n = 4096)
//          --tune-share (sweep outer block x units reserved at each
//                        n >= 4096, from the settings given)
//          --profile (per-phase device times of the Cholesky at each n)
//          --device-only (no host-to-host columns: the sweeps' quick form)
// Settings (linalg/settings.hpp; default: the device's row of the table):
//          --large-tiles TM,TN,TK,WPTM,WPTN[,STAGES] (--stages: the small and narrow tiles')
//          --small-below PCT --mma 0|1 (the FP64 tensor cores where the
//          compiler builds them) --narrow-cols C --narrow-tm 64|128
//          --outer-block NB --outer-block-large NB --large-from N
//          --host-block NB (block columns of the streamed host path)
//          --step-cols B --step-threads T --step-base S --trailing-reserve U
//          --grad-block G --grad-block-large G
//          --diag-block D
//          --pinned-chunk-kb K --pinned-threads T (pinned staging copies)
//          --huge-pages 0|1 (advise the arrays copied back onto huge pages)
// The table counts the kernel launches of one factorisation.
// Every result is verified before it is timed: Cholesky against Eigen's LLT
// (n <= cpu-max) and by the residual max|L L^T - A| / max|A| computed on the
// device (all n); the gradient against the Eigen blocked gradient
// (n <= cpu-max); GEMM on 64 random entries against CPU dot products.

#include "linalg_tune.hpp"

#include <clbayes/linalg/cholesky_host.hpp>
#include <clbayes/opencl/pinned_transfer.hpp>

#include <memory>

int main(int argc, char** argv) {
  std::vector<int> sizes;
  int reps = 5, cpu_max = 4096;
  bool tune = false, profile = false, device_only = false, tune_shares = false, tune_gemm_only = false;
  try {
    cl_ops::context& ctx = cl_ops::context::instance();
    ctx.require_device();
    la::linalg_settings s = la::tuned_settings();
    cl_ops::pinned_tuning pinned;
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      auto text = [&]() -> std::string {
        if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
        return argv[++i];
      };
      auto next = [&]() { return std::atoi(text().c_str()); };
      if (a == "--help" || a == "-h") {
        std::printf("usage: bench_linalg [options] [n ...]: see the top of bench_linalg.cpp\n");
        return 0;
      }
      if (a == "--reps") reps = std::max(1, next());
      else if (a == "--cpu-max") cpu_max = next();
      else if (a == "--tune") tune = true;
      else if (a == "--tune-gemm") tune_gemm_only = true;
      else if (a == "--tune-share") tune_shares = true;
      else if (a == "--profile") profile = true;
      else if (a == "--device-only") device_only = true;
      else if (a == "--large-tiles") {
        la::gemm_tiles& t = s.gemm.large;
        if (std::sscanf(text().c_str(), "%d,%d,%d,%d,%d,%d", &t.tm, &t.tn, &t.tk, &t.wptm,
                        &t.wptn, &t.stages) < 5)
          throw std::runtime_error("--large-tiles needs TM,TN,TK,WPTM,WPTN[,STAGES]");
        t.stages = std::max(2, t.stages);
      }
      else if (a == "--stages") s.gemm.small.stages = s.gemm.narrow.stages = std::max(2, next());
      else if (a == "--small-below") s.gemm.small_below_pct = std::max(0, next());
      else if (a == "--mma") s.gemm.tensor_cores = next() != 0;
      else if (a == "--narrow-cols") s.gemm.narrow_cols = std::max(0, next());
      else if (a == "--narrow-tm") { s.gemm.narrow.tm = next(); s.gemm.narrow.wptm = s.gemm.narrow.tm / 16; }
      else if (a == "--outer-block") s.cholesky.outer_block = std::max(1, next());
      else if (a == "--host-block") s.cholesky.host_block = std::max(1, next());
      else if (a == "--outer-block-large") s.cholesky.outer_block_large = std::max(0, next());
      else if (a == "--large-from") s.cholesky.large_from = next();
      else if (a == "--step-cols") s.cholesky.step_cols = next();
      else if (a == "--step-threads") s.cholesky.step_threads = next();
      else if (a == "--step-base") s.cholesky.step_base = std::max(1, next());
      else if (a == "--trailing-reserve") s.cholesky.trailing_reserve = std::max(0, next());
      else if (a == "--grad-block") s.cholesky.grad_block = std::max(1, next());
      else if (a == "--grad-block-large") s.cholesky.grad_block_large = std::max(1, next());
      else if (a == "--diag-block") s.diag_block = next();
      else if (a == "--pinned-chunk-kb") pinned.chunk_bytes = std::size_t(std::max(1, next())) << 10;
      else if (a == "--pinned-threads") pinned.threads = next();
      else if (a == "--huge-pages") pinned.huge_pages = next() != 0;
      else if (std::atoi(a.c_str()) > 0 && a.find_first_not_of("0123456789") == std::string::npos)
        sizes.push_back(std::atoi(a.c_str()));
      else
        throw std::runtime_error("unknown option or size '" + a + "' (--help)");
    }
    if (sizes.empty()) sizes = {1024, 2048, 4096, 8192, 16384};
    const auto& info = ctx.info();
    std::printf("device: %s (%s), %d compute units, %.1f GiB\n", info.name.c_str(),
                info.platform_name.c_str(), info.compute_units, info.global_mem / 1073741824.0);
    auto print_options = [&](const char* when) {
      std::printf("settings %s: reps %d, %s\n\n", when, reps, flags_of(s).c_str());
    };
    print_options("at start");
    // The GEMM columns use the GEMM settings the GEMM sweep kept (without
    // --tune: those given), the Cholesky its own.
    la::gemm_settings gemm_kept = s.gemm;
    if (tune) {
      const int largest = *std::max_element(sizes.begin(), sizes.end());
      tune_gemm(std::min(4096, largest), reps, s);
      gemm_kept = s.gemm;
      tune_cholesky(std::min(8192, largest), largest >= 12288 ? largest : 0, reps, s);
      print_options("kept");
    }
    if (tune_gemm_only && !tune) {
      tune_gemm(4096, reps, s);
      gemm_kept = s.gemm;
    }
    if (tune_shares)
      for (int n : sizes)
        if (n >= 4096) tune_share(n, reps, s);

    if (profile)
      for (int n : sizes) profile_cholesky(upload(toeplitz(n)), "as set", s);
    std::printf("| n | chol device (ms) | chol GFLOP/s | chol + transfers, packed L (ms) | "
                "chol + transfers, full L (ms) | chol + pinned transfers, full L (ms) | "
                "chol host to host, streamed (ms) | the same into fresh memory (ms) | "
                "streamed vs device L | grad device (ms) | "
                "GEMM (ms) | GEMM GFLOP/s | CPU chol (ms) | CPU grad (ms) | chol err vs CPU | "
                "chol residual | grad err vs CPU | GEMM err | chol launches |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int n : sizes) {
      clbayes::check_interrupt();
      const double nd = n;
      Eigen::MatrixXd a = toeplitz(n);
      matrix_cl da = upload(a);
      // Verify first.
      matrix_cl dl;
      const unsigned long long launches = launches_of([&] { dl = la::cholesky(da, s); });
      Eigen::MatrixXd l_dev = download(dl);
      matrix_cl llt = la::multiply_transpose(dl, s.gemm);
      const double resid = max_abs(download(cl_ops::subtract(llt, da))) / max_abs(a);
      const bool cpu = n <= cpu_max;
      double chol_err = NAN, grad_err = NAN, cpu_chol = NAN, cpu_grad = NAN;
      std::mt19937 rng(n);
      std::normal_distribution<double> norm;
      Eigen::MatrixXd l_adj(n, n);
      for (int i = 0; i < l_adj.size(); ++i) l_adj.data()[i] = norm(rng);
      l_adj = l_adj.triangularView<Eigen::Lower>();
      matrix_cl dl_adj = upload(l_adj);
      matrix_cl dg = la::cholesky_grad(dl, dl_adj, s);
      if (cpu) {
        Eigen::MatrixXd l_cpu = la::cholesky(a);
        chol_err = max_abs(l_dev - l_cpu) / max_abs(l_cpu);
        Eigen::MatrixXd g_cpu = la::cholesky_grad(l_cpu, l_adj, s.cholesky.grad_block);
        grad_err = max_abs(download(dg) - g_cpu) / max_abs(g_cpu);
        cpu_chol = time_ms(reps, [&] {
          Eigen::MatrixXd w = a;
          Eigen::Map<Eigen::MatrixXd> m(w.data(), n, n);
          la::cholesky_in_place(m);
        });
        cpu_grad = time_ms(std::min(reps, 3), [&] {
          Eigen::MatrixXd g = la::cholesky_grad(l_cpu, l_adj, s.cholesky.grad_block);
        });
      }
      Eigen::MatrixXd b(n, n);
      for (int i = 0; i < b.size(); ++i) b.data()[i] = norm(rng);
      matrix_cl db = upload(b);
      const double gemm_err = gemm_sample_error(a, b, la::multiply(da, db, gemm_kept));
      // Then time.
      const double t_chol = time_ms(reps, [&] { matrix_cl x = la::cholesky(da, s); finish(); });
      // The host-to-host columns, unless --device-only.
      double t_trans = NAN, t_trans_full = NAN, t_pinned = NAN, t_streamed = NAN, t_fresh = NAN,
             streamed_diff = NAN;
      if (!device_only) {
        std::vector<double> packed_host(a.size());
        t_trans = time_ms(reps, [&] {
          matrix_cl x = cl_ops::to_matrix_cl(a.data(), n, n);
          matrix_cl y = la::cholesky(x, s);
          cl_ops::from_matrix_cl(y, packed_host.data());  // packed lower triangle
        });
        // The same with the whole L read back (no packing): which is faster
        // depends on the bus and on host memory bandwidth.
        t_trans_full = time_ms(reps, [&] {
          matrix_cl x = cl_ops::to_matrix_cl(a.data(), n, n);
          matrix_cl y = la::cholesky(x, s);
          y.set_view(clbayes::matrix_view::entire);
          cl_ops::from_matrix_cl(y, packed_host.data());
        });
        // The same through pinned staging buffers (opencl/pinned_transfer.hpp),
        // checked to give the same L bit for bit.
        auto chol_pinned = [&] {
          matrix_cl x = cl_ops::to_matrix_cl_pinned(a.data(), n, n, pinned);
          matrix_cl y = la::cholesky(x, s);
          cl_ops::from_matrix_cl_pinned(y, packed_host.data(), pinned);
        };
        chol_pinned();
        const bool pinned_ok =
            Eigen::Map<Eigen::MatrixXd>(packed_host.data(), n, n).cwiseEqual(l_dev).all();
        t_pinned = time_ms(reps, chol_pinned);
        if (!pinned_ok) t_pinned = NAN;
        // Host to host with the transfers overlapped (linalg/cholesky_host.hpp,
        // what gpu_chol() runs on a matrix), beside the copy-factor-copy of
        // the column before, into the same host array.
        auto chol_streamed = [&] { la::cholesky_host(a.data(), n, n, false, packed_host.data(), s, pinned); };
        chol_streamed();
        streamed_diff =
            max_abs(Eigen::Map<Eigen::MatrixXd>(packed_host.data(), n, n) - l_dev) / max_abs(l_dev);
        t_streamed = time_ms(reps, chol_streamed);
        if (!(streamed_diff < 1e-12)) t_streamed = NAN;
        // The same into memory never written before, as gpu_chol() gets from
        // R for each result: the host maps its pages as the copies write them.
        t_fresh = time_ms(reps, [&] {
          std::unique_ptr<double[]> fresh(new double[static_cast<std::size_t>(n) * n]);
          la::cholesky_host(a.data(), n, n, false, fresh.get(), s, pinned);
        });
      }
      const double t_grad =
          time_ms(reps, [&] { matrix_cl x = la::cholesky_grad(dl, dl_adj, s); finish(); });
      const double t_gemm =
          time_ms(reps, [&] { matrix_cl x = la::multiply(da, db, gemm_kept); finish(); });
      std::printf("| %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.1e | %.2f | %.2f | %.2f | %.2f | %.2f | %.1e | %.1e | %.1e | %.1e "
                  "| %llu |\n",
                  n, t_chol, nd * nd * nd / 3 / t_chol / 1e6, t_trans, t_trans_full, t_pinned,
                  t_streamed, t_fresh, streamed_diff, t_grad, t_gemm,
                  2 * nd * nd * nd / t_gemm / 1e6, cpu_chol, cpu_grad, chol_err, resid, grad_err,
                  gemm_err, launches);
      std::fflush(stdout);
    }
    const clbayes::opencl::buffer_pool& pool = ctx.pool();
    std::printf("\nbuffer pool (opencl/buffer_pool.hpp): %llu matrices of 1 MiB or more reused, "
                "%llu allocated; %.0f MiB kept\n",
                pool.hits(), pool.misses(), pool.kept_bytes() / 1048576.0);
    if (tune)  // the settings as flags, to run again or to set as defaults
      std::printf("\nkept: %s\n", flags_of(s).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_linalg: %s\n", e.what());
    return 1;
  }
  return 0;
}
