#ifndef CLBAYES_REDUCE_SUM_HPP
#define CLBAYES_REDUCE_SUM_HPP

// gpu_sum() / gpu_mean(): one entry point for host data on either backend,
// and one for data already on the device.
//
// Non-finite values: naive, pairwise and div2 propagate Inf and NaN as
// plain addition does, but the compensation of kahan turns Inf into NaN,
// and a sum of finite values can overflow where the mean does not. When a
// result is not finite it is therefore recomputed by div2, whose
// intermediates stay within [min, max] (so it overflows only where the sum
// itself does) and which propagates Inf and NaN like plain addition.

#include "method.hpp"
#include "sum_cpu.hpp"
#include "sum_device.hpp"

#include <cmath>
#include <cstddef>

#ifdef CLBAYES_OPENCL
#include "../opencl/matrix_cl.hpp"
#endif

namespace clbayes {
namespace reduce {

inline bool needs_fallback(const sum_result& r, sum_method method) {
  return !std::isfinite(r.sum) && method != sum_method::naive &&
         method != sum_method::div2;
}

/** Sum and mean of the n host values x, on the device when `on_device`. */
inline sum_result sum(const double* x, std::size_t n, sum_method method,
                      sum_precision precision, bool on_device) {
  if (!on_device) {
    sum_result r = cpu::sum(x, n, method, precision);
    return needs_fallback(r, method) ? cpu::sum(x, n, sum_method::div2, precision) : r;
  }
#ifdef CLBAYES_OPENCL
  device::method_code(method);  // refuses naive before any transfer
  const bool single = precision == sum_precision::single_precision;
  cl::Buffer buf = device::upload(x, n, single);
  sum_result r = device::sum(buf, n, !single, method, precision);
  return needs_fallback(r, method)
             ? device::sum(buf, n, !single, sum_method::div2, precision)
             : r;
#else
  throw no_device("clbayes was built without OpenCL; use backend = \"cpu\"");
#endif
}

#ifdef CLBAYES_OPENCL
/** Sum and mean of all elements of the device matrix x, on the device. */
inline sum_result sum(const opencl::matrix_cl& x, sum_method method,
                      sum_precision precision) {
  x.check_device("x");
  const std::uint64_t n = static_cast<std::uint64_t>(x.size());
  cl::Event read;
  const device::settings tune = device::tuned_settings();
  sum_result r = device::sum(x.buffer(), n, true, method, precision, tune, nullptr, &read);
  if (needs_fallback(r, method))
    r = device::sum(x.buffer(), n, true, sum_method::div2, precision, tune, nullptr, &read);
  // The result was read back, so every kernel reading x has finished; the
  // event is recorded all the same, as every reader of a matrix_cl does.
  if (n > 0) x.add_read_event(read);
  return r;
}
#endif

}  // namespace reduce
}  // namespace clbayes

#endif
