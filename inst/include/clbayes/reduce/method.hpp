#ifndef CLBAYES_REDUCE_METHOD_HPP
#define CLBAYES_REDUCE_METHOD_HPP

// The vocabulary of gpu_sum() / gpu_mean(): the summation method, the
// working precision, and the result that both paths return.
//
// The four methods (accurate-reduction.txt, sections II.E and III):
//   kahan     compensated (Kahan-Babuska / Neumaier) accumulation per worker
//             and a compensated combine of the partial results;
//   div2      the paper's tree that halves after every addition, so that no
//             intermediate ever leaves [min, max] of non-negative data and
//             nothing is absorbed; mean = C * tree, C = 2^D / n with 2^D the
//             nearest power of two >= n (eq. 8);
//   pairwise  the same tree without halving;
//   naive     one sequential accumulator (CPU only; it shows the failure).

#include "../error.hpp"

#include <cmath>
#include <cstdint>
#include <string>

namespace clbayes {
namespace reduce {

enum class sum_method { kahan, div2, pairwise, naive };
enum class sum_precision { double_precision, single_precision };

inline sum_method parse_method(const std::string& s) {
  if (s == "kahan") return sum_method::kahan;
  if (s == "div2") return sum_method::div2;
  if (s == "pairwise") return sum_method::pairwise;
  if (s == "naive") return sum_method::naive;
  throw invalid_argument("method", "must be one of \"kahan\", \"div2\", "
                                   "\"pairwise\", \"naive\", not \"" + s + "\"");
}

inline sum_precision parse_precision(const std::string& s) {
  if (s == "double") return sum_precision::double_precision;
  if (s == "single") return sum_precision::single_precision;
  throw invalid_argument("precision", "must be \"double\" or \"single\", not \"" +
                                          s + "\"");
}

inline const char* method_name(sum_method m) {
  switch (m) {
    case sum_method::kahan: return "kahan";
    case sum_method::div2: return "div2";
    case sum_method::pairwise: return "pairwise";
    default: return "naive";
  }
}

/** The sum and the mean of n values; mean is NaN for n = 0 as in base R. */
struct sum_result {
  double sum = 0.0;
  double mean = 0.0;
};

/** Smallest D with 2^D >= n (D = 0 for n <= 1). */
inline int ceil_log2(std::uint64_t n) {
  int d = 0;
  while (d < 63 && (std::uint64_t(1) << d) < n) ++d;
  return d;
}

/** Result of a plain or compensated sum s of n values. */
inline sum_result from_sum(double s, std::uint64_t n) {
  sum_result r;
  r.sum = s;
  r.mean = n == 0 ? std::nan("") : s / static_cast<double>(n);
  return r;
}

/** Result of a div2 tree: v is the tree value after D halvings, so the sum
 *  is v 2^D exactly (ldexp does not round) and the mean C v, C = 2^D / n. */
inline sum_result from_div2(double v, int D, std::uint64_t n) {
  sum_result r;
  if (n == 0) {
    r.sum = 0.0;
    r.mean = std::nan("");
    return r;
  }
  r.sum = std::ldexp(v, D);
  // One rounding where the sum is finite; otherwise scale by C = 2^D / n
  // (C in [1, 2)), so the mean stays finite where the sum overflows.
  r.mean = std::isfinite(r.sum) || !std::isfinite(v)
               ? r.sum / static_cast<double>(n)
               : v * (std::ldexp(1.0, D) / static_cast<double>(n));
  return r;
}

}  // namespace reduce
}  // namespace clbayes

#endif
