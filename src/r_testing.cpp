// Entry points for the tests only (R/testing.R says how the tests reach
// them): the support kernels of stan-opencl.txt section 3.5 that have no
// operator of their own, kernel compilation, the buffer pool's counters,
// the algorithms with explicit settings (so that small tests reach several
// panels, blocks, levels or device paths), the GLM row math row by row,
// model gradients and the chains' random streams. Nothing user-facing calls
// them. Functions that work in
// place copy first, so R's value semantics hold.

#include "glue_chol.hpp"
#include "glue_eigen.hpp"
#include "glue_glm.hpp"
#include "glue_models.hpp"

#include <clbayes/glm/row_grid.hpp>
#include <clbayes/linalg/cholesky.hpp>
#include <clbayes/linalg/cholesky_grad.hpp>
#include <clbayes/mcmc/evaluator.hpp>
#include <clbayes/mcmc/rng.hpp>
#include <clbayes/reduce/sum.hpp>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace la = clbayes::linalg;
namespace glm = clbayes::glm;

// [[Rcpp::export(.cpp_zeros)]]
SEXP cpp_zeros(int rows, int cols) {
  CLBAYES_DEVICE_ONLY(glue::wrap_matrix_cl(cl_ops::zeros(rows, cols)));
}

// [[Rcpp::export(.cpp_zero_triangle)]]
SEXP cpp_zero_triangle(SEXP a, std::string part) {
#ifdef CLBAYES_OPENCL
  cl_ops::matrix_cl m = cl_ops::copy(glue::as_matrix_cl(a, "x"));
  cl_ops::zeros_in_place(m, clbayes::parse_view(part, "part"));
  return glue::wrap_matrix_cl(std::move(m));
#else
  (void)a;
  (void)part;
  glue::stop_no_opencl();
#endif
}

// [[Rcpp::export(.cpp_identity)]]
SEXP cpp_identity(int rows, int cols) {
  CLBAYES_DEVICE_ONLY(glue::wrap_matrix_cl(cl_ops::identity(rows, cols)));
}

// [[Rcpp::export(.cpp_batch_identity)]]
SEXP cpp_batch_identity(int n, int batch) {
  CLBAYES_DEVICE_ONLY(glue::wrap_matrix_cl(cl_ops::batch_identity(n, batch)));
}

// [[Rcpp::export(.cpp_sub_block)]]
SEXP cpp_sub_block(SEXP dst, SEXP src, int src_i, int src_j, int dst_i,
                   int dst_j, int rows, int cols, std::string view) {
#ifdef CLBAYES_OPENCL
  cl_ops::matrix_cl out = cl_ops::copy(glue::as_matrix_cl(dst, "dst"));
  cl_ops::sub_block(out, glue::as_matrix_cl(src, "src"), src_i, src_j, dst_i,
                    dst_j, rows, cols, clbayes::parse_view(view));
  return glue::wrap_matrix_cl(std::move(out));
#else
  (void)dst; (void)src; (void)src_i; (void)src_j; (void)dst_i; (void)dst_j;
  (void)rows; (void)cols; (void)view;
  glue::stop_no_opencl();
#endif
}

// [[Rcpp::export(.cpp_triangular_transpose)]]
SEXP cpp_triangular_transpose(SEXP a, std::string from) {
#ifdef CLBAYES_OPENCL
  cl_ops::matrix_cl m = cl_ops::copy(glue::as_matrix_cl(a, "x"));
  cl_ops::triangular_transpose(m, clbayes::parse_view(from, "from"));
  return glue::wrap_matrix_cl(std::move(m));
#else
  (void)a;
  (void)from;
  glue::stop_no_opencl();
#endif
}

// [[Rcpp::export(.cpp_scale_diagonal)]]
SEXP cpp_scale_diagonal(SEXP a, double s) {
#ifdef CLBAYES_OPENCL
  cl_ops::matrix_cl m = cl_ops::copy(glue::as_matrix_cl(a, "x"));
  cl_ops::scalar_multiply_diagonal(m, s);
  return glue::wrap_matrix_cl(std::move(m));
#else
  (void)a;
  (void)s;
  glue::stop_no_opencl();
#endif
}

// [[Rcpp::export(.cpp_has_nonfinite)]]
bool cpp_has_nonfinite(SEXP a) {
  CLBAYES_DEVICE_ONLY(cl_ops::has_nonfinite(glue::as_matrix_cl(a, "x")));
}

// [[Rcpp::export(.cpp_is_symmetric)]]
bool cpp_is_symmetric(SEXP a, double tol) {
  CLBAYES_DEVICE_ONLY(cl_ops::is_symmetric(glue::as_matrix_cl(a, "x"), tol));
}

// [[Rcpp::export(.cpp_has_zero_diagonal)]]
bool cpp_has_zero_diagonal(SEXP a) {
  CLBAYES_DEVICE_ONLY(cl_ops::has_zero_diagonal(glue::as_matrix_cl(a, "x")));
}

// Compile `source` and create kernel `name` on the selected device: lets
// the tests (and users diagnosing a device's compiler) see a build failure
// surface as an R error carrying the build log.
// [[Rcpp::export(.cpp_compile_kernel)]]
bool cpp_compile_kernel(std::string name, std::string source) {
#ifdef CLBAYES_OPENCL
  cl::Program program = cl_ops::context::instance().build_program(name, source);
  try {
    cl::Kernel k(program, name.c_str());
  } catch (const cl::Error& e) {
    throw clbayes::opencl_error("creating kernel '" + name + "'", e.err());
  }
  return true;
#else
  (void)name;
  (void)source;
  glue::stop_no_opencl();
#endif
}

// The buffer pool's bytes kept and its hits and misses (opencl/buffer_pool.hpp).
// [[Rcpp::export(.cpp_cache_stats)]]
Rcpp::NumericVector cpp_cache_stats() {
  double kept = 0, hits = 0, misses = 0;
#ifdef CLBAYES_OPENCL
  clbayes::opencl::context& ctx = clbayes::opencl::context::instance();
  if (ctx.selected()) {
    const clbayes::opencl::buffer_pool& p = ctx.pool();
    kept = static_cast<double>(p.kept_bytes());
    hits = static_cast<double>(p.hits());
    misses = static_cast<double>(p.misses());
  }
#endif
  return Rcpp::NumericVector::create(Rcpp::Named("kept_bytes") = kept, Rcpp::Named("hits") = hits,
                                     Rcpp::Named("misses") = misses);
}

#ifdef CLBAYES_OPENCL
namespace {

// The selected device's linalg_settings, modified by the named values of
// the test hooks below; with `pin`, pinned_chunk_kb sets its chunk size.
la::linalg_settings tuned_by(const Rcpp::IntegerVector& values,
                             cl_ops::pinned_tuning* pin = nullptr) {
  la::linalg_settings s = la::tuned_settings();
  const std::vector<std::pair<const char*, int*>> fields = {
      {"outer_block", &s.cholesky.outer_block},
      {"outer_block_large", &s.cholesky.outer_block_large},
      {"large_from", &s.cholesky.large_from},
      {"host_block", &s.cholesky.host_block},
      {"step_cols", &s.cholesky.step_cols},
      {"step_threads", &s.cholesky.step_threads},
      {"step_base", &s.cholesky.step_base},
      {"trailing_reserve", &s.cholesky.trailing_reserve},
      {"grad_block", &s.cholesky.grad_block},
      {"grad_block_large", &s.cholesky.grad_block_large},
      {"gemm_narrow_cols", &s.gemm.narrow_cols},
      {"gemm_small_below_pct", &s.gemm.small_below_pct}};
  Rcpp::CharacterVector names =
      values.size() > 0 ? Rcpp::CharacterVector(values.names()) : Rcpp::CharacterVector();
  for (R_xlen_t i = 0; i < values.size(); ++i) {
    const std::string name = Rcpp::as<std::string>(names[i]);
    if (pin != nullptr && name == "pinned_chunk_kb") {
      pin->chunk_bytes = static_cast<std::size_t>(std::max(1, int(values[i]))) << 10;
      continue;
    }
    int* field = nullptr;
    for (const auto& f : fields)
      if (name == f.first) field = f.second;
    if (field == nullptr) Rcpp::stop("unknown linear algebra setting `" + name + "`");
    *field = values[i];
  }
  return s;
}

}  // namespace
#endif

// The Cholesky (tests/testthat/test-chol.R), so that the tests reach several
// panels or blocks of the schedules at small n: the factor of x on the
// device with the settings of tuned_by (outer_block, outer_block_large,
// large_from, host_block, step_cols, step_threads, step_base,
// trailing_reserve, gemm_narrow_cols, gemm_small_below_pct; and
// pinned_chunk_kb, the host path's staging chunks) from host
// memory (`host`, gpu_chol()'s path for a matrix) or from a device copy
// (its path for a gpu_matrix); and the device gradient (grad_block,
// grad_block_large from large_from rows).
// [[Rcpp::export(.cpp_chol_tuned)]]
Rcpp::NumericMatrix cpp_chol_tuned(Rcpp::NumericMatrix x, Rcpp::IntegerVector values,
                                   bool upper, bool host) {
#ifdef CLBAYES_OPENCL
  cl_ops::pinned_tuning pin;
  const la::linalg_settings s = tuned_by(values, &pin);
  if (host) return glue::chol_host(x, upper, s, pin);
  cl_ops::matrix_cl l = la::cholesky(glue::upload(x), s);
  return glue::download(upper ? cl_ops::transpose(l) : std::move(l));
#else
  (void)x;
  (void)values;
  (void)upper;
  (void)host;
  glue::stop_no_opencl();
#endif
}

// [[Rcpp::export(.cpp_chol_grad_tuned)]]
Rcpp::NumericMatrix cpp_chol_grad_tuned(Rcpp::NumericMatrix L, Rcpp::NumericMatrix L_adj,
                                        Rcpp::IntegerVector values) {
#ifdef CLBAYES_OPENCL
  return glue::download(la::cholesky_grad(glue::upload(L), glue::upload(L_adj), tuned_by(values)));
#else
  (void)L;
  (void)L_adj;
  (void)values;
  glue::stop_no_opencl();
#endif
}

// The device sum (tests/testthat/test-reduce.R) with explicit
// settings, c(block, work_group, p_max) as in reduce::device::settings (0:
// the device's), so that the tests reach many levels of the launch
// sequence at small n.
// [[Rcpp::export(.cpp_sum_tuned)]]
Rcpp::NumericVector cpp_sum_tuned(Rcpp::NumericVector x, std::string method,
                                  std::string precision, Rcpp::IntegerVector knobs) {
#ifdef CLBAYES_OPENCL
  namespace rd = clbayes::reduce;
  if (knobs.size() != 3) Rcpp::stop("`knobs` must have 3 values");
  rd::device::settings t = rd::device::tuned_settings();
  if (knobs[0] != 0) t.block = knobs[0];
  if (knobs[1] != 0) t.work_group = knobs[1];
  if (knobs[2] != 0) t.p_max = knobs[2];
  const rd::sum_method m = rd::parse_method(method);
  const rd::sum_precision p = rd::parse_precision(precision);
  const bool single = p == rd::sum_precision::single_precision;
  const std::size_t n = static_cast<std::size_t>(x.size());
  cl::Buffer buf = rd::device::upload(x.begin(), n, single);
  const rd::sum_result r = rd::device::sum(buf, n, !single, m, p, t);
  return Rcpp::NumericVector::create(r.sum, r.mean);
#else
  (void)x;
  (void)method;
  (void)precision;
  (void)knobs;
  glue::stop_no_opencl();
#endif
}

// The row math of a scalar family at (y, eta, extra), by the C++ twin (in
// lanes of `width` rows: 1, or glm::lane_width when 0) or on the device
// (glm::row_grid): an m x 3 matrix of lp, d / d eta, d / d extra, at the
// link named `link` ("" for the family's own). For the tests only.
// [[Rcpp::export(.cpp_glm_row_grid)]]
Rcpp::NumericMatrix cpp_glm_row_grid(std::string family, Rcpp::NumericVector y,
                                     Rcpp::NumericVector eta, Rcpp::NumericVector extra,
                                     bool propto, bool use_device, int width = 0,
                                     std::string link = "") {
#ifndef CLBAYES_OPENCL
  if (use_device) glue::stop_no_opencl();
#endif
  const int m = static_cast<int>(y.size());
  if (eta.size() != m || extra.size() != m)
    Rcpp::stop("`y`, `eta` and `extra` must have the same length");
  Rcpp::NumericMatrix out(m, 3);
  const glm::family fam = glm::parse_family(family);
  glm::row_grid(fam, glm::parse_link(fam, link), y.begin(), eta.begin(), extra.begin(), m,
                propto, use_device, out.begin(), width == 1 ? 1 : glm::lane_width);
  return out;
}

// gpu_glm_lp()'s batched likelihood with a device path forced: `path`
// ("auto", "single", "fused", "mma" or "gemm"), and `max_block_bytes` > 0
// bounds the GEMM path's block, so that the tests reach every path and
// several passes (glm::glm_batch_settings).
// [[Rcpp::export(.cpp_glm_lp_batch_path)]]
Rcpp::List cpp_glm_lp_batch_path(SEXP data, std::string family, Rcpp::NumericVector alpha,
                                 Rcpp::NumericMatrix beta, Rcpp::NumericVector extra,
                                 bool gradient, bool propto, bool use_device, std::string path,
                                 double max_block_bytes = 0, std::string link = "") {
  if (path != "auto" && path != "single" && path != "fused" && path != "mma" && path != "gemm")
    Rcpp::stop("`path` must be \"auto\", \"single\", \"fused\", \"mma\" or \"gemm\"");
  return glue::glm_lp_batch(
      data, family, link, alpha, beta, extra, gradient, propto, use_device,
      [&](glm::glm_batch_settings& tune, int P, int k) {
        tune.max_block_bytes = max_block_bytes;
        if (path == "single") {
          tune.single_calls_max = P;
          tune.mma_max_k = 0;
        } else if (path == "fused") {
          tune.single_calls_max = 0;
          tune.fused_max = P;
          tune.mma_max_k = 0;
        } else if (path == "mma") {  // emulated where the device has no FP64 mma
          tune.mma_from = 2;
          tune.mma_max_k = std::max(k, 1);
          tune.mma_neg_binomial = true;
        } else if (path == "gemm") {
          tune.single_calls_max = 0;
          tune.fused_max = 0;
          tune.mma_max_k = 0;
        }
      });
}

// Log densities and gradients of a model object at the rows of `points`
// (the tests check them against finite differences).
// [[Rcpp::export(.cpp_model_gradient)]]
Rcpp::List cpp_model_gradient(SEXP model, Rcpp::NumericMatrix points) {
  std::unique_ptr<clbayes::mcmc::batch_evaluator> f = glue::make_evaluator(model);
  Eigen::VectorXd out;
  Eigen::MatrixXd grad;
  f->gradient(Eigen::Map<const Eigen::MatrixXd>(points.begin(), points.nrow(), points.ncol()),
              out, grad);
  Rcpp::NumericMatrix g(static_cast<int>(grad.rows()), static_cast<int>(grad.cols()));
  std::copy(grad.data(), grad.data() + grad.size(), g.begin());
  return Rcpp::List::create(Rcpp::Named("value") = Rcpp::NumericVector(out.data(), out.data() + out.size()),
                            Rcpp::Named("gradient") = g);
}

// The first `n` uniforms of stream `stream` of `seed`, reached by jumping
// ahead (the samplers' way) or, with `reference`, by `stream` single jumps
// of the reference polynomial (Blackman and Vigna's xoshiro256** jump()).
// [[Rcpp::export(.cpp_test_rng_stream)]]
Rcpp::NumericVector cpp_test_rng_stream(double seed, int stream, int n, bool reference) {
  if (stream < 0 || n < 0) Rcpp::stop("`stream` and `n` must not be negative");
  const auto s = static_cast<std::uint64_t>(seed);
  clbayes::mcmc::rng g(s, reference ? 0u : static_cast<std::uint32_t>(stream));
  if (reference)
    for (int k = 0; k < stream; ++k) g.jump();
  Rcpp::NumericVector out(n);
  for (int i = 0; i < n; ++i) out[i] = g.uniform();
  return out;
}
