// Helpers and tuning sweeps of bench_linalg.cpp (one translation unit:
// included once, by that driver; bench_crossover and verify_gemm use the
// helpers): timing, test matrices, and the --tune sweeps, which time
// modified copies of the device's linalg_settings (linalg/settings.hpp)
// and return the fastest.
#ifndef CLBAYES_BENCH_LINALG_TUNE_HPP
#define CLBAYES_BENCH_LINALG_TUNE_HPP

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

// Standard normal entries.
inline Eigen::MatrixXd random_matrix(int rows, int cols, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> nd;
  Eigen::MatrixXd m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = nd(rng);
  return m;
}

double max_abs(const Eigen::MatrixXd& m) { return m.cwiseAbs().maxCoeff(); }

Eigen::MatrixXd download(const matrix_cl& m) {
  Eigen::MatrixXd out(m.rows(), m.cols());
  cl_ops::from_matrix_cl(m, out.data());
  return out;
}

matrix_cl upload(const Eigen::MatrixXd& m) { return cl_ops::to_matrix_cl(m.data(), m.rows(), m.cols()); }

inline la::gemm_settings with_large(la::gemm_settings s, const la::gemm_tiles& t) {
  s.large = t;
  return s;
}

// One Cholesky configuration: panel width (outer block), the
// leaf's rows (CHOLESKY_BLOCK) and work items per row (LEAF_T), small-tile
// GEMMs below this percentage of the compute units in large tiles
// (gemm_settings::small_below_pct), compute units left to the panel by the
// trailing update (cholesky_settings::trailing_reserve) and the narrow
// tiles up to `narrow` columns with tile height narrow_tm.
struct chol_cfg {
  int outer, leaf, lt, small, reserve, narrow, narrow_tm;
};

// The settings s with the configuration c (one outer block for every n).
inline la::linalg_settings with(la::linalg_settings s, const chol_cfg& c) {
  s.gemm.small_below_pct = c.small;
  s.gemm.narrow_cols = c.narrow;
  s.gemm.narrow.tm = c.narrow_tm;
  s.gemm.narrow.wptm = c.narrow_tm / 16;  // 4 rows per work item at 64
  s.cholesky.outer_block = c.outer;
  s.cholesky.outer_block_large = c.outer;
  s.cholesky.step_cols = c.leaf;
  s.cholesky.step_threads = c.lt;
  s.cholesky.trailing_reserve = c.reserve;
  return s;
}

inline chol_cfg chol_of(const la::linalg_settings& s) {
  return {s.cholesky.outer_block, s.cholesky.step_cols, s.cholesky.step_threads,
          s.gemm.small_below_pct, s.cholesky.trailing_reserve, s.gemm.narrow_cols,
          s.gemm.narrow.tm};
}

// The settings as the command line of bench_linalg that sets them.
inline std::string flags_of(const la::linalg_settings& s) {
  const la::gemm_tiles& t = s.gemm.large;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "--large-tiles %d,%d,%d,%d,%d,%d --stages %d --small-below %d --narrow-cols %d "
                "--narrow-tm %d --mma %d --outer-block %d --outer-block-large %d --large-from %d "
                "--step-cols %d --step-threads %d --step-base %d --trailing-reserve %d --grad-block %d "
                "--grad-block-large %d --diag-block %d --host-block %d",
                t.tm, t.tn, t.tk, t.wptm, t.wptn, t.stages, s.gemm.small.stages,
                s.gemm.small_below_pct, s.gemm.narrow_cols, s.gemm.narrow.tm,
                s.gemm.tensor_cores ? 1 : 0, s.cholesky.outer_block,
                s.cholesky.outer_block_large, s.cholesky.large_from, s.cholesky.step_cols,
                s.cholesky.step_threads, s.cholesky.step_base, s.cholesky.trailing_reserve,
                s.cholesky.grad_block, s.cholesky.grad_block_large, s.diag_block,
                s.cholesky.host_block);
  return buf;
}

// The two queues of the look-ahead Cholesky seen from their launches, each
// launch by the queue its event ran on (side_queue or the other), each
// queue named with the phases it ran: the side queue runs the panels'
// chain, the main queue the rest. For each: kernel time, the idle time
// between one launch's end and the next one's start (median and total),
// and how much of its kernel time ran while the other queue also had a
// kernel running.
void print_queue_gaps(const std::vector<cl_ops::launch_record>& rec, cl_command_queue side_queue) {
  struct span { double s, e; };
  std::vector<span> side, main;
  std::string side_phases, main_phases;
  for (const auto& r : rec) {
    if (r.event() == nullptr) continue;
    const span x{r.event.getProfilingInfo<CL_PROFILING_COMMAND_START>() * 1e-6,
                 r.event.getProfilingInfo<CL_PROFILING_COMMAND_END>() * 1e-6};
    const bool on_side = r.event.getInfo<CL_EVENT_COMMAND_QUEUE>()() == side_queue;
    (on_side ? side : main).push_back(x);
    std::string& phases = on_side ? side_phases : main_phases;  // phase names have no commas
    if (("," + phases + ",").find("," + std::string(r.phase) + ",") == std::string::npos)
      phases += (phases.empty() ? "" : ",") + std::string(r.phase);
  }
  auto by_start = [](const span& a, const span& b) { return a.s < b.s; };
  std::sort(side.begin(), side.end(), by_start);
  std::sort(main.begin(), main.end(), by_start);
  auto overlap = [](const span& x, const std::vector<span>& other) {
    double o = 0.0;
    for (const span& y : other) o += std::max(0.0, std::min(x.e, y.e) - std::max(x.s, y.s));
    return o;
  };
  std::printf("| queue | launches | kernel time (ms) | idle between launches (ms) | median idle "
              "(us) | kernel time while the other queue runs (ms) |\n|---|---|---|---|---|---|\n");
  auto row = [&](const char* name, const std::string& phases, const std::vector<span>& q,
                 const std::vector<span>& other) {
    double busy = 0.0, idle = 0.0, both = 0.0;
    std::vector<double> gaps;
    for (std::size_t i = 0; i < q.size(); ++i) {
      busy += q[i].e - q[i].s;
      both += overlap(q[i], other);
      if (i + 1 < q.size()) {
        const double g = std::max(0.0, q[i + 1].s - q[i].e);
        idle += g;
        gaps.push_back(g);
      }
    }
    double median = 0.0;
    if (!gaps.empty()) {
      std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
      median = gaps[gaps.size() / 2];
    }
    std::printf("| %s (%s) | %zu | %.2f | %.2f | %.1f | %.2f |\n", name, phases.c_str(), q.size(),
                busy, idle, median * 1e3, both);
  };
  row("side", side_phases, side, main);
  row("main", main_phases, main, side);
  std::printf("\n");
}

// Per-phase device time of one factorisation of `da` (after one warm-up),
// from profiling events: launches, summed kernel time and the span from
// the first start to the last end of each phase, and the whole span. With
// look-ahead the phases overlap, so the sums can exceed the span.
void profile_cholesky(const matrix_cl& da, const char* label, const la::linalg_settings& s) {
  cl_ops::context& ctx = cl_ops::context::instance();
  { matrix_cl x = la::cholesky(da, s); finish(); }
  ctx.set_profiling(true);
  std::vector<cl_ops::launch_record> rec;
  cl_ops::profile_sink() = &rec;
  const double t0 = now_ms();
  { matrix_cl x = la::cholesky(da, s); finish(); ctx.side_queue().finish(); }
  const double wall = now_ms() - t0;
  const cl::CommandQueue side = ctx.side_queue();  // the profiling one, kept past set_profiling
  cl_ops::profile_sink() = nullptr;
  struct acc { unsigned long long count = 0; double busy = 0, first = 1e300, last = 0; };
  std::vector<std::pair<std::string, acc>> phases;
  double first = 1e300, last = 0;
  for (const auto& r : rec) {
    if (r.event() == nullptr) continue;
    const double s = r.event.getProfilingInfo<CL_PROFILING_COMMAND_START>() * 1e-6;
    const double e = r.event.getProfilingInfo<CL_PROFILING_COMMAND_END>() * 1e-6;
    auto it = std::find_if(phases.begin(), phases.end(),
                           [&](const std::pair<std::string, acc>& p) { return p.first == r.phase; });
    if (it == phases.end()) it = phases.insert(phases.end(), {r.phase, acc()});
    it->second.count++;
    it->second.busy += e - s;
    it->second.first = std::min(it->second.first, s);
    it->second.last = std::max(it->second.last, e);
    first = std::min(first, s);
    last = std::max(last, e);
  }
  ctx.set_profiling(false);
  std::printf("Cholesky phases, n = %d, %s (wall %.2f ms with profiling, device span %.2f ms)\n\n"
              "| phase | launches | kernel time (ms) | span (ms) |\n|---|---|---|---|\n",
              da.rows(), label, wall, last - first);
  for (const auto& p : phases)
    std::printf("| %s | %llu | %.2f | %.2f |\n", p.first.c_str(), p.second.count, p.second.busy,
                p.second.last - p.second.first);
  std::printf("\n");
  print_queue_gaps(rec, side());
}

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

// Sweep the GEMM kernel's large tiles at order n; keep the fastest (in
// s.gemm).
inline void tune_gemm(int n, int reps, la::linalg_settings& s) {
  // The tensor cores' ring (log 2026-11-28-gemm-ring): 128 x 128 or two
  // groups of 128 items per unit, 2 to 4 stages of 8 to 32 depths (fitted
  // down where the local memory is smaller); the FMA path's tiles: 8 x 8
  // per work item in groups of 256, 128 or 64 items, TK 4 to 16.
  const std::vector<la::gemm_tiles> cfgs = {
      {128, 128, 16, 8, 8, 3}, {128, 128, 16, 8, 8, 4}, {128, 128, 8, 8, 8, 4},
      {128, 128, 32, 8, 8, 2}, {128, 64, 16, 8, 8, 3},  {64, 128, 16, 8, 4, 3},
      {128, 128, 8, 8, 8, 2},  {128, 128, 4, 8, 8, 2},  {64, 128, 8, 4, 8, 2},
      {64, 64, 16, 4, 4, 3},   {128, 64, 8, 8, 8, 2},   {64, 64, 8, 8, 8, 2}};
  std::mt19937 rng(1);
  std::normal_distribution<double> nd;
  Eigen::MatrixXd a(n, n), b(n, n);
  for (int i = 0; i < a.size(); ++i) { a.data()[i] = nd(rng); b.data()[i] = nd(rng); }
  matrix_cl da = upload(a), db_ = upload(b);
  const std::size_t max_wg = cl_ops::context::instance().info().max_work_group_size;
  std::printf("GEMM tile sweep, n = %d (kernels/gemm.hpp)\n\n"
              "The first timing is multiply() (C allocated by each call), the second the "
              "product into an existing C. mma: on the FP64 tensor cores.\n\n"
              "| TM | TN | TK | WPTM | WPTN | stages | mma | ms | GFLOP/s | ms, into C | "
              "GFLOP/s, into C | max rel err |\n"
              "|---|---|---|---|---|---|---|---|---|---|---|---|\n", n);
  double best = 1e300;
  la::gemm_tiles best_tiles = s.gemm.large;
  for (const la::gemm_tiles& t : cfgs) {
    if (std::size_t(t.tm / t.wptm) * (t.tn / t.wptn) > max_wg) continue;
    const la::gemm_settings g = with_large(s.gemm, t);
    try {
      matrix_cl dc = la::multiply(da, db_, g);
      const double err = gemm_sample_error(a, b, dc);
      const double ms = time_ms(reps, [&] { matrix_cl x = la::multiply(da, db_, g); finish(); });
      // The kernel alone: into the C allocated above.
      const double ms_c = time_ms(reps, [&] {
        la::gemm(dc, 0, 0, 0, la::gemm_block{&da}, la::gemm_block{&db_}, n, n, n,
                 la::gemm_options(g));
        finish();
      });
      const int mma = la::internal::choose_tiles(n, n, 1, false, g).mma;
      std::printf("| %d | %d | %d | %d | %d | %d | %d | %.2f | %.2f | %.2f | %.2f | %.1e |\n",
                  t.tm, t.tn, t.tk, t.wptm, t.wptn, t.stages, mma, ms,
                  2.0 * n * double(n) * n / ms / 1e6, ms_c, 2.0 * n * double(n) * n / ms_c / 1e6,
                  err);
      if (err < 1e-10 && ms < best) { best = ms; best_tiles = t; }
    } catch (const std::exception& e) {
      std::printf("| %d | %d | %d | %d | %d | %d | | failed: %s | | | | |\n", t.tm, t.tn, t.tk,
                  t.wptm, t.wptn, t.stages, e.what());
    }
  }
  s.gemm.large = best_tiles;
  const la::gemm_tiles& t = best_tiles;
  std::printf("\nkept TM=%d TN=%d TK=%d WPTM=%d WPTN=%d, %d stages (%.2f ms)\n\n", t.tm, t.tn,
              t.tk, t.wptm, t.wptn, t.stages, best);
}

// Time one Cholesky configuration at order n (verified by its residual;
// nan if that fails) and print its row of the sweep table.
double sweep_row(const chol_cfg& c, const la::linalg_settings& base, const matrix_cl& da,
                 double amax, int reps) {
  const la::linalg_settings s = with(base, c);
  const int n = da.rows();
  char cfg[200];
  std::snprintf(cfg, sizeof cfg, "| %d | %d | %d | %d | %d | %d x %d |", c.outer, c.leaf, c.lt, c.small, c.reserve, c.narrow,
                c.narrow_tm);
  try {
    matrix_cl dl;
    const unsigned long long launches = launches_of([&] { dl = la::cholesky(da, s); });
    matrix_cl llt = la::multiply_transpose(dl, s.gemm);
    const double resid = max_abs(download(cl_ops::subtract(llt, da))) / amax;
    double ms = time_ms(reps, [&] { matrix_cl x = la::cholesky(da, s); finish(); });
    std::printf("%s %.2f | %.1f | %llu | %.1e |\n", cfg, ms, double(n) * n * n / 3 / ms / 1e6,
                launches, resid);
    return resid < 1e-12 ? ms : NAN;
  } catch (const std::exception& e) {
    std::printf("%s failed: %s | | | |\n", cfg, e.what());
    return NAN;
  }
}

const char* sweep_header =
    "| outer block | CHOLESKY_BLOCK | LEAF_T | small below % | units reserved | "
    "narrow cols x TM | ms | GFLOP/s | launches | residual |\n"
    "|---|---|---|---|---|---|---|---|---|---|\n";

// Sweep the Cholesky settings at order n, greedily one knob group at a
// time, each row verified by its residual: the leaf (CHOLESKY_BLOCK x
// LEAF_T), the units reserved for the panel, the outer block, the narrow
// tiles. Keep the fastest in s and print its phases. Then, at n_large (0:
// skip), the outer block alone, kept as cholesky_settings::outer_block_large.
// Then the gradient's block size.
inline void tune_cholesky(int n, int n_large, int reps, la::linalg_settings& s) {
  Eigen::MatrixXd a = toeplitz(n);
  matrix_cl da = upload(a);
  const double amax = max_abs(a);
  std::printf("Cholesky sweep, n = %d (first row: the settings at start)\n\n", n);
  std::fputs(sweep_header, stdout);
  double best = 1e300;
  const chol_cfg start = chol_of(s);
  chol_cfg best_cfg = start;
  auto run = [&](const chol_cfg& c) {
    const double ms = sweep_row(c, s, da, amax, reps);
    if (ms < best) { best = ms; best_cfg = c; }
  };
  run(start);
  for (auto leaf : {std::make_pair(32, 8), std::make_pair(32, 16), std::make_pair(32, 32),
                    std::make_pair(64, 8), std::make_pair(64, 16)}) {
    chol_cfg c = start;
    c.leaf = leaf.first;
    c.lt = leaf.second;
    if (c.leaf != start.leaf || c.lt != start.lt) run(c);
  }
  chol_cfg base = best_cfg;
  for (int reserve : {0, 8, 24}) {
    chol_cfg c = base;
    c.reserve = reserve;
    if (reserve != base.reserve) run(c);
  }
  base = best_cfg;
  for (int outer : {256, 384, 512, 768, 1024}) {
    chol_cfg c = base;
    c.outer = outer;
    if (outer != base.outer) run(c);
  }
  base = best_cfg;
  for (int narrow : {0, 32, 64})
    for (int tm : {128, 64}) {
      chol_cfg c = base;
      c.narrow = narrow;
      c.narrow_tm = tm;
      if (c.narrow != base.narrow || c.narrow_tm != base.narrow_tm) run(c);
    }
  const int large = s.cholesky.outer_block_large, large_from = s.cholesky.large_from;
  s = with(s, best_cfg);
  s.cholesky.outer_block_large = large;
  s.cholesky.large_from = large_from;
  std::printf("\nkept outer block %d, CHOLESKY_BLOCK %d, LEAF_T %d, small below %d%%, "
              "units reserved %d, narrow cols %d, narrow TM %d (%.2f ms)\n\n",
              best_cfg.outer, best_cfg.leaf, best_cfg.lt,
              best_cfg.small, best_cfg.reserve, best_cfg.narrow, best_cfg.narrow_tm, best);
  profile_cholesky(da, "kept", s);
  if (n_large > 0) {
    Eigen::MatrixXd al = toeplitz(n_large);
    matrix_cl dal = upload(al);
    const double almax = max_abs(al);
    std::printf("Outer block at n = %d (the rest as kept)\n\n", n_large);
    std::fputs(sweep_header, stdout);
    double best_l = 1e300;
    int kept_l = best_cfg.outer;
    for (int outer : {1024, 1536, 2048, 2560, 3072}) {
      chol_cfg c = best_cfg;
      c.outer = outer;
      const double ms = sweep_row(c, s, dal, almax, std::min(reps, 3));
      if (ms < best_l) { best_l = ms; kept_l = outer; }
    }
    s.cholesky.outer_block_large = kept_l;
    s.cholesky.large_from = (n + n_large) / 2;
    std::printf("\nkept outer block %d from n = %d\n\n", kept_l, s.cholesky.large_from);
    profile_cholesky(dal, "kept", s);
  }
  matrix_cl dl = la::cholesky(da, s);
  matrix_cl dadj = la::multiply(dl, dl, s.gemm);  // any lower-triangular adjoint
  std::printf("| grad block | ms |\n|---|---|\n");
  best = 1e300;
  int best_g = s.cholesky.grad_block;
  for (int g : {128, 256, 512, 1024}) {
    la::linalg_settings sg = s;
    sg.cholesky.grad_block = g;
    const double ms = time_ms(reps, [&] { matrix_cl x = la::cholesky_grad(dl, dadj, sg); finish(); });
    std::printf("| %d | %.2f |\n", g, ms);
    if (ms < best) { best = ms; best_g = g; }
  }
  s.cholesky.grad_block = best_g;
  std::printf("\nkept grad block %d\n\n", best_g);
}

// The trailing update's share of the device at order n (from the settings
// s): outer block x units reserved; keeps the fastest in s and prints its
// phases.
inline void tune_share(int n, int reps, la::linalg_settings& s) {
  Eigen::MatrixXd a = toeplitz(n);
  matrix_cl da = upload(a);
  const double amax = max_abs(a);
  const bool large = s.cholesky.outer_block_large > 0 && n >= s.cholesky.large_from;
  chol_cfg base = chol_of(s);
  if (large) base.outer = s.cholesky.outer_block_large;
  std::printf("Units reserved for the panel, n = %d\n\n", n);
  std::fputs(sweep_header, stdout);
  double best = 1e300;
  chol_cfg best_cfg = base;
  for (int outer : {512, 1024, 1536, 2048})
    for (int reserve : {8, 16, 24, 32}) {
      chol_cfg c = base;
      c.outer = outer;
      c.reserve = reserve;
      const double ms = sweep_row(c, s, da, amax, reps);
      if (ms < best) { best = ms; best_cfg = c; }
    }
  s.cholesky.trailing_reserve = best_cfg.reserve;
  (large ? s.cholesky.outer_block_large : s.cholesky.outer_block) = best_cfg.outer;
  std::printf("\nkept outer block %d, units reserved %d (%.2f ms)\n\n", best_cfg.outer,
              best_cfg.reserve, best);
  profile_cholesky(da, "kept", s);
}

}  // namespace

#endif
