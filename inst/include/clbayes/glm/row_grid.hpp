#ifndef CLBAYES_GLM_ROW_GRID_HPP
#define CLBAYES_GLM_ROW_GRID_HPP

// The row math of a scalar family at m given (y, eta, sigma|phi), by the
// C++ twin (glm/row_math.hpp) or by the OpenCL C definition that every GLM
// kernel includes (kernels/glm_row_math.hpp): how the tests check that the
// two definitions agree.

#include "../kernels/glm_row_math.hpp"
#include "../opencl/transfer.hpp"
#include "batch_params.hpp"
#include "row_math.hpp"

#include <vector>

namespace clbayes {
namespace glm {

/** out (m x 3, column-major) = lp, d lp / d eta, d lp / d sigma|phi. */
inline void row_grid(family fam, const double* y, const double* eta, const double* ex, int m,
                     bool propto, bool use_device, double* out) {
  if (!has_batched_form(fam))
    throw invalid_argument("family", "must be a family with one linear predictor");
  if (!use_device) {
    for (int i = 0; i < m; ++i) {
      math::row_value v;
      switch (fam) {
        case family::normal_id: v = math::normal_id(y[i], eta[i], ex[i], propto); break;
        case family::bernoulli_logit: v = math::bernoulli_logit(y[i], eta[i]); break;
        case family::poisson_log: v = math::poisson_log(y[i], eta[i], propto); break;
        default: v = math::neg_binomial_2_log(y[i], eta[i], ex[i], propto);
      }
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
  kern(cl::NDRange(m), res, yd, ed, xd, m, propto ? 1 : 0);
  opencl::from_matrix_cl(res, out);
#else
  throw no_device("clbayes was built without OpenCL");
#endif
}

}  // namespace glm
}  // namespace clbayes

#endif
