#ifndef CLBAYES_KERNELS_GLM_ROW_MATH_HPP
#define CLBAYES_KERNELS_GLM_ROW_MATH_HPP

// Scalar functions of the GLM kernels (glm_lp.hpp, glm_lp_tiled.hpp), in
// OpenCL C: stable softplus and inverse logit, and digamma for the
// negative-binomial gradient. Each kernel source is this text followed by
// its own body (glm_program()), held in a static string for the
// session because kernel_cl caches programs by the source's address.

#include <string>

namespace clbayes {
namespace opencl {
namespace kernels {

inline const char* glm_row_math_source = R"(
#define HALF_LOG_TWO_PI 0.91893853320467274178

double softplus(double u) { return fmax(u, 0.0) + log1p(exp(-fabs(u))); }

double inv_logit(double u) {
  if (u >= 0) return 1.0 / (1.0 + exp(-u));
  const double e = exp(u);
  return e / (1.0 + e);
}

/* digamma(x) for x > 0: recurrence to x >= 10, then the asymptotic series. */
double digamma_pos(double x) {
  double r = 0.0;
  while (x < 10.0) { r -= 1.0 / x; x += 1.0; }
  const double f = 1.0 / (x * x);
  const double t = f * (-1.0 / 12 + f * (1.0 / 120 + f * (-1.0 / 252 + f * (1.0 / 240 +
                   f * (-1.0 / 132 + f * (691.0 / 32760 + f * (-1.0 / 12)))))));
  return r + log(x) - 0.5 / x + t;
}
)";

/** A GLM kernel's program source: the row math followed by its body. */
inline std::string glm_program(const char* body) {
  return std::string(glm_row_math_source) + body;
}

}  // namespace kernels
}  // namespace opencl
}  // namespace clbayes

#endif
