#ifndef CLBAYES_OPENCL_MATRIX_VIEW_HPP
#define CLBAYES_OPENCL_MATRIX_VIEW_HPP

#include "../error.hpp"
#include <string>

namespace clbayes {

/** Which part of a matrix holds its values; the rest is known to be zero. */
enum class matrix_view { entire = 0, lower = 1, upper = 2 };

inline const char* view_name(matrix_view v) {
  switch (v) {
    case matrix_view::lower: return "lower";
    case matrix_view::upper: return "upper";
    default: return "entire";
  }
}

inline matrix_view parse_view(const std::string& s, const char* arg = "view") {
  if (s == "entire") return matrix_view::entire;
  if (s == "lower") return matrix_view::lower;
  if (s == "upper") return matrix_view::upper;
  throw invalid_argument(arg, "must be \"entire\", \"lower\" or \"upper\", not \"" + s + "\"");
}

/** The view of the transpose: lower and upper swap. */
inline matrix_view transpose_view(matrix_view v) {
  return v == matrix_view::lower   ? matrix_view::upper
         : v == matrix_view::upper ? matrix_view::lower
                                   : matrix_view::entire;
}

/** The view of a sum: non-zeros of either operand. */
inline matrix_view union_view(matrix_view a, matrix_view b) {
  return a == b ? a : matrix_view::entire;
}

/** The view of a product A B: lower*lower is lower, upper*upper is upper. */
inline matrix_view product_view(matrix_view a, matrix_view b) {
  return (a == b && a != matrix_view::entire) ? a : matrix_view::entire;
}

}  // namespace clbayes

#endif
