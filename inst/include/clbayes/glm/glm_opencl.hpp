#ifndef CLBAYES_GLM_GLM_OPENCL_HPP
#define CLBAYES_GLM_GLM_OPENCL_HPP

// The device path of glm_lp: data resident on the device (glm_data_cl, made
// once), parameters uploaded per call in one write, one fused kernel (the
// tiled kernel of glm_tiled.hpp, or the row-block kernel of
// kernels/glm_lp.hpp), and its per-group partial sums finished by a second
// tiny kernel (stan-opencl.txt section 3.4), so that a call moves only the
// parameters up and the value and gradient down. The buffers of a call are
// kept with the data and reused by the next call of the same shape.

#include "../kernels/glm_lp.hpp"
#include "glm_tiled.hpp"
#include "../opencl/checks.hpp"
#include "../opencl/device_table.hpp"
#include "../opencl/transfer.hpp"
#include "family.hpp"
#include "group_terms_cl.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace glm {

/** Device buffers of one call, reused by the next. */
struct glm_workspace {
  std::vector<double> host;     // parameters, staged for the upload
  opencl::matrix_cl params;     // alpha, beta, extra
  opencl::matrix_cl partials;   // groups x stride
  opencl::matrix_cl sums;       // stride
  opencl::matrix_cl row_grad;   // n x 2, when a gradient is per row
  opencl::matrix_cl counter;    // the tiled kernel's tile counter (an int)
  bool counter_dirty = true;    // not known to be zero: zero it first
  // The batched path (glm/glm_batch_opencl.hpp):
  std::vector<double> host_beta;     // B, staged for the upload
  opencl::matrix_cl batch_params;    // alpha (P), then sigma|phi (P)
  opencl::matrix_cl batch_beta;      // k x P
  opencl::matrix_cl eta;             // rows of a pass x P: X B, then D
  opencl::matrix_cl batch_partials;  // row groups x 3P
  opencl::matrix_cl batch_sums;      // 3P
  opencl::matrix_cl d_beta;          // k x P
  opencl::matrix_cl batch_counter;   // glm_lp_reduce's counter (unused here)
  // A multilevel model's group terms, uploaded at its first device call:
  std::shared_ptr<group_terms_cl> groups;
  std::vector<double> host_b;        // b (q x P), staged for the upload
  opencl::matrix_cl batch_b;         // q x P
  opencl::matrix_cl batch_db;        // q x P
};

/** x (n x k), y (n) and the optional offset (n) on the selected device,
 *  with the call workspace. */
struct glm_data_cl {
  opencl::matrix_cl x;
  opencl::matrix_cl y;
  opencl::matrix_cl offset;  // n x 1 when has_offset
  bool has_offset = false;
  int n = 0;
  int k = 0;
  mutable glm_workspace work;

  /** The kernels' offset argument: y stands in when there is no offset
   *  (the kernels are then built with OFFSET 0 and never read it). */
  const opencl::matrix_cl& offset_arg() const { return has_offset ? offset : y; }
  /** The kernels' OFFSET build option. */
  int offset_option() const { return has_offset ? 1 : 0; }
};

/** Copy x, y and the offset (n values, or null for none) to the device
 *  once; checks x for NaN / Inf there. */
inline glm_data_cl to_glm_data_cl(const double* x, const double* y, int n, int k,
                                  const double* offset = nullptr) {
  glm_data_cl d;
  d.n = n;
  d.k = k;
  d.x = opencl::to_matrix_cl(x, n, k);
  d.y = opencl::to_matrix_cl(y, n, 1);
  if (offset != nullptr) {
    d.offset = opencl::to_matrix_cl(offset, n, 1);
    d.has_offset = true;
  }
  if (opencl::has_nonfinite(d.x))
    throw invalid_argument("x", "contains NA, NaN or infinite values");
  return d;
}

/** Work-group shape of the fused kernel; tuning knobs with their defaults.
 *  `kernel` picks the tiled kernel (kernels/glm_lp_tiled.hpp, knobs in
 *  `tiled`) or the row-block kernel (kernels/glm_lp.hpp, the fields below);
 *  designs too wide for a tile always run the row-block kernel. */
struct glm_launch {
  glm_kernel kernel = glm_kernel::tiled;
  glm_tiled_launch tiled;
  int rows = 32;          // ROWS: rows per block (power of two)
  int chunk = 8;          // CHUNK: columns per work item (target)
  int max_group = 512;    // cap on ROWS * PARTS (registers per work item)
  int groups_per_cu = 8;  // persistent groups per compute unit
  int max_chunk = 16;     // most columns per work item before rows shrink
  int reduce_group = 64;  // work-group size of the finishing reduction
};

namespace internal {
inline glm_launch with_register_cap() {
  glm_launch s;
  s.tiled.max_registers = 128;
  return s;
}
}  // namespace internal

/** The single-point kernels' launch for device `d` (opencl/device_table.hpp). */
inline glm_launch tuned_launch(const opencl::device_info& d) {
  static const opencl::device_entry<glm_launch> table[] = {
      {"NVIDIA", "", 0, internal::with_register_cap()},
      {"", "", 0, glm_launch()},  // any other device
  };
  return opencl::lookup(table, d);
}

namespace internal {

/** Enqueue a copy of host[0 .. size) into m without waiting; the caller
 *  keeps host alive until a later blocking read on the in-order queue. */
inline void write_async(opencl::matrix_cl& m, const std::vector<double>& host) {
  try {
    std::vector<cl::Event> waits = m.read_write_events();
    cl::Event ev;
    opencl::context::instance().queue().enqueueWriteBuffer(
        m.buffer(), CL_FALSE, 0, sizeof(double) * host.size(), host.data(),
        waits.empty() ? nullptr : &waits, &ev);
    m.add_write_event(ev);
  } catch (const cl::Error& e) {
    throw opencl_error(std::string(e.what()) + " copying GLM parameters to the device",
                       e.err());
  }
}

/** Blocking read of the first m values of the device vector v. */
inline void read_head(const opencl::matrix_cl& v, double* out, int m) {
  try {
    std::vector<cl::Event> waits = v.write_events();
    opencl::context::instance().queue().enqueueReadBuffer(
        v.buffer(), CL_TRUE, 0, sizeof(double) * m, out, waits.empty() ? nullptr : &waits);
  } catch (const cl::Error& e) {
    throw opencl_error(std::string(e.what()) + " reading GLM sums from the device", e.err());
  }
}

/** Work-group shape: ROWS x PARTS items, CHUNK columns each. */
struct glm_shape {
  int rows = 1;
  int parts = 1;
  int chunk = 1;
};

/**
 * A wide x first takes more items per row; past max_chunk columns per item
 * (registers would spill) the blocks get fewer rows instead. At least 4 rows
 * per group where allowed: PoCL 3 miscompiled (or aborted on) work groups
 * of one or two items. Local memory: NETA * WG + (NETA + 3) * ROWS + cuts
 * doubles, at most half of the device's.
 */
inline glm_shape choose_shape(int k, int ne, int n_cuts, int max_wg,
                              std::uint64_t local_mem, const glm_launch& tune) {
  glm_shape sh;
  while (sh.rows * 2 <= std::min(std::max(tune.rows, 4), max_wg)) sh.rows *= 2;
  const int chunk_target = std::max(1, tune.chunk / std::min(ne, std::max(tune.chunk, 1)));
  for (;;) {
    const int max_parts = std::max(1, max_wg / sh.rows);
    sh.chunk = std::max(chunk_target, (k + max_parts - 1) / max_parts);
    sh.parts = std::max(1, (k + sh.chunk - 1) / sh.chunk);
    if (sh.chunk <= tune.max_chunk || sh.rows == 1) break;
    sh.rows /= 2;
  }
  auto local_bytes = [&](int rw) {
    return sizeof(double) * (static_cast<std::size_t>(ne) * rw * sh.parts +
                             static_cast<std::size_t>(ne + 3) * rw + std::max(n_cuts, 1));
  };
  while (sh.rows > 1 && local_bytes(sh.rows) > local_mem / 2) sh.rows /= 2;
  if (local_bytes(sh.rows) > local_mem)
    throw invalid_argument("beta", "has too many columns for the device's local memory; "
                                   "use backend = \"cpu\"");
  return sh;
}

/** Shape and launch of the row-block kernel (kernels/glm_lp.hpp); the
 *  number of groups. If the compiled variant allows fewer items per group
 *  than the shape has (registers), the shape is chosen again. */
inline int glm_lp_rowblock_launch(glm_workspace& w, const glm_data_cl& data,
                                  const glm_params& p, int n_cuts, int alpha_per_row,
                                  int extra_per_row, bool gradient, bool propto,
                                  const glm_launch& tune) {
  const int n = data.n, k = data.k, ne = p.n_eta;
  const opencl::device_info& info = opencl::context::instance().info();
  auto& kern = opencl::kernels::glm_lp;
  int max_wg = static_cast<int>(
      std::min<std::size_t>(info.max_work_group_size, static_cast<std::size_t>(tune.max_group)));
  glm_shape sh;
  for (int attempt = 0;; ++attempt) {
    sh = choose_shape(k, ne, n_cuts, max_wg, info.local_mem, tune);
    const std::map<std::string, int> options = {{"FAMILY", static_cast<int>(p.fam)},
                                                {"LINK", link_option(p.fam, p.lk)},
                                                {"OFFSET", data.offset_option()},
                                                {"NETA", ne},
                                                {"ROWS", sh.rows},
                                                {"CHUNK", sh.chunk}};
    for (const auto& kv : options) kern.set_option(kv.first, kv.second);
    const int allowed = static_cast<int>(kern.max_work_group_size());
    if (sh.rows * sh.parts <= allowed) break;
    if (attempt == 4 || allowed < 4)
      throw opencl_error("choosing a work-group size for glm_lp (the device allows " +
                             std::to_string(allowed) + " items)",
                         CL_INVALID_WORK_GROUP_SIZE);
    max_wg = allowed;
  }
  const int rows = sh.rows, wg = sh.rows * sh.parts;
  const long long blocks = (static_cast<long long>(n) + rows - 1) / rows;
  const int groups = static_cast<int>(
      std::max<long long>(1, std::min<long long>(blocks, static_cast<long long>(info.compute_units) *
                                                             tune.groups_per_cu)));
  const long long stride = 2 + ne + static_cast<long long>(k) * ne + n_cuts;
  ensure(w.partials, groups * stride);
  kern(cl::NDRange(static_cast<std::size_t>(groups) * wg), cl::NDRange(wg), w.partials,
       w.row_grad, data.x, data.y, data.offset_arg(), w.params, p.n_alpha, p.n_alpha + k * ne, n, k,
       alpha_per_row, extra_per_row, n_cuts, gradient ? 1 : 0, propto ? 1 : 0,
       cl::Local(sizeof(double) * ne * wg), cl::Local(sizeof(double) * (ne + 3) * rows),
       cl::Local(sizeof(double) * std::max(n_cuts, 1)));
  return groups;
}

}  // namespace internal

/**
 * The device path of glm_lp for data already on the device: same contract
 * as glm_lp_cpu (values of the parameters and y are the caller's to check).
 */
inline glm_result glm_lp_opencl(const glm_data_cl& data, const glm_params& p,
                                bool gradient, bool propto,
                                const std::optional<glm_launch>& settings = std::nullopt) {
  const glm_launch tune =
      settings ? *settings : tuned_launch(opencl::context::instance().info());
  const int n = data.n, k = data.k, ne = p.n_eta;
  check_glm_shapes(p, n, k);
  glm_result res;
  if (gradient) {
    res.d_alpha.assign(p.n_alpha, 0.0);
    res.d_beta.assign(static_cast<std::size_t>(k) * ne, 0.0);
    res.d_extra.assign(p.n_extra, 0.0);
  }
  if (n == 0) return res;
  const opencl::device_info& info = opencl::context::instance().info();
  const int n_cuts = p.fam == family::ordered_logistic ? p.n_extra : 0;
  const long long stride = 2 + ne + static_cast<long long>(k) * ne + n_cuts;

  const bool cat = p.fam == family::categorical_logit;
  const int alpha_per_row = !cat && p.n_alpha > 1 ? 1 : 0;
  const int extra_per_row = n_cuts == 0 && p.n_extra > 1 ? 1 : 0;
  const bool row_out = gradient && (alpha_per_row || extra_per_row);

  // alpha, beta, extra in one buffer, one upload.
  glm_workspace& w = data.work;
  const long long n_beta = static_cast<long long>(k) * ne;
  w.host.assign(p.alpha, p.alpha + p.n_alpha);
  w.host.insert(w.host.end(), p.beta, p.beta + n_beta);
  w.host.insert(w.host.end(), p.extra, p.extra + p.n_extra);
  if (w.host.empty()) w.host.push_back(0.0);
  internal::ensure(w.params, static_cast<long long>(w.host.size()));
  internal::write_async(w.params, w.host);
  internal::ensure(w.sums, stride);
  internal::ensure(w.row_grad, row_out ? 2LL * n : 1);
  if (!w.counter.on_current_device() || w.counter.rows() != 1) {
    w.counter = opencl::matrix_cl(1, 1);
    w.counter_dirty = true;
  }
  if (w.counter_dirty) {
    static const std::vector<double> zero(1, 0.0);  // all bits zero: int 0
    internal::write_async(w.counter, zero);
  }
  // Dirty until glm_lp_reduce, which zeroes it, is enqueued.
  w.counter_dirty = true;

  int groups = 0;
  if (tune.kernel == glm_kernel::tiled)
    groups = glm_lp_tiled_launch(w.partials, w.row_grad, data.x, data.y, data.offset_arg(),
                                 data.offset_option(), w.params, w.counter, n, k, p, n_cuts,
                                 alpha_per_row, extra_per_row, gradient, propto, tune.tiled);
  if (groups == 0)
    groups = internal::glm_lp_rowblock_launch(w, data, p, n_cuts, alpha_per_row, extra_per_row,
                                              gradient, propto, tune);

  // Finish the partial sums on the device: all columns, or the value alone.
  int rwg = 1;
  while (rwg * 2 <= std::min<int>(tune.reduce_group, static_cast<int>(info.max_work_group_size)))
    rwg *= 2;
  auto& red = opencl::kernels::glm_lp_reduce;
  red.set_option("REDUCE_WG", rwg);
  const int n_sums = gradient ? static_cast<int>(stride) : 1;
  red(cl::NDRange(static_cast<std::size_t>(n_sums) * rwg), cl::NDRange(rwg), w.sums,
      w.partials, w.counter, groups, static_cast<int>(stride));
  w.counter_dirty = false;

  std::vector<double> q(static_cast<std::size_t>(stride));
  std::vector<double> rg;
  if (row_out) {
    rg.resize(static_cast<std::size_t>(2) * n);
    opencl::from_matrix_cl(w.row_grad, rg.data());
  }
  internal::read_head(w.sums, q.data(), n_sums);
  res.value = q[0];
  if (!gradient) return res;
  if (!alpha_per_row) std::copy(q.begin() + 1, q.begin() + 1 + p.n_alpha, res.d_alpha.begin());
  std::copy(q.begin() + 1 + ne, q.begin() + 1 + ne + n_beta, res.d_beta.begin());
  if (n_cuts > 0)
    std::copy(q.begin() + 2 + ne + n_beta, q.end(), res.d_extra.begin());
  else if (p.n_extra == 1)
    res.d_extra[0] = q[1 + ne + n_beta];
  if (alpha_per_row) std::copy(rg.begin(), rg.begin() + n, res.d_alpha.begin());
  if (extra_per_row) std::copy(rg.begin() + n, rg.end(), res.d_extra.begin());
  return res;
}

}  // namespace glm
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
