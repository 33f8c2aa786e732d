#ifndef CLBAYES_REDUCE_SUM_DEVICE_HPP
#define CLBAYES_REDUCE_SUM_DEVICE_HPP

// The device path of gpu_sum() / gpu_mean(): the multi-level launch
// sequence of accurate-reduction.txt, Fig. 2, for any n:
//
//   level 0    reduce_blocks: blocks of B elements, the last one zero-padded
//              to B (a non-full block among full ones keeps the full depth);
//   levels 1.. reduce_partials with blocks of P_MAX while more than P_MAX
//              partials remain;
//   last       reduce_partials as one work group over the m <= P_MAX
//              remaining values padded only to next_pow2(m) (the single
//              remaining block: a full block would halve too often).
// A level runs only while its input is longer than its block, so every
// padding goes to the nearest power of two and the depth of the whole tree
// is D = ceil(log2 n): for div2, mean = C * root with C = 2^D / n in [1, 2).
//
// The queue is in order (opencl/context.hpp), so the first kernel runs after
// every earlier write to x; its event is handed back for the caller to
// record as a read of x.

#include "../kernels/reduce.hpp"
#include "device_tuning.hpp"
#include "method.hpp"
#include "read_root.hpp"
#include "../opencl/memory.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#ifdef CLBAYES_OPENCL

namespace clbayes {
namespace reduce {
namespace device {

/** The largest work group of the later levels. */
constexpr std::size_t partials_work_group = 128;

/** The level-0 block and work group, and the later block, for this device. */
struct launch_shape {
  int block;
  int work_group;
  int p_max;
};

inline launch_shape choose_shape(const settings& tune, bool single, bool kahan) {
  const opencl::device_info& info = opencl::context::instance().info();
  launch_shape s;
  s.block = tune.block;
  if (!is_pow2(s.block) || s.block < 8)
    throw invalid_argument("block", "must be a power of two >= 8");
  if (tune.work_group < 1) throw invalid_argument("work_group", "must be positive");
  // Each work item loads at least four elements (first add during load);
  // the group is capped by the setting and by the device's limit.
  long long wg_cap =
      std::min<long long>(tune.work_group, static_cast<long long>(info.max_work_group_size));
  long long wg = s.block / 4;
  while (wg > wg_cap) wg /= 2;
  s.work_group = static_cast<int>(std::max<long long>(wg, 1));
  s.p_max = tune.p_max;
  if (!is_pow2(s.p_max) || s.p_max < 2)
    throw invalid_argument("p_max", "must be a power of two >= 2");
  const std::size_t bytes_per = (single ? sizeof(float) : sizeof(double)) * (kahan ? 2 : 1);
  while (s.p_max > 2 && static_cast<std::uint64_t>(s.p_max) * bytes_per > info.local_mem / 2)
    s.p_max /= 2;
  return s;
}

/**
 * Sum and mean of the n values in `x` (doubles when x_double, else floats)
 * by `method` (not naive) in `precision`, with the launch shape of `tune`
 * (by default the selected device's) and scratch from `ws` (by default the
 * session's default_workspace()). `first_read`, when given, receives the
 * event of the first kernel that reads x.
 */
inline sum_result sum(const cl::Buffer& x, std::uint64_t n, bool x_double,
                      sum_method method, sum_precision precision,
                      const settings& tune = tuned_settings(), workspace* ws = nullptr,
                      cl::Event* first_read = nullptr) {
  const int code = method_code(method);
  if (n == 0) return method == sum_method::div2 ? from_div2(0.0, 0, 0) : from_sum(0.0, 0);
  const bool single = precision == sum_precision::single_precision;
  const bool kahan = method == sum_method::kahan;
  if (!x_double && !single)
    throw invalid_argument("x", "holds floats; it can only be summed in single precision");
  const launch_shape shape = choose_shape(tune, single, kahan);
  const std::size_t real_size = single ? sizeof(float) : sizeof(double);

  auto configure = [&](auto& k, int src_double) {
    k.set_option("METHOD", code);
    k.set_option("REAL_FLOAT", single ? 1 : 0);
    k.set_option("SRC_DOUBLE", src_double);
    k.set_option("BLOCK", shape.block);
    k.set_option("WG", shape.work_group);
    k.set_option("P_MAX", shape.p_max);
  };

  workspace& w = ws != nullptr ? *ws : default_workspace();
  // Ping-pong scratch: no level writes more partials than the first, which
  // has blocks of at least min(B, P_MAX) unless it is the last level.
  const std::uint64_t min_block = static_cast<std::uint64_t>(std::min(shape.block, shape.p_max));
  const std::size_t cap = static_cast<std::size_t>((n + min_block - 1) / min_block + 1);
  cl::Buffer* out_s = &w.get(0, cap * real_size);
  cl::Buffer* out_c = &w.get(1, kahan ? cap * real_size : real_size);
  cl::Buffer* other_s = &w.get(2, cap * real_size);
  cl::Buffer* other_c = &w.get(3, kahan ? cap * real_size : real_size);

  const std::size_t max_wg = opencl::context::instance().info().max_work_group_size;
  auto partial_group = [&](long long block) {
    std::size_t g = static_cast<std::size_t>(std::max<long long>(block / 2, 1));
    return std::min<std::size_t>(std::min<std::size_t>(g, partials_work_group), max_wg);
  };

  std::uint64_t m = n;
  int D = 0;
  bool raw = true;  // the current input is x itself
  const cl::Buffer* in_s = &x;
  const cl::Buffer* in_c = &x;
  int has_c = 0;
  auto advance = [&](cl::Event ev) {
    if (raw && first_read != nullptr) *first_read = ev;
    raw = false;
    in_s = out_s;
    in_c = out_c;
    has_c = kahan ? 1 : 0;
    std::swap(out_s, other_s);
    std::swap(out_c, other_c);
  };
  if (m > static_cast<std::uint64_t>(shape.block)) {
    opencl::kernel_cl<cl::Buffer, cl_long, cl::Buffer, cl::Buffer> blocks =
        opencl::kernels::reduce_blocks;
    configure(blocks, x_double ? 1 : 0);
    const std::uint64_t groups = (m + shape.block - 1) / shape.block;
    advance(blocks(cl::NDRange(groups * shape.work_group), cl::NDRange(shape.work_group),
                   *in_s, static_cast<cl_long>(m), *out_s, *out_c));
    m = groups;
    D += ceil_log2(shape.block);
  }
  opencl::kernel_cl<cl::Buffer, cl::Buffer, cl_int, cl_long, cl_int, cl::Buffer,
                    cl::Buffer>
      partials = opencl::kernels::reduce_partials;
  auto partials_raw = partials;  // reads x itself when n is small
  configure(partials_raw, x_double ? 1 : 0);
  configure(partials, single ? 0 : 1);
  while (true) {
    const bool last = m <= static_cast<std::uint64_t>(shape.p_max);
    const long long block = last ? (1LL << ceil_log2(m)) : shape.p_max;
    const std::uint64_t groups = last ? 1 : (m + block - 1) / block;
    const std::size_t wg = partial_group(block);
    auto& k = raw ? partials_raw : partials;
    advance(k(cl::NDRange(groups * wg), cl::NDRange(wg), *in_s, *in_c, has_c,
              static_cast<cl_long>(m), static_cast<cl_int>(block), *out_s, *out_c));
    m = groups;
    D += ceil_log2(static_cast<std::uint64_t>(block));
    if (last) break;
  }

  // The root is in *in_s (and *in_c) after the last advance().
  const double root = read_root(*in_s, *in_c, kahan, single, w);
  return method == sum_method::div2 ? from_div2(root, D, n) : from_sum(root, n);
}

/** Copy n host doubles to a new device buffer, as floats when `single`. */
inline cl::Buffer upload(const double* x, std::uint64_t n, bool single) {
  opencl::context& ctx = opencl::context::instance();
  const std::size_t bytes = static_cast<std::size_t>(n) * (single ? sizeof(float) : sizeof(double));
  const std::string what = "`x` (" + std::to_string(n) + " values)";
  opencl::check_device_allocation(static_cast<double>(bytes), what);
  try {
    cl::Buffer buf(ctx.cl_context(), CL_MEM_READ_ONLY, std::max<std::size_t>(bytes, 1));
    if (n == 0) return buf;
    if (single) {
      std::vector<float> f(x, x + n);  // converted on the way to the device
      ctx.queue().enqueueWriteBuffer(buf, CL_TRUE, 0, bytes, f.data());
    } else {
      ctx.queue().enqueueWriteBuffer(buf, CL_TRUE, 0, bytes, x);
    }
    return buf;
  } catch (const cl::Error& e) {
    throw opencl::cl_failure(std::string(e.what()) + " copying " + what + " to the device",
                             e.err());
  }
}

}  // namespace device
}  // namespace reduce
}  // namespace clbayes

#endif  // CLBAYES_OPENCL
#endif
