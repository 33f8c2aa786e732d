#ifndef CLBAYES_GLM_ROW_BLOCK_HPP
#define CLBAYES_GLM_ROW_BLOCK_HPP

// The row math (row_math.hpp) of one point over a column of a block of
// rows, for both CPU paths (glm_cpu.hpp: one point; glm_batch_cpu.hpp: a
// column per point): lane_width rows at a time through the lanes form of
// each formula (SIMD), the last rows of a block one at a time through the
// one-row form of the same formula. The terms of y alone (log y!) come per
// row from the caller; the negative binomial's terms of y and phi together
// come from a table per value of phi (count_terms_table).

#include "family.hpp"
#include "row_math.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

namespace clbayes {
namespace glm {

/** Rows per SIMD step of the row math: 16 doubles are eight SSE2 or four
 *  AVX registers per operation, enough independent work to hide the
 *  latency of each (bench_glm_cpu: 8 lanes took 10-15% longer for the
 *  families with exp() and log1p(), 1 lane 2-3 times as long). Blocks of
 *  rows are cut to a multiple of it. */
constexpr int lane_width = 16;

/**
 * lgamma(y + phi) - lgamma(phi) and digamma(y + phi) - digamma(phi) for one
 * phi: the negative binomial's terms of y and phi together, the costliest
 * part of its row math. Count data repeat small values of y, so the terms
 * of y = 0 .. max_y are computed once (the same values, tabulated) and the
 * others as they come.
 */
class count_terms_table {
 public:
  count_terms_table() = default;
  count_terms_table(const math::extra_terms& phi, int max_y) : phi_(phi) {
    const int m = std::max(max_y, -1) + 1;
    lgamma_.resize(m);
    digamma_.resize(m);
    for (int y = 0; y < m; ++y) {
      lgamma_[y] = std::lgamma(y + phi.value) - phi.lgamma;
      digamma_[y] = math::digamma(y + phi.value) - phi.digamma;
    }
  }
  double lgamma_diff(double y) const {
    return y < static_cast<double>(lgamma_.size())
               ? lgamma_[static_cast<std::size_t>(y)]
               : std::lgamma(y + phi_.value) - phi_.lgamma;
  }
  double digamma_diff(double y) const {
    return y < static_cast<double>(digamma_.size())
               ? digamma_[static_cast<std::size_t>(y)]
               : math::digamma(y + phi_.value) - phi_.digamma;
  }

 private:
  math::extra_terms phi_;
  std::vector<double> lgamma_, digamma_;
};

/** The largest y of a table read by `rows` rows: every y of the data
 *  (y_max) while the table costs at most a quarter of what the rows would
 *  cost without it, and at most 1024 (16 KiB a table). */
inline int count_table_max_y(double y_max, long long rows) {
  const double cap = std::min(1024.0, std::max(64.0, static_cast<double>(rows) / 4));
  return static_cast<int>(std::min(y_max, cap));
}

/** What the row math of a column adds up over its rows: the log density,
 *  d lp / d eta (the point's d alpha) and d lp / d sigma|phi. */
struct column_totals {
  double lp = 0;
  double d_eta = 0;
  double d_extra = 0;
};

namespace internal {

/** Loads and stores of W rows (lanes) or of one row (a double). */
template <int W>
struct lane_io {
  using type = math::lanes<W>;
  static type load(const double* p) { return Eigen::Map<const type>(p); }
  static type load(const double* p, double shift) { return Eigen::Map<const type>(p) + shift; }
  static void store(double* p, const type& v) { Eigen::Map<type> to(p); to = v; }
  static double* data(type& v) { return v.data(); }
  static double first(const type& v) { return v[0]; }
};
template <>
struct lane_io<1> {
  using type = double;
  static double load(const double* p) { return *p; }
  static double load(const double* p, double shift) { return *p + shift; }
  static void store(double* p, double v) { *p = v; }
  static double* data(double& v) { return &v; }
  static double first(double v) { return v; }
};

/** f(r, width) for r = 0, W, 2W, ... with width W, then f(r, 1) for each
 *  remaining row: `width` is std::integral_constant<int, W> or <int, 1>. */
template <typename F>
inline void over_lanes(int m, F&& f) {
  int r = 0;
  for (; r + lane_width <= m; r += lane_width) f(r, std::integral_constant<int, lane_width>());
  for (; r < m; ++r) f(r, std::integral_constant<int, 1>());
}

/** Runs `row(r, width)` (returning row_lanes of that width) over the m
 *  rows, each row's values times its weight w[r] where there are weights
 *  (w null: none); stores d_eta into d and adds the three sums to `sum`,
 *  kept per lane until the end. */
template <typename Row>
inline void column_sums(int m, const double* w, double* d, column_totals& sum, Row&& row) {
  using L = math::lanes<lane_width>;
  L s_lp = L::Zero(), s_d = L::Zero(), s_ex = L::Zero();
  column_totals tail;
  over_lanes(m, [&](int r, auto width) {
    constexpr int w_ = decltype(width)::value;
    auto v = row(r, width);
    if (w != nullptr) {
      const auto wr = lane_io<w_>::load(w + r);
      v.lp *= wr;
      v.d_eta *= wr;
      v.d_extra *= wr;
    }
    lane_io<w_>::store(d + r, v.d_eta);
    if constexpr (w_ == 1) {
      tail.lp += v.lp;
      tail.d_eta += v.d_eta;
      tail.d_extra += v.d_extra;
    } else {
      s_lp += v.lp;
      s_d += v.d_eta;
      s_ex += v.d_extra;
    }
  });
  sum.lp += s_lp.sum() + tail.lp;
  sum.d_eta += s_d.sum() + tail.d_eta;
  sum.d_extra += s_ex.sum() + tail.d_extra;
}

}  // namespace internal

/**
 * The row math of one point over m rows: eta[r] + a in (eta without the
 * point's alpha; the offset, where there is one, already added), d lp / d
 * eta out into d[r] (d may be eta: each row is read before it is written);
 * adds the column's totals to `sum`. y, w (weights, or null) and log_y_fact
 * (log y!, or 0 when propto; count families) are the rows' values; `ex` the
 * point's sigma | phi | shape | lambda terms and `counts` its table
 * (negative binomial at its log link). One loop per family: the family is
 * not a branch inside it. A family at a link other than its own runs the
 * linked row (row_math.hpp) one row at a time.
 */
inline void row_math_column(family fam, link lk, const double* y, const double* w,
                            const double* log_y_fact, const double* eta, double* d, int m,
                            double a, const math::extra_terms& ex,
                            const count_terms_table* counts, bool propto,
                            column_totals& sum) {
  using internal::lane_io;
  if (!has_own_form(fam, lk)) {
    return internal::column_sums(m, w, d, sum, [&](int r, auto width) {
      constexpr int v = decltype(width)::value;
      math::row_lanes<typename lane_io<v>::type> out;
      for (int l = 0; l < v; ++l) {
        const math::row_value one = math::linked_row(fam, lk, y[r + l], eta[r + l] + a, ex,
                                                     propto);
        lane_io<v>::data(out.lp)[l] = one.lp;
        lane_io<v>::data(out.d_eta)[l] = one.d_eta;
        lane_io<v>::data(out.d_extra)[l] = one.d_extra;
      }
      return out;
    });
  }
  switch (fam) {
    case family::normal_id:
      return internal::column_sums(m, w, d, sum, [&](int r, auto width) {
        constexpr int v = decltype(width)::value;
        return math::normal_id(lane_io<v>::load(y + r), lane_io<v>::load(eta + r, a), ex,
                               propto);
      });
    case family::bernoulli_logit:
      return internal::column_sums(m, w, d, sum, [&](int r, auto width) {
        constexpr int v = decltype(width)::value;
        return math::bernoulli_logit(lane_io<v>::load(y + r), lane_io<v>::load(eta + r, a));
      });
    case family::poisson_log:
      return internal::column_sums(m, w, d, sum, [&](int r, auto width) {
        constexpr int v = decltype(width)::value;
        return math::poisson_log(lane_io<v>::load(y + r), lane_io<v>::load(eta + r, a),
                                 lane_io<v>::load(log_y_fact + r));
      });
    default:
      return internal::column_sums(m, w, d, sum, [&](int r, auto width) {
        constexpr int v = decltype(width)::value;
        typename lane_io<v>::type lg, dg;  // table lookups, one row at a time
        for (int l = 0; l < v; ++l) {
          lane_io<v>::data(lg)[l] = counts->lgamma_diff(y[r + l]);
          lane_io<v>::data(dg)[l] = counts->digamma_diff(y[r + l]);
        }
        return math::neg_binomial_2_log(lane_io<v>::load(y + r), lane_io<v>::load(eta + r, a),
                                        ex, lg, dg, lane_io<v>::load(log_y_fact + r));
      });
  }
}

}  // namespace glm
}  // namespace clbayes

#endif
