#ifndef CLBAYES_BATCHED_BATCH_HPP
#define CLBAYES_BATCHED_BATCH_HPP

// How a batch of small matrices is stored, and host-side helpers shared by
// the batched routines (input checks, work-group sizes and memory budgets
// from their settings, reading per-item status flags back).
//
// A batch of B matrices, each rows x cols, lives in one buffer with element
// (i, j) of item b at b * bs + i * rs + j * cs (batched-linalg.txt: arbitrary
// strides, so both layouts below and transposes need no repacking).

#include "../config.hpp"
#include "../cpu_parallel.hpp"
#include "../error.hpp"
#include "../interrupt.hpp"
#include "settings.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>
#ifdef _OPENMP
#include <omp.h>
#endif

#ifdef CLBAYES_OPENCL
#include "../opencl/context.hpp"
#include "../opencl/matrix_cl.hpp"
#endif

namespace clbayes {
namespace batched {

struct batch_layout {
  int rs;  // stride between rows
  int cs;  // stride between columns
  int bs;  // stride between items
};

/** Item after item, each column-major: R's rows x cols x B array. */
inline batch_layout contiguous(int rows, int cols) { return {1, rows, rows * cols}; }

/** Item index fastest (coalesced when work item b handles item b). */
inline batch_layout interleaved(int rows, int cols, int B) {
  (void)cols;
  return {B, B * rows, 1};
}

/** Throws unless rows * cols * B fits the 32-bit indices of the kernels. */
inline void check_batch_size(const char* arg, long long rows, long long cols,
                             long long B) {
  if (rows < 0 || cols < 0 || B < 0)
    throw invalid_argument(arg, "must have non-negative dimensions");
  if (rows * cols * B >= static_cast<long long>(std::numeric_limits<int>::max()))
    throw invalid_argument(arg, "has too many elements for one batched launch "
                                "(at most 2^31 - 1); split the batch");
}

/** Throws unless every value is finite. */
inline void check_finite(const char* arg, const double* x, std::size_t n) {
  for (std::size_t k = 0; k < n; ++k)
    if (!std::isfinite(x[k]))
      throw invalid_argument(arg, "must not contain NA, NaN or infinite values");
}

/** Index of the first item (0-based) that is not symmetric, or -1. */
inline long long first_asymmetric(const double* a, int m, int B, double tol = 1e-8) {
  const std::size_t mm = static_cast<std::size_t>(m) * m;
  for (int b = 0; b < B; ++b) {
    const double* x = a + b * mm;
    double scale = 0.0;
    for (std::size_t k = 0; k < mm; ++k) scale = std::fmax(scale, std::fabs(x[k]));
    for (int j = 0; j < m; ++j)
      for (int i = j + 1; i < m; ++i)
        if (std::fabs(x[i + j * m] - x[j + i * m]) > tol * scale) return b;
  }
  return -1;
}

/**
 * Run f(b) for b = 0..B-1, in parallel over items where OpenMP is on and a
 * chunk holds at least cpu_parallel_min_work (parallel-slice.txt, Listing
 * 1). The user can interrupt between chunks of about `work_per_chunk` /
 * `work_per_item` items, and at least one item per thread; f must not
 * throw.
 */
template <typename F>
void for_each_item(int B, double work_per_item, F f,
                   double work_per_chunk = 5e7) {
  const double per = work_per_item > 1.0 ? work_per_item : 1.0;
#ifdef _OPENMP
  const double threads = omp_get_max_threads();
#else
  const double threads = 1.0;
#endif
  const int chunk = static_cast<int>(std::fmax(threads, std::fmin(1e6, work_per_chunk / per)));
  for (int b0 = 0; b0 < B; b0 += chunk) {
    check_interrupt();
    const int b1 = B - b0 > chunk ? b0 + chunk : B;
#ifdef _OPENMP
    const bool parallel = b1 - b0 > 1 && (b1 - b0) * per >= cpu_parallel_min_work;
#pragma omp parallel for schedule(dynamic) if (parallel)
#endif
    for (int b = b0; b < b1; ++b) f(b);
  }
}

/** Smallest power of two >= n, clamped to [lo, hi]. */
inline int pow2_size(int n, int lo, int hi) {
  int s = 1;
  while (s < n && s < hi) s *= 2;
  return s < lo ? lo : s;
}

#ifdef CLBAYES_OPENCL

/** Local memory bytes a batched kernel may use on the selected device. */
inline std::size_t local_budget(const batched_settings& t) {
  if (t.local_budget > 0) return t.local_budget;
  const std::size_t dev = opencl::context::instance().info().local_mem;
  return dev > 1024 ? dev - 1024 : 0;
}

/** Bytes of global scratch a gp_loglik launch may use (one buffer). */
inline std::size_t gp_scratch_budget(const batched_settings& t) {
  if (t.gp_scratch_budget > 0) return t.gp_scratch_budget;
  opencl::context& ctx = opencl::context::instance();
  const std::uint64_t quarter = ctx.info().global_mem / 4;
  const std::uint64_t max_alloc = ctx.device().getInfo<CL_DEVICE_MAX_MEM_ALLOC_SIZE>();
  return static_cast<std::size_t>(quarter < max_alloc ? quarter : max_alloc);
}

/** Largest work group for a batched kernel on the selected device. */
inline int team_size_limit(const batched_settings& t) {
  const opencl::device_info& info = opencl::context::instance().info();
  const std::size_t dev = info.max_work_group_size;
  int hi = t.team_size_max;
  // A CPU device runs a work group on one core, and runtimes such as PoCL
  // compile one variant per work-group size: large groups buy nothing there,
  // and one size means one compilation per kernel.
  if (info.type == "cpu" && hi > 32) hi = 32;
  while (static_cast<std::size_t>(hi) > dev && hi > 1) hi /= 2;
  return hi;
}

/** A device buffer for n ints (matrix_cl holds doubles: half as many rows). */
inline opencl::matrix_cl int_buffer(long long n) {
  return opencl::matrix_cl(static_cast<int>((n + 1) / 2 > 0 ? (n + 1) / 2 : 1), 1);
}

/** Read n ints back from an int_buffer, after its pending writes. */
inline std::vector<int> read_ints(const opencl::matrix_cl& buf, long long n) {
  std::vector<int> out(static_cast<std::size_t>(n));
  if (n == 0) return out;
  try {
    std::vector<cl::Event> waits = buf.write_events();
    cl::Event ev;
    opencl::context::instance().queue().enqueueReadBuffer(
        buf.buffer(), CL_FALSE, 0, sizeof(int) * out.size(), out.data(),
        waits.empty() ? nullptr : &waits, &ev);
    ev.wait();
  } catch (const cl::Error& e) {
    throw opencl_error(std::string(e.what()) + " reading batch status flags", e.err());
  }
  return out;
}

#endif  // CLBAYES_OPENCL

}  // namespace batched
}  // namespace clbayes

#endif
