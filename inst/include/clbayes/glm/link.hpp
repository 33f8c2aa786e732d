#ifndef CLBAYES_GLM_LINK_HPP
#define CLBAYES_GLM_LINK_HPP

// The link functions of the GLM families (R's make.link names): the mean
// mu = g^{-1}(eta) of a row from its linear predictor. The numbers are the
// LINK build option of the kernels (kernels/glm_row_math.hpp), which has the
// same inverses in OpenCL C; glm/row_math.hpp has them in C++.

#include "../error.hpp"

#include <string>

namespace clbayes {
namespace glm {

enum class link : int {
  identity = 0,
  log = 1,
  logit = 2,
  probit = 3,
  cloglog = 4,
  cauchit = 5,
  sqrt = 6,
  inverse = 7,
  inverse_square = 8  // R's "1/mu^2"
};

inline constexpr const char* link_names[] = {"identity", "log",  "logit",   "probit", "cloglog",
                                             "cauchit",  "sqrt", "inverse", "1/mu^2"};
inline constexpr int n_links = sizeof(link_names) / sizeof(link_names[0]);

inline const char* link_name(link l) { return link_names[static_cast<int>(l)]; }

/** A set of links, one bit per link. */
using link_set = unsigned;
constexpr link_set bit(link l) { return 1u << static_cast<int>(l); }

/** The names of the links in `s`, quoted and comma-separated. */
inline std::string link_list(link_set s) {
  std::string all;
  for (int i = 0; i < n_links; ++i)
    if (s & (1u << i)) all += std::string(all.empty() ? "" : ", ") + "\"" + link_names[i] + "\"";
  return all;
}

}  // namespace glm
}  // namespace clbayes

#endif
