// Verification of every device GEMM variant against Eigen, for devices the
// R tests never see (the lent GPU has no R): the kernel with and without
// the FP64 tensor cores (gemm_settings::tensor_cores), large, small and
// narrow tiles, the tiles fitted to a device with 16 KB of local memory,
// the look-ahead's persistent launch, split-k, batches, the four op()
// combinations, triangular views of the operands, lower-only C, and sizes
// that are not multiples of the tiles. Also the Cholesky (residual and
// Eigen) with each setting, and the streamed host-to-host Cholesky from
// pageable and page-locked memory. Prints one line per case and exits 1 on any
// error above 1e-12 (relative to the largest element of the reference).
//   ./verify_gemm            (make -C bench verify_gemm)

#include "linalg_tune.hpp"

#include <clbayes/linalg/cholesky_host.hpp>

#include <cstring>

namespace {

int failures = 0;

void report(const std::string& what, double err) {
  const bool ok = err < 1e-12;
  if (!ok) ++failures;
  std::printf("%-72s %.1e %s\n", what.c_str(), err, ok ? "ok" : "FAILED");
}

Eigen::MatrixXd with_view(const Eigen::MatrixXd& m, clbayes::matrix_view v) {
  if (v == clbayes::matrix_view::lower) return m.triangularView<Eigen::Lower>();
  if (v == clbayes::matrix_view::upper) return m.triangularView<Eigen::Upper>();
  return m;
}

double rel_err(const Eigen::MatrixXd& got, const Eigen::MatrixXd& ref) {
  return (got - ref).cwiseAbs().maxCoeff() / std::max(1.0, ref.cwiseAbs().maxCoeff());
}

// C(ci, cj block) = alpha op(A) op(B) + beta C over batch items, against
// Eigen item by item. With c_row > 0, C's items start c_row rows down a C
// with 2 c_row more rows, whose first and last c_row rows stay as they were
// (c_row = 1: an odd offset into C with an even leading dimension).
void check_gemm(const la::gemm_settings& g, const std::string& label, int m, int n, int k,
                bool ta, bool tb, clbayes::matrix_view va, clbayes::matrix_view vb,
                bool lower_only, int batch, int splits, int max_groups, int c_row = 0) {
  const int ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
  // Items stacked down the rows: item q of A is the block at row q * ar.
  Eigen::MatrixXd a = random_matrix(ar * batch, ac, 1), b = random_matrix(br * batch, bc, 2),
                  c = random_matrix(m * batch + 2 * c_row, n, 3);
  matrix_cl da = upload(a), db = upload(b), dc = upload(c);
  la::gemm_block ab{&da, 0, 0, ta, va, ar};
  la::gemm_block bb{&db, 0, 0, tb, vb, br};
  la::gemm_options opt(g);
  opt.alpha = -0.75;
  opt.beta = 0.5;
  opt.lower_only = lower_only;
  opt.batch = batch;
  opt.splits = splits;
  opt.max_groups = max_groups;
  la::gemm(dc, c_row, 0, m, ab, bb, m, n, k, opt);
  Eigen::MatrixXd got = download(dc);
  double err = 0;
  if (c_row > 0) {
    err = std::max(err, rel_err(got.topRows(c_row), c.topRows(c_row)));
    err = std::max(err, rel_err(got.bottomRows(c_row), c.bottomRows(c_row)));
  }
  for (int q = 0; q < batch; ++q) {
    Eigen::MatrixXd x = with_view(a.block(q * ar, 0, ar, ac), va);
    Eigen::MatrixXd y = with_view(b.block(q * br, 0, br, bc), vb);
    if (ta) x.transposeInPlace();
    if (tb) y.transposeInPlace();
    Eigen::MatrixXd ref = c.block(c_row + q * m, 0, m, n);
    Eigen::MatrixXd prod = opt.alpha * x * y + opt.beta * ref;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i)
        if (!lower_only || i >= j) ref(i, j) = prod(i, j);
    err = std::max(err, rel_err(got.block(c_row + q * m, 0, m, n), ref));
  }
  report(label, err);
}

void gemm_cases(const la::gemm_settings& g, const char* setting) {
  using clbayes::matrix_view;
  char buf[200];
  for (int ta : {0, 1})
    for (int tb : {0, 1})
      for (auto dims : {std::array<int, 3>{517, 389, 263}, std::array<int, 3>{1024, 1024, 256},
                        std::array<int, 3>{33, 31, 40}, std::array<int, 3>{2048, 64, 64},
                        std::array<int, 3>{700, 48, 32}}) {
        std::snprintf(buf, sizeof buf, "%s: %d x %d x %d, op %c%c", setting, dims[0], dims[1],
                      dims[2], ta ? 'T' : 'N', tb ? 'T' : 'N');
        check_gemm(g, buf, dims[0], dims[1], dims[2], ta, tb, matrix_view::entire,
                   matrix_view::entire, false, 1, 0, 0);
      }
  for (auto va : {matrix_view::lower, matrix_view::upper})
    for (auto vb : {matrix_view::entire, matrix_view::lower, matrix_view::upper}) {
      std::snprintf(buf, sizeof buf, "%s: 300 x 300 x 300, views %s x %s", setting,
                    clbayes::view_name(va), clbayes::view_name(vb));
      check_gemm(g, buf, 300, 300, 300, false, false, va, vb, false, 1, 0, 0);
    }
  std::snprintf(buf, sizeof buf, "%s: lower-only C = A A^T, 1000 x 1000 x 300", setting);
  check_gemm(g, buf, 1000, 1000, 300, false, true, matrix_view::entire, matrix_view::entire, true,
             1, 0, 0);
  std::snprintf(buf, sizeof buf, "%s: persistent (40 groups), 1000 x 1000 x 300", setting);
  check_gemm(g, buf, 1000, 1000, 300, false, true, matrix_view::entire, matrix_view::entire, true,
             1, 0, 40);
  std::snprintf(buf, sizeof buf, "%s: split-k 7, 96 x 80 x 5000", setting);
  check_gemm(g, buf, 96, 80, 5000, true, false, matrix_view::entire, matrix_view::entire, false, 1,
             7, 0);
  std::snprintf(buf, sizeof buf, "%s: batch of 5, 70 x 90 x 50", setting);
  check_gemm(g, buf, 70, 90, 50, false, false, matrix_view::entire, matrix_view::entire, false, 5,
             1, 0);
  std::snprintf(buf, sizeof buf, "%s: C one row down, 512 x 384 x 64, lower-only too", setting);
  for (bool lower : {false, true})
    check_gemm(g, buf, 512, 384, 64, false, true, matrix_view::entire, matrix_view::entire, lower,
               1, 1, 0, 1);
}

void cholesky_cases(const la::linalg_settings& s, const char* setting) {
  char buf[200];
  for (int n : {1, 33, 257, 1000, 3000}) {
    Eigen::MatrixXd x = random_matrix(n, n, 9);
    Eigen::MatrixXd a = x * x.transpose() + n * Eigen::MatrixXd::Identity(n, n);
    Eigen::MatrixXd l = download(la::cholesky(upload(a), s));
    Eigen::MatrixXd ref = a.llt().matrixL();
    std::snprintf(buf, sizeof buf, "%s: Cholesky n = %d against Eigen", setting, n);
    report(buf, rel_err(l, ref));
    if (n != 3000) continue;
    // The same matrix, not positive definite from pivot 2001 (a base's
    // third step, in a panel with rows below): the error names it, and no
    // group waits forever.
    a(2000, 2000) = -1e6;
    std::string msg = "no error";
    try {
      la::cholesky(upload(a), s);
    } catch (const std::exception& e) {
      msg = e.what();
    }
    std::snprintf(buf, sizeof buf, "%s: Cholesky n = 3000, pivot 2001 named", setting);
    report(buf, msg.find("(pivot 2001)") != std::string::npos ? 0.0 : 1.0);
  }
}

// The streamed host path (linalg/cholesky_host.hpp) from pageable and from
// page-locked memory, L and U, in block columns of 96 (ragged at 257) and
// of the settings' width; at 257 in chunks of 40 KB, which straddle the
// block columns (a chunk read back waits for the block of its last byte).
void host_cholesky_cases(const la::linalg_settings& s, const char* setting) {
  char buf[200];
  for (int n : {257, 3000}) {
    la::linalg_settings hs = s;
    if (n == 257) hs.cholesky.host_block = 96;
    Eigen::MatrixXd x = random_matrix(n, n, 11);
    const Eigen::MatrixXd a = x * x.transpose() + n * Eigen::MatrixXd::Identity(n, n);
    const Eigen::MatrixXd ref = a.llt().matrixL();
    const std::size_t bytes = sizeof(double) * a.size();
    cl_ops::page_locked_buffer in(bytes), out(bytes);
    std::memcpy(in.data(), a.data(), bytes);
    for (int locked : {0, 1})
      for (int upper : {0, 1}) {
        cl_ops::pinned_tuning pin;
        if (n == 257) pin.chunk_bytes = std::size_t(40) << 10;
        pin.source_page_locked = pin.destination_page_locked = locked != 0;
        Eigen::MatrixXd got(n, n);
        double* dst = locked ? reinterpret_cast<double*>(out.data()) : got.data();
        la::cholesky_host(locked ? reinterpret_cast<const double*>(in.data()) : a.data(), n, n,
                          upper != 0, dst, hs, pin);
        if (locked) std::memcpy(got.data(), dst, bytes);
        std::snprintf(buf, sizeof buf, "%s: host to host, n = %d, blocks of %d, %s, %s", setting,
                      n, hs.cholesky.host_block, locked ? "page-locked" : "pageable",
                      upper ? "U" : "L");
        report(buf, rel_err(got, upper ? Eigen::MatrixXd(ref.transpose()) : ref));
      }
  }
}

}  // namespace

int main() {
  try {
    auto& ctx = cl_ops::context::instance();
    ctx.require_device();
    la::linalg_settings on = la::tuned_settings();
    // Ask for the tensor cores only where they can exist: elsewhere the
    // probe's failed build prints its compiler's errors (PoCL's clang).
    on.gemm.tensor_cores = ctx.info().nv_compute_capability >= 90;
    const bool mma = la::internal::choose_tiles(1024, 1024, 1, false, on.gemm).mma;
    std::printf("device: %s, FP64 tensor cores: %s\n\n", ctx.info().name.c_str(),
                mma ? "yes" : "no");
    for (int tc : {1, 0}) {
      if (tc && !on.gemm.tensor_cores) continue;  // the "mma on" cases would be the FMA path again
      la::linalg_settings s = on;
      s.gemm.tensor_cores = tc != 0;
      const char* setting = tc ? "mma on" : "mma off";
      gemm_cases(s.gemm, setting);
      cholesky_cases(s, setting);
    }
    host_cholesky_cases(on, "default");
    // The tiles a device with 16 KB of local memory gets (TK halved).
    const std::size_t max_wg = ctx.info().max_work_group_size;
    la::linalg_settings small = on;
    for (la::gemm_tiles* t : {&small.gemm.large, &small.gemm.small, &small.gemm.narrow})
      *t = la::internal::fit_tiles(*t, max_wg, 16384, false);
    const la::gemm_tiles& t = small.gemm.large;
    std::printf("tiles fitted to 16 KB: large %d x %d x %d, %d x %d per work item\n", t.tm,
                t.tn, t.tk, t.wptm, t.wptn);
    gemm_cases(small.gemm, "16 KB tiles");
    cholesky_cases(small, "16 KB tiles");
    std::printf("\n%s\n", failures == 0 ? "OK" : "FAILED");
    return failures == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 1;
  }
}
