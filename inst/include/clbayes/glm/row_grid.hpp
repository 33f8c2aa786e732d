#ifndef CLBAYES_GLM_ROW_GRID_HPP
#define CLBAYES_GLM_ROW_GRID_HPP

// The row math of a scalar family at m given (y, eta, sigma|phi), by the
// C++ twin (glm/row_math.hpp) or by the OpenCL C definition that every GLM
// kernel includes (kernels/glm_row_math.hpp): how the tests check that the
// two definitions agree. The C++ twin runs in either of its forms: W lanes
// (what the CPU paths run for most rows) or one row (the rest).

#include "../kernels/glm_row_math.hpp"
#include "../opencl/transfer.hpp"
#include "batch_params.hpp"
#include "row_block.hpp"
#include "row_math.hpp"

#include <vector>

namespace clbayes {
namespace glm {

namespace internal {

/** The C++ row math of row i of the grid in lanes of width W (every lane
 *  holding row i), read from lane 0. */
template <int W>
math::row_value grid_row(family fam, double y, double eta, double ex, bool propto) {
  using L = typename lane_io<W>::type;
  auto all = [](double v) { return math::constant_lanes<L>(v); };
  const double log_y_fact = math::log_factorial(y, propto);
  math::row_lanes<L> v;
  switch (fam) {
    case family::normal_id:
      v = math::normal_id(all(y), all(eta), math::normal_terms(ex), propto);
      break;
    case family::bernoulli_logit: v = math::bernoulli_logit(all(y), all(eta)); break;
    case family::poisson_log: v = math::poisson_log(all(y), all(eta), all(log_y_fact)); break;
    default: {
      const math::extra_terms phi = math::neg_binomial_terms(ex);
      const count_terms_table terms(phi, -1);  // no table: computed for each y
      v = math::neg_binomial_2_log(all(y), all(eta), phi, all(terms.lgamma_diff(y)),
                                   all(terms.digamma_diff(y)), all(log_y_fact));
    }
  }
  return {lane_io<W>::first(v.lp), lane_io<W>::first(v.d_eta), lane_io<W>::first(v.d_extra)};
}

}  // namespace internal

/** out (m x 3, column-major) = lp, d lp / d eta, d lp / d extra at link
 *  lk; on the CPU in lanes of `width` rows (1 or lane_width) for the
 *  family's own form, else the linked row. */
inline void row_grid(family fam, link lk, const double* y, const double* eta, const double* ex,
                     int m, bool propto, bool use_device, double* out, int width = lane_width) {
  if (!has_batched_form(fam))
    throw invalid_argument("family", "must be a family with one linear predictor");
  if (!use_device) {
    for (int i = 0; i < m; ++i) {
      const math::row_value v =
          !has_own_form(fam, lk)
              ? math::linked_row(fam, lk, y[i], eta[i], math::extra_terms_of(fam, ex[i]), propto)
          : width == 1 ? internal::grid_row<1>(fam, y[i], eta[i], ex[i], propto)
                       : internal::grid_row<lane_width>(fam, y[i], eta[i], ex[i], propto);
      out[i] = v.lp;
      out[m + i] = v.d_eta;
      out[2 * m + i] = v.d_extra;
    }
    return;
  }
#ifdef CLBAYES_OPENCL
  if (m == 0) return;
  opencl::matrix_cl yd = opencl::to_matrix_cl(y, m, 1);
  opencl::matrix_cl ed = opencl::to_matrix_cl(eta, m, 1);
  opencl::matrix_cl xd = opencl::to_matrix_cl(ex, m, 1);
  opencl::matrix_cl res(m, 3);
  auto& kern = opencl::kernels::glm_row_grid;
  kern.set_option("FAMILY", static_cast<int>(fam));
  kern.set_option("LINK", link_option(fam, lk));
  kern(cl::NDRange(m), res, yd, ed, xd, m, propto ? 1 : 0);
  opencl::from_matrix_cl(res, out);
#else
  throw no_device("clbayes was built without OpenCL");
#endif
}

}  // namespace glm
}  // namespace clbayes

#endif
