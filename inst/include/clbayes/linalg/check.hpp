#ifndef CLBAYES_LINALG_CHECK_HPP
#define CLBAYES_LINALG_CHECK_HPP

// Checks of data already on the device: only the one-int flag comes back.

#include "../kernels/check.hpp"
#include "../opencl/matrix_cl.hpp"

#include <string>
#include <utility>
#include <vector>

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace opencl {

namespace internal {

template <typename Launch>
bool run_flag_check(Launch launch) {
  context& ctx = context::instance();
  int flag = 0;
  try {
    cl::Buffer buf(ctx.cl_context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                   sizeof(int), &flag);
    launch(buf);
    // The queue is in order, so this read runs after the check kernel.
    ctx.queue().enqueueReadBuffer(buf, CL_TRUE, 0, sizeof(int), &flag);
  } catch (const cl::Error& e) {
    throw opencl_error(std::string(e.what()) + " reading a check flag", e.err());
  }
  return flag != 0;
}

}  // namespace internal

/** A device buffer of `count` ints, all zero: flags that check kernels set
 *  on the way through other work (kernels::copy_lower_flagged), read once
 *  at the end with read_flags(). */
inline cl::Buffer new_flags(int count) {
  try {
    const std::vector<int> zeros(static_cast<std::size_t>(count), 0);
    return cl::Buffer(context::instance().cl_context(),
                      CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof(int) * zeros.size(),
                      const_cast<int*>(zeros.data()));
  } catch (const cl::Error& e) {
    throw opencl_error(std::string(e.what()) + " allocating check flags", e.err());
  }
}

/** The `count` flags of new_flags(), read on the in-order queue q (by
 *  default the current one) after everything enqueued on it so far. */
inline std::vector<int> read_flags(const cl::Buffer& flags, int count,
                                   cl::CommandQueue& q = context::instance().queue()) {
  std::vector<int> out(static_cast<std::size_t>(count), 0);
  try {
    q.enqueueReadBuffer(flags, CL_TRUE, 0, sizeof(int) * out.size(), out.data());
  } catch (const cl::Error& e) {
    throw opencl_error(std::string(e.what()) + " reading check flags", e.err());
  }
  return out;
}

/** True if any element of A is NaN or infinite. */
inline bool has_nonfinite(const matrix_cl& a) {
  if (a.size() == 0) return false;
  return internal::run_flag_check([&](cl::Buffer& flag) {
    return kernels::check_nan(cl::NDRange(a.rows(), a.cols()), a, a.rows(),
                              a.cols(), flag);
  });
}

/** `result`, or invalid_argument(arg, problem) when it holds an infinite
 *  or NaN value: a gpu_matrix holds finite values only (R/gpu_matrix.R), so
 *  an operation whose result would not is an error where it happens,
 *  rather than NaN found later. One pass over the result and a one-int
 *  read, against the operation's own pass (or its O(n^3) product). */
inline matrix_cl finite_result(matrix_cl&& result, const std::string& arg,
                               const std::string& problem) {
  if (has_nonfinite(result))
    throw invalid_argument(arg, problem + "; a gpu_matrix holds finite values only "
                                          "(compute on as.matrix() in R for IEEE "
                                          "infinities and NaN)");
  return std::move(result);
}

/** True if the square matrix A is symmetric to relative tolerance `tol`. */
inline bool is_symmetric(const matrix_cl& a, double tol = 1e-8) {
  if (a.rows() != a.cols()) return false;
  if (a.size() == 0) return true;
  return !internal::run_flag_check([&](cl::Buffer& flag) {
    const int tile = kernels::check_symmetric.option("SYM_TILE");
    const int rows = kernels::check_symmetric.option("SYM_ROWS");
    const std::size_t tiles = (a.rows() + tile - 1) / tile;
    return kernels::check_symmetric(cl::NDRange(tiles * tile, tiles * rows),
                                    cl::NDRange(tile, rows), a, a.rows(), tol, flag, 0);
  });
}

/** True if a diagonal element of A is exactly zero. */
inline bool has_zero_diagonal(const matrix_cl& a) {
  if (a.size() == 0) return false;
  return internal::run_flag_check([&](cl::Buffer& flag) {
    return kernels::check_diagonal_zeros(cl::NDRange(std::min(a.rows(), a.cols())),
                                         a, a.rows(), a.cols(), flag);
  });
}

}  // namespace opencl
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
