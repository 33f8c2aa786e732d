#ifndef CLBAYES_GLM_GLM_BATCH_OPENCL_HPP
#define CLBAYES_GLM_GLM_BATCH_OPENCL_HPP

// The device path of the batched GLM likelihood, for data resident on the
// device (glm_data_cl). Which path runs depends on the number of points P
// and the device (H200 sweeps; RESULTS.md, "GLM likelihood on a device"):
//   - one point (and on devices without FP64 tensor cores up to 3): one
//     call of the fused single-point kernel per point (glm_opencl.hpp, one
//     pass over x each);
//   - on a device with FP64 tensor cores and k <= mma_max_k, every P above
//     that: glm_batch_mma (kernels/glm_batch_mma.hpp), x read once per
//     chunk of points, X B and X' D on the tensor cores, eta and D never
//     leave the chip (not the negative binomial: its rows are heavy enough
//     that the paths below win);
//   - elsewhere up to about 16: glm_batch_fused (kernels/glm_batch.hpp),
//     the same fusion on the FMA units;
//   - more, elsewhere: per pass over a block of rows,
//       1. X_b B, a tall-skinny product by the GEMM of linalg/gemm.hpp;
//       2. kernels/glm_batch.hpp: the row math over the block, each point's
//          value and d alpha, d sigma|phi summed inside the kernel, the
//          block overwritten by D = d lp / d eta;
//       3. X_b' D by the GEMM again (split-k over the rows), added up over
//          the passes.
//     One pass over all rows unless the n x P block would exceed the
//     largest allocation (glm_batch_settings::max_block_bytes).
// A multilevel model always takes the last path: the row kernel gathers
// its group terms Z b into each row's linear predictor, and
// glm_group_gradient sums D per level for the gradient in b (one pass).

#include "../linalg/gemm.hpp"
#include "../kernels/glm_batch.hpp"
#include "../kernels/glm_batch_mma.hpp"
#include "../opencl/device_table.hpp"
#include "../kernels/initialize.hpp"
#include "batch_params.hpp"
#include "glm_opencl.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace clbayes {
namespace glm {

/** The device paths of a batch of points (see the top of this file). */
enum class glm_batch_path { single_calls, fused, mma, gemm };

/** Rows and points of a glm_batch_fused tile. */
struct glm_fused_tile {
  int rows;
  int points;
};

/** Settings of the batched device path, passed by value; the defaults are
 *  the H200's (RESULTS.md, "GLM likelihood on a device") without the tensor cores, the
 *  device table (tuned_batch_settings) adds them where the device has
 *  them. bench_glm --points sweeps them. */
struct glm_batch_settings {
  int single_calls_max = 3;  // P <= this: single-point calls (P = 1 always)
  int fused_max = 16;        // P <= this: glm_batch_fused; above it the GEMMs
  glm_fused_tile fused_small{32, 8};   // fused tiles up to fused_small.points points
  glm_fused_tile fused_large{16, 16};  // fused tiles above
  int group = 256;           // work-group size of the row kernel (power of two)
  int groups_per_cu = 8;     // row and fused kernels: groups per compute unit
  /** glm_batch_mma, before the three above: for P >= mma_from and
   *  k <= mma_max_k (0: never; the coefficients of a warp's points live in
   *  registers, 2 ceil(k / 8) doubles a lane); tensor_cores 0 runs its
   *  fragments through the emulation (tests only). */
  int mma_from = 2;
  int mma_max_k = 0;
  bool tensor_cores = false;
  bool mma_neg_binomial = false;  // its heavy rows run faster on the other paths (H200)
  int mma_warps = 8;         // warps per group: 8 mma_warps points per chunk
  int mma_warps_per_cu = 16; // groups: this many warps per compute unit over all chunks
                             // (P = 16: 0.53 ms against 0.81 with 4)
  /** GEMM path: bytes of the n x P block of one pass (0: the device's
   *  largest allocation); smaller blocks mean more passes over the rows. */
  double max_block_bytes = 0;

  glm_batch_path path_for(int P, int k, family fam) const {
    const bool mma = k >= 1 && k <= mma_max_k &&
                     (fam != family::neg_binomial_2_log || mma_neg_binomial);
    if (P == 1) return glm_batch_path::single_calls;
    if (mma && P >= mma_from) return glm_batch_path::mma;
    if (P <= single_calls_max) return glm_batch_path::single_calls;
    return P <= fused_max ? glm_batch_path::fused : glm_batch_path::gemm;
  }
  glm_fused_tile fused_tile(int P) const { return P <= fused_small.points ? fused_small : fused_large; }
};

namespace internal {
inline glm_batch_settings with_tensor_cores() {
  glm_batch_settings s;
  // glm_batch_mma from 2 points: 0.52 ms at 2, 4, 8 and 16 points, against
  // 0.60 for two single-point calls and 0.90 / 1.04 / 1.58 for the fused
  // FMA kernel (RESULTS.md, "GLM likelihood on a device")
  s.mma_from = 2;
  s.mma_max_k = 128;  // 246 registers and no spills at 128; faster than the GEMMs there
                      // (P = 256: 6.56 against 7.64 ms)
  s.tensor_cores = true;
  return s;
}
}  // namespace internal

/** The batched path's settings for device `d` (opencl/device_table.hpp):
 *  the FP64 mma shape of glm_batch_mma needs an NVIDIA device of compute
 *  capability 9.0. */
inline glm_batch_settings tuned_batch_settings(const opencl::device_info& d) {
  static const opencl::device_entry<glm_batch_settings> table[] = {
      {"NVIDIA", "", 90, internal::with_tensor_cores()},  // H100, H200
      {"", "", 0, glm_batch_settings()},                  // any other device
  };
  return opencl::lookup(table, d);
}

#ifdef CLBAYES_OPENCL
/** The settings for the selected device. */
inline glm_batch_settings tuned_batch_settings() {
  return tuned_batch_settings(opencl::context::instance().info());
}
#endif

}  // namespace glm
}  // namespace clbayes

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace glm {


namespace internal {

/** m as a rows x cols device matrix, reallocated only when its shape changes. */
inline void ensure_shape(opencl::matrix_cl& m, int rows, int cols) {
  rows = std::max(rows, 1);
  cols = std::max(cols, 1);
  if (m.rows() != rows || m.cols() != cols || !m.on_current_device())
    m = opencl::matrix_cl(rows, cols);
}

/** Each point through the fused single-point kernel, one call each. */
inline glm_batch_result single_calls(const glm_data_cl& data, const glm_batch_params& p,
                                     bool gradient, bool propto) {
  glm_batch_result res = zero_batch_result(p, data.k, gradient);
  for (int j = 0; j < p.n_points; ++j) {
    glm_params one;
    one.fam = p.fam;
    one.lk = p.lk;
    one.alpha = p.alpha + j;
    one.n_alpha = 1;
    one.beta = p.beta + static_cast<std::size_t>(j) * data.k;
    one.extra = p.extra != nullptr ? p.extra + j : nullptr;
    one.n_extra = p.extra != nullptr ? 1 : 0;
    const glm_result r = glm_lp_opencl(data, one, gradient, propto);
    res.value[j] = r.value;
    if (!gradient) continue;
    res.d_alpha[j] = r.d_alpha[0];
    std::copy(r.d_beta.begin(), r.d_beta.end(), res.d_beta.col(j).data());
    if (p.extra != nullptr) res.d_extra[j] = r.d_extra[0];
  }
  return res;
}

/** Enqueues the sums over `groups` partial rows of `stride` values (the
 *  first n_sums columns) into w.batch_sums, on the device. */
inline void reduce_partials(glm_workspace& w, int groups, int stride, int n_sums) {
  const opencl::device_info& info = opencl::context::instance().info();
  int rwg = 1;
  while (rwg * 2 <= std::min<int>(64, static_cast<int>(info.max_work_group_size))) rwg *= 2;
  auto& red = opencl::kernels::glm_lp_reduce;
  red.set_option("REDUCE_WG", rwg);
  ensure(w.batch_sums, stride);
  ensure(w.batch_counter, 1);
  red(cl::NDRange(static_cast<std::size_t>(n_sums) * rwg), cl::NDRange(rwg), w.batch_sums,
      w.batch_partials, w.batch_counter, groups, stride);
}

/** The fused variant: enqueues glm_batch_fused and the reduction of its
 *  partial rows into w.batch_sums ((3 + k) P values: value, d alpha,
 *  d sigma|phi, d beta). Parameters must be on the device already. Returns
 *  false (nothing enqueued) when the tile does not fit local memory. */
inline bool batch_fused(const glm_data_cl& data, const glm_batch_params& p, bool gradient,
                        bool propto, const glm_batch_settings& tune) {
  const int n = data.n, k = data.k, P = p.n_points;
  const opencl::device_info& info = opencl::context::instance().info();
  const glm_fused_tile tile = tune.fused_tile(P);
  int tr = 1, pc = 1;
  while (tr * 2 <= std::max(tile.rows, 1)) tr *= 2;
  while (pc * 2 <= std::max(tile.points, 1)) pc *= 2;
  pc = std::max(pc, 1);
  const int wg = tr * pc;
  const std::size_t local = sizeof(double) * (static_cast<std::size_t>(tr) * k +
                                              static_cast<std::size_t>(k) * pc +
                                              static_cast<std::size_t>(pc) * (tr + 1) + 3 * wg);
  if (3 * pc > wg || wg > static_cast<int>(info.max_work_group_size) ||
      local > info.local_mem)
    return false;
  auto& kern = opencl::kernels::glm_batch_fused;
  kern.set_option("FAMILY", static_cast<int>(p.fam));
  kern.set_option("LINK", link_option(p.fam, p.lk));
  kern.set_option("OFFSET", data.offset_option());
  kern.set_option("TR", tr);
  kern.set_option("PC", pc);
  kern.set_option("FWG", wg);
  kern.set_option("GSLOTS", std::max(1, (k * pc + wg - 1) / wg));
  if (static_cast<int>(kern.max_work_group_size()) < wg) return false;
  glm_workspace& w = data.work;
  const long long chunks = (P + pc - 1) / pc;
  const long long tiles = (static_cast<long long>(n) + tr - 1) / tr;
  const long long row_groups = std::max<long long>(
      1, std::min<long long>(tiles, static_cast<long long>(info.compute_units) *
                                        std::max(tune.groups_per_cu, 1) / chunks));
  const long long stride = static_cast<long long>(3 + k) * P;
  ensure(w.batch_partials, row_groups * stride);
  kern(cl::NDRange(static_cast<std::size_t>(row_groups) * wg, chunks), cl::NDRange(wg, 1),
       w.batch_partials, data.x, data.y, data.offset_arg(), w.batch_params, w.batch_beta, n, k,
       P, gradient ? 1 : 0, propto ? 1 : 0, cl::Local(sizeof(double) * tr * std::max(k, 1)),
       cl::Local(sizeof(double) * std::max(k, 1) * pc), cl::Local(sizeof(double) * pc * (tr + 1)));
  reduce_partials(w, static_cast<int>(row_groups), static_cast<int>(stride),
                  static_cast<int>(gradient ? stride : P));
  return true;
}

/** glm_batch_mma and the reduction of its partial rows, as batch_fused.
 *  Returns false (nothing enqueued) for k outside 1..mma_max_k. */
inline bool batch_mma(const glm_data_cl& data, const glm_batch_params& p, bool gradient,
                      bool propto, const glm_batch_settings& tune) {
  const int n = data.n, k = data.k, P = p.n_points;
  const opencl::device_info& info = opencl::context::instance().info();
  const int warps = std::max(1, std::min(tune.mma_warps, (P + 7) / 8));
  const int wg = 32 * warps;
  // Local memory as the kernel declares it: the x tile (or the final sums)
  // and D.
  const std::size_t tr = 16;  // rows per tile
  const std::size_t kx = 16 * static_cast<std::size_t>((k + 15) / 16);
  const std::size_t dsp = 8 * static_cast<std::size_t>(warps) + 4;
  const std::size_t local =
      sizeof(double) * (std::max(kx * (tr + 4), 24 * 8 * static_cast<std::size_t>(warps)) +
                        tr * dsp);
  if (k < 1 || k > tune.mma_max_k || wg > static_cast<int>(info.max_work_group_size) ||
      local > info.local_mem)
    return false;
  auto& kern = opencl::kernels::glm_batch_mma;
  kern.set_option("FAMILY", static_cast<int>(p.fam));
  kern.set_option("LINK", link_option(p.fam, p.lk));
  kern.set_option("OFFSET", data.offset_option());
  kern.set_option("WARPS", warps);
  kern.set_option("KS", (k + 7) / 8);
  kern.set_option("MG", (k + 15) / 16);
  kern.set_option("MMA", tune.tensor_cores ? 1 : 0);
  if (static_cast<int>(kern.max_work_group_size()) < wg) return false;
  glm_workspace& w = data.work;
  const long long chunks = (P + 8LL * warps - 1) / (8LL * warps);
  const long long tiles = (static_cast<long long>(n) + static_cast<long long>(tr) - 1) /
                         static_cast<long long>(tr);
  const long long row_groups = std::max<long long>(
      1, std::min<long long>(tiles, static_cast<long long>(info.compute_units) *
                                        std::max(tune.mma_warps_per_cu, 1) / (warps * chunks)));
  const long long stride = static_cast<long long>(3 + k) * P;
  ensure(w.batch_partials, row_groups * stride);
  kern(cl::NDRange(static_cast<std::size_t>(row_groups * chunks) * wg), cl::NDRange(wg),
       w.batch_partials, data.x, data.y, data.offset_arg(), w.batch_params, w.batch_beta, n, k,
       P, static_cast<int>(chunks), gradient ? 1 : 0, propto ? 1 : 0);
  reduce_partials(w, static_cast<int>(row_groups), static_cast<int>(stride),
                  static_cast<int>(gradient ? stride : P));
  return true;
}

/** The device copy of a multilevel model's group terms, made at its first
 *  call and kept in the workspace. */
inline const group_terms_cl& device_groups(glm_workspace& w, const group_terms& g, int n) {
  if (!w.groups || !same_terms(*w.groups, g))
    w.groups = std::make_shared<group_terms_cl>(to_group_terms_cl(g, n));
  return *w.groups;
}

/** The result in w.batch_sums: value, d alpha, d sigma|phi (P each), then
 *  with `with_beta` (the fused paths) d beta (k x P). */
inline glm_batch_result read_sums(const glm_workspace& w, const glm_batch_params& p, int k,
                                  bool gradient, bool with_beta) {
  const int P = p.n_points;
  glm_batch_result res = zero_batch_result(p, k, gradient);
  const int n_sums = gradient ? (3 + (with_beta ? k : 0)) * P : P;
  std::vector<double> sums(static_cast<std::size_t>(n_sums));
  read_head(w.batch_sums, sums.data(), n_sums);
  std::copy(sums.begin(), sums.begin() + P, res.value.data());
  if (!gradient) return res;
  std::copy(sums.begin() + P, sums.begin() + 2 * P, res.d_alpha.data());
  if (p.extra != nullptr) std::copy(sums.begin() + 2 * P, sums.begin() + 3 * P, res.d_extra.data());
  if (with_beta) std::copy(sums.begin() + 3 * P, sums.end(), res.d_beta.data());
  return res;
}

}  // namespace internal

/**
 * Log densities (and gradients when `gradient`) of the P points of `p` for
 * data on the device: the same contract as glm_lp_batch_cpu. `settings`: the
 * path's settings (by default the selected device's, tuned_batch_settings).
 */
inline glm_batch_result glm_lp_batch_opencl(const glm_data_cl& data, const glm_batch_params& p,
                                            bool gradient, bool propto,
                                            const std::optional<glm_batch_settings>&
                                                settings = std::nullopt) {
  const glm_batch_settings tune = settings ? *settings : tuned_batch_settings();
  const int n = data.n, k = data.k, P = p.n_points;
  if (n == 0) return zero_batch_result(p, k, gradient);
  // A multilevel model's group terms ride on the row kernel of the GEMM path.
  const glm_batch_path path = p.groups != nullptr ? glm_batch_path::gemm
                                                  : tune.path_for(P, k, p.fam);
  if (path == glm_batch_path::single_calls)
    return internal::single_calls(data, p, gradient, propto);
  data.x.check_device("x");
  const opencl::device_info& info = opencl::context::instance().info();
  glm_workspace& w = data.work;

  // Parameters: alpha and sigma|phi in one upload, B (k x P) in another.
  w.host.assign(p.alpha, p.alpha + P);
  if (p.extra != nullptr) w.host.insert(w.host.end(), p.extra, p.extra + P);
  internal::ensure(w.batch_params, static_cast<long long>(w.host.size()));
  internal::write_async(w.batch_params, w.host);
  internal::ensure_shape(w.batch_beta, k, P);
  w.host_beta.assign(p.beta, p.beta + static_cast<std::size_t>(k) * P);
  if (k > 0) internal::write_async(w.batch_beta, w.host_beta);

  if ((path == glm_batch_path::fused && internal::batch_fused(data, p, gradient, propto, tune)) ||
      (path == glm_batch_path::mma && internal::batch_mma(data, p, gradient, propto, tune)))
    return internal::read_sums(w, p, k, gradient, true);
  // All rows in one pass unless the block would be larger than one device
  // allocation may be (or than the settings allow).
  const double max_alloc = static_cast<double>(
      opencl::context::instance().device().getInfo<CL_DEVICE_MAX_MEM_ALLOC_SIZE>());
  const double block = tune.max_block_bytes > 0 ? std::min(tune.max_block_bytes, max_alloc)
                                                : max_alloc;
  const long long fits = std::max<long long>(
      256, static_cast<long long>(block / (sizeof(double) * static_cast<double>(P))));
  const int rows = static_cast<int>(std::min<long long>(n, fits));
  const group_terms_cl* groups = nullptr;
  if (p.groups != nullptr) {
    if (rows < n)
      throw invalid_argument("x", "has too many rows for the device path of a multilevel "
                                  "model (one pass over them must fit one allocation): use "
                                  "backend = \"cpu\"");
    groups = &internal::device_groups(w, *p.groups, n);
    internal::ensure_shape(w.batch_b, groups->q, P);
    w.host_b.assign(p.b, p.b + static_cast<std::size_t>(groups->q) * P);
    internal::write_async(w.batch_b, w.host_b);
  }
  internal::ensure_shape(w.eta, rows, P);
  if (gradient) internal::ensure_shape(w.d_beta, k, P);
  int wg = 32;
  while (wg * 2 <= std::min<int>(std::max(tune.group, 32),
                                 static_cast<int>(info.max_work_group_size)))
    wg *= 2;
  auto& rows_kernel = opencl::kernels::glm_batch_rows;
  rows_kernel.set_option("FAMILY", static_cast<int>(p.fam));
  rows_kernel.set_option("LINK", link_option(p.fam, p.lk));
  rows_kernel.set_option("OFFSET", data.offset_option());
  rows_kernel.set_option("BATCH_WG", wg);
  rows_kernel.set_option("GROUPS", groups != nullptr ? 1 : 0);
  // (y stands in for the group buffers of a model without them: never read)
  const opencl::matrix_cl& z_index = groups != nullptr ? groups->index : data.y;
  const opencl::matrix_cl& z_cols = groups != nullptr ? groups->z : data.y;
  const opencl::matrix_cl& z_meta = groups != nullptr ? groups->meta : data.y;
  const opencl::matrix_cl& b = groups != nullptr ? w.batch_b : data.y;
  const int n_terms = groups != nullptr ? groups->n_terms : 0;
  const int q = groups != nullptr ? groups->q : 0;
  // Row groups per point: about groups_per_cu groups per unit over all
  // points, the same in every pass (the partial rows are added over passes).
  const long long row_groups = std::max<long long>(
      1, std::min<long long>((rows + wg - 1) / wg,
                             static_cast<long long>(info.compute_units) *
                                 std::max(tune.groups_per_cu, 1) / P));
  internal::ensure(w.batch_partials, row_groups * 3 * P);

  linalg::gemm_block xb{&data.x};
  const linalg::gemm_block bb{&w.batch_beta};
  linalg::gemm_block xt{&data.x};
  xt.trans = true;
  const linalg::gemm_block db{&w.eta};
  for (int i0 = 0; i0 < n; i0 += rows) {
    if (i0 > 0) check_interrupt();
    const int m = std::min(rows, n - i0);
    xb.i = i0;
    if (k > 0)
      linalg::gemm(w.eta, 0, 0, 0, xb, bb, m, P, k);
    else  // no predictors: eta is alpha alone
      opencl::kernels::zeros(cl::NDRange(w.eta.rows(), P), w.eta, w.eta.rows(), P, 0);
    rows_kernel(cl::NDRange(static_cast<std::size_t>(row_groups) * wg, P), cl::NDRange(wg, 1),
                w.batch_partials, w.eta, data.y, data.offset_arg(), w.batch_params, z_index,
                z_cols, z_meta, b, n_terms, n, q, i0, m, w.eta.rows(), P, gradient ? 1 : 0,
                propto ? 1 : 0, i0 > 0 ? 1 : 0);
    if (gradient && groups != nullptr) {  // one pass: D of every row is in w.eta
      internal::ensure_shape(w.batch_db, q, P);
      const std::size_t levels = (static_cast<std::size_t>(groups->n_levels) + 63) / 64 * 64;
      opencl::kernels::glm_group_gradient(cl::NDRange(levels, P), cl::NDRange(64, 1),
                                          w.batch_db, w.eta, groups->z, groups->meta,
                                          groups->order, groups->start, n_terms, n, q,
                                          w.eta.rows(), groups->n_levels);
    }
    if (!gradient || k == 0) continue;
    xt.i = i0;
    linalg::gemm_options opt;
    opt.beta = i0 > 0 ? 1.0 : 0.0;
    linalg::gemm(w.d_beta, 0, 0, 0, xt, db, k, P, m, opt);
  }

  // Each point's sums over the row groups, on the device.
  internal::reduce_partials(w, static_cast<int>(row_groups), 3 * P, (gradient ? 3 : 1) * P);
  glm_batch_result res = internal::read_sums(w, p, k, gradient, false);
  if (gradient && k > 0) opencl::from_matrix_cl(w.d_beta, res.d_beta.data());
  if (gradient && groups != nullptr) opencl::from_matrix_cl(w.batch_db, res.d_b.data());
  return res;
}

}  // namespace glm
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
