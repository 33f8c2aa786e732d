#ifndef CLBAYES_LINALG_GEMM_HPP
#define CLBAYES_LINALG_GEMM_HPP

// Host side of the GEMM family (stan-opencl.txt, section 3.1): the general
// block product that the triangular inverse, the Cholesky and its gradient
// are built from, plus the user-level products multiply() (with the vector
// special cases) and multiply_transpose() (C = A A^T). The CPU paths are
// Eigen products.

#include "../eigen.hpp"
#include "../error.hpp"
#include "../kernels/gemm.hpp"
#include "../kernels/matrix_vector.hpp"
#include "../opencl/matrix_cl.hpp"
#include "settings.hpp"
#include "transpose.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>

namespace clbayes {
namespace linalg {

/** C = A A^T on the CPU: one triangle by a rank update, then mirrored. */
inline Eigen::MatrixXd multiply_transpose(const Eigen::MatrixXd& a) {
  Eigen::MatrixXd c = Eigen::MatrixXd::Zero(a.rows(), a.rows());
  c.selfadjointView<Eigen::Lower>().rankUpdate(a);
  c.triangularView<Eigen::StrictlyUpper>() = c.transpose();
  return c;
}

#ifdef CLBAYES_OPENCL

using opencl::matrix_cl;

/** One operand of a block product: the block of `m` whose top-left element
 *  is (i, j), used transposed when `trans`, with the view of the stored
 *  block (elements outside it are treated as zero); batch item b uses the
 *  block `stride` elements further on. */
struct gemm_block {
  const matrix_cl* m;
  int i = 0;
  int j = 0;
  bool trans = false;
  matrix_view view = matrix_view::entire;
  long long stride = 0;
};

/** Options of a block product. splits = 0 lets split-k choose. The
 *  kernels and their tiles come from `tune`: by default the selected
 *  device's (tuned_settings()). */
struct gemm_options {
  gemm_options() : tune(tuned_settings().gemm) {}
  explicit gemm_options(const gemm_settings& s) : tune(s) {}
  double alpha = 1.0;
  double beta = 0.0;
  bool lower_only = false;
  int batch = 1;
  int splits = 0;
  /** > 0: at most this many work groups (the large tiles, each group
   *  looping over tiles), leaving the rest of the device to another queue. */
  int max_groups = 0;
  gemm_settings tune;
};

namespace internal {

inline std::map<std::string, int> tile_options(const gemm_tiles& t) {
  return {{"TM", t.tm}, {"TN", t.tn}, {"TK", t.tk}, {"WPTM", t.wptm}, {"WPTN", t.wptn},
          {"MMA_STAGES", t.stages}};
}

// Bytes of the kernel's local arrays (kernels/gemm.hpp): the FMA path's two
// tiles (SA, SB), or the tensor-core ring's stages (RA, RB; the larger
// layout of the two op() of each operand).
inline std::uint64_t gemm_local_bytes(const gemm_tiles& t, bool mma) {
  if (!mma) return 2ULL * t.tk * ((t.tm + 2) + (t.tn + 2)) * 8;
  const int a = std::max(t.tk * (t.tm + 2), t.tm * (t.tk + 4));
  const int b = std::max(t.tk * (t.tn + 4), t.tn * (t.tk % 16 ? t.tk + 16 : t.tk + 8));
  return static_cast<std::uint64_t>(t.stages) * (a + b + 2) * 8;  // + its two mbarriers
}

// The local memory a work group may use under settings s.
inline std::uint64_t local_limit(const gemm_settings& s) {
  return s.local_bytes > 0 ? s.local_bytes : opencl::context::instance().info().local_mem;
}

// Whether the selected device's OpenCL compiler builds the kernel on the
// FP64 tensor cores (the f64 mma.m16n8k8 shape, PTX for
// compute capability 9.0): checked once per device selection, for devices
// whose settings ask for the tensor cores.
inline bool mma_builds(const gemm_tiles& large) {
  static unsigned generation = 0;
  static bool builds = false;
  opencl::context& ctx = opencl::context::instance();
  if (generation == ctx.generation()) return builds;
  bool ok = true;
  try {  // (an interrupt passes through: the next call probes again)
    std::map<std::string, int> options = opencl::kernels::gemm_options(0, 0);
    for (const auto& kv : tile_options(large)) options[kv.first] = kv.second;
    options["MMA"] = 1;
    ctx.kernel("gemm", opencl::kernels::gemm_source,
               opencl::internal::build_options(options));
  } catch (const std::exception&) {
    ok = false;  // no such shape in this compiler: the FMA kernel
  }
  generation = ctx.generation();
  return builds = ok;
}

// Whether tiles t fit the tensor cores' warp layout (TM a multiple of 32,
// whole pairs of warps, 8 or more columns per warp, TK a multiple of 8) and
// the ring's copies (whole pairs of doubles per work item, a fixed stride
// apart: kernels/gemm.hpp, copy_stage; 2 or more stages).
inline bool mma_shape(const gemm_tiles& t) {
  const int items = (t.tm / t.wptm) * (t.tn / t.wptn);
  const bool warps = t.tm % 32 == 0 && items % 64 == 0 && (8 * t.tn) % items == 0 && t.tk % 8 == 0;
  const bool pairs = (t.tm * t.tk / 2) % items == 0 && (t.tn * t.tk / 2) % items == 0 &&
                     (2 * items) % t.tm == 0 && (2 * items) % t.tn == 0 && (2 * items) % t.tk == 0;
  return warps && pairs && t.stages >= 2;
}

// Tiles t made to run on a device with work groups of at most max_group
// items (else 32 x 32 with 4 x 4 per work item) and local_mem bytes of
// local memory for the FMA path or, with mma, the tensor cores' ring: fewer
// stages (down to 2), then TK halved down to 8, then the longer side of
// the tile halved.
inline gemm_tiles fit_tiles(gemm_tiles t, std::size_t max_group, std::uint64_t local_mem,
                            bool mma) {
  if (static_cast<std::size_t>(t.tm / t.wptm) * (t.tn / t.wptn) > max_group)
    t = {32, 32, t.tk, 4, 4, t.stages};
  while (gemm_local_bytes(t, mma) > local_mem) {
    if (mma && t.stages > 2) --t.stages;
    else if (t.tk > 8) t.tk /= 2;
    else if (t.tm >= t.tn && t.tm > 2 * t.wptm) t.tm /= 2;
    else if (t.tn > 2 * t.wptn) t.tn /= 2;
    else break;  // 8 KB or less: every OpenCL device has 32 KB
  }
  return t;
}

// Whether settings s run on the tensor cores: asked for, and the device's
// compiler builds the ring with s's large tiles (fitted; tiles that do not
// suit the ring turn the tensor cores off without a probe).
inline bool tensor_cores_on(const gemm_settings& s) {
  if (!s.tensor_cores) return false;
  const gemm_tiles t = fit_tiles(s.large, opencl::context::instance().info().max_work_group_size,
                                 local_limit(s), true);
  return mma_shape(t) && mma_builds(t);
}

// The tiles of one product, which of the settings' shapes they are and
// whether on the tensor cores.
struct gemm_choice {
  opencl::kernels::gemm_shape shape;
  gemm_tiles tiles;
  bool mma;
};

// The tiles for an m x n product (batch items): the settings' large, small
// or narrow tiles (gemm_settings), fitted to the device (fit_tiles).
inline gemm_choice choose_tiles(int m, int n, int batch, bool lower_only,
                               const gemm_settings& s) {
  const opencl::device_info& info = opencl::context::instance().info();
  auto fit = [&](const gemm_tiles& t, bool mma) {
    return fit_tiles(t, info.max_work_group_size, mma ? local_limit(s) : info.local_mem, mma);
  };
  using opencl::kernels::gemm_shape;
  gemm_choice c{gemm_shape::large, s.large, false};
  if (s.small_below_pct > 0) {
    const gemm_tiles large = fit(s.large, s.tensor_cores);
    const long long tm = large.tm, tn = large.tn;
    const long long row_tiles = (m + tm - 1) / tm;
    long long tiles = 0;
    for (long long j0 = 0; j0 < n; j0 += tn)  // lower-only: tiles not above the diagonal
      tiles += lower_only ? row_tiles - std::min(row_tiles, j0 / tm) : row_tiles;
    tiles *= batch;
    if (tiles * 100 < static_cast<long long>(s.small_below_pct) * info.compute_units)
      c = {gemm_shape::small, s.small, false};
  }
  if (n <= s.narrow_cols) c = {gemm_shape::narrow, s.narrow, false};
  // On the tensor cores where the fitted tiles allow it, else the FMA path
  // within the local memory the device reports.
  const gemm_tiles ring = fit(c.tiles, true);
  c.mma = mma_shape(ring) && tensor_cores_on(s);
  c.tiles = c.mma ? ring : fit(c.tiles, false);
  return c;
}

// The kernel object built for these tiles, with or without the tensor
// cores: a kernel_cl keeps the variant it last ran, so this changes nothing
// while the settings do not.
inline void configure(opencl::kernels::gemm_kernel& k, const gemm_tiles& t, bool mma) {
  k.set_option("TM", t.tm);
  k.set_option("TN", t.tn);
  k.set_option("TK", t.tk);
  k.set_option("WPTM", t.wptm);
  k.set_option("WPTN", t.wptn);
  k.set_option("MMA", mma ? 1 : 0);
  k.set_option("MMA_STAGES", t.stages);
}

// Bits of the kernel's `views` argument for op(X) given X's stored view.
inline int view_bits(const gemm_block& x, int lower_bit, int upper_bit) {
  matrix_view v = x.trans ? transpose_view(x.view) : x.view;
  return v == matrix_view::lower ? lower_bit : v == matrix_view::upper ? upper_bit : 0;
}

inline cl_long offset(const gemm_block& x) {
  return static_cast<cl_long>(x.j) * x.m->rows() + x.i;
}

// Split-k (section 3.1.1): when the tiles of C are too few to fill the
// device and k is long, cut k so that about two work groups run per compute
// unit; at least 4 tile depths per part.
inline int choose_splits(int m, int n, int k, int tm, int tn, int tk) {
  const long long tiles = static_cast<long long>((m + tm - 1) / tm) * ((n + tn - 1) / tn);
  const long long want = 2LL * opencl::context::instance().info().compute_units;
  if (tiles >= want || k < 8 * std::max(m, n)) return 1;
  long long s = (want + tiles - 1) / tiles;
  s = std::min<long long>(s, k / (4 * tk));
  return static_cast<int>(std::max<long long>(1, std::min<long long>(s, 64)));
}

}  // namespace internal

/** C(block at ci, cj) = alpha op(A) op(B) + beta C for op(A) m x k and
 *  op(B) k x n; `c_stride` advances C per batch item. Dimensions are the
 *  caller's responsibility (internal building block). */
inline void gemm(matrix_cl& c, int ci, int cj, long long c_stride,
                 const gemm_block& a, const gemm_block& b, int m, int n, int k,
                 const gemm_options& opt = gemm_options()) {
  if (m <= 0 || n <= 0 || opt.batch <= 0) return;
  const internal::gemm_choice chosen =
      internal::choose_tiles(m, n, opt.batch, opt.lower_only, opt.tune);
  const gemm_tiles& t = chosen.tiles;
  const int tm = t.tm, tn = t.tn, tk = t.tk;
  const int rtsm = tm / t.wptm, rtsn = tn / t.wptn;
  const long long tiles_m = (m + tm - 1) / tm, tiles_n = (n + tn - 1) / tn;
  cl::NDRange groups(tiles_m, tiles_n);
  const int views = internal::view_bits(a, 1, 2) | internal::view_bits(b, 4, 8) |
                    (opt.lower_only ? 16 : 0);
  using opencl::kernels::gemm_shape;
  gemm_shape shape = chosen.shape;
  if (opt.max_groups > 0 && tiles_m * tiles_n > opt.max_groups && shape == gemm_shape::large) {
    shape = gemm_shape::persistent;
    groups = cl::NDRange(opt.max_groups, 1);
  } else if (shape == gemm_shape::large && (views & (1 | 8)) != 0) {  // A lower, B upper
    shape = gemm_shape::heavy_first;
  }
  opencl::kernels::gemm_kernel& kern = opencl::kernels::gemm_for(shape, a.trans, b.trans);
  internal::configure(kern, t, chosen.mma);
  int splits = opt.splits > 0 ? opt.splits
               : opt.batch == 1 ? internal::choose_splits(m, n, k, tm, tn, tk)
                                : 1;
  const cl::NDRange local(rtsm, rtsn, 1);
  const cl::NDRange global(groups.get()[0] * rtsm, groups.get()[1] * rtsn,
                           static_cast<std::size_t>(opt.batch) * splits);
  const cl_long c_off = static_cast<cl_long>(cj) * c.rows() + ci;
  if (splits == 1) {
    kern(global, local, c, *a.m, *b.m, m, n, k, internal::offset(a), a.m->rows(),
         a.stride, internal::offset(b), b.m->rows(), b.stride, c_off, c.rows(),
         c_stride, opt.alpha, opt.beta, views, 1);
    return;
  }
  matrix_cl partial(m * n, splits);
  kern(global, local, partial, *a.m, *b.m, m, n, k, internal::offset(a),
       a.m->rows(), a.stride, internal::offset(b), b.m->rows(), b.stride, 0, m,
       static_cast<cl_long>(m) * n, opt.alpha, 0.0, views, splits);
  opencl::kernels::gemm_split_sum(cl::NDRange(m, n), c, partial, m, n, splits,
                                  c_off, c.rows(), opt.beta, opt.lower_only ? 1 : 0);
}

/** A B on the device. The result's view follows from the operands' views
 *  (lower times lower is lower); a vector operand uses the vector kernels. */
inline matrix_cl multiply(const matrix_cl& a, const matrix_cl& b,
                          const gemm_settings& tune = tuned_settings().gemm) {
  if (a.cols() != b.rows())
    throw invalid_argument("y", "has " + std::to_string(b.rows()) +
                                    " rows but `x` has " +
                                    std::to_string(a.cols()) + " columns");
  a.check_device("x");
  b.check_device("y");
  matrix_cl c(a.rows(), b.cols(), product_view(a.view(), b.view()));
  if (c.size() == 0) return c;
  const int k = a.cols();  // 0: every path below writes zeros
  if (b.cols() == 1) {
    opencl::kernels::matrix_vector(cl::NDRange(a.rows()), c, a, b, a.rows(), k,
                                   static_cast<int>(a.view()));
    return c;
  }
  if (a.rows() == 1) {
    const int ls = opencl::kernels::row_vector_matrix.option("LOCAL_SIZE");
    opencl::kernels::row_vector_matrix(cl::NDRange(static_cast<std::size_t>(b.cols()) * ls),
                                       cl::NDRange(ls), c, a, b, k, b.cols(),
                                       static_cast<int>(b.view()));
    return c;
  }
  gemm_block ab{&a};
  ab.view = a.view();
  gemm_block bb{&b};
  bb.view = b.view();
  linalg::gemm(c, 0, 0, 0, ab, bb, c.rows(), c.cols(), k, gemm_options(tune));
  return c;
}

/** C = A A^T on the device (section 3.1.2): the lower triangle is computed
 *  and mirrored onto the upper one. */
inline matrix_cl multiply_transpose(const matrix_cl& a,
                                    const gemm_settings& tune = tuned_settings().gemm) {
  a.check_device("x");
  matrix_cl c(a.rows(), a.rows());
  if (c.size() == 0) return c;
  gemm_block x{&a};
  x.view = a.view();
  gemm_block xt = x;
  xt.trans = true;
  gemm_options opt(tune);
  opt.lower_only = true;
  linalg::gemm(c, 0, 0, 0, x, xt, a.rows(), a.rows(), a.cols(), opt);
  opencl::triangular_transpose(c, matrix_view::lower);
  return c;
}

#endif  // CLBAYES_OPENCL

}  // namespace linalg
}  // namespace clbayes

#endif
