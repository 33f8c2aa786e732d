#ifndef CLBAYES_REDUCE_SUM_CPU_HPP
#define CLBAYES_REDUCE_SUM_CPU_HPP

// The CPU path of gpu_sum() / gpu_mean(), in plain C++. T is the working
// precision (float or double); every input value is converted to T as it
// is read, which is what precision = "single" means.
//
// div2 and pairwise walk a perfect binary tree over the input padded with
// zeros to the next power of two, without storing it: a stack holds at most
// one pending subtree per level, like the carries of a binary counter, and
// the final zero padding completes the tree. The root therefore sits at
// depth D = ceil(log2 n), exactly the paper's correction C = 2^D / n
// (accurate-reduction.txt, eq. 8).
//
// kahan compensates within chunks and combines the compensated chunk
// partials compensated as well: one sequential compensated accumulator
// degrades once the running sum is so large that whole addends fall into
// the compensation term, which then suffers absorption itself.

#include "../interrupt.hpp"
#include "method.hpp"

#include <cstddef>
#include <cstdint>

namespace clbayes {
namespace reduce {
namespace cpu {

/** s + e = a + b exactly (Knuth's branch-free TwoSum). */
template <typename T>
inline void two_sum(T a, T b, T& s, T& e) {
  s = a + b;
  const T z = s - a;
  e = (a - (s - z)) + (b - z);
}

/** A compensated value s + c. */
template <typename T>
struct comp {
  T s = 0;
  T c = 0;
};

/** Compensated addition of two compensated values. */
template <typename T>
inline comp<T> comp_add(const comp<T>& a, const comp<T>& b) {
  comp<T> r;
  T e;
  two_sum(a.s, b.s, r.s, e);
  r.c = a.c + b.c + e;
  return r;
}

// Elements between interrupt checks.
constexpr std::size_t interrupt_stride = std::size_t(1) << 22;

template <typename T>
double naive_sum(const double* x, std::size_t n) {
  T s = 0;
  for (std::size_t i = 0; i < n; ++i) {
    s += static_cast<T>(x[i]);
    if ((i & (interrupt_stride - 1)) == interrupt_stride - 1) check_interrupt();
  }
  return static_cast<double>(s);
}

template <typename T>
double kahan_sum(const double* x, std::size_t n) {
  constexpr std::size_t chunk = 4096;
  constexpr int lanes = 4;  // independent accumulators, for instruction-level parallelism
  comp<T> total;
  for (std::size_t start = 0; start < n; start += chunk) {
    const std::size_t end = start + chunk < n ? start + chunk : n;
    comp<T> lane[lanes];
    std::size_t i = start;
    for (; i + lanes <= end; i += lanes)
      for (int l = 0; l < lanes; ++l) {
        T e;
        two_sum(lane[l].s, static_cast<T>(x[i + l]), lane[l].s, e);
        lane[l].c += e;
      }
    for (; i < end; ++i) {
      T e;
      two_sum(lane[0].s, static_cast<T>(x[i]), lane[0].s, e);
      lane[0].c += e;
    }
    comp<T> part = comp_add(comp_add(lane[0], lane[1]), comp_add(lane[2], lane[3]));
    total = comp_add(total, part);
    if (start % interrupt_stride == 0) check_interrupt();
  }
  return static_cast<double>(total.s + total.c);
}

/** Pending subtrees of a perfect binary tree, at most one per level. */
template <typename T, bool Halve>
class tree_stack {
 public:
  static T combine(T a, T b) {
    // 0.5 a + 0.5 b is (a + b) / 2 rounded once, but cannot overflow.
    return Halve ? T(0.5) * a + T(0.5) * b : a + b;
  }

  /** Add the root of a complete subtree of depth `level`. */
  void push(T v, int level) {
    while (top_ > 0 && level_[top_ - 1] == level) {
      v = combine(val_[--top_], v);
      ++level;
    }
    val_[top_] = v;
    level_[top_++] = level;
  }

  /** Pad with zeros to one perfect tree; returns its root, depth in D. */
  T finish(int& D) {
    if (top_ == 0) {
      D = 0;
      return T(0);
    }
    while (top_ > 1) {
      T v = val_[--top_];
      int level = level_[top_];
      while (level < level_[top_ - 1]) {
        v = combine(v, T(0));
        ++level;
      }
      push(v, level);
    }
    D = level_[0];
    return val_[0];
  }

 private:
  T val_[66];
  int level_[66];
  int top_ = 0;
};

/** The root of the zero-padded perfect tree and its depth D. */
template <typename T, bool Halve>
double tree_sum(const double* x, std::size_t n, int& D) {
  constexpr int leaf_bits = 4;
  constexpr std::size_t leaves = std::size_t(1) << leaf_bits;
  tree_stack<T, Halve> stack;
  std::size_t i = 0;
  for (; i + leaves <= n; i += leaves) {
    T a[leaves];
    for (std::size_t k = 0; k < leaves; ++k) a[k] = static_cast<T>(x[i + k]);
    for (std::size_t s = leaves / 2; s > 0; s /= 2)
      for (std::size_t k = 0; k < s; ++k)
        a[k] = tree_stack<T, Halve>::combine(a[k], a[k + s]);
    stack.push(a[0], leaf_bits);
    if (i % interrupt_stride == 0) check_interrupt();
  }
  for (; i < n; ++i) stack.push(static_cast<T>(x[i]), 0);
  return static_cast<double>(stack.finish(D));
}

template <typename T>
sum_result sum_typed(const double* x, std::size_t n, sum_method method) {
  switch (method) {
    case sum_method::naive:
      return from_sum(naive_sum<T>(x, n), n);
    case sum_method::kahan:
      return from_sum(kahan_sum<T>(x, n), n);
    case sum_method::pairwise: {
      int D = 0;
      return from_sum(tree_sum<T, false>(x, n, D), n);
    }
    default: {
      int D = 0;
      const double v = tree_sum<T, true>(x, n, D);
      return from_div2(v, D, n);
    }
  }
}

/** Sum and mean of x[0..n) by `method` in `precision`, on the CPU. */
inline sum_result sum(const double* x, std::size_t n, sum_method method,
                      sum_precision precision) {
  return precision == sum_precision::single_precision
             ? sum_typed<float>(x, n, method)
             : sum_typed<double>(x, n, method);
}

}  // namespace cpu
}  // namespace reduce
}  // namespace clbayes

#endif
