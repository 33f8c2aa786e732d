// Benchmark of gpu_sum() / gpu_mean()'s core (accurate-reduction.txt):
//   make -C bench bench_reduce
//   ./bench_reduce [max_n] [reps] [table2_max_n] [mode]
// defaults: max_n = 134217728 (2^27), reps = 15, table2_max_n = max_n,
// mode = 1. Modes:
//   0, 1  everything below but the latency and the repeated defaults;
//   2     the target run (about a minute on an H200): verification, the
//         headline, the call latency and the default's figure as 5
//         separate medians; reps >= 51 advised.
//
// Every device time is the whole gpu_sum call with the data on the device:
// all launches and the root read back to the host (device::sum with a kept
// workspace, as gpu_sum() keeps its own), median of `reps` calls after one
// warm-up; GB/s = 8 n / time for doubles (4 n for floats).
//
// 1. Verification: every device method and precision against the CPU path
//    and a long-double reference, at several lengths (max errors printed),
//    with the default settings and with small blocks (many levels).
// 2. Headline at the largest power of two <= max_n: every method, both
//    precisions, in GB/s, with the error of each result and of the
//    sequential CPU Kahan loop (mode 0/1: also with the transfer).
// 3. Latency (mode 2): what a call costs besides reading x: a 16-byte read
//    alone and a short sum.
// 4. Table 3 of the paper (mode 0/1): problem sizes 65535 * 2^k by block
//    sizes 128 ... 2048, speedup over the sequential CPU Kahan loop, GB/s.
// 5. Tuning (mode 0/1): block x work group.
// 6. Table 2 of the paper (mode 0/1): means of U(0, 1) and N(6, 1) data in
//    single precision, naive (CPU) vs kahan vs div2 (device) vs the double
//    mean.

#include <clbayes/reduce/sum.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

using namespace clbayes::reduce;
using clock_type = std::chrono::steady_clock;

namespace {

int reps = 15;
volatile double sink = 0;  // keeps timed results alive

template <typename F>
double median_seconds(F f, int runs) {
  f();  // warm-up (also builds the kernels)
  std::vector<double> t;
  for (int r = 0; r < runs; ++r) {
    auto t0 = clock_type::now();
    f();
    t.push_back(std::chrono::duration<double>(clock_type::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// The paper's sequential baseline: one Kahan accumulator, in double.
double kahan_loop(const double* x, std::size_t n) {
  double s = 0.0, c = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double y = x[i] - c;
    const double t = s + y;
    c = (t - s) - y;
    s = t;
  }
  return s;
}

long double reference_sum(const double* x, std::size_t n) {
  long double s = 0.0L, c = 0.0L;  // compensated long double: exact enough
  for (std::size_t i = 0; i < n; ++i) {
    const long double y = x[i] - c;
    const long double t = s + y;
    c = (t - s) - y;
    s = t;
  }
  return s;
}

double rel(double v, long double ref) {
  return ref == 0 ? std::fabs(v) : static_cast<double>(std::fabs((v - ref) / ref));
}

const sum_method device_methods[] = {sum_method::kahan, sum_method::div2,
                                     sum_method::pairwise};

// The device's settings with this block (and work group and p_max, 0:
// the device's).
device::settings blocks(int block, int work_group = 0, int p_max = 0) {
  device::settings t = device::tuned_settings();
  t.block = block;
  if (work_group > 0) t.work_group = work_group;
  if (p_max > 0) t.p_max = p_max;
  return t;
}

// Seconds of one whole gpu_sum call (median of `runs` after a warm-up).
double call_seconds(const cl::Buffer& xd, std::size_t n, sum_method m, const device::settings& tune,
                    device::workspace& ws, int runs) {
  return median_seconds(
      [&] { sink = device::sum(xd, n, true, m, sum_precision::double_precision, tune, &ws).sum; },
      runs);
}

double gbs(std::size_t n, double seconds) { return n * 8.0 / seconds / 1e9; }

// 3. What a call costs besides reading x.
void latency_section(const cl::Buffer& xd, std::size_t hn, device::workspace& ws) {
  const int runs = std::max(reps, 51);
  const std::size_t small = std::min<std::size_t>(65536, hn);
  cl::Buffer& root = ws.get(0, 2 * sizeof(double));
  const double t_read =
      median_seconds([&] { sink = device::read_root(root, root, true, false, ws); }, runs);
  const double t_small = call_seconds(xd, small, sum_method::div2, device::tuned_settings(), ws, runs);
  std::printf("## Latency: microseconds per call (median of %d)\n\n"
              "| 16-byte read alone (pinned, clFinish) | div2, n = %zu |\n|---|---|\n"
              "| %.1f | %.1f |\n\n",
              runs, small, t_read * 1e6, t_small * 1e6);
}

// The default choice of gpu_sum, 5 separate medians per method: the spread.
void repeated_defaults(const cl::Buffer& xd, std::size_t hn, device::workspace& ws) {
  const int runs = std::max(reps, 51);
  std::printf("## Defaults at n = %zu, double: GB/s of the whole call, 5 separate medians of %d "
              "calls\n\n| method | 1 | 2 | 3 | 4 | 5 | median |\n|---|---|---|---|---|---|---|\n",
              hn, runs);
  for (sum_method m : device_methods) {
    double g[5];
    std::printf("| %s |", method_name(m));
    for (double& v : g) {
      v = gbs(hn, call_seconds(xd, hn, m, device::tuned_settings(), ws, runs));
      std::printf(" %.0f |", v);
    }
    std::sort(g, g + 5);
    std::printf(" %.0f |\n", g[2]);
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t max_n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : (std::size_t(1) << 27);
  if (argc > 2) reps = std::max(1, std::atoi(argv[2]));
  std::size_t t2_max = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : max_n;
  const int mode = argc > 4 ? std::atoi(argv[4]) : 1;
  const bool target = mode == 2;
  if (max_n < 65535) max_n = 65535;
  try {
    clbayes::opencl::context& ctx = clbayes::opencl::context::instance();
    if (!ctx.selected()) {
      std::printf("no OpenCL device with double precision\n");
      return 1;
    }
    const auto& info = ctx.info();
    std::printf("# bench_reduce on %s (%s, %d compute units, max work group %zu)\n\n",
                info.name.c_str(), info.platform_name.c_str(), info.compute_units,
                info.max_work_group_size);

    std::mt19937_64 rng(42);
    std::uniform_real_distribution<double> unif(0.0, 1.0);
    std::vector<double> x(max_n);
    for (auto& v : x) v = unif(rng);
    cl::Buffer xd = device::upload(x.data(), max_n, false);
    cl::Buffer xf = device::upload(x.data(), max_n, true);
    device::workspace ws;

    // 1. verification
    std::printf("## Verification (U(0,1) data; relative errors)\n\n");
    std::printf("| n | method | precision | vs CPU path | vs long double |\n"
                "|---|---|---|---|---|\n");
    // The default settings, and small blocks (many levels, a padded last
    // block at each).
    const char* variant_names[] = {"default", "block 8, wg 2, p_max 4", "block 64, wg 1, p_max 8"};
    const device::settings variants[] = {device::tuned_settings(), blocks(8, 2, 4), blocks(64, 1, 8)};
    const int n_variants = sizeof(variants) / sizeof(variants[0]);
    double worst_double[sizeof(variants) / sizeof(variants[0])] = {0};
    double worst_cpu_kahan = 0;
    const std::size_t checks[] = {1, 2, 3, 127, 128, 129, 1023, 1024, 1025, 2047, 2048, 2049,
                                  4095, 4097, 8191, 8193, 65537, 131071, 1000003,
                                  3 * 1048576 + 5, max_n};
    for (std::size_t n : checks) {
      if (n > max_n) continue;
      const long double ref = reference_sum(x.data(), n);
      worst_cpu_kahan = std::max(worst_cpu_kahan, rel(kahan_loop(x.data(), n), ref));
      for (sum_method m : device_methods)
        for (int single = 0; single < 2; ++single) {
          sum_precision p = single ? sum_precision::single_precision
                                   : sum_precision::double_precision;
          sum_result c = cpu::sum(x.data(), n, m, p);
          for (int v = 0; v < n_variants; ++v) {
            if (v > 0 && n > 1000003) continue;  // small blocks: many launches
            sum_result d = device::sum(single ? xf : xd, n, !single, m, p, variants[v], &ws);
            const double e_cpu = rel(d.sum, c.sum);
            const double e_ref = rel(d.sum, ref);
            if (!single) worst_double[v] = std::max(worst_double[v], e_ref);
            if ((n == 1025 || n == 1000003 || n == max_n) && v == 0)
              std::printf("| %zu | %s | %s | %.2e | %.2e |\n", n, method_name(m),
                          single ? "single" : "double", e_cpu, e_ref);
          }
        }
    }
    std::printf("\nmax relative error in double over all checked lengths and methods "
                "(the sequential CPU Kahan loop: %.2e):\n\n", worst_cpu_kahan);
    for (int v = 0; v < n_variants; ++v)
      std::printf("- %s: %.2e\n", variant_names[v], worst_double[v]);
    std::printf("\n");

    // 2. headline
    std::size_t hn = 1;
    while (hn * 2 <= max_n) hn *= 2;
    const long double href = reference_sum(x.data(), hn);
    const int cpu_runs = target ? 3 : std::max(3, reps / 5);  // CPU loops take 0.2-0.4 s
    double kahan_value = 0;
    const double t_kahan = median_seconds([&] { kahan_value = kahan_loop(x.data(), hn); },
                                          cpu_runs);
    std::printf("## n = %zu (2^%d)\n\n", hn, ceil_log2(hn));
    std::printf("sequential CPU Kahan loop (double): %.3f ms, %.2f GB/s, rel. error %.2e\n\n",
                t_kahan * 1e3, hn * 8.0 / t_kahan / 1e9, rel(kahan_value, href));
    std::printf("| method | precision | device ms | GB/s | speedup | rel. error | "
                "with transfer ms | CPU path ms |\n|---|---|---|---|---|---|---|---|\n");
    for (sum_method m : device_methods)
      for (int single = 0; single < 2; ++single) {
        sum_precision p = single ? sum_precision::single_precision
                                 : sum_precision::double_precision;
        const double tc = median_seconds([&] { sink = cpu::sum(x.data(), hn, m, p).sum; },
                                         cpu_runs);
        sum_result r;
        const double t = median_seconds(
            [&] { r = device::sum(single ? xf : xd, hn, !single, m, p, device::tuned_settings(), &ws); },
            reps);
        char with_transfer[32] = "";
        if (!target) {  // the transfer dominates; time it once per method
          const double tt = median_seconds(
              [&] {
                cl::Buffer b = device::upload(x.data(), hn, single);
                r = device::sum(b, hn, !single, m, p, device::tuned_settings(), &ws);
              },
              cpu_runs);
          std::snprintf(with_transfer, sizeof with_transfer, "%.2f", tt * 1e3);
        }
        std::printf("| %s | %s | %.3f | %.1f | %.1f | %.2e | %s | %.2f |\n", method_name(m),
                    single ? "single" : "double", t * 1e3, hn * (single ? 4.0 : 8.0) / t / 1e9,
                    t_kahan / t, rel(r.sum, href), with_transfer, tc * 1e3);
      }
    {
      const double tc = median_seconds([&] { sink = cpu::sum(x.data(), hn, sum_method::naive,
                                                            sum_precision::double_precision).sum; },
                                       cpu_runs);
      std::printf("| naive (CPU) | double | | | | %.2e | | %.2f |\n\n",
                  rel(cpu::sum(x.data(), hn, sum_method::naive,
                               sum_precision::double_precision).sum, href), tc * 1e3);
    }

    if (target) {
      latency_section(xd, hn, ws);
      repeated_defaults(xd, hn, ws);
      return 0;
    }

    // 5. Table 3
    const int block_sizes[] = {128, 256, 512, 1024, 2048};
    for (sum_method m : {sum_method::div2, sum_method::kahan}) {
      std::printf("## Table 3 layout, %s in double: speedup over the CPU Kahan loop "
                  "(GB/s in brackets) by block\n\n"
                  "| problem size |", method_name(m));
      for (int b : block_sizes) std::printf(" %d |", b);
      std::printf("\n|---|---|---|---|---|---|\n");
      for (std::size_t n = 65535; n <= max_n; n *= 2) {
        const double tk = median_seconds([&] { sink = kahan_loop(x.data(), n); },
                                         n > (std::size_t(1) << 24) ? 3 : 5);
        std::printf("| %zu |", n);
        for (int b : block_sizes) {
          const device::settings tune = blocks(b);
          const double t = median_seconds(
              [&] { sink = device::sum(xd, n, true, m, sum_precision::double_precision, tune, &ws).sum; },
              reps);
          std::printf(" %.1f (%.0f) |", tk / t, n * 8.0 / t / 1e9);
        }
        std::printf("\n");
      }
      std::printf("\n");
    }

    // 6. tuning
    std::printf("## Tuning at n = %zu, double: GB/s by block (rows) and work group "
                "(columns)\n\n", hn);
    const int wgs[] = {64, 128, 256, 512, 1024};
    for (sum_method m : {sum_method::div2, sum_method::kahan}) {
      std::printf("%s:\n\n| block |", method_name(m));
      for (int w : wgs) std::printf(" wg %d |", w);
      std::printf("\n|---|---|---|---|---|---|\n");
      for (int b : {1024, 2048, 4096, 8192}) {
        std::printf("| %d |", b);
        for (int w : wgs) {
          if (b / w < 4 || b / w > 64 || static_cast<std::size_t>(w) > info.max_work_group_size) {
            std::printf(" - |");
            continue;
          }
          const device::settings tune = blocks(b, w);
          const double t = median_seconds(
              [&] { sink = device::sum(xd, hn, true, m, sum_precision::double_precision, tune, &ws).sum; },
              reps);
          std::printf(" %.1f |", hn * 8.0 / t / 1e9);
        }
        std::printf("\n");
      }
      std::printf("\n");
    }
    xd = cl::Buffer();
    xf = cl::Buffer();

    // 7. Table 2
    std::printf("## Table 2 layout: means in single precision\n\n"
                "| data | n | naive (CPU) | kahan | div2 | pairwise | double mean |\n"
                "|---|---|---|---|---|---|---|\n");
    std::normal_distribution<double> norm(6.0, 1.0);
    for (int dist = 0; dist < 2; ++dist) {
      std::mt19937_64 g2(7 + dist);
      std::size_t top = 8388480;
      while (top * 2 <= t2_max) top *= 2;
      std::vector<double> y(std::min<std::size_t>(top, t2_max));
      for (auto& v : y) v = dist == 0 ? unif(g2) : norm(g2);
      cl::Buffer yf = device::upload(y.data(), y.size(), true);
      for (std::size_t n = 8388480; n <= y.size(); n *= 2) {
        const sum_precision sp = sum_precision::single_precision;
        const double naive = cpu::sum(y.data(), n, sum_method::naive, sp).mean;
        const double k = device::sum(yf, n, false, sum_method::kahan, sp, device::tuned_settings(), &ws).mean;
        const double d = device::sum(yf, n, false, sum_method::div2, sp, device::tuned_settings(), &ws).mean;
        const double pw = device::sum(yf, n, false, sum_method::pairwise, sp, device::tuned_settings(), &ws).mean;
        const double dbl = static_cast<double>(reference_sum(y.data(), n) / n);
        std::printf("| %s | %zu | %.6g | %.6g | %.6g | %.6g | %.6g |\n",
                    dist == 0 ? "U(0,1)" : "N(6,1)", n, naive, k, d, pw, dbl);
      }
    }
    return 0;
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 1;
  }
}
