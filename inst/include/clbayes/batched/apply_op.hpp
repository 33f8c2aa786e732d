#ifndef CLBAYES_BATCHED_APPLY_OP_HPP
#define CLBAYES_BATCHED_APPLY_OP_HPP

// Apply one batched device function (kernels/batched_ops.hpp) to a batch
// held in host memory, at the serial or the team level, with the contiguous
// or the interleaved layout, and (team level) in local or global memory.
// Device only: it exists so that every building block is tested on its own
// against base R, in every configuration the fused kernels use.

#include "batch.hpp"

#include <algorithm>
#include <string>
#include <vector>

#ifdef CLBAYES_OPENCL
#include "../kernels/batched_ops.hpp"
#include "../opencl/transfer.hpp"
#endif

namespace clbayes {
namespace batched {

/** Op code of the name used by the R tests; throws for an unknown name. */
inline int op_code(const std::string& op) {
  static const char* names[] = {"chol", "lu", "lu_piv", "trsm_lower", "trsm_upper",
                                "gemm", "gemv", "trsv_lower", "trsv_upper"};
  for (int k = 0; k < 9; ++k)
    if (op == names[k]) return k;
  throw invalid_argument("op", "must be one of chol, lu, lu_piv, trsm_lower, "
                               "trsm_upper, gemm, gemv, trsv_lower, trsv_upper");
}

struct op_options {
  bool team = false;         // team level (else serial)
  bool interleaved = false;  // interleaved layout (else contiguous)
  bool use_local = true;     // team level: work in local memory
  bool unit = false;         // triangular solves: unit diagonal
  double alpha = 1.0, beta = 0.0;
};

namespace internal {

/** Contiguous (item after item) to interleaved (item fastest), or back. */
inline std::vector<double> reorder(const double* x, long long per_item, int B,
                                   bool to_interleaved) {
  std::vector<double> out(static_cast<std::size_t>(per_item * B));
  for (int b = 0; b < B; ++b)
    for (long long e = 0; e < per_item; ++e) {
      const std::size_t c = static_cast<std::size_t>(b * per_item + e);
      const std::size_t i = static_cast<std::size_t>(e * B + b);
      if (to_interleaved) out[i] = x[c];
      else out[c] = x[i];
    }
  return out;
}

}  // namespace internal

#ifdef CLBAYES_OPENCL

/**
 * a: B m x m items, bin and c: B m x r items, all contiguous host arrays.
 * a and c are overwritten with the op's results; returns info (B ints)
 * followed by the pivots (B * m ints, 0-based; meaningful for lu_piv only).
 */
inline std::vector<int> apply_op_device(const std::string& op, const op_options& o,
                                        int m, int r, int B, double* a,
                                        const double* bin, double* c,
                                        const batched_settings& t = tuned_settings()) {
  const int code = op_code(op);
  check_batch_size("a", m, m, B);
  check_batch_size("b", m, r, B);
  if (B == 0 || m == 0) return std::vector<int>(static_cast<std::size_t>(B), 0);
  const long long mm = static_cast<long long>(m) * m, mr = static_cast<long long>(m) * r;
  std::vector<double> ha(a, a + mm * B), hb(bin, bin + mr * B), hc(c, c + mr * B);
  if (o.interleaved) {
    ha = internal::reorder(a, mm, B, true);
    hb = internal::reorder(bin, mr, B, true);
    hc = internal::reorder(c, mr, B, true);
  }
  const batch_layout la = o.interleaved ? interleaved(m, m, B) : contiguous(m, m);
  const batch_layout lx = o.interleaved ? interleaved(m, r, B) : contiguous(m, r);
  const int rr = r > 0 ? r : 1;
  opencl::matrix_cl da = opencl::to_matrix_cl(ha.data(), m, m * B);
  opencl::matrix_cl db = r > 0 ? opencl::to_matrix_cl(hb.data(), m, r * B)
                               : opencl::matrix_cl(m, rr * B);
  opencl::matrix_cl dc = r > 0 ? opencl::to_matrix_cl(hc.data(), m, r * B)
                               : opencl::matrix_cl(m, rr * B);
  opencl::matrix_cl info = int_buffer(B);
  opencl::matrix_cl piv = int_buffer(mm / m * B);
  if (!o.team) {
    opencl::kernels::batched_op_serial()(cl::NDRange(B), da, db, dc, piv, info, B, code,
                                         m, r, o.unit, o.alpha, o.beta, la.rs, la.cs,
                                         la.bs, lx.rs, lx.cs, lx.bs);
  } else {
    const int ls = pow2_size(m, 32, team_size_limit(t));
    const std::size_t work = sizeof(double) * (mm + 2 * mr);
    const bool local = o.use_local &&
                       work + sizeof(int) * m + 12 * ls <= local_budget(t);
    opencl::kernels::batched_op_team()(
        cl::NDRange(static_cast<std::size_t>(B) * ls), cl::NDRange(ls), da, db, dc, piv,
        info, code, m, r, o.unit, o.alpha, o.beta, la.rs, la.cs, la.bs, lx.rs, lx.cs,
        lx.bs, cl::Local(local ? work : sizeof(double)), cl::Local(sizeof(int) * m),
        cl::Local(sizeof(double) * ls), cl::Local(sizeof(int) * ls), local ? 1 : 0);
  }
  opencl::from_matrix_cl(da, ha.data());
  if (r > 0) opencl::from_matrix_cl(dc, hc.data());
  if (o.interleaved) {
    ha = internal::reorder(ha.data(), mm, B, false);
    if (r > 0) hc = internal::reorder(hc.data(), mr, B, false);
  }
  std::copy(ha.begin(), ha.end(), a);
  if (r > 0) std::copy(hc.begin(), hc.end(), c);
  std::vector<int> out = read_ints(info, B);
  std::vector<int> p = read_ints(piv, static_cast<long long>(B) * m);
  out.insert(out.end(), p.begin(), p.end());
  return out;
}

#endif  // CLBAYES_OPENCL

}  // namespace batched
}  // namespace clbayes

#endif
