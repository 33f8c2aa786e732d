// Benchmark of gpu_sum() / gpu_mean()'s core (accurate-reduction.txt):
//   g++ -std=c++17 -O3 -march=native -DCLBAYES_OPENCL -I inst/include
//       -I .bench-deps inst/bench/bench_reduce.cpp -o bench_reduce -lOpenCL
//   ./bench_reduce [max_n] [reps] [table2_max_n] [sweep]
// defaults: max_n = 134217728 (2^27), reps = 15, table2_max_n = max_n,
// sweep = 1 (0: a small stream-kernel sweep, for slow devices such as PoCL).
// Two device kernels are compared side by side: "legacy" (the paper's
// multi-level launches) and "stream" (one launch, the default).
//
// 1. Verification: every device method and precision against the CPU path
//    and a long-double reference, at several lengths (max errors printed).
// 2. Headline at the largest power of two <= max_n: every method, both
//    precisions, device-resident and with the transfer, in GB/s, with the
//    error of each result and of the sequential CPU Kahan loop.
// 3. Table 3 of the paper: problem sizes 65535 * 2^k by block sizes
//    128 ... 2048, speedup of div2 and of kahan (float64, device-resident)
//    over the sequential CPU Kahan loop, and GB/s.
// 4. Tuning: block size x work-group size at the headline size (legacy),
//    and groups x work group x unroll, fused or not (stream).
// 5. Table 2 of the paper: means of U(0, 1) and N(6, 1) data in single
//    precision, naive (CPU) vs kahan vs div2 (device) vs the double mean.
// Times are medians of `reps` runs after one warm-up; a device time ends
// when the result is back on the host.

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

device::tuning legacy_tuning() {
  device::tuning t;
  t.kernel = device::kernel_kind::legacy;
  return t;
}

device::tuning stream_tuning(int groups = 0, int wg = 0, int unroll = 0, int fuse = -1) {
  device::tuning t;
  t.kernel = device::kernel_kind::stream;
  t.groups = groups;
  t.work_group = wg;
  t.unroll = unroll;
  t.fuse = fuse;
  return t;
}

// GB/s of the stream kernel over its knobs at the headline size hn, then
// fused vs unfused at each method's best setting; prints the best settings.
void stream_sweep(const cl::Buffer& xd, std::size_t hn, device::workspace& ws,
                  std::size_t max_wg, bool full) {
  const std::vector<int> groups = full ? std::vector<int>{256, 512, 1024, 2048}
                                       : std::vector<int>{0};
  const std::vector<int> wgs = full ? std::vector<int>{128, 256, 512} : std::vector<int>{0};
  const std::vector<int> unrolls = full ? std::vector<int>{2, 4, 8} : std::vector<int>{2, 4};
  const sum_precision dp = sum_precision::double_precision;
  std::printf("## Tuning at n = %zu, double, stream kernel (fused): GB/s by groups x work "
              "group (rows) and unroll (columns); 0 = default\n\n", hn);
  for (sum_method m : {sum_method::div2, sum_method::kahan}) {
    std::printf("%s:\n\n| groups | wg |", method_name(m));
    for (int u : unrolls) std::printf(" unroll %d |", u);
    std::printf("\n|---|---|");
    for (std::size_t i = 0; i < unrolls.size(); ++i) std::printf("---|");
    std::printf("\n");
    double best = 0;
    device::tuning best_tune = stream_tuning();
    for (int g : groups)
      for (int w : wgs) {
        if (static_cast<std::size_t>(w) > max_wg) continue;
        std::printf("| %d | %d |", g, w);
        for (int u : unrolls) {
          const device::tuning tune = stream_tuning(g, w, u, 1);
          const double t = median_seconds(
              [&] { sink = device::sum(xd, hn, true, m, dp, tune, &ws).sum; }, reps);
          const double gbs = hn * 8.0 / t / 1e9;
          if (gbs > best) {
            best = gbs;
            best_tune = tune;
          }
          std::printf(" %.1f |", gbs);
        }
        std::printf("\n");
      }
    device::tuning unfused = best_tune;
    unfused.fuse = 0;
    const double tu = median_seconds(
        [&] { sink = device::sum(xd, hn, true, m, dp, unfused, &ws).sum; }, reps);
    std::printf("\nbest %s: groups %d, wg %d, unroll %d: %.1f GB/s fused, %.1f GB/s with a "
                "second launch (fuse 0)\n\n", method_name(m), best_tune.groups,
                best_tune.work_group, best_tune.unroll, best, hn * 8.0 / tu / 1e9);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t max_n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : (std::size_t(1) << 27);
  if (argc > 2) reps = std::max(1, std::atoi(argv[2]));
  std::size_t t2_max = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : max_n;
  const bool full_sweep = argc > 4 ? std::atoi(argv[4]) != 0 : true;
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
    std::printf("| n | method | precision | kernel | vs CPU path | vs long double |\n"
                "|---|---|---|---|---|---|\n");
    // Kernels checked: legacy, the stream default, and stream shapes that
    // exercise a long binary counter (few groups), 8 loads in flight, the
    // unfused second launch and many groups per last-group item.
    const char* variant_names[] = {"legacy", "stream", "stream g1 u1", "stream u8",
                                   "stream unfused", "stream g2048 wg64"};
    const device::tuning variants[] = {legacy_tuning(), stream_tuning(),
                                       stream_tuning(1, 64, 1), stream_tuning(0, 0, 8),
                                       stream_tuning(0, 0, 0, 0), stream_tuning(2048, 64, 2)};
    const int n_variants = sizeof(variants) / sizeof(variants[0]);
    double worst_double[sizeof(variants) / sizeof(variants[0])] = {0};
    double worst_cpu_kahan = 0;
    const std::size_t checks[] = {1, 2, 3, 127, 128, 129, 1023, 1024, 1025, 2047,
                                  2048, 2049, 4095, 4097, 65537, 1000003, 3 * 1048576 + 5, max_n};
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
            sum_result d = device::sum(single ? xf : xd, n, !single, m, p, variants[v], &ws);
            const double e_cpu = rel(d.sum, c.sum);
            const double e_ref = rel(d.sum, ref);
            if (!single) worst_double[v] = std::max(worst_double[v], e_ref);
            if ((n == 1025 || n == 1000003 || n == max_n) && v < 2)
              std::printf("| %zu | %s | %s | %s | %.2e | %.2e |\n", n, method_name(m),
                          single ? "single" : "double", variant_names[v], e_cpu, e_ref);
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
    double kahan_value = 0;
    const double t_kahan = median_seconds([&] { kahan_value = kahan_loop(x.data(), hn); },
                                          std::max(3, reps / 5));
    std::printf("## n = %zu (2^%d)\n\n", hn, ceil_log2(hn));
    std::printf("sequential CPU Kahan loop (double): %.3f ms, %.2f GB/s, rel. error %.2e\n\n",
                t_kahan * 1e3, hn * 8.0 / t_kahan / 1e9, rel(kahan_value, href));
    std::printf("| method | precision | kernel | device ms | GB/s | speedup | rel. error | "
                "with transfer ms | CPU path ms |\n|---|---|---|---|---|---|---|---|---|\n");
    for (sum_method m : device_methods)
      for (int single = 0; single < 2; ++single) {
        sum_precision p = single ? sum_precision::single_precision
                                 : sum_precision::double_precision;
        const double tc = median_seconds([&] { sink = cpu::sum(x.data(), hn, m, p).sum; },
                                         std::max(3, reps / 5));
        for (int stream = 0; stream < 2; ++stream) {
          const device::tuning tune = stream ? stream_tuning() : legacy_tuning();
          sum_result r;
          const double t = median_seconds(
              [&] { r = device::sum(single ? xf : xd, hn, !single, m, p, tune, &ws); }, reps);
          double tt = 0;
          if (stream)  // the transfer dominates; time it once per method
            tt = median_seconds(
                [&] {
                  cl::Buffer b = device::upload(x.data(), hn, single);
                  r = device::sum(b, hn, !single, m, p, tune, &ws);
                },
                std::max(3, reps / 5));
          char with_transfer[32] = "";
          if (stream) std::snprintf(with_transfer, sizeof with_transfer, "%.2f", tt * 1e3);
          std::printf("| %s | %s | %s | %.3f | %.1f | %.1f | %.2e | %s | %.2f |\n",
                      method_name(m), single ? "single" : "double",
                      stream ? "stream" : "legacy", t * 1e3,
                      hn * (single ? 4.0 : 8.0) / t / 1e9, t_kahan / t, rel(r.sum, href),
                      with_transfer, tc * 1e3);
        }
      }
    {
      const double tc = median_seconds([&] { sink = cpu::sum(x.data(), hn, sum_method::naive,
                                                            sum_precision::double_precision).sum; },
                                       std::max(3, reps / 5));
      std::printf("| naive (CPU) | double | | | | %.2e | | %.2f |\n\n",
                  rel(cpu::sum(x.data(), hn, sum_method::naive,
                               sum_precision::double_precision).sum, href), tc * 1e3);
    }

    // 3. Table 3
    const int blocks[] = {128, 256, 512, 1024, 2048};
    for (sum_method m : {sum_method::div2, sum_method::kahan}) {
      std::printf("## Table 3 layout, %s in double: speedup over the CPU Kahan loop "
                  "(GB/s in brackets); legacy kernel by block, then the stream kernel\n\n"
                  "| problem size |", method_name(m));
      for (int b : blocks) std::printf(" %d |", b);
      std::printf(" stream |\n|---|---|---|---|---|---|---|\n");
      for (std::size_t n = 65535; n <= max_n; n *= 2) {
        const double tk = median_seconds([&] { sink = kahan_loop(x.data(), n); },
                                         n > (std::size_t(1) << 24) ? 3 : 5);
        std::printf("| %zu |", n);
        for (int b : blocks) {
          device::tuning tune = legacy_tuning();
          tune.block = b;
          const double t = median_seconds(
              [&] { sink = device::sum(xd, n, true, m, sum_precision::double_precision, tune, &ws).sum; },
              reps);
          std::printf(" %.1f (%.0f) |", tk / t, n * 8.0 / t / 1e9);
        }
        const double ts = median_seconds(
            [&] {
              sink = device::sum(xd, n, true, m, sum_precision::double_precision,
                                 stream_tuning(), &ws).sum;
            },
            reps);
        std::printf(" %.1f (%.0f) |\n", tk / ts, n * 8.0 / ts / 1e9);
      }
      std::printf("\n");
    }

    // 4. tuning
    std::printf("## Tuning at n = %zu, double, legacy kernel: GB/s by block (rows) and work "
                "group (columns)\n\n", hn);
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
          device::tuning tune = legacy_tuning();
          tune.block = b;
          tune.work_group = w;
          const double t = median_seconds(
              [&] { sink = device::sum(xd, hn, true, m, sum_precision::double_precision, tune, &ws).sum; },
              reps);
          std::printf(" %.1f |", hn * 8.0 / t / 1e9);
        }
        std::printf("\n");
      }
      std::printf("\n");
    }
    stream_sweep(xd, hn, ws, info.max_work_group_size, full_sweep);
    xd = cl::Buffer();
    xf = cl::Buffer();

    // 5. Table 2
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
        const double k = device::sum(yf, n, false, sum_method::kahan, sp, {}, &ws).mean;
        const double d = device::sum(yf, n, false, sum_method::div2, sp, {}, &ws).mean;
        const double pw = device::sum(yf, n, false, sum_method::pairwise, sp, {}, &ws).mean;
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
