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
#include "../kernels/gemm_db.hpp"
#include "../kernels/matrix_vector.hpp"
#include "../opencl/matrix_cl.hpp"
#include "../opencl/transpose.hpp"

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

/** Options of a block product. splits = 0 lets split-k choose. */
struct gemm_options {
  double alpha = 1.0;
  double beta = 0.0;
  bool lower_only = false;
  int batch = 1;
  int splits = 0;
  /** > 0: at most this many work groups (kernel 2's large tiles, each
   *  group looping over tiles), leaving the rest of the device to another
   *  queue. */
  int max_groups = 0;
};

/** Which GEMM kernel the device products use: 1 the first kernel
 *  (kernels/gemm.hpp), 2 the double-buffered one (kernels/gemm_db.hpp).
 *  With kernel 2, products with fewer large tiles than small_below_pct
 *  percent of the compute units use the small-tile variant (0: never):
 *  the short products on the Cholesky's critical path are latency bound
 *  and one large tile per unit leaves most of the units idle. */
struct gemm_tuning {
  int kernel = 2;
  int small_below_pct = 100;
  /** 1: kernel 2 multiplies on the FP64 tensor cores (MMA = 1 in
   *  kernels/gemm_db.hpp: mma.sync.m16n8k8 by inline PTX) on devices that
   *  have them (NVIDIA, compute capability 9.0 or later) and whose
   *  compiler builds it; 0: never. */
  int mma = 1;
  /** > 0: products with at most this many columns of C use kernel 2's
   *  narrow variant (kernels/gemm_db.hpp, 32-column tiles). 0: never. */
  int narrow_cols = 32;  // H200 sweep of the Cholesky at n = 8192 (logs/history.md, H200 runs of 2026-11-24)
};
inline gemm_tuning& gemm_settings() {
  static gemm_tuning t;
  return t;
}

namespace internal {

inline opencl::kernels::gemm_kernel& gemm_variant(bool ta, bool tb) {
  using namespace opencl::kernels;
  return ta ? (tb ? gemm_tt : gemm_tn) : (tb ? gemm_nt : gemm_nn);
}

inline opencl::kernels::gemm_kernel& gemm_db_variant(bool ta, bool tb, bool small) {
  using namespace opencl::kernels;
  if (small) return ta ? (tb ? gemm_db_small_tt : gemm_db_small_tn)
                       : (tb ? gemm_db_small_nt : gemm_db_small_nn);
  return ta ? (tb ? gemm_db_tt : gemm_db_tn) : (tb ? gemm_db_nt : gemm_db_nn);
}

inline opencl::kernels::gemm_kernel& gemm_db_narrow(bool ta, bool tb) {
  using namespace opencl::kernels;
  return ta ? (tb ? gemm_db_narrow_tt : gemm_db_narrow_tn)
            : (tb ? gemm_db_narrow_nt : gemm_db_narrow_nn);
}

inline opencl::kernels::gemm_kernel& gemm_db_persistent(bool ta, bool tb) {
  using namespace opencl::kernels;
  opencl::kernels::gemm_kernel& p =
      ta ? (tb ? gemm_db_p_tt : gemm_db_p_tn) : (tb ? gemm_db_p_nt : gemm_db_p_nn);
  const opencl::kernels::gemm_kernel& big = gemm_db_variant(ta, tb, false);
  for (const char* key : {"TM", "TN", "TK", "WPTM", "WPTN", "FAST_INTERIOR", "MMA"})
    if (p.option(key) != big.option(key)) p.set_option(key, big.option(key));
  return p;
}

// Local memory of kernel 2's two buffers of op(A) and op(B) tiles (rows
// padded by one double2, two with MMA).
inline std::uint64_t gemm_db_local_bytes(const opencl::kernels::gemm_kernel& k) {
  const int pad = k.option("MMA") ? 2 : 1;
  return 2ULL * k.option("TK") * (k.option("TM") / 2 + pad + k.option("TN") / 2 + pad) * 16;
}

// Whether the selected device runs kernel 2 on its FP64 tensor cores: an
// NVIDIA device of compute capability >= 9.0 (the f64 mma.m16n8k8 shape)
// whose OpenCL compiler builds the MMA kernel. Checked once per device
// selection; gemm_tuning::mma = 0 turns it off.
inline bool mma_available() {
  static unsigned generation = 0;
  static bool available = false;
  opencl::context& ctx = opencl::context::instance();
  if (gemm_settings().mma == 0) return false;
  if (generation == ctx.generation()) return available;
  generation = ctx.generation();
  available = false;
  try {
    const std::string ext = ctx.device().getInfo<CL_DEVICE_EXTENSIONS>();
    if (ext.find("cl_nv_device_attribute_query") == std::string::npos) return false;
    cl_uint major = 0;
    const cl_device_info compute_capability_major_nv = 0x4000;
    if (::clGetDeviceInfo(ctx.device()(), compute_capability_major_nv, sizeof(major), &major,
                          nullptr) != CL_SUCCESS ||
        major < 9)
      return false;
    std::map<std::string, int> options = opencl::kernels::gemm_db_options(0, 0);
    options["MMA"] = 1;
    ctx.kernel("gemm_db", opencl::kernels::gemm_db_source,
               opencl::internal::build_options(options));
    available = true;
  } catch (const std::exception&) {
    available = false;  // no such shape in this compiler: the FMA kernel
  }
  return available;
}

// MMA on the chosen kernel 2 object when available and its tiles fit the
// warp layout (TM, TN multiples of 32, TK of 8, 256 work items).
inline opencl::kernels::gemm_kernel& with_mma(opencl::kernels::gemm_kernel& k) {
  const bool fits = k.option("TM") % 32 == 0 && k.option("TN") % 32 == 0 &&
                    k.option("TK") % 8 == 0 &&
                    (k.option("TM") / k.option("WPTM")) * (k.option("TN") / k.option("WPTN")) ==
                        256;
  k.set_option("MMA", fits && mma_available() ? 1 : 0);
  return k;
}

// The kernel for an m x n product (batch items): see gemm_tuning.
inline opencl::kernels::gemm_kernel& choose_kernel(bool ta, bool tb, int m, int n,
                                                   int batch, bool lower_only) {
  const opencl::device_info& info = opencl::context::instance().info();
  const std::size_t max_wg = info.max_work_group_size;
  // Kernel 2 on devices whose local memory cannot hold its tiles: kernel 1.
  if (gemm_settings().kernel != 2 ||
      gemm_db_local_bytes(gemm_db_variant(ta, tb, false)) > info.local_mem) {
    opencl::kernels::gemm_kernel& kern = gemm_variant(ta, tb);
    if (max_wg < 256 && kern.option("TM") != 32) {  // small devices: 8 x 8 items
      kern.set_option("TM", 32);
      kern.set_option("TN", 32);
    }
    return kern;
  }
  opencl::kernels::gemm_kernel* kern = &gemm_db_variant(ta, tb, false);
  if (gemm_settings().small_below_pct > 0) {
    const long long tm = kern->option("TM"), tn = kern->option("TN");
    const long long row_tiles = (m + tm - 1) / tm;
    long long tiles = 0;
    for (long long j0 = 0; j0 < n; j0 += tn)  // lower-only: tiles not above the diagonal
      tiles += lower_only ? row_tiles - std::min(row_tiles, j0 / tm) : row_tiles;
    tiles *= batch;
    if (tiles * 100 < static_cast<long long>(gemm_settings().small_below_pct) *
                          info.compute_units)
      kern = &gemm_db_variant(ta, tb, true);
  }
  if (n <= gemm_settings().narrow_cols &&
      gemm_db_local_bytes(gemm_db_narrow(ta, tb)) <= info.local_mem)
    kern = &gemm_db_narrow(ta, tb);
  const std::size_t items = static_cast<std::size_t>(kern->option("TM") / kern->option("WPTM")) *
                            (kern->option("TN") / kern->option("WPTN"));
  if (max_wg < items) {  // small devices: 8 x 8 items, 4 x 4 each
    kern->set_option("TM", 32);
    kern->set_option("TN", 32);
    kern->set_option("WPTM", 4);
    kern->set_option("WPTN", 4);
  }
  return with_mma(*kern);
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
  opencl::kernels::gemm_kernel* chosen =
      &internal::choose_kernel(a.trans, b.trans, m, n, opt.batch, opt.lower_only);
  const int tm = chosen->option("TM"), tn = chosen->option("TN"), tk = chosen->option("TK");
  const int rtsm = tm / chosen->option("WPTM"), rtsn = tn / chosen->option("WPTN");
  const long long tiles_m = (m + tm - 1) / tm, tiles_n = (n + tn - 1) / tn;
  cl::NDRange groups(tiles_m, tiles_n);
  if (opt.max_groups > 0 && tiles_m * tiles_n > opt.max_groups &&
      chosen == &internal::gemm_db_variant(a.trans, b.trans, false)) {
    chosen = &internal::gemm_db_persistent(a.trans, b.trans);
    groups = cl::NDRange(opt.max_groups, 1);
  }
  opencl::kernels::gemm_kernel& kern = *chosen;
  const int views = internal::view_bits(a, 1, 2) | internal::view_bits(b, 4, 8) |
                    (opt.lower_only ? 16 : 0);
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
inline matrix_cl multiply(const matrix_cl& a, const matrix_cl& b, int splits = 0) {
  if (a.cols() != b.rows())
    throw invalid_argument("y", "has " + std::to_string(b.rows()) +
                                    " rows but `x` has " +
                                    std::to_string(a.cols()) + " columns");
  a.check_device("x");
  b.check_device("y");
  matrix_cl c(a.rows(), b.cols(), product_view(a.view(), b.view()));
  if (c.size() == 0) return c;
  if (a.cols() == 0) {  // an empty inner dimension: all zeros
    linalg::gemm(c, 0, 0, 0, gemm_block{&a}, gemm_block{&b}, c.rows(), c.cols(), 0);
    return c;
  }
  const int k = a.cols();
  if (b.cols() == 1 && splits == 0) {
    opencl::kernels::matrix_vector(cl::NDRange(a.rows()), c, a, b, a.rows(), k,
                                   static_cast<int>(a.view()));
    return c;
  }
  if (a.rows() == 1 && splits == 0) {
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
  gemm_options opt;
  opt.splits = splits;
  linalg::gemm(c, 0, 0, 0, ab, bb, c.rows(), c.cols(), k, opt);
  return c;
}

/** C = A A^T on the device (section 3.1.2): the lower triangle is computed
 *  and mirrored onto the upper one. */
inline matrix_cl multiply_transpose(const matrix_cl& a) {
  a.check_device("x");
  matrix_cl c(a.rows(), a.rows());
  if (c.size() == 0) return c;
  gemm_block x{&a};
  x.view = a.view();
  gemm_block xt = x;
  xt.trans = true;
  gemm_options opt;
  opt.lower_only = true;
  linalg::gemm(c, 0, 0, 0, x, xt, a.rows(), a.rows(), a.cols(), opt);
  opencl::triangular_transpose(c, matrix_view::lower);
  return c;
}

#endif  // CLBAYES_OPENCL

}  // namespace linalg
}  // namespace clbayes

#endif
